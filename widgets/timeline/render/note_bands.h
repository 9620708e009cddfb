// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Drawing of notes pinned to the timeline (analysis/notes.h): a note's range is a translucent
// band with edges over the rows it concerns (its GPUs' and ranks' rows, every row of its run when
// it names none), and its text is written at the top of the band in the first such row. The same
// painting serves the screen and exported figures (frame.h's paintFrame), so a figure shows the
// notes the window shows.

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <vector>

#include "analysis/notes.h"
#include "loaders/core/time_range.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/model/time_mapping.h"

namespace wl {

// A note as the timeline draws it.
struct NoteMark {
  int run = 0;
  TimeRange range;         // on the run's own clock (absolute ns)
  std::vector<int> gpus;   // GPU ids; with ranks empty too: every row of the run
  std::vector<int> ranks;  // ranks
  QString text;
  bool operator==(const NoteMark&) const = default;
};

// The notes of run `run` (index in the store) that starts at runStart, as the timeline draws them.
std::vector<NoteMark> noteMarks(int run, const std::vector<Note>& notes, int64_t runStart);

// Whether `note` is drawn over `row`: same run, and a row of one of its GPUs (counters, throttle
// strip, header; heatmaps of the run show every GPU) or ranks (kernels, steps, header), or any
// row but the run's title when it names neither.
bool noteConcernsRow(const NoteMark& note, const TrackRow& row);

// The band's colour (teal: apart from the selection's blue, the kernel classes and the throttle
// reasons' oranges, reds and purple; an amber band was hard to tell from a power-cap bar).
QColor noteColor();

// Paints, inside `content`, the bands of the notes that concern `row`; `map` is the row's mapping
// on its run's clock. A note whose `labelled` flag is false gets its text in this row and the
// flag set (labelled has one flag per note). Returns how many bands it drew.
int paintNoteBands(QPainter& p, const TrackRow& row, const QRectF& content, const TimeMapping& map,
                   const std::vector<NoteMark>& notes, std::vector<bool>& labelled);

// The notes drawn over `row` at content x `cx` (indices into notes), for tooltips.
std::vector<size_t> notesAt(const TrackRow& row, const TimeMapping& map, double cx,
                            const std::vector<NoteMark>& notes);

}  // namespace wl
