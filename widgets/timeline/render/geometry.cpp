// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/geometry.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/parallel.h"
#include "loaders/core/throttle_reasons.h"
#include "widgets/timeline/model/tile_store.h"

namespace wl {
namespace {

size_t columnsOf(const TimeMapping& map) {
  return static_cast<size_t>(std::max(0.0, std::ceil(map.width)));
}

// Tile indices [first, last] of a level covering the mapping's range.
std::pair<int64_t, int64_t> lodTiles(const LodGrid& g, size_t level, const TimeMapping& map) {
  const auto b0 = static_cast<int64_t>(g.bucketOf(level, map.t0));
  const auto b1 = static_cast<int64_t>(g.bucketOf(level, map.t1));
  return {b0 / static_cast<int64_t>(kTileBuckets), b1 / static_cast<int64_t>(kTileBuckets)};
}

std::pair<int64_t, int64_t> rawTiles(const LodGrid& g, const TimeMapping& map) {
  const int64_t w = g.widths_ns[0] * static_cast<int64_t>(kTileBuckets);
  const int64_t last = static_cast<int64_t>((g.buckets[0] - 1) / kTileBuckets);
  auto idx = [&](int64_t t) { return std::clamp<int64_t>((t - g.origin_ns) / w, 0, last); };
  return {idx(map.t0), idx(map.t1)};
}

// Widens the envelope of columns [c0, c1] (already clamped) by [mn, mx]; NaN columns start there.
void widenColumns(float* lo, float* hi, long c0, long c1, float mn, float mx) {
  for (long c = c0; c <= c1; ++c) {
    if (std::isnan(lo[c])) {
      lo[c] = mn;
      hi[c] = mx;
    } else {
      lo[c] = std::min(lo[c], mn);
      hi[c] = std::max(hi[c], mx);
    }
  }
}

// Fetches every tile of [first, last]; returns them if all are there, else nullopt. A noting
// fetch asks for each (so every missing one is noted); a quiet one stops at the first missing.
std::optional<std::vector<TilePtr>> fetchAll(TileKey key, std::pair<int64_t, int64_t> range,
                                             const TileFetch& fetch) {
  std::vector<TilePtr> tiles;
  bool all = true;
  if (fetch.readsAhead() && range.second >= range.first) {
    std::vector<TileKey> keys;
    keys.reserve(static_cast<size_t>(range.second - range.first + 1));
    for (int64_t i = range.first; i <= range.second; ++i) {
      key.index = i;
      keys.push_back(key);
    }
    fetch.ahead(keys);
  }
  for (int64_t i = range.first; i <= range.second; ++i) {
    key.index = i;
    TilePtr t = fetch(key);
    if (!t) {
      all = false;
      if (!fetch.notes()) return std::nullopt;
    }
    tiles.push_back(std::move(t));
  }
  if (!all) return std::nullopt;
  return tiles;
}

// Columns [c0, c1] covered by the time span [a, b) (at least the column of a).
std::pair<long, long> columnsCovered(const TimeMapping& map, int64_t a, int64_t b) {
  const double x0 = map.x(a), x1 = map.x(b);
  const long c0 = static_cast<long>(std::floor(x0));
  long c1 = static_cast<long>(std::ceil(x1)) - 1;
  if (x1 - x0 <= 1.0 || c1 < c0) c1 = c0;
  return {c0, c1};
}

void mergeBand(std::vector<ThrottleBand>& bands, double x0, double x1, uint32_t reasons) {
  if (!bands.empty() && x0 <= bands.back().x1 + 0.5 && bands.back().reasons == reasons) {
    bands.back().x1 = std::max(bands.back().x1, x1);
    return;
  }
  bands.push_back({x0, x1, reasons});
}

void envelopeFromLod(CounterGeometry& g, const LodGrid& grid, size_t level,
                     const std::vector<TilePtr>& tiles, const TimeMapping& map) {
  const size_t cols = columnsOf(map);
  g.lo.assign(cols, kNaNf);
  g.hi.assign(cols, kNaNf);
  const int64_t w = grid.widths_ns[level];
  const double pxPerNs = 1.0 / map.nsPerPx();
  const auto last = static_cast<long>(cols) - 1;
  for (const TilePtr& tp : tiles) {
    const auto& t = std::get<CounterLodTile>(*tp);
    // Bucket i of the tile starts at x0 + i * dx; computed incrementally, exactly as map.x().
    const double x0 = static_cast<double>(grid.bucketStart(level, t.bucket0) - map.t0) * pxPerNs;
    const double dx = static_cast<double>(w) * pxPerNs;
    for (size_t i = 0; i < t.count.size(); ++i) {
      if (t.count[i] == 0) continue;
      const double xa = x0 + static_cast<double>(i) * dx;
      // floor without a libm call where truncation is the same (xa >= 0; perf found the call)
      long c0 = static_cast<long>(xa >= 0 ? xa : std::floor(xa));
      long c1 = dx <= 1.0 ? c0 : static_cast<long>(std::ceil(xa + dx)) - 1;
      if (c1 < 0 || c0 > last) continue;
      c0 = std::max(c0, 0L);
      c1 = std::min(c1, last);
      widenColumns(g.lo.data(), g.hi.data(), c0, c1, t.min[i], t.max[i]);
    }
  }
  for (size_t c = 0; c < cols; ++c) {
    if (std::isnan(g.lo[c])) continue;
    g.visibleMin = std::isnan(g.visibleMin) ? g.lo[c] : std::min(g.visibleMin, g.lo[c]);
    g.visibleMax = std::isnan(g.visibleMax) ? g.hi[c] : std::max(g.visibleMax, g.hi[c]);
  }
}

// Concatenates the raw tiles' samples that matter for the view: each tile's own samples inside
// [t0, t1], plus the last sample before t0 and the first after t1 (the tiles carry one neighbour
// on each side), so lines reach the edges and held values are known. Binary searches skip the
// rest of each tile.
template <typename Tile, typename F>
void forEachRawSample(const std::vector<TilePtr>& tiles, const TimeMapping& map, F f) {
  struct Ref {
    const Tile* tile = nullptr;
    size_t k = 0;
  };
  Ref before, after;
  for (size_t j = 0; j < tiles.size(); ++j) {
    const auto& t = std::get<Tile>(*tiles[j]);
    const auto lo = std::max(t.t0, map.t0);
    const auto hi = std::min(t.t1 - 1, map.t1);
    const size_t a =
        static_cast<size_t>(std::lower_bound(t.t.begin(), t.t.end(), lo) - t.t.begin());
    const size_t b =
        static_cast<size_t>(std::upper_bound(t.t.begin(), t.t.end(), hi) - t.t.begin());
    if (a > 0 && t.t[a - 1] < map.t0 && (!before.tile || t.t[a - 1] > before.tile->t[before.k]))
      before = {&t, a - 1};
    if (b < t.t.size() && t.t[b] > map.t1 && (!after.tile || t.t[b] < after.tile->t[after.k]))
      after = {&t, b};
    if (j == 0 && before.tile) f(*before.tile, before.k);
    for (size_t k = a; k < b; ++k)
      f(t, k);
  }
  if (after.tile) f(*after.tile, after.k);
}

void polylineFromRaw(CounterGeometry& g, const std::vector<TilePtr>& tiles, const TimeMapping& map,
                     int64_t gapNs) {
  // Samples inside the view, from each tile's bounds (the tiles do not overlap).
  size_t visible = 0;
  for (const TilePtr& tp : tiles) {
    const auto& t = std::get<CounterRawTile>(*tp);
    const auto lo = std::max(t.t0, map.t0);
    const auto hi = std::min(t.t1 - 1, map.t1);
    if (hi < lo) continue;
    visible += static_cast<size_t>(std::upper_bound(t.t.begin(), t.t.end(), hi) -
                                   std::lower_bound(t.t.begin(), t.t.end(), lo));
  }
  const size_t cols = columnsOf(map);
  auto noteVisible = [&](float v) {
    g.visibleMin = std::isnan(g.visibleMin) ? v : std::min(g.visibleMin, v);
    g.visibleMax = std::isnan(g.visibleMax) ? v : std::max(g.visibleMax, v);
  };
  if (visible > cols) {
    // Dense: the exact per-column envelope of the sample-and-hold signal. A column holds the
    // samples inside it and the value held from the previous sample, unless a gap separates them.
    // One pass over the samples: each valid sample is folded in when the next valid one is known.
    g.mode = CounterGeometry::Mode::Envelope;
    g.lo.assign(cols, kNaNf);
    g.hi.assign(cols, kNaNf);
    const double pxPerNs = 1.0 / map.nsPerPx();
    const long lastCol = static_cast<long>(cols) - 1;
    float* lo = g.lo.data();
    float* hi = g.hi.data();
    // A sample at x (its pixel position) holds until the next one's position xb when `held`,
    // covering those columns. Each sample's position is computed once: as the end of the previous
    // sample's hold and as the start of its own.
    auto fold = [&](double xa, float v, bool held, double xb) {
      long c0 = static_cast<long>(xa >= 0 ? xa : std::floor(xa));
      long c1 = c0;
      if (held) {  // ceil(xb) - 1 without a libm call: the last column xb reaches into
        const long f =
            static_cast<long>(xb) - (xb < 0 && xb != static_cast<double>(static_cast<long>(xb)));
        c1 = static_cast<double>(f) == xb ? f - 1 : f;
      }
      if (c1 < c0) c1 = c0;
      if (c1 < 0 || c0 > lastCol) return;
      c0 = std::max(c0, 0L);
      c1 = std::min(c1, lastCol);
      widenColumns(lo, hi, c0, c1, v, v);
    };
    bool havePrev = false;
    int64_t pt = 0;
    double px = 0;
    float pv = 0;
    forEachRawSample<CounterRawTile>(tiles, map, [&](const CounterRawTile& t, size_t k) {
      const float v = t.v[k];
      if (!std::isfinite(v)) return;  // invalid samples are skipped: the previous one holds
      const double x = static_cast<double>(t.t[k] - map.t0) * pxPerNs;
      if (havePrev) fold(px, pv, t.t[k] - pt <= gapNs, x);
      pt = t.t[k];
      px = x;
      pv = v;
      havePrev = true;
    });
    if (havePrev) fold(px, pv, false, 0);
    for (size_t c = 0; c < cols; ++c)
      if (!std::isnan(g.lo[c])) noteVisible(g.lo[c]), noteVisible(g.hi[c]);
    return;
  }
  struct S {
    int64_t t;
    float v;
  };
  std::vector<S> s;
  forEachRawSample<CounterRawTile>(tiles, map, [&](const CounterRawTile& t, size_t k) {
    s.push_back({t.t[k], t.v[k]});
  });
  g.mode = CounterGeometry::Mode::Samples;
  int64_t prevT = 0;
  bool open = false;
  for (const S& x : s) {
    if (!std::isfinite(x.v)) {
      open = false;
      continue;
    }
    if (!open || x.t - prevT > gapNs) g.segmentStarts.push_back(g.points.size());
    g.points.push_back({map.x(x.t), x.v});
    prevT = x.t;
    open = true;
    if (x.t >= map.t0 && x.t <= map.t1) noteVisible(x.v);
  }
}

void bandsFromRaw(CounterGeometry& g, const std::vector<TilePtr>& tiles, const TimeMapping& map,
                  int64_t gapNs) {
  struct S {
    int64_t t;
    uint32_t m;
  };
  std::vector<S> s;
  size_t total = 0;
  for (const TilePtr& tp : tiles)
    total += std::get<ThrottleRawTile>(*tp).t.size();
  s.reserve(total);
  forEachRawSample<ThrottleRawTile>(tiles, map, [&](const ThrottleRawTile& t, size_t k) {
    s.push_back({t.t[k], t.masks[k]});
  });
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].m == throttle::kUnknown) continue;
    const uint32_t r = s[i].m & throttle::kSlowdownMask;
    if (!r) continue;
    const int64_t end = i + 1 < s.size() && s[i + 1].t - s[i].t <= gapNs ? s[i + 1].t : s[i].t + 1;
    const double x0 = map.x(s[i].t), x1 = std::max(map.x(end), x0 + 1.0);
    if (x1 < 0 || x0 > map.width) continue;
    mergeBand(g.bands, x0, x1, r);
  }
}

