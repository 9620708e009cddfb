// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/timeline_figure.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "widgets/timeline/render/frame.h"

namespace wl {

TimelineFigure::TimelineFigure(TileStore& store, TimelineFigureSpec spec)
    : store_(&store), spec_(std::move(spec)), renderer_(std::make_unique<TimelineRenderer>(store)) {
  TimelineRenderer& r = *renderer_;
  for (const auto& [run, offset] : spec_.runOffsets)
    r.setRunDisplay(run, r.displays().of(run).withOffset(offset));
  for (const auto& [run, warp] : spec_.runWarps)
    r.setRunDisplay(run, r.displays().of(run).withWarp(warp));
  for (const auto& [run, label] : spec_.runLabels)
    r.setRunDisplay(run, r.displays().of(run).withLabel(label));
  std::set<int> runs;
  for (const TrackRow& r : spec_.rows)
    runs.insert(r.run());
  if (runs.size() <= 1)
    std::erase_if(spec_.rows, [](const TrackRow& r) { return r.kind() == RowKind::RunHeader; });
  RenderStyle style = r.style();
  style.throttleTint = spec_.throttleTint;
  r.setStyle(style);
  for (const auto& [run, view] : spec_.throttleViews)
    r.setRunDisplay(run, r.displays().of(run).withThrottle(view));
}

void TimelineFigure::ensureThrottleViews() {
  // Strips and reason heatmaps need the detector's segments: the same analysis the window runs
  // when a run opens, here synchronously (an export waits for its data).
  for (const TrackRow& r : spec_.rows) {
    if (r.kind() != RowKind::ThrottleStrip && r.kind() != RowKind::ThrottleHeatmap) continue;
    if (renderer_->displays().throttleView(r.run())) continue;
    renderer_->setRunDisplay(
        r.run(),
        renderer_->displays().of(r.run()).withThrottle(
            std::make_shared<const RunThrottleView>(computeThrottleView(store_->run(r.run())))));
  }
}

TimelineFigure::TimelineFigure(std::unique_ptr<TileStore> store, TimelineFigureSpec spec)
    : TimelineFigure(*store, std::move(spec)) {
  ownedStore_ = std::move(store);
}

TimelineFigure::~TimelineFigure() = default;

QString TimelineFigure::kind() const {
  bool heat = false, other = false;
  for (const TrackRow& r : spec_.rows) {
    if (r.kind() == RowKind::Heatmap || r.kind() == RowKind::ThrottleHeatmap) heat = true;
    if (r.kind() == RowKind::Counter || r.kind() == RowKind::Kernels ||
        r.kind() == RowKind::Overlay)
      other = true;
  }
  return heat && !other ? QStringLiteral("heatmap") : QStringLiteral("timeline");
}

QSizeF TimelineFigure::preferredSize(double width) const {
  double rows = 0;
  for (const TrackRow& r : spec_.rows)
    rows += r.isHeader() ? r.height : figureRowHeight(r);
  // Caption, legend and time axis.
  return {width, std::ceil(rows + 150)};
}

void TimelineFigure::paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) {
  RenderStyle style = renderer_->style();
  style.theme = canvas.theme;
  style.yMode = spec_.yMode;
  ensureThrottleViews();
  FrameSpec frame;
  frame.style = FrameStyle::Figure;
  frame.origin = spec_.origin;
  frame.theme = canvas.theme;
  frame.fonts = FrameFonts{canvas.font(canvas.textPt()),
                           canvas.font(canvas.textPt(), true),
                           canvas.font(canvas.smallPt()),
                           canvas.hairline(),
                           canvas.scale,
                           canvas.vector,
                           canvas.publication};
  style.hairline = frame.fonts.hairline;
  style.labels = frame.fonts.small;
  renderer_->setStyle(style);
  TileStore& store = *store_;
  const TileFetch load = loadingFetch(store);
  frame.store = &store;
  frame.legend = [&](const TimeMapping& deviceMap) {
    return figureLegend(spec_.rows, *renderer_, store, deviceMap, load, canvas.theme);
  };
  FrameLayout layout = planFrame(spec_.rows, spec_.range, frame, body);
  layout.notes = spec_.notes;
  prepareFrame(layout, *renderer_, load);
  paintFrame(p, layout, *renderer_);
}

}  // namespace wl
