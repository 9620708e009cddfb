// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/counters.h"

#include <cmath>

namespace wl {

double counterDelta(double prev, double cur) {
  constexpr double k32 = 4294967296.0;  // 2^32
  if (cur >= prev) return cur - prev;
  if (prev < k32) return (k32 - 1.0 - prev) + cur;
  return kNaN;
}

CounterSummary summarizeCounter(std::span<const int64_t> t, std::span<const double> v,
                                TimeRange range) {
  CounterSummary s;
  double total = 0.0;
  size_t prev = SIZE_MAX;
  const size_t n = std::min(t.size(), v.size());
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(v[j]) || !range.contains(t[j])) continue;
    if (prev != SIZE_MAX) {
      const double d = counterDelta(v[prev], v[j]);
      if (v[j] < v[prev]) {
        if (std::isnan(d)) {
          ++s.resets;
        } else {
          if (s.wraps == 0) s.first_wrap_ns = t[j];
          ++s.wraps;
        }
      }
      if (!std::isnan(d)) {
        total += d;
        ++s.intervals;
      }
    }
    prev = j;
  }
  if (s.intervals > 0) s.total = total;
  return s;
}

std::vector<CounterSummary> counterSummaries(const RunFile& run, const std::vector<int>& gpus,
                                             TimeRange range) {
  std::vector<CounterSummary> out;
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  for (const MetricInfo& m : meta.metrics) {
    if (m.kind != MetricKind::Counter) continue;
    for (int g : gpus) {
      if (g < 0 || static_cast<size_t>(g) >= meta.entities) continue;
      const Samples s = run.readSamples(SeriesKind::Gpu, static_cast<size_t>(g), m.id, range.t0,
                                        range.t1 == INT64_MAX ? INT64_MAX : range.t1 - 1, false);
      CounterSummary c = summarizeCounter(s.t_ns, s.v, range);
      c.gpu = g;
      c.metric = m.id;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace wl