void bandsFromLod(CounterGeometry& g, const LodGrid& grid, size_t level,
                  const std::vector<TilePtr>& tiles, const TimeMapping& map) {
  const int64_t w = grid.widths_ns[level];
  for (const TilePtr& tp : tiles) {
    const auto& t = std::get<ThrottleLodTile>(*tp);
    for (size_t i = 0; i < t.any.size(); ++i) {
      if (t.throttled[i] == 0) continue;
      const int64_t bs = grid.bucketStart(level, t.bucket0 + i);
      const double x0 = map.x(bs), x1 = std::max(map.x(bs + w), x0 + 1.0);
      if (x1 < 0 || x0 > map.width) continue;
      mergeBand(g.bands, x0, x1, t.any[i] & throttle::kSlowdownMask);
    }
  }
}

}  // namespace

CounterGeometry samplesAsEnvelope(const CounterGeometry& g, size_t cols) {
  if (!g.raw()) return g;
  CounterGeometry e;
  e.level = g.level;
  e.complete = g.complete;
  e.mode = CounterGeometry::Mode::Envelope;
  e.bands = g.bands;
  e.visibleMin = g.visibleMin;
  e.visibleMax = g.visibleMax;
  e.lo.assign(cols, kNaNf);
  e.hi.assign(cols, kNaNf);
  const long last = static_cast<long>(cols) - 1;
  auto add = [&](long c0, long c1, float v) {
    widenColumns(e.lo.data(), e.hi.data(), std::max(c0, 0L), std::min(c1, last), v, v);
  };
  auto col = [](double x) { return static_cast<long>(std::floor(x)); };
  for (size_t s = 0; s < g.segmentStarts.size(); ++s) {
    const size_t a = g.segmentStarts[s];
    const size_t b = s + 1 < g.segmentStarts.size() ? g.segmentStarts[s + 1] : g.points.size();
    for (size_t i = a; i < b; ++i) {
      const auto& p = g.points[i];
      // Held up to the next sample's column (which the step reaches), else its own column.
      const long c1 = i + 1 < b ? col(g.points[i + 1].x) : col(p.x);
      add(col(p.x), c1, p.v);
    }
  }
  return e;
}

