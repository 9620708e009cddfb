// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The content of timeline rows: geometry (cached per row and mapping) and its painting, through
// one raster path (screens and PNGs: per device pixel, into an image cached per row, re-rendered
// only when its mapping, tiles, style or size changed, so a hover repaint is a blit) and one
// vector path (SVG and PDF: a few compact paths per row). The frame around the content (label
// column, y axes, legend, time axes) is frame.h's.
//
// Geometry is cached by what a row draws (its RowContent) together with the value range it is
// drawn in, so a label or an axis asks the renderer for the range of the same cached geometry the
// content was drawn from. The TimelineView uses a renderer for the screen; exporters use one with
// a loading TileFetch to draw the same thing into PNG, SVG or PDF.

#include <QFont>
#include <QImage>
#include <QPainter>

#include <map>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/compare/time_warp.h"
#include "widgets/timeline/difference_geometry.h"
#include "widgets/timeline/geometry.h"
#include "widgets/timeline/row_plan.h"
#include "widgets/timeline/theme.h"
#include "widgets/timeline/throttle_strip.h"
#include "widgets/timeline/tile_store.h"
#include "widgets/timeline/trace_coverage.h"
#include "widgets/timeline/track_painter.h"

namespace wl {

// SharedFitted (the default): one range per metric over the whole run like SharedPerMetric, but
// clocks and temperatures fitted to their values with a small margin, so a clock held 12 % below
// its maximum spans the row instead of a few pixels at its top; power, utilization and the other
// metrics where zero means something stay zero-based.
enum class YMode { SharedPerMetric, PerTrack, FitVisible, SharedFitted };

// The range a counter is drawn in for its values [lo, hi] (NaN: none): zero-based for power,
// clocks under SharedPerMetric and values mostly far from zero, 0..100 for percentages; with
// `fit`, clocks and temperatures are fitted instead (5 % margin, ends rounded outward).
ValueRange counterRange(std::string_view metric, std::string_view unit, float lo, float hi,
                        bool fit);

// The value range a difference row is drawn with: symmetric around zero, 10 % above the largest
// |A - B| shown.
ValueRange differenceRange(const DifferenceGeometry& g);

// Where a counter's values map inside its content rectangle: 3 px below the top, 2 px above the
// bottom (device pixels on the raster path), so the line stays visible at the extremes.
inline constexpr double kDataTop = 3.0, kDataBottom = 2.0;

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
  // The vector path's line width (grid lines, counter lines) and the font of kernel names.
  struct VectorStyle {
    double hairline = 0.6;
    QFont labels;
  };
  void setVectorStyle(const VectorStyle& s) { vector_ = s; }

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
  // The analysis's throttle segments and intervals of a run (strips, reason heatmap, tooltips,
  // navigation); nullptr until computed.
  void setThrottleView(int run, std::shared_ptr<const RunThrottleView> view) {
    throttleViews_[run] = std::move(view);
    cache_.clear();
    ++style_;
  }
  const RunThrottleView* throttleView(int run) const {
    auto it = throttleViews_.find(run);
    return it == throttleViews_.end() ? nullptr : it->second.get();
  }
  std::shared_ptr<const RunThrottleView> sharedThrottleView(int run) const {
    auto it = throttleViews_.find(run);
    return it == throttleViews_.end() ? nullptr : it->second;
  }
  // Tinting behind counters (the reason bits and the analysis's throttle intervals as bands
  // behind every counter of a GPU). Off by default: the throttle strip says it once per GPU.
  void setThrottleTint(bool on) {
    if (tint_ == on) return;
    tint_ = on;
    cache_.clear();
    ++style_;
  }
  bool throttleTint() const { return tint_; }
  // Alignment: run `run` is drawn `offsetNs` later than its own clock (display time = run time +
  // offset), so iteration k of a second run can sit under iteration k of the first.
  void setRunOffset(int run, int64_t offsetNs) { setRunWarp(run, TimeWarp::shift(offsetNs)); }
  // Alignment through a warp (display time = warp.toA(run time)): a comparison's run B drawn on
  // A's clock so that the same phase of the same iteration lines up (compare/time_warp.h). A
  // warp that is not a shift is drawn piece by piece (paintContent).
  void setRunWarp(int run, TimeWarp warp);
  // The run's offset (for a warp, the one at display time 0 of its first knot).
  int64_t runOffset(int run) const {
    auto it = warps_.find(run);
    return it == warps_.end() ? 0 : it->second.offsetAtA(it->second.knots().front().a_ns);
  }
  // The run's warp (the identity when none was set).
  TimeWarp runWarp(int run) const {
    auto it = warps_.find(run);
    return it == warps_.end() ? TimeWarp{} : it->second;
  }
  // True when the run is drawn through a warp that is not a shift.
  bool warped(int run) const {
    auto it = warps_.find(run);
    return it != warps_.end() && !it->second.isShift();
  }
  // A time of a run's own clock on the display clock, and back.
  int64_t toDisplay(int run, int64_t t) const {
    auto it = warps_.find(run);
    return it == warps_.end() ? t : it->second.toA(t);
  }
  int64_t fromDisplay(int run, int64_t t) const {
    auto it = warps_.find(run);
    return it == warps_.end() ? t : it->second.toB(t);
  }
  // The mapping of a row's own clock for a display mapping. For a warped run it is the linear
  // map of the warp's piece under pixel x (extended over the width): exact inside that piece,
  // which is what hit tests and tooltips at x need.
  TimeMapping rowMapping(const TrackRow& row, const TimeMapping& display) const {
    return rowMappingAt(row, display, display.width / 2);
  }
  TimeMapping rowMappingAt(const TrackRow& row, const TimeMapping& display, double x) const;
  // The mapping a row's content is drawn with: its own clock, except differences, which mix two
  // runs and place each themselves, and rows of a warped run, drawn piece by piece (both take
  // the display clock).
  TimeMapping contentMapping(const TrackRow& row, const TimeMapping& display) const {
    if (row.kind() == RowKind::Difference || row.kind() == RowKind::Overlay ||
        (!row.isHeader() && warped(row.run())))
      return display;
    return rowMapping(row, display);
  }
  // What an overlaid comparison's legend calls a run (what differs, e.g. "mbs4").
  void setRunLabel(int run, const QString& label) {
    if (labels_[run] == label) return;
    labels_[run] = label;
    ++style_;
  }
  QString runLabel(int run) const {
    auto it = labels_.find(run);
    return it == labels_.end() ? QString() : it->second;
  }
  // Called when new tiles arrived: cached geometry may now be more complete.
  void bumpEpoch() { ++epoch_; }
  // How the renderer gets the whole-run tiles its value ranges come from (the top pyramid level):
  // Load reads them on the calling thread (exports, benchmarks: they need every tile before they
  // draw); Queue takes what is in memory and lists the rest for takeMissingTiles(), so a screen
  // never reads the file in paint. A range from partial tiles is not cached: the next paint after
  // the tiles arrived computes the whole one.
  enum class TileReads { Load, Queue };
  void setTileReads(TileReads mode) { reads_ = mode; }
  // A row of a frame to prepare: the mapping its content is drawn with (contentMapping), and on a
  // raster screen the size of the image it is drawn into (empty: geometry only, figures).
  // prepare() sets `range` to the range of its label column (rowRange).
  struct RowTarget {
    const TrackRow* row = nullptr;
    TimeMapping map;
    QSize image;
    std::optional<ValueRange> range = std::nullopt;
  };
  // The prepare step of a frame (frame.h's prepareFrame): builds the geometry of every row, and
  // the images of the rows with one, so that paint only blits and draws from the caches. The
  // counter rows' geometry and images are built on two threads (one pass over each row's tiles,
  // O(pixels + samples), then the rasterizing, O(pixels): half a pan or zoom repaint), the rest
  // on the calling thread; `font` is the one kernel names and steps are drawn in. Returns the
  // one list of tiles `fetch` did not have: the whole-run tiles of value ranges first (under
  // Queue; every axis depends on them), then those of the rows. Paint reads tiles only through
  // this frame's `fetch` (a warped row's pieces in figures) and never records what is missing.
  std::vector<TileKey> prepare(std::vector<RowTarget>& rows, const TileFetch& fetch,
                               const QFont& font);
  void clearCaches();
  // Drops the cached geometry and images of every row content not among `rows`. A screen calls
  // it after each frame with the rows it drew, so the caches hold one screen's worth: paging
  // through the tracks of 1,024 GPUs otherwise kept every row ever drawn (a 1920 x 40 image is
  // 300 KB; 1 GB after one pass, docs/performance.md "10^8 kernels").
  void retainOnly(const std::vector<const TrackRow*>& rows);
  // Whether geometry or an image is cached for a row content (tests of retainOnly).
  bool holds(const RowContent& c) const {
    return cache_.count(c) > 0 || images_.count(c) > 0 || warpedImages_.count(c) > 0;
  }

