// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Render step two: data -> geometry. For one track, a time mapping and the tiles at hand, these
// functions compute plain lists of what to draw (per-pixel envelopes, polylines, boxes, bands) in
// pixel x and data-value y. They own no data and know nothing about QPainter; the same geometry
// paints the widget, PNG, SVG and PDF, and tests assert on it without pixels.
//
// Level of detail: a track is drawn from the coarsest pyramid level whose buckets are no wider
// than a pixel, so every pixel column shows the exact min-max envelope of the samples under it
// and a one-sample spike survives any zoom. When even level 0 is wider than a pixel the raw
// samples (or events) are drawn. Missing tiles are noted by the fetch (TileFetch::noting) so the
// caller can request them; meanwhile the coarsest complete level already in memory is drawn
// instead.
//
// Cost per counter row of W pixel columns: the chosen level has at least one bucket per pixel and
// fewer than `factor` (the pyramid's, 4), so the envelope costs O(W x factor) buckets whatever the
// zoom and the run length; zoomed past level 0 it costs the raw samples in view, which are then
// fewer than W x (samples per level-0 bucket). Kernel rows are the same with busy buckets or the
// events in view.

#include <array>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "loaders/core/kernel_class.h"
#include "loaders/format/lod.h"
#include "loaders/format/run_file.h"
#include "widgets/timeline/model/tiles.h"
#include "widgets/timeline/model/time_mapping.h"

namespace wl {

// Where geometry gets its tiles: from memory only (a screen) or loading them (exports); null when
// a tile is not available. A fetch that notes (noting()) lists every tile it did not have in the
// frame's one list of missing tiles, so the builders below carry no list of their own; quiet()
// is the same source without noting (the coarser levels drawn meanwhile, paint). Copies are
// cheap; a list is written by one thread (each thread of a prepare notes into its own).
class TileFetch {
 public:
  using Get = std::function<TilePtr(const TileKey&)>;
  TileFetch() = default;
  template <typename F>
  requires(!std::is_same_v<std::decay_t<F>, TileFetch> &&
           std::is_invocable_r_v<TilePtr, F&, const TileKey&>) TileFetch(F get)
      : get_(std::move(get)) {}  // NOLINT: any tile getter is a quiet fetch

  TilePtr operator()(const TileKey& key) const {
    TilePtr t = get_ ? get_(key) : nullptr;
    if (!t && missed_) missed_->push_back(key);
    return t;
  }
  // The same source, noting what it did not have into `missed` (null: not noting).
  TileFetch noting(std::vector<TileKey>* missed) const {
    TileFetch f = *this;
    f.missed_ = missed;
    return f;
  }
  TileFetch quiet() const { return noting(nullptr); }
  bool notes() const { return missed_ != nullptr; }
  // The same source, told a row's tiles together before it is asked for each of them: a loading
  // source reads the tiles that share chunks in one pass (loadingFetch).
  using Ahead = std::function<void(const std::vector<TileKey>&)>;
  TileFetch readingAhead(Ahead ahead) const {
    TileFetch f = *this;
    f.ahead_ = std::move(ahead);
    return f;
  }
  bool readsAhead() const { return static_cast<bool>(ahead_); }
  void ahead(const std::vector<TileKey>& keys) const {
    if (ahead_) ahead_(keys);
  }