TileFetch loadingFetch(TileStore& store) {
  const TileFetch load = [&store](const TileKey& k) { return store.load(k); };
  return load.readingAhead([&store](const std::vector<TileKey>& keys) { store.loadAll(keys); });
}

int chooseLevel(const LodGrid& grid, double nsPerPx) {
  int best = -1;
  for (size_t k = 0; k < grid.levels(); ++k)
    if (static_cast<double>(grid.widths_ns[k]) <= nsPerPx) best = static_cast<int>(k);
  return best;
}

CounterGeometry buildCounterGeometry(const RunFile& run, const CounterSource& src,
                                     const TimeMapping& map, const TileFetch& fetch) {
  CounterGeometry g;
  const SeriesGroupMeta& tel = run.series(SeriesKind::Gpu);
  const LodGrid& grid = tel.grid;
  if (grid.levels() == 0 || map.span() <= 0) return g;
  const int want = chooseLevel(grid, map.nsPerPx());
  const bool bands = src.throttleBands && tel.hasThrottle;
  // Without the reason pyramid, bands come from raw masks only (when zoomed in).
  const bool lodBands = bands && tel.hasThrottleLod;

  TileKey base{src.run, TileKind::CounterLod, src.gpu, src.metric, 0, 0};
  TileKey bandBase{src.run, TileKind::ThrottleLod, src.gpu, -1, 0, 0};

  // The wanted level first (noting what is missing), then coarser complete levels.
  for (int level = want; level < static_cast<int>(grid.levels()); ++level) {
    const bool first = level == want;
    const TileFetch miss = first ? fetch : fetch.quiet();
    if (level < 0) {
      TileKey raw = base;
      raw.kind = TileKind::CounterRaw;
      raw.level = -1;
      auto tiles = fetchAll(raw, rawTiles(grid, map), miss);
      std::optional<std::vector<TilePtr>> bandTiles;
      if (bands) {
        TileKey rb = bandBase;
        rb.kind = TileKind::ThrottleRaw;
        rb.level = -1;
        bandTiles = fetchAll(rb, rawTiles(grid, map), miss);
      }
      if (!tiles || (bands && !bandTiles)) continue;
      g.level = -1;
      g.complete = first;
      polylineFromRaw(g, *tiles, map, src.gapThresholdNs);
      if (bands) bandsFromRaw(g, *bandTiles, map, src.gapThresholdNs);
      return g;
    }
    TileKey k = base;
    k.level = level;
    auto tiles = fetchAll(k, lodTiles(grid, static_cast<size_t>(level), map), miss);
    std::optional<std::vector<TilePtr>> bandTiles;
    if (lodBands) {
      TileKey bk = bandBase;
      bk.level = level;
      bandTiles = fetchAll(bk, lodTiles(grid, static_cast<size_t>(level), map), miss);
    }
    if (!tiles || (lodBands && !bandTiles)) continue;
    g.level = level;
    g.complete = first;
    envelopeFromLod(g, grid, static_cast<size_t>(level), *tiles, map);
    if (lodBands) bandsFromLod(g, grid, static_cast<size_t>(level), *bandTiles, map);
    return g;
  }
  g.complete = false;
  return g;
}

