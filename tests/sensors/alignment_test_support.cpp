// SPDX-License-Identifier: GPL-3.0-or-later
#include "alignment_test_support.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "sim/sim_test_support.h"

namespace wl::test {

import::AlignmentEstimate estimateFromRun(const RunFile& run, std::string_view metric){
    std::vector<import::MetricSamples> series;
for (size_t g = 0; g < run.gpus().size(); ++g) {
  const Samples s = run.readAllSamples(SeriesKind::Gpu, g, metric);
  series.push_back({s.t_ns, s.v});
}
std::map<int, import::TracedActivity> byRank;
for (size_t t = 0; t < run.tracks().size(); ++t) {
  import::TracedActivity& a = byRank[run.tracks()[t].rank];
  for (const KernelEvent& e : run.readAllKernels(t))
    if (e.kind == GpuEventKind::Kernel) a.kernels.emplace_back(e.start_ns, e.start_ns + e.dur_ns);
}
std::vector<import::TracedActivity> ranks;
for (auto& [rank, a] : byRank) {
  a.lo = INT64_MAX, a.hi = INT64_MIN;
  for (auto [s, e] : a.kernels)
    a.lo = std::min(a.lo, s), a.hi = std::max(a.hi, e);
  if (!a.kernels.empty()) ranks.push_back(a);
}
return import::estimateAlignment(series, ranks);
}  // namespace wl::test

import::AlignmentEstimate appliedEstimate(const RunFile& run){
    const import::AlignmentEstimate u = estimateFromRun(run, "util_pct");
if (u.estimated && u.confident) return u;
const import::AlignmentEstimate p = estimateFromRun(run, "power_w");
if (!u.estimated || (p.estimated && p.correlation > u.correlation)) return p;
return u;
}

sim::SimConfig alignmentConfig(double offsetS, double windowS) {
  sim::SimConfig c = tinyConfig();
  c.gpusPerNode = 2, c.dp = 2, c.gbs = 8;
  c.durationS = 12;
  c.linkCounters = false;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  c.telemetryOffsetS = offsetS;
  c.powerWindowS = windowS;
  return c;
}

}  // namespace wl::test
