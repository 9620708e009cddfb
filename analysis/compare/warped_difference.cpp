// SPDX-License-Identifier: GPL-3.0-or-later
// A − B of a metric on A's clock through a time warp, with its summary (warped_difference.h).
#include "analysis/compare/warped_difference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "loaders/core/error.h"

namespace wl {
namespace {

void checkGpu(const RunFile& run, int gpu) {
  if (gpu < 0 || static_cast<size_t>(gpu) >= run.gpus().size())
    throw Error(fmt::format("{}: no GPU {} in the run (it has {} GPUs)", run.path().string(), gpu,
                            run.gpus().size()));
}

struct StatsAcc {
  size_t n = 0;
  double sa = 0, sb = 0, sd = 0, sabs = 0, ssq = 0, maxAbs = 0;
  void add(double a, double b) {
    const double d = a - b;
    ++n;
    sa += a, sb += b, sd += d, sabs += std::fabs(d), ssq += d * d;
    maxAbs = std::max(maxAbs, std::fabs(d));
  }
  DifferenceStats stats() const {
    DifferenceStats s;
    s.n = n;
    if (!n) return s;
    const auto k = static_cast<double>(n);
    s.mean_a = sa / k, s.mean_b = sb / k, s.mean = sd / k, s.mean_abs = sabs / k;
    s.rms = std::sqrt(ssq / k);
    s.max_abs = maxAbs;
    return s;
  }
};

void accumulate(StatsAcc& acc, const WarpedDifference& d) {
  for (size_t i = 0; i < d.t_ns.size(); ++i)
    acc.add(d.a[i], d.b[i]);
}

}  // namespace

WarpedDifference warpedDifference(const RunFile& a, int gpuA, const RunFile& b, int gpuB,
                                  std::string_view metric, const TimeWarp& warp, TimeRange rangeA) {
  checkGpu(a, gpuA);
  checkGpu(b, gpuB);
  for (const RunFile* r : {&a, &b})
    if (!r->series().metric(metric))
      throw Error(fmt::format("{}: no GPU metric '{}' in the run", r->path().string(), metric));
  WarpedDifference out;
  out.gpu_a = gpuA;
  out.gpu_b = gpuB;
  const Samples sa = a.readSamples(SeriesKind::Gpu, static_cast<size_t>(gpuA), metric, rangeA.t0,
                                   rangeA.t1, false);
  if (sa.t_ns.empty()) return out;
  // B's samples under A's, with the one before (the value held at the first).
  const Samples sb = b.readSamples(SeriesKind::Gpu, static_cast<size_t>(gpuB), metric,
                                   warp.toB(sa.t_ns.front()), warp.toB(sa.t_ns.back()), true);
  const int64_t gapB = b.series().gapThresholdNs[static_cast<size_t>(gpuB)];
  size_t j = 0;
  StatsAcc acc;
  for (size_t i = 0; i < sa.t_ns.size(); ++i) {
    const int64_t t = sa.t_ns[i];
    if (!rangeA.contains(t) || !std::isfinite(sa.v[i])) continue;
    const int64_t tb = warp.toB(t);
    while (j + 1 < sb.t_ns.size() && sb.t_ns[j + 1] <= tb)
      ++j;
    if (sb.t_ns.empty() || sb.t_ns[j] > tb || tb - sb.t_ns[j] > gapB || !std::isfinite(sb.v[j]))
      continue;
    out.t_ns.push_back(t);
    out.a.push_back(sa.v[i]);
    out.b.push_back(sb.v[j]);
    acc.add(sa.v[i], sb.v[j]);
  }
  out.stats = acc.stats();
  return out;
}

WarpedDifferences warpedDifferences(const RunFile& a, const RunFile& b,
                                    const std::vector<std::pair<int, int>>& pairs,
                                    std::string_view metric, const TimeWarp& warp,
                                    TimeRange rangeA) {
  WarpedDifferences out;
  StatsAcc acc;
  for (const auto& [ga, gb] : pairs) {
    out.pairs.push_back(warpedDifference(a, ga, b, gb, metric, warp, rangeA));
    accumulate(acc, out.pairs.back());
  }
  out.stats = acc.stats();
  return out;
}

std::optional<TimeRange> commonStepWindow(const RunFile& a, const RunFile& b) {
  const std::vector<int64_t> steps = commonSteps(a, b);
  if (steps.empty()) return std::nullopt;
  TimeRange w{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (const Iteration& it : a.iterations())
    if (std::binary_search(steps.begin(), steps.end(), it.step)) {
      w.t0 = std::min(w.t0, it.start_ns);
      w.t1 = std::max(w.t1, it.end_ns);
    }
  return w;
}

}  // namespace wl
