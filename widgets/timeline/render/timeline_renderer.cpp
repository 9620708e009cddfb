// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/timeline_renderer.h"

#include <QFontMetricsF>
#include <QPaintEngine>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "analysis/parallel.h"
#include "loaders/core/metrics.h"
#include "loaders/core/time_format.h"
#include "widgets/timeline/model/warp_spans.h"
#include "widgets/timeline/render/raster_track.h"
#include "widgets/timeline/render/vector_track.h"

namespace wl {
namespace {

template <class... Ts>
struct Overload : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overload(Ts...) -> Overload<Ts...>;

// The image a raster row of `c` is drawn into: its whole device pixels, at least one.
QSize imageSize(const QRectF& c) {
  return {std::max(1, static_cast<int>(std::ceil(c.width()))),
          std::max(1, static_cast<int>(std::ceil(c.height())))};
}

}  // namespace

// Until a frame is prepared, paint finds no tile.
TimelineRenderer::TimelineRenderer(TileStore& store, TileReads reads)
    : store_(store), reads_(reads), fetch_([](const TileKey&) { return TilePtr{}; }) {}

void TimelineRenderer::clearCaches() {
  cache_.clear();
  images_.clear();
  warpedImages_.clear();
  extents_.clear();
  busyExtents_.clear();
  partialExtents_.clear();
  partialBusyExtents_.clear();
  missingTiles_.clear();
  nodeSeparators_.clear();
  untraced_.clear();
}

const std::vector<TimeSpan>& TimelineRenderer::untracedOf(int run, int rank) {
  const auto key = std::make_pair(run, rank);
  if (auto it = untraced_.find(key); it != untraced_.end()) return it->second;
  const RunFile& r = store_.run(run);
  return untraced_.emplace(key, untracedSpans(r, traceWindows(r, rank))).first->second;
}

void TimelineRenderer::setStyle(const RenderStyle& style) {
  if (style.throttleTint != style_.throttleTint) cache_.clear();
  style_ = style;
  ++styleVersion_;
}

void TimelineRenderer::setRunDisplay(int run, RunDisplay d) {
  const RunDisplay old = displays_.of(run);
  const bool analysis = old.throttle != d.throttle || old.throttleSpans != d.throttleSpans;
  if (!analysis && old.warp == d.warp && old.label == d.label) return;
  if (analysis) cache_.clear();
  displays_.set(run, std::move(d));
  ++styleVersion_;
}

TimelineRenderer::RowGeometry TimelineRenderer::geometry(const RowContent& content,
                                                         const TimeMapping& map,
                                                         const TileFetch& fetch) {
  RowGeometry g;
  if (const auto* c = std::get_if<CounterRow>(&content)) {
    const CounterView v = counter(*c, map, fetch);
    g.counter = v.geometry;
    g.range = v.range;
  } else if (const auto* d = std::get_if<DifferenceRow>(&content)) {
    const DifferenceView v = difference(*d, map, fetch);
    g.difference = v.geometry;
    g.range = v.range;
  } else if (const auto* o = std::get_if<OverlayRow>(&content)) {
    g.range = overlayRange(*o, map, fetch);
  } else if (const auto* k = std::get_if<KernelsRow>(&content)) {
    g.kernels = kernelGeometry(*k, map, fetch);
  } else if (const auto* h = std::get_if<HeatmapRow>(&content)) {
    g.heatmap = heatmapGeometry(*h, map, fetch);
    g.range = heatmapRange(h->run, h->metric);
  } else if (const auto* st = std::get_if<ThrottleStripRow>(&content)) {
    g.strip = throttleStripGeometry(*st, map);
  } else if (const auto* th = std::get_if<ThrottleHeatmapRow>(&content)) {
    g.throttleHeatmap = throttleHeatmapGeometry(*th, map);
  }
  return g;
}

void TimelineRenderer::retainOnly(const std::vector<const TrackRow*>& rows) {
  std::set<RowContent> keep;
  for (const TrackRow* r : rows)
    keep.insert(r->content);
  auto prune = [&keep](auto& cache) {
    for (auto it = cache.begin(); it != cache.end();)
      it = keep.count(it->first) ? std::next(it) : cache.erase(it);
  };
  prune(cache_);
  prune(images_);
  prune(warpedImages_);
}

template <typename G, typename Build>
TimelineRenderer::Cached& TimelineRenderer::cached(const RowContent& key, const TimeMapping& map,
                                                   Build build) {
  if (fresh<G>(key, map)) return cache_.find(key)->second;
  Cached& slot = cache_[key];
  slot = Cached{map, epoch_, ~uint64_t{0}, {}, build()};
  return slot;
}

CounterGeometry TimelineRenderer::buildCounter(const CounterRow& row, const TimeMapping& map,
                                               const TileFetch& fetch) const {
  const RunFile& run = store_.run(row.run);
  CounterSource src;
  src.run = row.run;
  src.gpu = row.gpu;
  src.metric = row.metric;
  src.gapThresholdNs = run.series().gapThresholdNs[static_cast<size_t>(row.gpu)];
  src.throttleBands = style_.throttleTint;
  CounterGeometry g = buildCounterGeometry(run, src, map, fetch);
  const auto* perGpu = displays_.throttleSpans(row.run);
  if (style_.throttleTint && perGpu && static_cast<size_t>(row.gpu) < perGpu->size()) {
    const auto& spans = (*perGpu)[static_cast<size_t>(row.gpu)];
    // Spans are sorted by start: skip to the first that can reach the view.
    auto first = std::lower_bound(spans.begin(), spans.end(), map.t0,
                                  [](const ThrottleSpan& s, int64_t t) { return s.t1 < t; });
    for (auto sp = first; sp != spans.end() && sp->t0 <= map.t1; ++sp) {
      const double x0 = map.x(sp->t0), x1 = std::max(map.x(sp->t1), x0 + 1.0);
      if (!g.bands.empty() && g.bands.back().strong && x0 <= g.bands.back().x1 + 0.5 &&
          g.bands.back().reasons == sp->reasons) {
        g.bands.back().x1 = std::max(g.bands.back().x1, x1);
        continue;
      }
      g.bands.push_back({x0, x1, sp->reasons, true});
    }
  }
  return g;
}

std::vector<TileKey> TimelineRenderer::prepare(std::vector<RowTarget>& rows, const TileFetch& fetch,
                                               const QFont& font) {
  std::vector<TileKey> missing = prepareGeometry(rows, fetch);
  fetch_ = fetch.noting(&missing);
  prepareImages(rows, font);
  // The other rows' images (or, in figures, their geometry) into the caches, the way paint
  // would find them.
  for (RowTarget& t : rows) {
    const TrackRow& r = *t.row;
    if (!t.image.isEmpty() && !r.isHeader() && r.kind() != RowKind::Steps) {
      rowImage(r, t.image, t.map, font);
    } else if (!warped(r.run())) {
      if (const auto* k = r.as<KernelsRow>()) kernelGeometry(*k, t.map, fetch_);
      if (const auto* h = r.as<HeatmapRow>()) heatmapGeometry(*h, t.map, fetch_);
      if (const auto* st = r.as<ThrottleStripRow>()) throttleStripGeometry(*st, t.map);
      if (const auto* th = r.as<ThrottleHeatmapRow>()) throttleHeatmapGeometry(*th, t.map);
    }
    t.range = rowRange(r, t.map, fetch_);
  }
  // Paint reads this frame's tiles (a warped row's pieces in figures) and notes nothing.
  fetch_ = fetch.quiet();
  std::vector<TileKey> out = std::exchange(missingTiles_, {});
  out.insert(out.end(), missing.begin(), missing.end());
  return out;
}

std::vector<TileKey> TimelineRenderer::prepareGeometry(const std::vector<RowTarget>& rows,
                                                       const TileFetch& fetch) {
  struct Job {
    const TrackRow* row;
    TimeMapping map;
    std::variant<CounterGeometry, KernelGeometry> geometry;
    std::vector<TileKey> missing;
  };
  std::vector<Job> jobs;
  for (const RowTarget& t : rows) {
    const auto* c = t.row->as<CounterRow>();
    const auto* k = t.row->as<KernelsRow>();
    // Warped rows are built piece by piece in paint; figures (no image) on the calling thread.
    if ((!c && !k) || warped(t.row->run()) || t.image.isEmpty()) continue;
    if (c ? fresh<CounterGeometry>(t.row->content, t.map)
          : fresh<KernelGeometry>(t.row->content, t.map))
      continue;
    if (std::any_of(jobs.begin(), jobs.end(),
                    [&](const Job& j) { return j.row->content == t.row->content; }))
      continue;
    jobs.push_back({t.row, t.map, {}, {}});
  }
  std::vector<TileKey> missing;
  if (jobs.size() < 2) return missing;  // a single row is built as the others
  // Geometry reads only tiles in memory (through `fetch`, which the store locks) and the run's
  // metadata, so the threads share nothing they write; each job notes its own missing tiles.
  // Two threads, each taking the next row (rows of one kind come together, and a kernel row
  // costs more than a counter row).
  parallelFor(jobs.size(), 2, [&](size_t i) {
    Job& j = jobs[i];
    const TileFetch noting = fetch.noting(&j.missing);
    if (const auto* c = j.row->as<CounterRow>())
      j.geometry = buildCounter(*c, j.map, noting);
    else if (const auto* k = j.row->as<KernelsRow>())
      j.geometry =
          buildKernelGeometry(store_.run(k->run), KernelSource{k->run, k->track}, j.map, noting);
  });
  for (Job& j : jobs) {
    Cached& slot = cache_[j.row->content];
    slot = Cached{j.map, epoch_, ~uint64_t{0}, {}, {}};
    std::visit([&slot](auto& g) { slot.geom = std::move(g); }, j.geometry);
    missing.insert(missing.end(), j.missing.begin(), j.missing.end());
  }
  return missing;
}

void TimelineRenderer::prepareImages(const std::vector<RowTarget>& rows, const QFont& font) {
  // The value ranges first, here (they may queue tiles); then the stale images rasterized on
  // two threads, each into its own cache entry, as contentImage would.
  struct Job {
    const TrackRow* row;
    CachedImage* image;
    QSize size;
    TimeMapping map;
    CounterView view;                         // counters
    const KernelGeometry* kernels = nullptr;  // kernel rows
  };
  std::vector<Job> jobs;
  for (const RowTarget& t : rows) {
    const auto* c = t.row->as<CounterRow>();
    const auto* k = t.row->as<KernelsRow>();
    if ((!c && !k) || warped(t.row->run()) || t.image.isEmpty()) continue;
    const CounterView v = c ? counter(*c, t.map, fetch_) : CounterView{};
    const KernelGeometry* kg = k ? kernelGeometry(*k, t.map, fetch_) : nullptr;
    CachedImage& ci = images_[t.row->content];
    if (ci.current(t.image, t.map, epoch_, styleVersion_, v.range.min, v.range.max)) continue;
    if (std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) { return j.image == &ci; }))
      continue;
    jobs.push_back({t.row, &ci, t.image, t.map, v, kg});
  }
  if (jobs.size() < 2) return;
  parallelFor(jobs.size(), 2, [&](size_t i) {
    Job& j = jobs[i];
    if (j.image->image.size() != j.size) j.image->image = QImage(j.size, QImage::Format_RGB32);
    if (const auto* c = j.row->as<CounterRow>())
      rasterCounterImage(j.image->image, *c, j.view);
    else
      rasterKernelImage(j.image->image, *j.row->as<KernelsRow>(), *j.kernels, font);
  });
  for (Job& j : jobs)
    j.image->stamp(j.map, epoch_, styleVersion_, j.view.range.min, j.view.range.max);
}