  struct Highlight {
    int run = -1, track = -1;
    long event = -1;
  };

  // Paints a row's content into `content` with `map` (contentMapping): the raster path on a
  // raster paint engine, else the vector path. Headers are a plain background.
  void paintContent(QPainter& p, const TrackRow& row, const QRectF& content, const TimeMapping& map,
                    const Highlight& highlight);

  // Geometry of a row (cached by what the row draws) with the range it is drawn in. Counters,
  // kernels and heatmaps take the mapping of the run's own clock, differences the display's.
  struct CounterView {
    const CounterGeometry* geometry = nullptr;
    ValueRange range;
  };
  CounterView counter(const CounterRow& row, const TimeMapping& map, const TileFetch& fetch);
  const CounterGeometry* counterGeometry(const CounterRow& row, const TimeMapping& map,
                                         const TileFetch& fetch) {
    return counter(row, map, fetch).geometry;
  }
  struct DifferenceView {
    const DifferenceGeometry* geometry = nullptr;
    ValueRange range;
  };
  DifferenceView difference(const DifferenceRow& row, const TimeMapping& display,
                            const TileFetch& fetch);
  const DifferenceGeometry* differenceGeometry(const DifferenceRow& row, const TimeMapping& display,
                                               const TileFetch& fetch) {
    return difference(row, display, fetch).geometry;
  }
  const KernelGeometry* kernelGeometry(const KernelsRow& row, const TimeMapping& map,
                                       const TileFetch& fetch);
  const HeatmapGeometry* heatmapGeometry(const HeatmapRow& row, const TimeMapping& map,
                                         const TileFetch& fetch);
  const ThrottleStripGeometry* throttleStripGeometry(const ThrottleStripRow& row,
                                                     const TimeMapping& map);
  const ThrottleHeatmapGeometry* throttleHeatmapGeometry(const ThrottleHeatmapRow& row,
                                                         const TimeMapping& map);
  // The colour range of a heatmap (the run's whole extent of the metric).
  ValueRange heatmapRange(int run, int metric);
  // The value range an overlay row is drawn in: the union of its two counters' ranges.
  ValueRange overlayRange(const OverlayRow& row, const TimeMapping& display,
                          const TileFetch& fetch);
  // The range of a row's values as its content is drawn with `map` (counters, differences) or
  // coloured (heatmaps); nullopt for the other kinds.
  std::optional<ValueRange> rowRange(const TrackRow& row, const TimeMapping& map,
                                     const TileFetch& fetch);
  // GPU rows of a run before which a new node starts (heatmap separators).
  const std::vector<size_t>& nodeSeparators(int run);