 private:
  Get get_;
  Ahead ahead_;
  std::vector<TileKey>* missed_ = nullptr;
};

class TileStore;
// A fetch that loads what is not in memory, on the calling thread (figures, benchmarks, tests):
// TileStore::load, with a row's heatmap tiles read together (TileStore::loadAll).
TileFetch loadingFetch(TileStore& store);

// The coarsest level with bucket width <= nsPerPx, or -1 (raw) if level 0 is wider.
int chooseLevel(const LodGrid& grid, double nsPerPx);

struct ThrottleBand {
  double x0 = 0, x1 = 0;  // pixels
  uint32_t reasons = 0;   // slowdown reason bits seen in the band
  // Strong: the analysis counts the time as throttled (busy, clock below its threshold). Weak: a
  // reason bit is set but the clock stayed near its maximum.
  bool strong = false;
};

struct CounterGeometry {
  int level = -1;  // the level drawn (-1 raw samples)
  bool complete = true;
  // Envelope (lo/hi per column) or Samples (points): dense data is always an envelope, also when
  // computed from raw samples; sparse samples (under one per pixel) are drawn as points.
  enum class Mode { Envelope, Samples } mode = Mode::Envelope;
  // Envelope mode: per pixel column, the min and max of the samples under it (NaN: no sample).
  std::vector<float> lo, hi;
  // Raw mode: sample-and-hold polyline points (x px, value); a segment ends where a gap starts.
  struct Point {
    double x;
    float v;
  };
  std::vector<Point> points;
  std::vector<size_t> segmentStarts;  // indices into points
  std::vector<ThrottleBand> bands;
  float visibleMin = kNaNf, visibleMax = kNaNf;
  bool raw() const { return mode == Mode::Samples; }
};

struct CounterSource {
  int run = 0;
  int gpu = 0;
  int metric = 0;  // index into the run's telemetry metrics
  int64_t gapThresholdNs = 1'000'000'000;
  bool throttleBands = true;
};

// The staircase of sample-mode geometry as a per-column envelope over `cols` columns: each
// sample holds until the next one of its segment (the columns it covers get its value, the column
// of the next sample both values); a segment's last sample covers its own column only. Columns
// no segment reaches stay NaN (gaps). Bands and visible range are kept. An envelope is returned
// unchanged.
CounterGeometry samplesAsEnvelope(const CounterGeometry& g, size_t cols);

CounterGeometry buildCounterGeometry(const RunFile& run, const CounterSource& src,
                                     const TimeMapping& map, const TileFetch& fetch);

struct KernelBox {
  double x0 = 0, x1 = 0;  // pixels, x1 - x0 >= 1
  KernelClass cls = KernelClass::Compute;
  uint32_t name = 0;
  size_t event = 0;  // index within the track
  int64_t start_ns = 0, dur_ns = 0;
};

struct KernelGeometry {
  int level = -1;
  bool complete = true;
  // Per pixel column busy fraction per class (events narrower than a pixel, or pyramid levels).
  std::array<std::vector<float>, kKernelClassCount> busy;
  // Events at least one pixel wide.
  std::vector<KernelBox> boxes;
  bool raw() const { return level < 0; }
};

struct KernelSource {
  int run = 0;
  int track = 0;
};

KernelGeometry buildKernelGeometry(const RunFile& run, const KernelSource& src,
                                   const TimeMapping& map, const TileFetch& fetch);

// Heatmap: one row per GPU, one value per pixel column (mean or max of the buckets under it).
// O(GPUs x buckets in view); blocks of GPUs are built on the cores side by side (parallelBlocks),
// with the same values whatever the thread count.
struct HeatmapGeometry {
  int level = 0;
  bool complete = true;
  size_t rows = 0, columns = 0;
  std::vector<float> values;  // [row][column], NaN: no data
};

// `storage`: an earlier geometry's values to reuse (their contents do not matter), which spares a
// frame the allocation of a new grid.
HeatmapGeometry buildHeatmapGeometry(const RunFile& run, int runIndex, int metric, bool useMax,
                                     const TimeMapping& map, const TileFetch& fetch,
                                     std::vector<float> storage = {});

// A power heatmap's rows as power domains' power: every device's row shows its domain's power.
// A GCD without power of its own takes the row of the GCD reporting its package's; devices that
// each report a share show the sum of the shares (NaN where one is missing). Boards are unchanged.
void showDomainPower(HeatmapGeometry& g, const RunFile& run);

}  // namespace wl