TimelineRenderer::CounterView TimelineRenderer::counter(const CounterRow& row,
                                                        const TimeMapping& map,
                                                        const TileFetch& fetch) {
  Cached& c = cached<CounterGeometry>(row, map, [&] { return buildCounter(row, map, fetch); });
  const auto& g = std::get<CounterGeometry>(c.geom);
  if (c.rangeStyle != styleVersion_) {
    c.range = valueRange(row, g);
    c.rangeStyle = styleVersion_;
  }
  return {&g, c.range};
}

const KernelGeometry* TimelineRenderer::kernelGeometry(const KernelsRow& row,
                                                       const TimeMapping& map,
                                                       const TileFetch& fetch) {
  const RunFile& run = store_.run(row.run);
  return &std::get<KernelGeometry>(
      cached<KernelGeometry>(row, map, [&] {
        return buildKernelGeometry(run, KernelSource{row.run, row.track}, map, fetch);
      }).geom);
}

const HeatmapGeometry* TimelineRenderer::heatmapGeometry(const HeatmapRow& row,
                                                         const TimeMapping& map,
                                                         const TileFetch& fetch) {
  const RunFile& run = store_.run(row.run);
  return &std::get<HeatmapGeometry>(
      cached<HeatmapGeometry>(row, map, [&] {
        // The stale geometry's grid is the new one's storage.
        std::vector<float> storage;
        if (auto it = cache_.find(row); it != cache_.end())
          if (auto* old = std::get_if<HeatmapGeometry>(&it->second.geom))
            storage = std::move(old->values);
        HeatmapGeometry g = buildHeatmapGeometry(run, row.run, row.metric, style_.heatmapMax, map,
                                                 fetch, std::move(storage));
        if (row.domainPower) showDomainPower(g, run);
        return g;
      }).geom);
}

