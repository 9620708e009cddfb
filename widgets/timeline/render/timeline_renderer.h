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
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/render/difference_geometry.h"
#include "widgets/timeline/render/geometry.h"
#include "widgets/timeline/render/run_display.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/render/throttle_strip.h"
#include "widgets/timeline/render/trace_coverage.h"
#include "widgets/timeline/render/track_painter.h"

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

// What the renderer draws with, as one value: the theme, how counters' ranges are chosen, the
// heatmap's statistic, the throttle bands behind counters and the vector path's style.
struct RenderStyle {
  Theme theme = Theme::light();
  YMode yMode = YMode::SharedFitted;
  bool heatmapMax = false;  // heatmaps colour each cell by its maximum instead of its mean
  // Tinting behind counters (the reason bits and the analysis's throttle intervals as bands
  // behind every counter of a GPU). Off by default: the throttle strip says it once per GPU.
  bool throttleTint = false;
  // The vector path's line width (grid lines, counter lines) and the font of kernel names.
  double hairline = 0.6;
  QFont labels;
};

class TimelineRenderer {
 public:
  // How the renderer gets the whole-run tiles its value ranges come from (the top pyramid level):
  // Load reads them on the calling thread (exports, benchmarks: they need every tile before they
  // draw); Queue takes what is in memory and lists the rest among the tiles prepare() returns, so
  // a screen never reads the file in paint. A range from partial tiles is not cached: the next
  // frame after the tiles arrived computes the whole one.
  enum class TileReads { Load, Queue };
  explicit TimelineRenderer(TileStore& store, TileReads reads = TileReads::Load);

  void setStyle(const RenderStyle& style);
  const RenderStyle& style() const { return style_; }
  // A run's display: its alignment, its label, its throttle analysis (run_display.h). Drops the
  // geometry the change invalidates.
  void setRunDisplay(int run, RunDisplay display);
  const RunDisplays& displays() const { return displays_; }

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

  struct Highlight {
    int run = -1, track = -1;
    long event = -1;
  };
  // Paints a row's content into `content` with `map` (contentMapping): the raster path on a
  // raster paint engine, else the vector path. Headers are a plain background.
  void paintContent(QPainter& p, const TrackRow& row, const QRectF& content, const TimeMapping& map,
                    const Highlight& highlight);

  // Geometry of a row content at a mapping (cached by what the row draws, for hit tests,
  // tooltips and legends), with the range it is drawn in: counters, kernels and heatmaps take the
  // mapping of the run's own clock, differences and overlays the display's. One pointer is set,
  // for the row's kind.
  struct RowGeometry {
    const CounterGeometry* counter = nullptr;
    const KernelGeometry* kernels = nullptr;
    const HeatmapGeometry* heatmap = nullptr;
    const DifferenceGeometry* difference = nullptr;
    const ThrottleStripGeometry* strip = nullptr;
    const ThrottleHeatmapGeometry* throttleHeatmap = nullptr;
    // Counters, differences, overlays: the value range; heatmaps: the colour range.
    std::optional<ValueRange> range;
  };
  RowGeometry geometry(const RowContent& content, const TimeMapping& map, const TileFetch& fetch);
  // The range of a row's values as its content is drawn with `map` (counters, differences) or
  // coloured (heatmaps); nullopt for the other kinds.
  std::optional<ValueRange> rowRange(const TrackRow& row, const TimeMapping& map,
                                     const TileFetch& fetch);
  // GPU rows of a run before which a new node starts (heatmap separators).
  const std::vector<size_t>& nodeSeparators(int run);

  // Called when new tiles arrived: cached geometry may now be more complete.
  void bumpEpoch() { ++epoch_; }
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

 private:
  struct CounterView {
    const CounterGeometry* geometry = nullptr;
    ValueRange range;
  };
  CounterView counter(const CounterRow& row, const TimeMapping& map, const TileFetch& fetch);
  struct DifferenceView {
    const DifferenceGeometry* geometry = nullptr;
    ValueRange range;
  };
  DifferenceView difference(const DifferenceRow& row, const TimeMapping& display,
                            const TileFetch& fetch);
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
  bool warped(int run) const { return displays_.warped(run); }
  int64_t runOffset(int run) const { return displays_.runOffset(run); }
  TimeMapping contentMapping(const TrackRow& row, const TimeMapping& display) const {
    return displays_.contentMapping(row, display);
  }

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
  // Whether the cache holds a row's geometry of kind G for this mapping and tile epoch.
  template <typename G>
  bool fresh(const RowContent& key, const TimeMapping& map) const {
    auto it = cache_.find(key);
    return it != cache_.end() && it->second.map == map && it->second.epoch == epoch_ &&
           std::holds_alternative<G>(it->second.geom);
  }
  // The cache entry of a row for a mapping, (re)built when stale.
  template <typename G, typename Build>
  Cached& cached(const RowContent& key, const TimeMapping& map, Build build);
  // A counter row's geometry at `map` (thread-safe: it reads tiles through `fetch` and the
  // run's metadata, and writes nothing of the renderer's).
  CounterGeometry buildCounter(const CounterRow& row, const TimeMapping& map,
                               const TileFetch& fetch) const;
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
  // Thread-safe: they write only `img`.
  void rasterCounterImage(QImage& img, const CounterRow& row, const CounterView& v) const;
  void rasterKernelImage(QImage& img, const KernelsRow& row, const KernelGeometry& g,
                         const QFont& font) const;
  // The cached raster image of a row at `size` and `map`, (re)drawn when stale: rowImage picks
  // the row's kind (overlay, warped, plain: contentImage, null for a kind without content); paint
  // blits them, prepare fills them. `font`: kernel names and overlay legends.
  void rowImage(const TrackRow& row, QSize size, const TimeMapping& map, const QFont& font);
  const QImage* contentImage(const TrackRow& row, QSize size, const TimeMapping& map,
                             const QFont& font);
  const QImage& warpedImage(const TrackRow& row, QSize size, const TimeMapping& display,
                            const QFont& font);
  const QImage& overlayImage(const OverlayRow& row, QSize size, const TimeMapping& display,
                             const QFont& font);
  void paintWarpSpans(QPainter& q, const TrackRow& row, const QRectF& target,
                      const TimeMapping& display);
  // prepare's steps: the counter and kernel rows' geometry (returning the tiles it did not
  // find), then their images, each on two threads.
  std::vector<TileKey> prepareGeometry(const std::vector<RowTarget>& rows, const TileFetch& fetch);
  void prepareImages(const std::vector<RowTarget>& rows, const QFont& font);
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
  RenderStyle style_;
  RunDisplays displays_;
  uint64_t epoch_ = 0;
  uint64_t styleVersion_ = 0;  // bumped by every change of style or run display
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
  TileReads reads_;
  std::vector<TileKey> missingTiles_;  // ranges' tiles not in memory (Queue)
  // The frame's tiles: prepare's fetch, noting what is missing while it prepares, quiet in paint.
  TileFetch fetch_;
  std::map<int, std::vector<size_t>> nodeSeparators_;
  std::map<std::pair<int, int>, std::vector<TimeSpan>> untraced_;  // (run, rank)
  std::map<RowContent, CachedImage> warpedImages_;
};

}  // namespace wl
