// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/gpu_series.h"

#include <string_view>

#include "loaders/core/metrics.h"
#include "loaders/format/run_file.h"

namespace wl {
namespace {

constexpr double kNsPerS = 1e9;

std::vector<double> aligned(const RunFile& run, size_t gpu, std::string_view id,
                            const std::vector<int64_t>& t) {
  std::vector<double> out(t.size(), kNaN);
  if (!run.series().metric(id)) return out;
  const Samples s = run.readAllSamples(SeriesKind::Gpu, gpu, id);
  if (s.t_ns.size() == t.size()) return s.v;
  // Metrics of one GPU share their timestamps in the native format; anything else is matched.
  size_t j = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    while (j < s.t_ns.size() && s.t_ns[j] < t[i])
      ++j;
    if (j < s.t_ns.size() && s.t_ns[j] == t[i]) out[i] = s.v[j];
  }
  return out;
}

}  // namespace

GpuSeries readGpuSeries(const RunFile& run, size_t gpu) {
  GpuSeries g;
  const Samples p = run.readAllSamples(SeriesKind::Gpu, gpu, metric::kTemp);
  const int64_t t0 = run.info().start_ns;
  g.t.reserve(p.t_ns.size());
  for (int64_t t : p.t_ns)
    g.t.push_back(static_cast<double>(t - t0) / kNsPerS);
  g.temp = p.v;
  g.power = aligned(run, gpu, metric::kPower, p.t_ns);
  g.clock = aligned(run, gpu, metric::kSmClock, p.t_ns);
  g.util = aligned(run, gpu, metric::kUtil, p.t_ns);
  if (run.series().hasThrottle && !p.t_ns.empty()) {
    g.reasons = run.readThrottle(gpu, p.first, p.t_ns.size());
    if (g.reasons.size() != p.t_ns.size()) g.reasons.clear();
  }
  return g;
}

}  // namespace wl