const ThrottleStripGeometry* TimelineRenderer::throttleStripGeometry(const ThrottleStripRow& row,
                                                                     const TimeMapping& map) {
  return &std::get<ThrottleStripGeometry>(
      cached<ThrottleStripGeometry>(row, map, [&] {
        const RunThrottleView* v = displays_.throttleView(row.run);
        if (!v || static_cast<size_t>(row.gpu) >= v->gpus.size())
          return buildThrottleStrip(GpuThrottleView{}, map);
        return buildThrottleStrip(v->gpus[static_cast<size_t>(row.gpu)], map);
      }).geom);
}

const ThrottleHeatmapGeometry* TimelineRenderer::throttleHeatmapGeometry(
    const ThrottleHeatmapRow& row, const TimeMapping& map) {
  return &std::get<ThrottleHeatmapGeometry>(cached<ThrottleHeatmapGeometry>(row, map, [&] {
                                              const RunThrottleView* v =
                                                  displays_.throttleView(row.run);
                                              if (v) return buildThrottleHeatmap(*v, map);
                                              RunThrottleView none;
                                              none.gpus.resize(store_.run(row.run).gpus().size());
                                              return buildThrottleHeatmap(none, map);
                                            }).geom);
}

TimelineRenderer::DifferenceView TimelineRenderer::difference(const DifferenceRow& row,
                                                              const TimeMapping& display,
                                                              const TileFetch& fetch) {
  Cached& c = cached<DifferenceGeometry>(row, display, [&] {
    DifferenceSource src;
    src.runA = row.a.run;
    src.runB = row.b.run;
    src.gpuA = row.a.gpu;
    src.gpuB = row.b.gpu;
    src.metricA = row.a.metric;
    src.metricB = row.b.metric;
    src.offsetA = runOffset(row.a.run);
    src.offsetB = runOffset(row.b.run);
    if (warped(row.a.run)) src.warpA = displays_.runWarp(row.a.run);
    if (warped(row.b.run)) src.warpB = displays_.runWarp(row.b.run);
    return buildDifferenceGeometry(store_.run(row.a.run), store_.run(row.b.run), src, display,
                                   fetch);
  });
  const auto& g = std::get<DifferenceGeometry>(c.geom);
  if (c.rangeStyle != styleVersion_) {
    c.range = differenceRange(g);
    c.rangeStyle = styleVersion_;
  }
  return {&g, c.range};
}

std::optional<ValueRange> TimelineRenderer::rowRange(const TrackRow& row, const TimeMapping& map,
                                                     const TileFetch& fetch) {
  if (const auto* c = row.as<CounterRow>()) {
    // A warped row is drawn piece by piece: a geometry over the whole display would only evict
    // the pieces' (and the range, but for fitting the visible data, needs none).
    if (warped(c->run) && style_.yMode != YMode::FitVisible)
      return valueRange(*c, CounterGeometry{});
    return counter(*c, map, fetch).range;
  }
  if (const auto* d = row.as<DifferenceRow>()) return difference(*d, map, fetch).range;
  if (const auto* o = row.as<OverlayRow>()) return overlayRange(*o, map, fetch);
  if (const auto* h = row.as<HeatmapRow>()) return heatmapRange(h->run, h->metric);
  return std::nullopt;
}

