// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/difference_geometry.h"

#include <algorithm>
#include <cmath>

#include "widgets/timeline/model/tile_store.h"

namespace wl {
namespace {

// A run's clock on the display: its offset, or its warp when it has one.
struct Clock {
  int64_t offset = 0;
  const TimeWarp* warp = nullptr;
  int64_t toDisplay(int64_t t) const { return warp ? warp->toA(t) : t + offset; }
  int64_t fromDisplay(int64_t t) const { return warp ? warp->toB(t) : t - offset; }
  // The display's range on the run's clock, as a linear mapping (a warp's mean stretch).
  TimeMapping over(const TimeMapping& display) const {
    return TimeMapping{fromDisplay(display.t0), fromDisplay(display.t1), display.width};
  }
};

// All tiles of a key family covering [t0, t1] of a run's clock, or nullopt (a noting fetch notes
// every missing one).
std::optional<std::vector<TilePtr>> tilesFor(TileKey key, int64_t first, int64_t last,
                                             const TileFetch& fetch) {
  std::vector<TilePtr> out;
  bool all = true;
  for (int64_t i = first; i <= last; ++i) {
    key.index = i;
    TilePtr t = fetch(key);
    if (!t) {
      all = false;
      continue;
    }
    out.push_back(std::move(t));
  }
  if (!all) return std::nullopt;
  return out;
}

struct Sample {
  int64_t t;  // display time
  float v;
};

// Raw samples of one GPU and metric around the view, on the display clock; `last` when they
// include the run's last sample of it (the last tile was fetched).
struct RawSamples {
  std::vector<Sample> samples;
  bool last = false;
};
std::optional<RawSamples> rawSamples(const RunFile& run, int runIndex, int gpu, int metric,
                                     const Clock& clock, const TimeMapping& display,
                                     const TileFetch& fetch) {
  const LodGrid& g = run.series().grid;
  const TimeMapping m = clock.over(display);
  const int64_t w = g.widths_ns[0] * static_cast<int64_t>(kTileBuckets);
  const int64_t lastTile = static_cast<int64_t>((g.buckets[0] - 1) / kTileBuckets);
  auto idx = [&](int64_t t) { return std::clamp<int64_t>((t - g.origin_ns) / w, 0, lastTile); };
  auto tiles = tilesFor(TileKey{runIndex, TileKind::CounterRaw, gpu, metric, -1, 0}, idx(m.t0),
                        idx(m.t1), fetch);
  if (!tiles) return std::nullopt;
  RawSamples out;
  out.last = idx(m.t1) == lastTile;
  for (size_t j = 0; j < tiles->size(); ++j) {
    const auto& t = std::get<CounterRawTile>(*(*tiles)[j]);
    for (size_t k = 0; k < t.t.size(); ++k) {
      const bool own = t.t[k] >= t.t0 && t.t[k] < t.t1;
      const bool lead = j == 0 && t.t[k] < t.t0;
      const bool trail = j + 1 == tiles->size() && t.t[k] >= t.t1;
      if (own || lead || trail) out.samples.push_back({clock.toDisplay(t.t[k]), t.v[k]});
    }
  }
  return out;
}

// Per column time-weighted means of one GPU and metric from its pyramid (NaN: no data).
std::optional<std::vector<float>> columnMeans(const RunFile& run, int runIndex, int gpu, int metric,
                                              const Clock& clock, const TimeMapping& display,
                                              const TileFetch& fetch) {
  const LodGrid& g = run.series().grid;
  const TimeMapping m = clock.over(display);
  const int level = std::max(0, chooseLevel(g, m.nsPerPx()));
  const auto b0 = static_cast<int64_t>(g.bucketOf(static_cast<size_t>(level), m.t0));
  const auto b1 = static_cast<int64_t>(g.bucketOf(static_cast<size_t>(level), m.t1));
  const auto T = static_cast<int64_t>(kTileBuckets);
  auto tiles = tilesFor(TileKey{runIndex, TileKind::CounterLod, gpu, metric, level, 0}, b0 / T,
                        b1 / T, fetch);
  if (!tiles) return std::nullopt;
  const auto cols = static_cast<size_t>(std::ceil(display.width));
  std::vector<double> sum(cols, 0.0);
  std::vector<int> n(cols, 0);
  const int64_t w = g.widths_ns[static_cast<size_t>(level)];
  for (const TilePtr& tp : *tiles) {
    const auto& t = std::get<CounterLodTile>(*tp);
    for (size_t i = 0; i < t.mean.size(); ++i) {
      if (std::isnan(t.mean[i])) continue;
      const int64_t mid = g.bucketStart(static_cast<size_t>(level), t.bucket0 + i) + w / 2;
      const double x = display.x(clock.toDisplay(mid));
      if (x < 0 || x >= static_cast<double>(cols)) continue;
      sum[static_cast<size_t>(x)] += t.mean[i];
      ++n[static_cast<size_t>(x)];
    }
  }
  std::vector<float> out(cols, kNaNf);
  for (size_t c = 0; c < cols; ++c)
    if (n[c]) out[c] = static_cast<float>(sum[c] / n[c]);
  return out;
}

void note(DifferenceGeometry& g, float v) {
  g.minV = std::isnan(g.minV) ? v : std::min(g.minV, v);
  g.maxV = std::isnan(g.maxV) ? v : std::max(g.maxV, v);
}

}  // namespace

DifferenceGeometry buildDifferenceGeometry(const RunFile& a, const RunFile& b,
                                           const DifferenceSource& src, const TimeMapping& display,
                                           const TileFetch& fetch) {
  DifferenceGeometry g;
  const LodGrid& ga = a.series().grid;
  if (ga.levels() == 0 || b.series().grid.levels() == 0 || display.span() <= 0) return g;
  const Clock clockA{src.offsetA, src.warpA ? &*src.warpA : nullptr};
  const Clock clockB{src.offsetB, src.warpB ? &*src.warpB : nullptr};
  const TimeMapping ma = clockA.over(display);
  if (chooseLevel(ga, ma.nsPerPx()) < 0) {
    auto ra = rawSamples(a, src.runA, src.gpuA, src.metricA, clockA, display, fetch);
    auto rb = rawSamples(b, src.runB, src.gpuB, src.metricB, clockB, display, fetch);
    if (ra && rb) {
      const std::vector<Sample>* sa = &ra->samples;
      const std::vector<Sample>* sb = &rb->samples;
      g.samples = true;
      const int64_t gapB = b.series().gapThresholdNs[static_cast<size_t>(src.gpuB)];
      const int64_t gapA = a.series().gapThresholdNs[static_cast<size_t>(src.gpuA)];
      size_t j = 0;  // B's sample held at A's time
      int64_t prevT = 0;
      bool open = false;
      // B's data ends at its last sample: A's samples after it have nothing to be compared with
      // (sample-and-hold goes on to B's next sample, and there is none).
      const bool bEnds = rb->last && !sb->empty();
      for (const Sample& s : *sa) {
        while (j + 1 < sb->size() && (*sb)[j + 1].t <= s.t)
          ++j;
        const bool pastEnd = bEnds && j + 1 == sb->size() && s.t > (*sb)[j].t;
        const bool have = !sb->empty() && (*sb)[j].t <= s.t && s.t - (*sb)[j].t <= gapB &&
                          !pastEnd && std::isfinite((*sb)[j].v) && std::isfinite(s.v);
        if (!have) {
          open = false;
          continue;
        }
        const float d = s.v - (*sb)[j].v;
        if (!open || s.t - prevT > gapA) g.segmentStarts.push_back(g.points.size());
        g.points.push_back({display.x(s.t), d});
        prevT = s.t;
        open = true;
        if (s.t >= display.t0 && s.t <= display.t1) note(g, d);
      }
      return g;
    }
    g.complete = false;  // fall through to the pyramids while the samples load
  }
  auto ca = columnMeans(a, src.runA, src.gpuA, src.metricA, clockA, display,
                        g.complete ? fetch : fetch.quiet());
  auto cb = columnMeans(b, src.runB, src.gpuB, src.metricB, clockB, display,
                        g.complete ? fetch : fetch.quiet());
  if (!ca || !cb) {
    g.complete = false;
    return g;
  }
  g.column.assign(ca->size(), kNaNf);
  for (size_t c = 0; c < ca->size(); ++c) {
    if (std::isnan((*ca)[c]) || std::isnan((*cb)[c])) continue;
    g.column[c] = (*ca)[c] - (*cb)[c];
    note(g, g.column[c]);
  }
  return g;
}

}  // namespace wl
