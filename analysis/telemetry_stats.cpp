// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/telemetry_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/range_plan.h"

namespace wl {

void SeriesAccumulator::addSample(double v) {
  min = std::min(min, v);
  max = std::max(max, v);
  ++count;
}

void SeriesAccumulator::addBucket(float bmin, float bmax, uint32_t bcount, double bwsum,
                                  double btsum, double bdt) {
  if (bcount > 0) {
    min = std::min(min, static_cast<double>(bmin));
    max = std::max(max, static_cast<double>(bmax));
    count += bcount;
  }
  wsum += bwsum;
  tsum += btsum;
  dt += bdt;
}

MetricStats SeriesAccumulator::stats() const {
  MetricStats s;
  s.samples = count;
  s.covered_s = dt;
  if (count > 0) {
    s.min = min;
    s.max = max;
  }
  if (dt > 0) {
    s.mean = wsum / dt;
    s.integral = tsum;
  }
  return s;
}

void accumulateRaw(SeriesAccumulator& acc, std::span<const int64_t> t, std::span<const double> v,
                   int64_t gapThresholdNs, const Interval& piece, const TimeRange& range) {
  const size_t n = std::min(t.size(), v.size());
  const int64_t sampleLo = std::max(piece.start, range.t0);
  const int64_t sampleHi = std::min(piece.end, range.t1);
  size_t prev = SIZE_MAX;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(v[j])) continue;
    if (t[j] >= sampleLo && t[j] < sampleHi) acc.addSample(v[j]);
    if (prev != SIZE_MAX) {
      const size_t i = prev;
      const int64_t d = t[j] - t[i];
      if (t[i] >= piece.start && t[i] < piece.end && d > 0 && d <= gapThresholdNs) {
        const int64_t a = std::max(t[i], range.t0);
        const int64_t b = std::min(t[j], range.t1);
        if (b > a) {
          const double ds = static_cast<double>(b - a) * 1e-9;
          const double slope = (v[j] - v[i]) / static_cast<double>(d);
          const double va = a == t[i] ? v[i] : v[i] + slope * static_cast<double>(a - t[i]);
          const double vb = b == t[j] ? v[j] : v[i] + slope * static_cast<double>(b - t[i]);
          acc.wsum += v[i] * ds;
          acc.tsum += 0.5 * (va + vb) * ds;
          acc.dt += ds;
        }
      }
    }
    prev = j;
  }
}

MetricStats statsOfSamples(std::span<const int64_t> t, std::span<const double> v,
                           int64_t gapThresholdNs, TimeRange range) {
  SeriesAccumulator acc;
  accumulateRaw(acc, t, v, gapThresholdNs, {std::numeric_limits<int64_t>::min(), range.t1}, range);
  return acc.stats();
}

namespace {

// The whole buckets [b0, b1) of the entity's pyramid row, when the rows hold the entity.
void addBuckets(SeriesAccumulator& acc, const PyramidRows& rows, int entity, size_t b0, size_t b1) {
  if (!rows.has(entity)) return;
  for (size_t b = b0; b < b1; ++b) {
    const auto c = rows.at(entity, b);
    acc.addBucket(c.min, c.max, c.count, c.wsum, c.tsum, c.dt);
  }
}

}  // namespace

std::vector<MetricStats> metricStats(const RunFile& run, std::string_view metric,
                                     const std::vector<int>& entities, TimeRange range,
                                     SeriesKind kind) {
  return metricStatsOfMetrics(run, {std::string(metric)}, entities, range, kind)[0];
}

