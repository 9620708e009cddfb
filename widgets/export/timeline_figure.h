// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The timeline as a figure: the rows of the timeline (counters, kernel streams, steps, heatmaps,
// differences, with their GPU and rank headers) over one time range, drawn by the same
// TimelineRenderer and geometry as the screen, in the frame a paper figure needs (frame.h, Figure
// style): a y axis with values and units per counter row, a GPU axis and colour bar per heatmap,
// a time axis with ticks in run-relative time and its title, and a legend of the kernel classes
// and throttle reasons shown.
//
// Data comes complete: tiles are loaded synchronously (TileStore::load), so an export never shows
// a half-loaded view. PNG rows are drawn per device pixel by the renderer's raster path; SVG and
// PDF rows by its vector path (vector_track.h: one path per envelope).

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "loaders/core/time_range.h"
#include "widgets/export/figure.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/note_bands.h"
#include "widgets/timeline/render/timeline_renderer.h"

namespace wl {

struct TimelineFigureSpec {
  std::vector<TrackRow> rows;  // in order; RunHeader rows are dropped when only one run is shown
  TimeRange range;             // the visible range
  int64_t origin = 0;          // time zero of the time axis (the first run's start)
  YMode yMode = YMode::SharedFitted;
  // Throttle bands behind counters (the screen's View > Throttle Bands Behind Tracks).
  bool throttleTint = false;
  // The throttle analysis of runs (index in the store) the caller has at hand (the window's);
  // runs with a throttle strip or reason heatmap and none given are analysed when drawn.
  std::map<int, std::shared_ptr<const RunThrottleView>> throttleViews;
  // Offsets added to a run's timestamps to put it on the first run's clock (a comparison).
  std::vector<std::pair<int, int64_t>> runOffsets;
  // Or warps (display time = warp.toA(run time)): a comparison's run B through the iteration
  // warp; applied after runOffsets.
  std::vector<std::pair<int, TimeWarp>> runWarps;
  // What an overlay's legend calls each run (what differs between the compared runs).
  std::vector<std::pair<int, QString>> runLabels;
  // Notes drawn as bands over their rows (note_bands.h), on their runs' clocks.
  std::vector<NoteMark> notes;
};

class TimelineFigure : public Figure {
 public:
  // Draws from `store`, which must outlive the figure (the GUI's timeline store).
  TimelineFigure(TileStore& store, TimelineFigureSpec spec);
  // Owns its store (headless exports).
  TimelineFigure(std::unique_ptr<TileStore> store, TimelineFigureSpec spec);
  ~TimelineFigure() override;

  QString kind() const override;
  QSizeF preferredSize(double width) const override;
  const TimelineFigureSpec& spec() const { return spec_; }

 protected:
  void paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) override;

 private:
  void ensureThrottleViews();
  std::unique_ptr<TileStore> ownedStore_;
  TileStore* store_;
  TimelineFigureSpec spec_;
  std::unique_ptr<TimelineRenderer> renderer_;
};

}  // namespace wl