ValueRange differenceRange(const DifferenceGeometry& g) {
  double m =
      std::max(std::fabs(static_cast<double>(g.minV)), std::fabs(static_cast<double>(g.maxV)));
  if (!std::isfinite(m) || m <= 0) m = 1;
  return {-1.1 * m, 1.1 * m};
}

TilePtr TimelineRenderer::topTile(const TileKey& key, bool& complete) {
  if (reads_ == TileReads::Queue) {
    TilePtr tp = store_.find(key);
    if (!tp) {
      missingTiles_.push_back(key);
      complete = false;
    }
    return tp;
  }
  try {
    return store_.load(key);
  } catch (const std::exception&) {  // recorded by the store; the range comes from the rest
    return nullptr;
  }
}

const std::vector<std::pair<float, float>>& TimelineRenderer::extents(int run, int metric) {
  const auto key = std::make_pair(run, metric);
  auto it = extents_.find(key);
  if (it != extents_.end()) return it->second;
  const RunFile& rf = store_.run(run);
  const SeriesGroupMeta& tel = rf.series();
  std::vector<std::pair<float, float>> out(tel.entities, {kNaNf, kNaNf});
  bool complete = true;
  if (tel.grid.levels() > 0) {
    const int top = static_cast<int>(tel.grid.levels()) - 1;
    const int64_t tiles =
        static_cast<int64_t>((tel.grid.buckets.back() + kTileBuckets - 1) / kTileBuckets);
    for (int64_t i = 0; i < tiles; ++i) {
      const TilePtr tp = topTile(TileKey{run, TileKind::Heatmap, -1, metric, top, i}, complete);
      if (!tp) continue;
      const auto& t = std::get<HeatmapTile>(*tp);
      for (size_t e = 0; e < t.entities; ++e)
        for (size_t b = 0; b < t.buckets; ++b) {
          const float lo = t.min[e * t.buckets + b], hi = t.max[e * t.buckets + b];
          if (std::isnan(lo)) continue;
          auto& [mn, mx] = out[e];
          mn = std::isnan(mn) ? lo : std::min(mn, lo);
          mx = std::isnan(mx) ? hi : std::max(mx, hi);
        }
    }
  }
  if (!complete) return partialExtents_[key] = std::move(out);
  return extents_.emplace(key, std::move(out)).first->second;
}

const std::vector<std::pair<float, float>>& TimelineRenderer::busyExtents(int run, int metric) {
  const auto key = std::make_pair(run, metric);
  auto it = busyExtents_.find(key);
  if (it != busyExtents_.end()) return it->second;
  const RunFile& rf = store_.run(run);
  const SeriesGroupMeta& tel = rf.series();
  const int util = metricIndex(rf, std::string(metric::kUtil));
  std::vector<std::pair<float, float>> out(tel.entities, {kNaNf, kNaNf});
  bool any = false, complete = true;
  if (util >= 0 && tel.grid.levels() > 0) {
    // The top level's buckets in which the GPU was busy throughout (its lowest utilization at or
    // above the detector's busy threshold): idle clocks before and after the training do not
    // stretch the axis.
    const int top = static_cast<int>(tel.grid.levels()) - 1;
    const int64_t tiles =
        static_cast<int64_t>((tel.grid.buckets.back() + kTileBuckets - 1) / kTileBuckets);
    const float busy = static_cast<float>(AnalysisOptions{}.busyUtilPct);
    for (int64_t i = 0; i < tiles; ++i) {
      const TilePtr vp = topTile(TileKey{run, TileKind::Heatmap, -1, metric, top, i}, complete);
      const TilePtr up = topTile(TileKey{run, TileKind::Heatmap, -1, util, top, i}, complete);
      if (!vp || !up) continue;
      const auto& v = std::get<HeatmapTile>(*vp);
      const auto& u = std::get<HeatmapTile>(*up);
      if (u.buckets != v.buckets || u.entities != v.entities) continue;
      for (size_t e = 0; e < v.entities && e < out.size(); ++e)
        for (size_t b = 0; b < v.buckets; ++b) {
          const size_t k = e * v.buckets + b;
          if (std::isnan(v.min[k]) || !(u.min[k] >= busy)) continue;
          auto& [mn, mx] = out[e];
          mn = std::isnan(mn) ? v.min[k] : std::min(mn, v.min[k]);
          mx = std::isnan(mx) ? v.max[k] : std::max(mx, v.max[k]);
          any = true;
        }
    }
  }
  if (!any) {  // no utilization, or never busy: every value
    const bool cachedAll = extents_.count(key) > 0;
    out = extents(run, metric);
    complete = complete && (cachedAll || extents_.count(key) > 0);
  }
  if (!complete) return partialBusyExtents_[key] = std::move(out);
  return busyExtents_.emplace(key, std::move(out)).first->second;
}

namespace {

// Ends rounded outward to a tenth of the span's decade (1,738 .. 1,992 -> 1,730 .. 2,000).
ValueRange fitted(double lo, double hi) {
  double span = hi - lo;
  const double pad = span > 0 ? 0.05 * span : std::max(1.0, 0.02 * std::fabs(hi));
  lo -= pad;
  hi += pad;
  span = hi - lo;
  const double q = std::pow(10.0, std::floor(std::log10(span)) - 1);
  return {std::floor(lo / q) * q, std::ceil(hi / q) * q, true};
}

}  // namespace

ValueRange counterRange(std::string_view metric, std::string_view unit, float lo, float hi,
                        bool fit) {
  if (unit == "%") return {0, 100};
  if (std::isnan(lo) || std::isnan(hi)) return {0, 1};
  const bool temperature = unit == "C";
  const bool clock = metric == metric::kSmClock || metric == metric::kMemClock || unit == "MHz";
  if (fit && (temperature || clock)) return fitted(lo, hi);
  double mn = lo, mx = hi;
  if (!temperature && mn >= 0 &&
      (metric == metric::kPower || metric == metric::kSmClock || metric == metric::kMemClock ||
       mn < 0.3 * mx))
    mn = 0;
  if (temperature) mn = std::floor(mn - 2);
  if (mx <= mn) mx = mn + 1;
  mx += 0.05 * (mx - mn);
  return {mn, mx};
}