 private:
  // The spans of a run without the rank's kernel trace (trace_coverage.h), cached.
  const std::vector<TimeSpan>& untracedOf(int run, int rank);
  struct Cached {
    TimeMapping map;
    uint64_t epoch = 0;
    uint64_t rangeStyle = ~uint64_t{0};  // style_ the range was computed under
    ValueRange range;
    std::variant<CounterGeometry, KernelGeometry, HeatmapGeometry, DifferenceGeometry,
                 ThrottleStripGeometry, ThrottleHeatmapGeometry>
        geom;
  };
  // The cache entry of a row for a mapping, (re)built when stale.
  template <typename G, typename Build>
  Cached& cached(const RowContent& key, const TimeMapping& map, Build build);
  // A counter row's geometry at `map` (thread-safe: it reads tiles through `fetch` and the
  // run's metadata, and writes nothing of the renderer's).
  CounterGeometry buildCounter(const CounterRow& row, const TimeMapping& map,
                               const TileFetch& fetch, std::vector<TileKey>* missing) const;
  // The value range of a counter: shared per metric, per track or fitted to the visible data.
  ValueRange valueRange(const CounterRow& row, const CounterGeometry& g);
  // Whole-run min/max per GPU of a metric (from the top pyramid level).
  const std::vector<std::pair<float, float>>& extents(int run, int metric);
  // Top-level tile `key` through the TileReads mode: null when it is not in memory (Queue; the
  // key is listed in missingTiles_ and `complete` cleared) or could not be read.
  TilePtr topTile(const TileKey& key, bool& complete);
  // The same over the top level's buckets in which the GPU was busy (utilization at or above the
  // throttle detector's busy threshold); extents() when the run has no utilization.
  const std::vector<std::pair<float, float>>& busyExtents(int run, int metric);
  void paintContentRaster(QPainter& p, const TrackRow& row, const QRectF& content,
                          const TimeMapping& map, const Highlight& highlight);
  // Thread-safe: it writes only `img`.
  void rasterCounterImage(QImage& img, const CounterRow& row, const CounterView& v) const;
  // prepare's steps: the counter rows' geometry, then their images, on two threads.
  void prepareCounters(const std::vector<RowTarget>& rows, std::vector<TileKey>& missing);
  void prepareImages(const std::vector<RowTarget>& rows);
  void paintContentVector(QPainter& p, const TrackRow& row, const QRectF& content,
                          const TimeMapping& map);
  // Steps of a rank; with a warp, `map` is the display's and the run's times go through it.
  void paintSteps(QPainter& p, const StepsRow& row, const QRectF& r, const TimeMapping& map,
                  const TimeWarp* warp = nullptr);
  // A row of a warped run: each piece of the warp drawn with its own linear mapping, clipped to
  // its pixels; the raster result is cached per row like the unwarped image.
  // A and B of an overlay row in one track, each through its alignment, with a small legend.
  void paintOverlay(QPainter& p, const OverlayRow& row, const QRectF& content,
                    const TimeMapping& display);
  void paintOverlayInto(QPainter& p, const OverlayRow& row, const QRectF& content,
                        const TimeMapping& display, double lineWidth);
  void paintWarped(QPainter& p, const TrackRow& row, const QRectF& content,
                   const TimeMapping& display);