namespace {

// Draws raw events: boxes for those at least a pixel wide, busy fractions for the others.
void kernelsFromRaw(KernelGeometry& g, const std::vector<TilePtr>& tiles, const TimeMapping& map) {
  const size_t cols = g.busy[0].size();
  for (size_t j = 0; j < tiles.size(); ++j) {
    const auto& t = std::get<KernelRawTile>(*tiles[j]);
    for (size_t i = 0; i < t.events.size(); ++i) {
      const KernelEvent& e = t.events[i];
      // An event that began in an earlier tile was taken from that tile.
      if (j > 0 && e.start_ns < t.t0) continue;
      const int64_t end = e.start_ns + e.dur_ns;
      if (end < map.t0 || e.start_ns >= map.t1) continue;
      const double x0 = map.x(e.start_ns), x1 = map.x(end);
      if (x1 - x0 >= 1.0) {
        g.boxes.push_back({x0, x1, e.cls, e.name, t.index[i], e.start_ns, e.dur_ns});
        continue;
      }
      auto& busy = g.busy[static_cast<size_t>(e.cls) % kKernelClassCount];
      const long c0 = static_cast<long>(std::floor(x0));
      const long c1 = static_cast<long>(std::floor(x1));
      for (long c = std::max(c0, 0L); c <= std::min(c1, static_cast<long>(cols) - 1); ++c) {
        const double lo = std::max(x0, static_cast<double>(c));
        const double hi = std::min(x1, static_cast<double>(c + 1));
        if (hi > lo) busy[static_cast<size_t>(c)] += static_cast<float>(hi - lo);
      }
    }
  }
}

void kernelsFromLod(KernelGeometry& g, const LodGrid& grid, size_t level,
                    const std::vector<TilePtr>& tiles, const TimeMapping& map) {
  const size_t cols = g.busy[0].size();
  const double nsPerPx = map.nsPerPx();
  const int64_t w = grid.widths_ns[level];
  // A bucket narrower than a pixel adds its share of the pixel's time; a wider one (a coarser
  // fallback level) paints its fraction over every column it covers.
  const double share = static_cast<double>(w) < nsPerPx ? static_cast<double>(w) / nsPerPx : 1.0;
  for (const TilePtr& tp : tiles) {
    const auto& t = std::get<KernelLodTile>(*tp);
    for (size_t i = 0; i < t.count.size(); ++i) {
      const int64_t bs = grid.bucketStart(level, t.bucket0 + i);
      auto [c0, c1] = columnsCovered(map, bs, bs + w);
      if (c1 < 0 || c0 >= static_cast<long>(cols)) continue;
      for (long c = std::max(c0, 0L); c <= std::min(c1, static_cast<long>(cols) - 1); ++c)
        for (size_t cl = 0; cl < kKernelClassCount; ++cl)
          g.busy[cl][static_cast<size_t>(c)] += static_cast<float>(t.busy[cl][i] * share);
    }
  }
}

// Events the pyramid level counts inside the mapping's range.
uint64_t eventsInView(const LodGrid& grid, size_t level, const std::vector<TilePtr>& tiles,
                      const TimeMapping& map) {
  uint64_t n = 0;
  const size_t b0 = grid.bucketOf(level, map.t0), b1 = grid.bucketOf(level, map.t1);
  for (const TilePtr& tp : tiles) {
    const auto& t = std::get<KernelLodTile>(*tp);
    for (size_t i = 0; i < t.count.size(); ++i)
      if (t.bucket0 + i >= b0 && t.bucket0 + i <= b1) n += t.count[i];
  }
  return n;
}

}  // namespace