ValueRange TimelineRenderer::valueRange(const CounterRow& row, const CounterGeometry& g) {
  const RunFile& run = store_.run(row.run);
  const MetricInfo& m = run.series().metrics[static_cast<size_t>(row.metric)];
  float lo = kNaNf, hi = kNaNf;
  // Fitted clocks: over the time the GPUs were busy (what a clock drop costs), see busyExtents.
  const bool clock = m.id == metric::kSmClock || m.id == metric::kMemClock || m.unit == "MHz";
  switch (style_.yMode) {
    case YMode::SharedPerMetric:
    case YMode::SharedFitted:
      for (const auto& [a, b] : style_.yMode == YMode::SharedFitted && clock
                                    ? busyExtents(row.run, row.metric)
                                    : extents(row.run, row.metric)) {
        if (std::isnan(a)) continue;
        lo = std::isnan(lo) ? a : std::min(lo, a);
        hi = std::isnan(hi) ? b : std::max(hi, b);
      }
      break;
    case YMode::PerTrack: {
      const auto& e = extents(row.run, row.metric)[static_cast<size_t>(row.gpu)];
      lo = e.first;
      hi = e.second;
      break;
    }
    case YMode::FitVisible:
      lo = g.visibleMin;
      hi = g.visibleMax;
      break;
  }
  return counterRange(m.id, m.unit, lo, hi, style_.yMode == YMode::SharedFitted);
}

ValueRange TimelineRenderer::heatmapRange(int run, int metric) {
  float lo = kNaNf, hi = kNaNf;
  for (const auto& [a, b] : extents(run, metric)) {
    if (std::isnan(a)) continue;
    lo = std::isnan(lo) ? a : std::min(lo, a);
    hi = std::isnan(hi) ? b : std::max(hi, b);
  }
  if (std::isnan(lo)) return {0, 1};
  if (hi <= lo) hi = lo + 1;
  return {lo, hi};
}

void TimelineRenderer::paintContent(QPainter& p, const TrackRow& row, const QRectF& c,
                                    const TimeMapping& map, const Highlight& highlight) {
  switch (row.kind()) {
    case RowKind::RunHeader:
    case RowKind::GroupHeader:
      p.fillRect(c, style_.theme.headerBackground);
      return;
    case RowKind::Steps: {
      p.fillRect(c, style_.theme.trackBackground);
      const auto& sr = std::get<StepsRow>(row.content);
      const TimeWarp w = displays_.runWarp(sr.run);
      paintSteps(p, sr, c, map, warped(sr.run) ? &w : nullptr);
      return;
    }
    case RowKind::Difference:
      break;
    case RowKind::Overlay:
      paintOverlay(p, std::get<OverlayRow>(row.content), c, map);
      return;
    default:
      if (warped(row.run())) {
        paintWarped(p, row, c, map);
        return;
      }
      break;
  }
  const bool raster = p.paintEngine() && p.paintEngine()->type() == QPaintEngine::Raster;
  if (raster)
    paintContentRaster(p, row, c, map, highlight);
  else
    paintContentVector(p, row, c, map);
}

ValueRange TimelineRenderer::overlayRange(const OverlayRow& row, const TimeMapping& display,
                                          const TileFetch& fetch) {
  ValueRange out{kNaN, kNaN};
  for (const CounterRow& side : {row.a, row.b}) {
    const int64_t off = runOffset(side.run);
    const TimeMapping m{display.t0 - off, display.t1 - off, display.width};
    // Whole-run ranges need no geometry (building one would evict a warped side's pieces).
    const ValueRange r = style_.yMode != YMode::FitVisible ? valueRange(side, CounterGeometry{})
                                                           : counter(side, m, fetch).range;
    out.min = std::isnan(out.min) ? r.min : std::min(out.min, r.min);
    out.max = std::isnan(out.max) ? r.max : std::max(out.max, r.max);
  }
  return out;
}