  TileStore& store_;
  Theme theme_ = Theme::light();
  YMode yMode_ = YMode::SharedFitted;
  bool heatmapMax_ = false;
  bool tint_ = false;
  VectorStyle vector_;
  uint64_t epoch_ = 0;
  uint64_t style_ = 0;
  // Keyed by what a row draws (two rows drawing the same share their geometry).
  std::map<RowContent, Cached> cache_;
  struct CachedImage {
    QImage image;
    TimeMapping map;
    uint64_t epoch = 0, style = 0;
    double vmin = 0, vmax = 0;
    // Whether the image shows this size, mapping, tile epoch, style and value range.
    bool current(QSize size, const TimeMapping& m, uint64_t e, uint64_t s, double lo = 0,
                 double hi = 0) const {
      return image.size() == size && map == m && epoch == e && style == s && vmin == lo &&
             vmax == hi;
    }
    // Records what the image was just drawn for.
    void stamp(const TimeMapping& m, uint64_t e, uint64_t s, double lo = 0, double hi = 0) {
      map = m;
      epoch = e;
      style = s;
      vmin = lo;
      vmax = hi;
    }
  };
  std::map<RowContent, CachedImage> images_;
  std::map<std::pair<int, int>, std::vector<std::pair<float, float>>> extents_;
  std::map<std::pair<int, int>, std::vector<std::pair<float, float>>> busyExtents_;
  // Extents from partial tiles (Queue mode), valid until the next call for the same key.
  std::map<std::pair<int, int>, std::vector<std::pair<float, float>>> partialExtents_,
      partialBusyExtents_;
  TileReads reads_ = TileReads::Load;
  std::vector<TileKey> missingTiles_;  // ranges' tiles not in memory (Queue)
  // The frame's tiles (prepare's fetch) and, while preparing, where the rows' missing tiles go.
  TileFetch fetch_;
  std::vector<TileKey>* record_ = nullptr;
  std::map<int, std::vector<size_t>> nodeSeparators_;
  std::map<std::pair<int, int>, std::vector<TimeSpan>> untraced_;  // (run, rank)
  std::map<int, std::vector<std::vector<ThrottleSpan>>> throttleSpans_;
  std::map<int, std::shared_ptr<const RunThrottleView>> throttleViews_;
  std::map<int, TimeWarp> warps_;
  std::map<int, QString> labels_;
  std::map<RowContent, CachedImage> warpedImages_;
};

}  // namespace wl
