// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Paints timeline rows (label column + content) into any QPainter. The TimelineView uses it for
// the screen; exporters use it with a loading TileFetch to draw the same thing into PNG, SVG or
// PDF. It caches each row's geometry per (mapping, tile epoch), so hover and selection repaints
// replay geometry without touching data.

#include <QImage>
#include <QPainter>

#include <map>
#include <optional>
#include <unordered_map>
#include <variant>

#include "timeline/geometry.h"
#include "timeline/row_plan.h"
#include "timeline/theme.h"
#include "timeline/tile_store.h"
#include "timeline/track_painter.h"

namespace wl {

enum class YMode { SharedPerMetric, PerTrack, FitVisible };

// The value range a difference row is drawn with: symmetric around zero, 10 % above the largest
// |A - B| shown.
ValueRange differenceRange(const DifferenceGeometry& g);

class TimelineRenderer {
 public:
  explicit TimelineRenderer(TileStore& store);

  void setTheme(const Theme& t) {
    theme_ = t;
    ++style_;
  }
  const Theme& theme() const { return theme_; }
  void setYMode(YMode m) {
    yMode_ = m;
    ++style_;
  }
  YMode yMode() const { return yMode_; }
  void setHeatmapUsesMax(bool v) {
    heatmapMax_ = v;
    ++style_;
  }
  // Throttle intervals the analysis found (busy, clock below its threshold), per GPU of a run:
  // drawn as strong bands over the weak bands of the recorded reason bits.
  struct ThrottleSpan {
    int64_t t0 = 0, t1 = 0;
    uint32_t reasons = 0;  // NVML bits (inferred causes mapped onto them)
  };
  void setThrottleSpans(int run, std::vector<std::vector<ThrottleSpan>> perGpu) {
    throttleSpans_[run] = std::move(perGpu);
    cache_.clear();
    ++style_;
  }
  // Alignment: run `run` is drawn `offsetNs` later than its own clock (display time = run time +
  // offset), so iteration k of a second run can sit under iteration k of the first.
  void setRunOffset(int run, int64_t offsetNs) {
    if (offsets_[run] == offsetNs) return;
    offsets_[run] = offsetNs;
    ++style_;
  }
  int64_t runOffset(int run) const {
    auto it = offsets_.find(run);
    return it == offsets_.end() ? 0 : it->second;
  }
  // The mapping of a row's own clock for a display mapping.
  TimeMapping rowMapping(const TrackRow& row, const TimeMapping& display) const {
    const int64_t off = runOffset(row.run());
    return TimeMapping{display.t0 - off, display.t1 - off, display.width};
  }
  // Called when new tiles arrived: cached geometry may now be more complete.
  void bumpEpoch() { ++epoch_; }
  void clearCaches();

  struct Highlight {
    int run = -1, track = -1;
    long event = -1;
  };

  // Paints one row: label in [rect.left, rect.left + labelWidth), content to the right.
  void paintRow(QPainter& p, const TrackRow& row, const QRectF& rect, double labelWidth,
                const TimeMapping& map, const TileFetch& fetch, std::vector<TileKey>* missing,
                bool collapsed, const Highlight& highlight);
  // Paints the content part only (no label) of a row.
  void paintContent(QPainter& p, const TrackRow& row, const QRectF& content, const TimeMapping& map,
                    const TileFetch& fetch, std::vector<TileKey>* missing,
                    const Highlight& highlight);

  // Geometry of a row (cached by what the row draws), for hit tests and tooltips. Counters,
  // kernels and heatmaps take the mapping of the run's own clock (rowMapping), differences the
  // display mapping.
  const CounterGeometry* counterGeometry(const CounterRow& row, const TimeMapping& map,
                                         const TileFetch& fetch, std::vector<TileKey>* missing);
  const KernelGeometry* kernelGeometry(const KernelsRow& row, const TimeMapping& map,
                                       const TileFetch& fetch, std::vector<TileKey>* missing);
  const HeatmapGeometry* heatmapGeometry(const HeatmapRow& row, const TimeMapping& map,
                                         const TileFetch& fetch, std::vector<TileKey>* missing);
  const DifferenceGeometry* differenceGeometry(const DifferenceRow& row, const TimeMapping& display,
                                               const TileFetch& fetch,
                                               std::vector<TileKey>* missing);
  // The value range a counter row is drawn with.
  ValueRange valueRange(const CounterRow& row, const CounterGeometry* g);
  // The value range of a heatmap.
  ValueRange heatmapRange(int run, int metric);

 private:
  struct Cached {
    TimeMapping map;
    uint64_t epoch = 0;
    std::variant<CounterGeometry, KernelGeometry, HeatmapGeometry, DifferenceGeometry> geom;
  };
  template <typename G, typename Build>
  const G* cached(const RowContent& key, const TimeMapping& map, Build build);
  // Whole-run min/max per GPU of a metric (from the top pyramid level).
  const std::vector<std::pair<float, float>>& extents(int run, int metric);
  // Screens and PNGs: the row's content as a cached image, re-rendered only when its mapping,
  // tiles, style or size changed; blitting it is all a hover repaint costs.
  void paintContentRaster(QPainter& p, const TrackRow& row, const QRectF& content,
                          const TimeMapping& map, const TileFetch& fetch,
                          std::vector<TileKey>* missing, const Highlight& highlight);
  // SVG and PDF: vector primitives from the same geometry.
  void paintContentVector(QPainter& p, const TrackRow& row, const QRectF& content,
                          const TimeMapping& map, const TileFetch& fetch,
                          std::vector<TileKey>* missing, const Highlight& highlight);
  void paintLabel(QPainter& p, const TrackRow& row, const QRectF& r, bool collapsed);
  const std::vector<size_t>& nodeSeparators(int run);
  void paintSteps(QPainter& p, const StepsRow& row, const QRectF& r, const TimeMapping& map);

  TileStore& store_;
  Theme theme_ = Theme::light();
  YMode yMode_ = YMode::SharedPerMetric;
  bool heatmapMax_ = false;
  uint64_t epoch_ = 0;
  uint64_t style_ = 0;
  // Keyed by what a row draws (two rows drawing the same share their geometry).
  std::map<RowContent, Cached> cache_;
  struct CachedImage {
    QImage image;
    TimeMapping map;
    uint64_t epoch = 0, style = 0;
    double vmin = 0, vmax = 0;
  };
  std::map<RowContent, CachedImage> images_;
  std::map<std::pair<int, int>, std::vector<std::pair<float, float>>> extents_;
  std::map<int, std::vector<size_t>> nodeSeparators_;
  std::map<RowContent, ValueRange> lastRange_;
  std::map<int, std::vector<std::vector<ThrottleSpan>>> throttleSpans_;
  std::map<int, int64_t> offsets_;
};

}  // namespace wl