KernelGeometry buildKernelGeometry(const RunFile& run, const KernelSource& src,
                                   const TimeMapping& map, const TileFetch& fetch) {
  KernelGeometry g;
  const LodGrid& grid = run.kernelGrid();
  const size_t cols = columnsOf(map);
  for (auto& b : g.busy)
    b.assign(cols, 0.0f);
  if (grid.levels() == 0 || map.span() <= 0) return g;
  // Raw events are drawn when the view holds few enough of them (so wide kernels are boxes with
  // names, whatever the zoom); otherwise the coarsest pyramid level no wider than a pixel.
  const uint64_t rawBudget = std::max<uint64_t>(4000, 2 * cols);
  const int want = chooseLevel(grid, map.nsPerPx());
  bool tryRaw = want < 0;
  if (!tryRaw) {
    TileKey k{src.run, TileKind::KernelLod, src.track, -1, want, 0};
    auto tiles = fetchAll(k, lodTiles(grid, static_cast<size_t>(want), map), fetch.quiet());
    if (tiles && eventsInView(grid, static_cast<size_t>(want), *tiles, map) <= rawBudget)
      tryRaw = true;
  }
  if (tryRaw) {
    TileKey k{src.run, TileKind::KernelRaw, src.track, -1, -1, 0};
    if (auto tiles = fetchAll(k, rawTiles(grid, map), fetch)) {
      g.level = -1;
      kernelsFromRaw(g, *tiles, map);
      return g;
    }
  }
  const int first = std::max(want, 0);
  for (int level = first; level < static_cast<int>(grid.levels()); ++level) {
    const bool wanted = level == first && !tryRaw;
    TileKey k{src.run, TileKind::KernelLod, src.track, -1, level, 0};
    auto tiles = fetchAll(k, lodTiles(grid, static_cast<size_t>(level), map),
                          wanted ? fetch : fetch.quiet());
    if (!tiles) continue;
    g.level = level;
    g.complete = wanted;
    kernelsFromLod(g, grid, static_cast<size_t>(level), *tiles, map);
    return g;
  }
  g.complete = false;
  return g;
}

