// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/gaps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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

namespace {

// The GPU's samples of the range, widened on each side until it holds a finite value at or before
// range.t0 and one at or after range.t1 (or the series ends): every pair of consecutive finite
// samples that overlaps the range is then inside, so a range's gaps read the range, not the run
// (a 10-minute range of a 1,024-GPU hour read every GPU's hour when some had gaps).
Samples samplesAround(const RunFile& run, size_t gpu, std::string_view metric, TimeRange range) {
  const size_t total = run.series(SeriesKind::Gpu).samples(gpu);
  if (range.t0 == INT64_MIN && range.t1 == INT64_MAX)
    return run.readAllSamples(SeriesKind::Gpu, gpu, metric);
  int64_t lo = range.t0, hi = range.t1;
  // First widening: the range's own length, at least 1 s (in double: an open side's span would
  // overflow int64).
  const double span = static_cast<double>(range.t1) - static_cast<double>(range.t0);
  auto step = static_cast<int64_t>(std::clamp(span, 1e9, 4e18));
  for (;;) {
    Samples s = run.readSamples(SeriesKind::Gpu, gpu, metric, lo, hi, true);
    const size_t n = std::min(s.t_ns.size(), s.v.size());
    bool before = s.first == 0, after = s.first + n >= total;
    for (size_t j = 0; j < n && !(before && after); ++j)
      if (std::isfinite(s.v[j])) {
        before = before || s.t_ns[j] <= range.t0;
        after = after || s.t_ns[j] >= range.t1;
      }
    if (before && after) return s;
    // Widen what is missing (saturating at int64's ends), twice as far each time.
    if (!before) lo = lo > INT64_MIN + step ? lo - step : INT64_MIN;
    if (!after) hi = hi < INT64_MAX - step ? hi + step : INT64_MAX;
    step = step < INT64_MAX / 2 ? 2 * step : INT64_MAX;
  }
}

}  // namespace

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
    const Samples s = samplesAround(run, static_cast<size_t>(g), metric, range);
    auto gaps = findGapsInSamples(s.t_ns, s.v, thr, range, g);
    out.insert(out.end(), gaps.begin(), gaps.end());
  }
  return out;
}

}  // namespace wl
