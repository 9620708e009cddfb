// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/threshold_time.h"

#include <algorithm>
#include <cmath>

#include "analysis/range_plan.h"

namespace wl {

void accumulateAbove(ThresholdTime& acc, std::span<const int64_t> t, std::span<const double> v,
                     int64_t gapThresholdNs, double level, bool inclusive, const Interval& piece,
                     const TimeRange& range) {
  const size_t n = std::min(t.size(), v.size());
  size_t prev = SIZE_MAX;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(v[j])) continue;
    if (prev != SIZE_MAX) {
      const size_t i = prev;
      const bool above = inclusive ? v[i] >= level : v[i] > level;
      const int64_t d = t[j] - t[i];
      const int64_t a = std::max(t[i], range.t0), b = std::min(t[j], range.t1);
      if (above && t[i] >= piece.start && t[i] < piece.end && d > 0 && d <= gapThresholdNs &&
          b > a) {
        acc.time_s += static_cast<double>(b - a) * 1e-9;
        acc.peak = std::isnan(acc.peak) ? v[i] : std::max(acc.peak, v[i]);
        if (!acc.runs.empty() && acc.runs.back().end == a) {
          acc.runs.back().end = b;
        } else {
          acc.runs.push_back({a, b});
        }
      }
    }
    prev = j;
  }
}

void finishAbove(ThresholdTime& acc) {
  std::sort(acc.runs.begin(), acc.runs.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& r : acc.runs) {
    if (!merged.empty() && merged.back().end == r.start) {
      merged.back().end = r.end;
    } else {
      merged.push_back(r);
    }
  }
  acc.runs = std::move(merged);
}

std::vector<ThresholdTime> timeAbove(const RunFile& run, std::string_view metric,
                                     const std::vector<int>& gpus,
                                     const std::vector<double>& levels, bool inclusive,
                                     TimeRange range, bool withRuns) {
  std::vector<ThresholdTime> out(gpus.size());
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (!meta.metric(metric) || meta.grid.levels() == 0) return out;
  const RangePlan plan = planRange(meta.grid, run.info().start_ns, run.info().end_ns, range);
  if (plan.range.empty()) return out;
  const PyramidRows rows(run, SeriesKind::Gpu, metric, plan.level, gpus, plan.b0, plan.b1);
  for (size_t k = 0; k < gpus.size(); ++k) {
    const int g = gpus[k];
    const double level = k < levels.size() ? levels[k] : kNaN;
    if (g < 0 || static_cast<size_t>(g) >= meta.entities || std::isnan(level)) continue;
    if (meta.samples(static_cast<size_t>(g)) == 0) continue;
    std::vector<bool> raw(plan.buckets(), false);
    for (size_t b = plan.b0; b < plan.b1; ++b) {
      const auto c = rows.at(g, b);
      if (c.count == 0) continue;
      const double mx = c.max, mn = c.min;
      const bool anyAbove = inclusive ? mx >= level : mx > level;
      const bool allAbove = inclusive ? mn >= level : mn > level;
      if (allAbove && !withRuns) {
        out[k].time_s += c.dt;
      } else {
        raw[b - plan.b0] = anyAbove;
      }
    }
    const int64_t thr = meta.gapThresholdNs[static_cast<size_t>(g)];
    for (const Interval& piece : rawPieces(plan, meta.grid, raw)) {
      const Interval w = rawWindow(piece, plan.range, thr);
      const Samples s =
          run.readSamples(SeriesKind::Gpu, static_cast<size_t>(g), metric, w.start, w.end, false);
      accumulateAbove(out[k], s.t_ns, s.v, thr, level, inclusive, piece, plan.range);
    }
    finishAbove(out[k]);
    if (!withRuns) {
      out[k].runs.clear();
      out[k].peak = kNaN;
    }
  }
  return out;
}

}  // namespace wl
