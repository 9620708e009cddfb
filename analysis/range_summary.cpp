// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/range_summary.h"

#include <algorithm>
#include <cmath>

#include "analysis/interval_set.h"
#include "analysis/range_plan.h"
#include "loaders/core/metrics.h"

namespace wl {
namespace {

// Adds the per-class union of raw events overlapping [lo, hi), clipped, and the events that start
// in it.
void addRawEvents(const RunFile& run, size_t track, int64_t lo, int64_t hi, TrackBusy& out) {
  if (hi <= lo) return;
  const KernelSlice s = run.readKernels(track, lo, hi);
  std::array<IntervalSet, kKernelClassCount> u;
  for (const KernelEvent& e : s.events) {
    if (e.start_ns >= lo && e.start_ns < hi) ++out.events;
    const int64_t a = std::max(e.start_ns, lo);
    const int64_t b = std::min(e.start_ns + std::max<int64_t>(e.dur_ns, 0), hi);
    if (b <= a) continue;
    IntervalSet& set = u[static_cast<size_t>(e.cls)];
    if (!set.empty() && a <= set.back().end) {
      set.back().end = std::max(set.back().end, b);
    } else {
      set.push_back({a, b});
    }
  }
  for (size_t c = 0; c < kKernelClassCount; ++c)
    out.busy_ns[c] += totalLength(u[c]);
}

}  // namespace

const MetricStats* GpuRangeSummary::metric(std::string_view id) const {
  for (const auto& [m, s] : metrics)
    if (m == id) return &s;
  return nullptr;
}

TrackBusy trackBusy(const RunFile& run, size_t track, TimeRange range) {
  TrackBusy out;
  const LodGrid& grid = run.kernelGrid();
  if (grid.levels() == 0) {
    addRawEvents(run, track, range.t0, range.t1, out);
    return out;
  }
  const RangePlan plan = planRange(grid, run.info().start_ns, run.info().end_ns, range);
  if (plan.range.empty()) return out;
  if (plan.hasWhole()) {
    const KernelLodBlock b = run.readKernelLod(track, plan.level, plan.b0, plan.buckets());
    const auto w = static_cast<double>(grid.widths_ns[plan.level]);
    for (size_t c = 0; c < kKernelClassCount; ++c) {
      double ns = 0;
      for (float f : b.busy[c])
        ns += static_cast<double>(f) * w;
      out.busy_ns[c] += static_cast<int64_t>(std::llround(ns));
    }
    for (uint32_t n : b.count)
      out.events += n;
    addRawEvents(run, track, plan.range.t0, plan.wholeStart, out);
    addRawEvents(run, track, plan.wholeEnd, plan.range.t1, out);
  } else {
    addRawEvents(run, track, plan.range.t0, plan.range.t1, out);
  }
  return out;
}

RangeSummary summarizeRange(const RunFile& run, int64_t t0, int64_t t1,
                            const std::vector<int>& gpus, const std::vector<int>& ranks,
                            const AnalysisOptions& options) {
  RangeSummary out;
  const int64_t runEnd = run.info().end_ns + 1;
  out.range = {std::max(t0, run.info().start_ns), std::min(t1, runEnd)};
  const TimeRange planned{out.range.t0, t1 >= runEnd ? INT64_MAX : out.range.t1};
  std::vector<int> ids;
  for (int g : gpus)
    if (g >= 0 && static_cast<size_t>(g) < run.gpus().size()) ids.push_back(g);
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  out.gpus.resize(ids.size());
  for (size_t k = 0; k < ids.size(); ++k)
    out.gpus[k].gpu = ids[k];
  if (!out.range.empty() && !ids.empty()) {
    std::vector<std::string> gauges;
    for (const MetricInfo& m : meta.metrics)
      if (m.kind == MetricKind::Gauge) gauges.push_back(m.id);
    const std::vector<std::vector<MetricStats>> st =
        metricStatsOfMetrics(run, gauges, ids, planned);
    for (size_t j = 0; j < gauges.size(); ++j)
      for (size_t k = 0; k < ids.size(); ++k) {
        out.gpus[k].metrics.emplace_back(gauges[j], st[j][k]);
        if (gauges[j] == metric::kPower) out.gpus[k].energy_j = st[j][k].integral;
      }
    const auto util = std::find(gauges.begin(), gauges.end(), metric::kUtil);
    const std::vector<GpuThrottle> th = detectThrottle(
        run, ids, planned, options,
        util == gauges.end() ? nullptr : &st[static_cast<size_t>(util - gauges.begin())]);
    for (size_t k = 0; k < ids.size(); ++k) {
      GpuRangeSummary& g = out.gpus[k];
      g.has_clock = th[k].has_clock;
      g.busy_s = th[k].busy_s;
      g.throttled_s = th[k].throttled_s;
      g.throttled_fraction = th[k].fraction();
      g.by_cause_s = th[k].by_cause_s;
      for (size_t c = 0; c < kThrottleCauseCount; ++c)
        g.by_cause_fraction[c] = th[k].causeFraction(static_cast<ThrottleCause>(c));
      g.throttle_intervals = th[k].intervals;
    }
  }
  for (int rank : ranks) {
    RankRangeSummary r;
    r.rank = rank;
    for (const RankInfo& ri : run.ranks())
      if (ri.rank == rank) r.gpu = ri.gpu;
    bool known = false;
    for (size_t t = 0; t < run.tracks().size(); ++t) {
      if (run.tracks()[t].rank != rank) continue;
      known = true;
      ++r.streams;
      if (out.range.empty()) continue;
      const TrackBusy b = trackBusy(run, t, planned);
      r.events += b.events;
      for (size_t c = 0; c < kKernelClassCount; ++c)
        r.stream_busy_ns[c] += b.busy_ns[c];
    }
    if (known || r.gpu >= 0) out.ranks.push_back(r);
  }
  return out;
}

}  // namespace wl