std::vector<std::vector<MetricStats>> metricStatsOfMetrics(const RunFile& run,
                                                           const std::vector<std::string>& metrics,
                                                           const std::vector<int>& entities,
                                                           TimeRange range, SeriesKind kind) {
  std::vector<std::vector<MetricStats>> out(metrics.size(),
                                            std::vector<MetricStats>(entities.size()));
  const SeriesGroupMeta& meta = run.series(kind);
  if (meta.grid.levels() == 0) return out;
  const RangePlan plan = planRange(meta.grid, run.info().start_ns, run.info().end_ns, range);
  if (plan.range.empty()) return out;
  // Each metric's pyramid rows of every entity in one read; an absent metric stays empty.
  std::vector<std::optional<PyramidRows>> rows(metrics.size());
  for (size_t j = 0; j < metrics.size(); ++j)
    if (meta.metric(metrics[j]))
      rows[j].emplace(run, kind, metrics[j], plan.level, entities, plan.b0, plan.b1);
  const std::vector<Interval> pieces = rawPieces(plan, meta.grid);
  // Entity by entity, every metric's edges one after the other: the entity's time stamps are
  // read for each metric's edge samples, and its chunks stay in the column's cache between them
  // (metric by metric over 1,024 GPUs, each GPU's time stamps were inflated again per metric).
  for (size_t k = 0; k < entities.size(); ++k) {
    const int e = entities[k];
    if (e < 0 || static_cast<size_t>(e) >= meta.entities) continue;
    const bool raw = meta.samples(static_cast<size_t>(e)) > 0;
    const int64_t thr = raw ? meta.gapThresholdNs[static_cast<size_t>(e)] : 0;
    for (size_t j = 0; j < metrics.size(); ++j) {
      if (!rows[j]) continue;
      SeriesAccumulator acc;
      addBuckets(acc, *rows[j], e, plan.b0, plan.b1);
      if (raw)
        for (const Interval& piece : pieces) {
          const Interval w = rawWindow(piece, plan.range, thr);
          const Samples s =
              run.readSamples(kind, static_cast<size_t>(e), metrics[j], w.start, w.end, false);
          accumulateRaw(acc, s.t_ns, s.v, thr, piece, plan.range);
        }
      out[j][k] = acc.stats();
    }
  }
  return out;
}

std::vector<MetricStats> metricStatsOfWindows(const RunFile& run, std::string_view metric,
                                              int entity, const std::vector<TimeRange>& windows,
                                              SeriesKind kind) {
  std::vector<MetricStats> out(windows.size());
  const SeriesGroupMeta& meta = run.series(kind);
  if (!meta.metric(metric) || meta.grid.levels() == 0) return out;
  if (entity < 0 || static_cast<size_t>(entity) >= meta.entities) return out;
  const auto e = static_cast<size_t>(entity);
  const bool raw = meta.samples(e) > 0;
  const int64_t thr = raw ? meta.gapThresholdNs[e] : 0;
  std::map<size_t, PyramidRows> rows;  // the entity's whole row of each level used
  std::optional<Samples> all;          // every raw sample, read at the first edge
  for (size_t i = 0; i < windows.size(); ++i) {
    const RangePlan plan = planRange(meta.grid, run.info().start_ns, run.info().end_ns, windows[i]);
    if (plan.range.empty()) continue;
    SeriesAccumulator acc;
    if (plan.b1 > plan.b0) {
      auto r = rows.find(plan.level);
      if (r == rows.end())
        r = rows.try_emplace(plan.level, run, kind, metric, plan.level, std::vector<int>{entity},
                             size_t{0}, meta.grid.buckets[plan.level])
                .first;
      addBuckets(acc, r->second, entity, plan.b0, plan.b1);
    }
    if (raw) {
      if (!all) all = run.readAllSamples(kind, e, metric);
      const std::span<const int64_t> t(all->t_ns);
      const std::span<const double> v(all->v);
      for (const Interval& piece : rawPieces(plan, meta.grid)) {
        // The samples with t in [start, end], as readSamples(..., start, end, false) reads them.
        const Interval w = rawWindow(piece, plan.range, thr);
        if (w.end < w.start) continue;
        const auto i0 =
            static_cast<size_t>(std::lower_bound(t.begin(), t.end(), w.start) - t.begin());
        const auto i1 =
            w.end == std::numeric_limits<int64_t>::max()
                ? t.size()
                : static_cast<size_t>(std::lower_bound(t.begin(), t.end(), w.end + 1) - t.begin());
        if (i1 <= i0) continue;
        accumulateRaw(acc, t.subspan(i0, i1 - i0), v.subspan(i0, i1 - i0), thr, piece, plan.range);
      }
    }
    out[i] = acc.stats();
  }
  return out;
}

}  // namespace wl