void TimelineRenderer::paintOverlayInto(QPainter& p, const OverlayRow& row, const QRectF& c,
                                        const TimeMapping& display, double lineWidth) {
  const TileFetch& fetch = fetch_;
  p.fillRect(c, style_.theme.trackBackground);
  const ValueRange vr = overlayRange(row, display, fetch);
  const QRectF data = c.adjusted(0, kDataTop, 0, -kDataBottom);
  p.setPen(QPen(style_.theme.gridLine, lineWidth, Qt::DotLine));
  for (double v : niceTicks(vr.min, vr.max, 2)) {
    const double y = vr.y(v, data);
    if (y > data.top() + 2 && y < data.bottom() - 2)
      p.drawLine(QPointF(c.left(), y), QPointF(c.right(), y));
  }
  // A first, B over it: where they agree B's line covers A's.
  for (const CounterRow& side : {row.a, row.b}) {
    const QColor colour = style_.theme.compareColor(side.run != row.a.run);
    if (warped(side.run)) {
      for (const WarpSpan& s : warpSpans(displays_.runWarp(side.run), display)) {
        p.save();
        p.setClipRect(QRectF(c.left() + s.x0, c.top(), s.x1 - s.x0, c.height()));
        const QRectF sub(c.left() + s.px0, data.top(), s.local.width, data.height());
        paintCounterVector(p, sub, *counter(side, s.local, fetch_).geometry, vr, colour, lineWidth,
                           false);
        p.restore();
      }
      continue;
    }
    const int64_t off = runOffset(side.run);
    const TimeMapping m{display.t0 - off, display.t1 - off, display.width};
    paintCounterVector(p, data, *counter(side, m, fetch_).geometry, vr, colour, lineWidth, false);
  }
  // The legend: a swatch and what differs, per run, in the top right corner.
  QFont f = p.font();
  f.setPointSizeF(std::max(6.0, (f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.8));
  p.setFont(f);
  const QFontMetricsF fm(f);
  double x = c.right() - 6;
  for (const CounterRow& side : {row.b, row.a}) {
    const bool isB = side.run != row.a.run;
    QString name = displays_.runLabel(side.run);
    if (name.isEmpty()) name = isB ? QStringLiteral("B") : QStringLiteral("A");
    const double tw = fm.horizontalAdvance(name);
    x -= tw;
    p.setPen(style_.theme.text);
    p.drawText(QPointF(x, c.top() + 2 + fm.ascent()), name);
    x -= 14;
    p.fillRect(QRectF(x, c.top() + 2 + fm.ascent() / 2 - 1, 10, 3), style_.theme.compareColor(isB));
    x -= 10;
  }
}

void TimelineRenderer::paintOverlay(QPainter& p, const OverlayRow& row, const QRectF& c,
                                    const TimeMapping& display) {
  const bool raster = p.paintEngine() && p.paintEngine()->type() == QPaintEngine::Raster;
  if (!raster) {
    paintOverlayInto(p, row, c, display, style_.hairline);
    return;
  }
  p.drawImage(c.topLeft(), overlayImage(row, imageSize(c), display, p.font()));
}

const QImage& TimelineRenderer::overlayImage(const OverlayRow& row, QSize size,
                                             const TimeMapping& display, const QFont& font) {
  CachedImage& ci = warpedImages_[RowContent{row}];
  if (!ci.current(size, display, epoch_, styleVersion_)) {
    if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
    QPainter ip(&ci.image);
    ip.setRenderHint(QPainter::Antialiasing);
    ip.setFont(font);
    paintOverlayInto(ip, row, QRectF(QPointF(0, 0), QSizeF(size)), display, 1.0);
    ci.stamp(display, epoch_, styleVersion_);
  }
  return ci.image;
}

// Each span of the warp draws into its own whole pixels, clipped to its exact extent.
void TimelineRenderer::paintWarpSpans(QPainter& q, const TrackRow& row, const QRectF& target,
                                      const TimeMapping& display) {
  for (const WarpSpan& s : warpSpans(displays_.runWarp(row.run()), display)) {
    const QRectF sub(target.left() + s.px0, target.top(), s.local.width, target.height());
    q.save();
    q.setClipRect(QRectF(target.left() + s.x0, target.top(), s.x1 - s.x0, target.height()));
    const bool raster = q.paintEngine() && q.paintEngine()->type() == QPaintEngine::Raster;
    if (raster)
      paintContentRaster(q, row, sub, s.local, {});
    else
      paintContentVector(q, row, sub, s.local);
    q.restore();
  }
}

void TimelineRenderer::paintWarped(QPainter& p, const TrackRow& row, const QRectF& c,
                                   const TimeMapping& display) {
  const bool raster = p.paintEngine() && p.paintEngine()->type() == QPaintEngine::Raster;
  if (!raster) {
    paintWarpSpans(p, row, c, display);
    return;
  }
  p.drawImage(c.topLeft(), warpedImage(row, imageSize(c), display, p.font()));
}

const QImage& TimelineRenderer::warpedImage(const TrackRow& row, QSize size,
                                            const TimeMapping& display, const QFont& font) {
  CachedImage& ci = warpedImages_[row.content];
  if (!ci.current(size, display, epoch_, styleVersion_)) {
    if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
    ci.image.fill(row.kind() == RowKind::Counter ? style_.theme.trackBackground
                                                 : style_.theme.trackAltBackground);
    QPainter ip(&ci.image);
    ip.setFont(font);
    paintWarpSpans(ip, row, QRectF(QPointF(0, 0), QSizeF(size)), display);
    ci.stamp(display, epoch_, styleVersion_);
  }
  return ci.image;
}

void TimelineRenderer::rowImage(const TrackRow& row, QSize size, const TimeMapping& map,
                                const QFont& font) {
  if (const auto* o = row.as<OverlayRow>())
    overlayImage(*o, size, map, font);
  else if (row.kind() != RowKind::Difference && warped(row.run()))
    warpedImage(row, size, map, font);
  else
    contentImage(row, size, map, font);
}

void TimelineRenderer::rasterCounterImage(QImage& img, const CounterRow& row,
                                          const CounterView& v) const {
  const CounterGeometry& g = *v.geometry;
  const ValueRange vr = v.range;
  const std::string& id = store_.run(row.run).series().metrics[static_cast<size_t>(row.metric)].id;
  const QColor colour = style_.theme.metricColor(id);
  const QRectF data =
      QRectF(0, 0, img.width(), img.height()).adjusted(0, kDataTop, 0, -kDataBottom);
  // Samples closer than the dots' spacing are drawn as their staircase's per-column envelope,
  // the fast raster path (the painter's antialiased polygons cost ~4x more); sparser samples get
  // lines and dots from the painter.
  const bool dense = g.raw() && g.points.size() >= 2 &&
                     static_cast<double>(img.width()) / static_cast<double>(g.points.size()) <= 8.0;
  if (!g.raw() || dense) {
    std::optional<CounterGeometry> steps;
    if (dense) steps = samplesAsEnvelope(g, static_cast<size_t>(img.width()));
    rasterCounter(img, steps ? *steps : g, vr, static_cast<int>(data.top()),
                  static_cast<int>(data.bottom()), colour, style_.theme);
    return;
  }
  rasterBackground(img, g.bands, style_.theme.trackBackground, style_.theme);
  QPainter ip(&img);
  ip.setPen(QPen(style_.theme.gridLine, 1.0, Qt::DotLine));
  for (double v : niceTicks(vr.min, vr.max, 2)) {
    const double y = vr.y(v, data);
    if (y > data.top() + 2 && y < data.bottom() - 2)
      ip.drawLine(QPointF(0, y), QPointF(data.right(), y));
  }
  paintCounterSamples(ip, data, g, vr, colour);
}

void TimelineRenderer::paintContentRaster(QPainter& p, const TrackRow& row, const QRectF& c,
                                          const TimeMapping& map, const Highlight& highlight) {
  const QImage* img = contentImage(row, imageSize(c), map, p.font());
  if (!img) return;
  p.drawImage(c.topLeft(), *img);
  if (const auto* kr = row.as<KernelsRow>()) {
    paintNotTraced(p, c, map, untracedOf(kr->run, kr->rank), style_.theme);
    const long hl = highlight.run == kr->run && highlight.track == kr->track ? highlight.event : -1;
    paintKernelHighlight(p, c, *kernelGeometry(*kr, map, fetch_), style_.theme, hl);
  }
}

const QImage* TimelineRenderer::contentImage(const TrackRow& row, QSize size,
                                             const TimeMapping& map, const QFont& font) {
  CachedImage& ci = images_[row.content];
  // Re-renders the image when its mapping, tiles, style, size or value range changed.
  auto render = [&](double vmin, double vmax, auto draw) {
    if (ci.current(size, map, epoch_, styleVersion_, vmin, vmax)) return;
    if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
    draw(ci.image);
    ci.stamp(map, epoch_, styleVersion_, vmin, vmax);
  };
  const QRectF local(0, 0, size.width(), size.height());
  if (const auto* cr = row.as<CounterRow>()) {
    const CounterView v = counter(*cr, map, fetch_);
    render(v.range.min, v.range.max, [&](QImage& img) { rasterCounterImage(img, *cr, v); });
  } else if (const auto* kr = row.as<KernelsRow>()) {
    const KernelGeometry* g = kernelGeometry(*kr, map, fetch_);
    render(0, 0, [&](QImage& img) { rasterKernelImage(img, *kr, *g, font); });
  } else if (const auto* dr = row.as<DifferenceRow>()) {
    const DifferenceView v = difference(*dr, map, fetch_);
    render(v.range.min, v.range.max, [&](QImage& img) {
      img.fill(style_.theme.trackBackground);
      QPainter ip(&img);
      paintDifference(ip, local.adjusted(0, kDataTop, 0, -kDataBottom), *v.geometry, v.range,
                      style_.theme);
    });
  } else if (const auto* hr = row.as<HeatmapRow>()) {
    const HeatmapGeometry* g = heatmapGeometry(*hr, map, fetch_);
    const ValueRange vr = heatmapRange(hr->run, hr->metric);
    render(vr.min, vr.max,
           [&](QImage& img) { rasterHeatmap(img, *g, vr, style_.theme, nodeSeparators(hr->run)); });
  } else if (const auto* sr = row.as<ThrottleStripRow>()) {
    const ThrottleStripGeometry* g = throttleStripGeometry(*sr, map);
    render(0, 0, [&](QImage& img) {
      QPainter ip(&img);
      paintThrottleStrip(ip, local, *g, style_.theme);
    });
  } else if (const auto* th = row.as<ThrottleHeatmapRow>()) {
    const ThrottleHeatmapGeometry* g = throttleHeatmapGeometry(*th, map);
    render(0, 0, [&](QImage& img) {
      QPainter ip(&img);
      paintThrottleHeatmap(ip, local, *g, style_.theme, nodeSeparators(th->run));
    });
  } else {
    return nullptr;
  }
  return &ci.image;
}

void TimelineRenderer::rasterKernelImage(QImage& img, const KernelsRow& row,
                                         const KernelGeometry& g, const QFont& font) const {
  const RunFile& run = store_.run(row.run);
  rasterKernelBusy(img, g, style_.theme);
  QPainter ip(&img);
  ip.setFont(font);
  paintKernelBoxes(ip, QRectF(0, 0, img.width(), img.height()), g, style_.theme,
                   [&run](uint32_t id) { return QString::fromStdString(run.str(id)); });
}

void TimelineRenderer::paintContentVector(QPainter& p, const TrackRow& row, const QRectF& c,
                                          const TimeMapping& map) {
  if (const auto* cr = row.as<CounterRow>()) {
    const CounterView v = counter(*cr, map, fetch_);
    p.fillRect(c, style_.theme.trackBackground);
    paintThrottleBandsVector(p, c, v.geometry->bands, style_.theme);
    const QRectF data = c.adjusted(0, kDataTop, 0, -kDataBottom);
    p.setPen(QPen(style_.theme.gridLine, style_.hairline, Qt::DotLine));
    for (double t : niceTicks(v.range.min, v.range.max, 2)) {
      const double y = v.range.y(t, data);
      if (y > data.top() + 2 && y < data.bottom() - 2)
        p.drawLine(QPointF(c.left(), y), QPointF(c.right(), y));
    }
    const RunFile& run = store_.run(cr->run);
    const std::string& id = run.series().metrics[static_cast<size_t>(cr->metric)].id;
    paintCounterVector(p, data, *v.geometry, v.range, style_.theme.metricColor(id),
                       style_.hairline);
  } else if (const auto* kr = row.as<KernelsRow>()) {
    const KernelGeometry* g = kernelGeometry(*kr, map, fetch_);
    const RunFile& run = store_.run(kr->run);
    p.fillRect(c, style_.theme.trackAltBackground);
    p.save();
    p.setFont(style_.labels);
    paintKernelsVector(p, c, *g, style_.theme,
                       [&run](uint32_t id) { return QString::fromStdString(run.str(id)); });
    paintNotTraced(p, c, map, untracedOf(kr->run, kr->rank), style_.theme);
    p.restore();
  } else if (const auto* dr = row.as<DifferenceRow>()) {
    p.fillRect(c, style_.theme.trackBackground);
    const DifferenceView v = difference(*dr, map, fetch_);
    paintDifference(p, c.adjusted(0, kDataTop, 0, -kDataBottom), *v.geometry, v.range,
                    style_.theme);
  } else if (const auto* hr = row.as<HeatmapRow>()) {
    p.fillRect(c, style_.theme.trackAltBackground);
    const HeatmapGeometry* g = heatmapGeometry(*hr, map, fetch_);
    paintHeatmap(p, c, *g, heatmapRange(hr->run, hr->metric), style_.theme,
                 nodeSeparators(hr->run));
  } else if (const auto* sr = row.as<ThrottleStripRow>()) {
    paintThrottleStrip(p, c, *throttleStripGeometry(*sr, map), style_.theme);
  } else if (const auto* th = row.as<ThrottleHeatmapRow>()) {
    paintThrottleHeatmap(p, c, *throttleHeatmapGeometry(*th, map), style_.theme,
                         nodeSeparators(th->run));
  }
}

const std::vector<size_t>& TimelineRenderer::nodeSeparators(int runIndex) {
  auto it = nodeSeparators_.find(runIndex);
  if (it != nodeSeparators_.end()) return it->second;
  const RunFile& run = store_.run(runIndex);
  std::vector<size_t> seps;
  for (size_t i = 1; i < run.gpus().size(); ++i)
    if (run.gpus()[i].node != run.gpus()[i - 1].node) seps.push_back(i);
  return nodeSeparators_.emplace(runIndex, std::move(seps)).first->second;
}

void TimelineRenderer::paintSteps(QPainter& p, const StepsRow& row, const QRectF& c,
                                  const TimeMapping& map, const TimeWarp* warp) {
  // A run time on the row's pixels (through the warp onto the display clock when there is one).
  auto xOf = [&](int64_t t) { return map.x(warp ? warp->toA(t) : t); };
  const int64_t t0 = warp ? warp->toB(map.t0) : map.t0;
  const int64_t t1 = warp ? warp->toB(map.t1) : map.t1;
  const RunFile& run = store_.run(row.run);
  p.save();
  p.setClipRect(c);
  QFont f = p.font();
  f.setPointSizeF(std::max(6.0, (f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.8));
  p.setFont(f);
  const QFontMetricsF fm(f);
  // Iterations and annotations are stored sorted by rank, then start.
  const auto& its = run.iterations();
  const auto itRange =
      std::equal_range(its.begin(), its.end(), row.rank,
                       Overload{[](const Iteration& a, int r) { return a.rank < r; },
                                [](int r, const Iteration& a) { return r < a.rank; }});
  const auto& ans = run.annotations();
  const auto anRange =
      std::equal_range(ans.begin(), ans.end(), row.rank,
                       Overload{[](const Annotation& a, int r) { return a.rank < r; },
                                [](int r, const Annotation& a) { return r < a.rank; }});
  const bool hasAnnotations = anRange.first != anRange.second;
  const QRectF lane = hasAnnotations ? QRectF(c.left(), c.top(), c.width(), c.height() / 2) : c;
  for (auto it = itRange.first; it != itRange.second; ++it) {
    if (it->start_ns > t1) break;
    if (it->end_ns < t0) continue;
    const double x0 = std::max(-2.0, xOf(it->start_ns));
    const double x1 = std::min(c.width() + 2, xOf(it->end_ns));
    const QRectF r(c.left() + x0, lane.top() + 1, std::max(1.0, x1 - x0), lane.height() - 2);
    QColor col = style_.theme.isDark ? QColor(0x55, 0x5f, 0x70) : QColor(0xc9, 0xd3, 0xe3);
    if ((it - itRange.first) % 2) col = col.darker(112);
    p.fillRect(r, col);
    if (r.width() > 40) {
      p.setPen(style_.theme.text);
      p.drawText(
          r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
          fm.elidedText(QObject::tr("step %1").arg(it->step), Qt::ElideRight, r.width() - 6));
    }
  }
  if (hasAnnotations) {
    const QRectF low(c.left(), c.top() + c.height() / 2, c.width(), c.height() / 2);
    for (auto a = anRange.first; a != anRange.second; ++a) {
      if (a->start_ns > t1) break;
      if (a->start_ns + a->dur_ns < t0) continue;
      const double x0 = std::max(-2.0, xOf(a->start_ns));
      const double x1 = std::min(c.width() + 2, xOf(a->start_ns + a->dur_ns));
      const QRectF r(c.left() + x0, low.top() + 1, std::max(1.0, x1 - x0), low.height() - 2);
      const QString name = QString::fromStdString(run.str(a->name));
      const QColor col =
          QColor::fromHsv(static_cast<int>(qHash(name) % 360), 70, style_.theme.isDark ? 150 : 220);
      p.fillRect(r, col);
      if (r.width() > 30) {
        p.setPen(QColor(0x10, 0x10, 0x10));
        p.drawText(r.adjusted(2, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(name, Qt::ElideRight, r.width() - 4));
      }
    }
  }
  p.restore();
}

}  // namespace wl
