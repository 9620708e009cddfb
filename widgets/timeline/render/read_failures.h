// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Drawing of failed reads: the span of a tile (or overview, or kernel detail) that could not be
// read is hatched in red over the rows that draw that data, with "unreadable" written in it, so
// a damaged region never looks like a gap in the data (issue 16, docs/robustness.md).

#include <QPainter>
#include <QRectF>

#include <vector>

#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/model/time_mapping.h"

namespace wl {

// Whether the failed read is data that `row` draws (same run and GPU / track / metric).
bool failureConcernsRow(const ReadFailure& failure, const TrackRow& row);

// The hatch's colour and brush (shared by the timeline rows and the overview strip).
QColor readFailureColor();
QBrush readFailureBrush();

// Hatches, inside `content`, the spans of the failures that concern `row`; `map` is the row's
// content mapping (TimelineRenderer::contentMapping). Returns how many spans it drew.
int paintReadFailures(QPainter& p, const TrackRow& row, const QRectF& content,
                      const TimeMapping& map, const std::vector<ReadFailure>& failures);

}  // namespace wl
