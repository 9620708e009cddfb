// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/gaps.h"

#include <cmath>

#include "analysis/telemetry_stats.h"

namespace wl {

std::vector<Gap> findGapsInSamples(std::span<const int64_t> t, std::span<const double> v,
                                   int64_t gapThresholdNs, TimeRange range, int gpu) {
  std::vector<Gap> out;
  const size_t n = std::min(t.size(), v.size());
  size_t prev = SIZE_MAX;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(v[j])) continue;
    if (prev != SIZE_MAX && t[j] - t[prev] > gapThresholdNs && t[j] > range.t0 &&
        t[prev] < range.t1)
      out.push_back({gpu, t[prev], t[j]});
    prev = j;
  }
  return out;
}

std::vector<Gap> findGaps(const RunFile& run, std::string_view metric, const std::vector<int>& gpus,
                          TimeRange range) {
  std::vector<Gap> out;
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (!meta.metric(metric)) return out;
  // Whole-run coverage from the pyramid alone (a whole-run plan has no raw edges).
  const std::vector<MetricStats> whole = metricStats(run, metric, gpus, TimeRange{});
  const double spanS = static_cast<double>(run.info().end_ns - run.info().start_ns) * 1e-9;
  for (size_t k = 0; k < gpus.size(); ++k) {
    const int g = gpus[k];
    if (g < 0 || static_cast<size_t>(g) >= meta.entities) continue;
    if (whole[k].samples < 2) continue;
    const int64_t thr = meta.gapThresholdNs[static_cast<size_t>(g)];
    // Float sums of many segments: allow a nanosecond per segment of rounding.
    const double slack = 1e-9 * static_cast<double>(whole[k].samples);
    if (whole[k].covered_s + slack >= spanS - static_cast<double>(thr) * 1e-9) continue;
    const Samples s = run.readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g), metric);
    auto gaps = findGapsInSamples(s.t_ns, s.v, thr, range, g);
    out.insert(out.end(), gaps.begin(), gaps.end());
  }
  return out;
}

}  // namespace wl
