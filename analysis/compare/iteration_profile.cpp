// SPDX-License-Identifier: GPL-3.0-or-later
// The typical iteration of a GPU's metric over normalized step phase (iteration_profile.h).
#include "analysis/compare/iteration_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/compare/iteration_compare.h"
#include "loaders/core/error.h"

namespace wl {

ProfileBand iterationProfile(const RunFile& run, int gpu, std::string_view metric,
                             const std::vector<StepTime>& steps, size_t bins) {
  if (gpu < 0 || static_cast<size_t>(gpu) >= run.gpus().size())
    throw Error(fmt::format("{}: no GPU {} in the run (it has {} GPUs)", run.path().string(), gpu,
                            run.gpus().size()));
  if (bins == 0) throw Error("iteration profile: the number of bins must be positive");
  ProfileBand out;
  out.mean.assign(bins, kNaN);
  out.min.assign(bins, kNaN);
  out.max.assign(bins, kNaN);
  out.steps.assign(bins, 0);
  if (steps.empty() || !run.series().metric(metric)) return out;
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (const StepTime& st : steps)
    t0 = std::min(t0, st.start_ns), t1 = std::max(t1, st.end_ns);
  const auto g = static_cast<size_t>(gpu);
  const Samples s = run.readSamples(SeriesKind::Gpu, g, metric, t0, t1, true);
  const int64_t gap = run.series().gapThresholdNs[g];
  std::vector<double> sum(bins, 0.0);
  for (const StepTime& st : steps) {
    const double len = static_cast<double>(st.end_ns - st.start_ns);
    for (size_t j = 0; j < bins; ++j) {
      const int64_t t =
          st.start_ns + static_cast<int64_t>(std::floor((static_cast<double>(j) + 0.5) /
                                                        static_cast<double>(bins) * len));
      // The last sample at or before t.
      const auto it = std::upper_bound(s.t_ns.begin(), s.t_ns.end(), t);
      if (it == s.t_ns.begin()) continue;
      const auto i = static_cast<size_t>(std::prev(it) - s.t_ns.begin());
      const double v = s.v[i];
      if (t - s.t_ns[i] > gap || !std::isfinite(v)) continue;
      sum[j] += v;
      ++out.steps[j];
      out.min[j] = std::isnan(out.min[j]) ? v : std::min(out.min[j], v);
      out.max[j] = std::isnan(out.max[j]) ? v : std::max(out.max[j], v);
    }
  }
  for (size_t j = 0; j < bins; ++j)
    if (out.steps[j]) out.mean[j] = sum[j] / out.steps[j];
  return out;
}

std::vector<StepTime> typicalSteps(const RunFile& run) {
  std::vector<StepTime> steps = completedSteps(run);
  if (steps.size() >= 3) steps.erase(steps.begin());
  return steps;
}

IterationProfiles iterationProfiles(const RunFile& a, const RunFile& b,
                                    const std::vector<std::pair<int, int>>& pairs,
                                    const IterationProfileOptions& options,
                                    const Progress& progress) {
  IterationProfiles out;
  out.bins = options.bins;
  const std::vector<StepTime> sa = typicalSteps(a), sb = typicalSteps(b);
  for (const StepTime& s : sa)
    out.steps_a.push_back(s.step);
  for (const StepTime& s : sb)
    out.steps_b.push_back(s.step);
  std::vector<std::string> metrics;
  for (const std::string& m : options.metrics)
    (a.series().metric(m) && b.series().metric(m) ? metrics : out.missing).push_back(m);
  if (sa.empty() || sb.empty()) return out;
  for (size_t p = 0; p < pairs.size(); ++p) {
    progress.report(static_cast<double>(p) / static_cast<double>(pairs.size()),
                    "typical iteration");
    PairProfile pp;
    pp.gpu_a = pairs[p].first;
    pp.gpu_b = pairs[p].second;
    for (const std::string& m : metrics) {
      const MetricInfo& info = *a.series().metric(m);
      pp.metrics.push_back({m, info.label, info.unit,
                            iterationProfile(a, pp.gpu_a, m, sa, options.bins),
                            iterationProfile(b, pp.gpu_b, m, sb, options.bins)});
    }
    out.pairs.push_back(std::move(pp));
  }
  progress.report(1.0, "typical iteration");
  return out;
}

}  // namespace wl