HeatmapGeometry buildHeatmapGeometry(const RunFile& run, int runIndex, int metric, bool useMax,
                                     const TimeMapping& map, const TileFetch& fetch,
                                     std::vector<float> storage) {
  HeatmapGeometry g;
  const SeriesGroupMeta& tel = run.series(SeriesKind::Gpu);
  const LodGrid& grid = tel.grid;
  g.rows = tel.entities;
  g.columns = columnsOf(map);
  // The storage of an earlier frame's values is reused as it is: every row is set to NaN below
  // by the thread that fills it, so a frame neither faults in fresh pages nor clears 8 MB (1,024
  // GPUs x 2,000 columns) on one core first.
  g.values = std::move(storage);
  g.values.resize(g.rows * g.columns);
  auto noData = [&g] { std::fill(g.values.begin(), g.values.end(), kNaNf); };
  if (grid.levels() == 0 || g.rows == 0 || map.span() <= 0) {
    noData();
    return g;
  }
  // A heatmap shows a colour per pixel, not an envelope: buckets up to two pixels wide are
  // plenty and read a quarter of the data of the finer level.
  const int want = std::max(0, chooseLevel(grid, 2.0 * map.nsPerPx()));
  for (int level = want; level < static_cast<int>(grid.levels()); ++level) {
    const bool first = level == want;
    TileKey k{runIndex, TileKind::Heatmap, -1, metric, level, 0};
    auto tiles =
        fetchAll(k, lodTiles(grid, static_cast<size_t>(level), map), first ? fetch : fetch.quiet());
    if (!tiles) continue;
    g.level = level;
    g.complete = first;
    const int64_t w = grid.widths_ns[static_cast<size_t>(level)];
    // The columns each bucket covers are the same for every GPU: computed once per tile.
    struct Span {
      size_t bucket;
      long c0, c1;
    };
    std::vector<std::vector<Span>> spans(tiles->size());
    for (size_t ti = 0; ti < tiles->size(); ++ti) {
      const auto& t = std::get<HeatmapTile>(*(*tiles)[ti]);
      for (size_t b = 0; b < t.buckets; ++b) {
        const int64_t bs = grid.bucketStart(static_cast<size_t>(level), t.bucket0 + b);
        auto [c0, c1] = columnsCovered(map, bs, bs + w);
        if (c1 < 0 || c0 >= static_cast<long>(g.columns)) continue;
        spans[ti].push_back({b, std::max(c0, 0L), std::min(c1, static_cast<long>(g.columns) - 1)});
      }
    }
    // Per GPU, buckets arrive in time order, so columns only move right: a running mean per
    // column needs no per-cell scratch memory. GPUs write disjoint rows, so blocks of them run
    // on the cores side by side (inputs are the shared, read-only tiles and spans).
    size_t cells = 0;
    for (const auto& s : spans)
      cells += s.size();
    parallelBlocks(g.rows, std::max(cells, g.columns) * g.rows, [&](size_t e) {
      float* row = g.values.data() + e * g.columns;
      // Columns are written left to right, each once: the NaN of a column without data is
      // written when the walk passes it (no clearing of the row first).
      size_t next = 0;  // the first column not yet written
      long col = -1;
      double acc = 0;  // the column's sum (mean) or largest value (max) so far
      int n = 0;
      auto flush = [&] {
        if (col < 0) return;
        if (static_cast<size_t>(col) > next) std::fill(row + next, row + col, kNaNf);
        // One or two buckets per column are the common case: their mean needs no division (x *
        // 0.5 is x / 2 exactly), which otherwise held the loop up for half its time.
        const double value = useMax ? acc : n == 1 ? acc : n == 2 ? acc * 0.5 : acc / n;
        row[col] = static_cast<float>(value);
        next = std::max(next, static_cast<size_t>(col) + 1);
      };
      for (size_t ti = 0; ti < tiles->size(); ++ti) {
        const auto& t = std::get<HeatmapTile>(*(*tiles)[ti]);
        const float* vals = (useMax ? t.max.data() : t.mean.data()) + e * t.buckets;
        for (const Span& sp : spans[ti]) {
          const float v = vals[sp.bucket];
          if (std::isnan(v)) continue;
          for (long c = sp.c0; c <= sp.c1; ++c) {
            if (c != col) {
              flush();
              col = c;
              acc = v;
              n = 1;
            } else {
              acc = useMax ? std::max(acc, static_cast<double>(v)) : acc + v;
              ++n;
            }
          }
        }
      }
      flush();
      std::fill(row + next, row + g.columns, kNaNf);
    });
    return g;
  }
  noData();
  g.complete = false;
  return g;
}

void showDomainPower(HeatmapGeometry& g, const RunFile& run) {
  if (g.rows != run.gpus().size()) return;
  const std::vector<float> own = g.values;  // rows as read, before any is replaced
  auto rowOf = [&](int gpu) { return own.data() + static_cast<size_t>(gpu) * g.columns; };
  for (const PowerDomain& d : run.domains()) {
    if (d.gpus.size() < 2) continue;
    for (size_t c = 0; c < g.columns; ++c) {
      float v = kNaNf;
      if (d.power_gpu >= 0) {
        v = rowOf(d.power_gpu)[c];
      } else {
        double sum = 0;
        for (int m : d.gpus)
          sum += rowOf(m)[c];  // NaN if a share is missing
        v = static_cast<float>(sum);
      }
      for (int m : d.gpus)
        g.values[static_cast<size_t>(m) * g.columns + c] = v;
    }
  }
}

}  // namespace wl
