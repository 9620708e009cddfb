// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/iterations.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace wl {

SpreadStats spreadOf(std::vector<double> v) {
  SpreadStats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  double sum = 0;
  for (double x : v)
    sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v)
    ss += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(ss / static_cast<double>(v.size()));
  if (s.mean != 0) s.cv = s.stddev / s.mean;
  return s;
}

IterationStats analyzeIterations(const std::vector<Iteration>& iterations,
                                 const std::vector<int>& ranks, TimeRange range) {
  IterationStats out;
  struct StepAcc {
    int64_t start = INT64_MAX, end = INT64_MIN;
    double minDur = INFINITY, maxDur = -INFINITY;
    int ranks = 0;
  };
  std::map<int64_t, StepAcc> steps;
  std::map<int, std::vector<double>> perRank;
  for (const Iteration& it : iterations) {
    if (!ranks.empty() && std::find(ranks.begin(), ranks.end(), it.rank) == ranks.end()) continue;
    if (it.end_ns <= it.start_ns || it.start_ns < range.t0 || it.end_ns > range.t1) continue;
    const double d = static_cast<double>(it.end_ns - it.start_ns) * 1e-9;
    StepAcc& s = steps[it.step];
    s.start = std::min(s.start, it.start_ns);
    s.end = std::max(s.end, it.end_ns);
    s.minDur = std::min(s.minDur, d);
    s.maxDur = std::max(s.maxDur, d);
    ++s.ranks;
    perRank[it.rank].push_back(d);
  }
  std::vector<double> durs, spreads;
  for (const auto& [step, s] : steps) {
    StepTime st{
        step,   s.start, s.end, static_cast<double>(s.end - s.start) * 1e-9, s.maxDur - s.minDur,
        s.ranks};
    durs.push_back(st.duration_s);
    spreads.push_back(st.rank_spread_s);
    out.steps.push_back(st);
  }
  out.step_s = spreadOf(durs);
  out.rank_spread_s = spreadOf(spreads);
  for (auto& [rank, d] : perRank)
    out.ranks.push_back({rank, spreadOf(d)});
  return out;
}

}  // namespace wl
