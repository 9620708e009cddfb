// SPDX-License-Identifier: GPL-3.0-or-later
// Per-iteration values of a run from analyzeRun() over each step's window, and the comparison of
// two runs step by step (iteration_compare.h).
#include "analysis/compare/iteration_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/run_analysis.h"

namespace wl {

const std::array<IterationColumnInfo, kIterationColumnCount>& iterationColumns() {
  static const std::array<IterationColumnInfo, kIterationColumnCount> kColumns{{
      {"duration_s", "step time", "s", 3},
      {"energy_j", "energy", "J", 0},
      {"energy_per_token_j", "energy/token", "J/token", 4},
      {"mean_power_w", "mean power", "W", 1},
      {"peak_power_w", "peak power", "W", 1},
      {"peak_temp_c", "peak temp", "°C", 1},
      {"throttled_s", "throttled", "s", 3},
      {"heat_cost_s", "cost of heat", "s", 3},
      {"exposed_comm_s", "exposed comm", "s", 3},
      {"bubble_s", "bubble", "s", 3},
  }};
  return kColumns;
}

double relativeDeltaPct(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || b == 0) return kNaN;
  return 100.0 * (a - b) / std::fabs(b);
}

namespace {

void set(IterationValues& x, IterationColumn c, double v) {
  x.v[static_cast<size_t>(c)] = v;
}

}  // namespace

bool tracedThrough(const RankBreakdown& b, int64_t window_ns) {
  return b.kernels > 0 && window_ns > 0 &&
         static_cast<double>(b.span_ns) >= kTracedSpanFraction * static_cast<double>(window_ns);
}

namespace {

// A step's values from the analysis of its window.
IterationValues valuesOf(const RunFile& run, const StepTime& st, const RunAnalysis& ra) {
  IterationValues x;
  x.step = st.step;
  x.start_ns = st.start_ns;
  x.end_ns = st.end_ns;
  const RunTotals& t = ra.totals;
  set(x, IterationColumn::Duration, st.duration_s);
  set(x, IterationColumn::Energy, t.energy_j);
  const ParallelConfig& cfg = run.info().config;
  if (cfg.gbs && cfg.seq_len && *cfg.gbs > 0 && *cfg.seq_len > 0)
    set(x, IterationColumn::EnergyPerToken,
        t.energy_j / (static_cast<double>(*cfg.gbs) * static_cast<double>(*cfg.seq_len)));
  set(x, IterationColumn::MeanPower, t.mean_power_w);
  set(x, IterationColumn::PeakPower, t.peak_power_w);
  double peakTemp = kNaN;
  bool clock = false;
  CauseArray causes{};
  for (const GpuAnalysis& g : ra.gpus) {
    if (std::isfinite(g.temp.max))
      peakTemp = std::isnan(peakTemp) ? g.temp.max : std::max(peakTemp, g.temp.max);
    if (!g.throttle.has_clock) continue;
    clock = true;
    for (size_t c = 0; c < kThrottleCauseCount; ++c)
      causes[c] += g.throttle.by_cause_s[c];
  }
  set(x, IterationColumn::PeakTemp, peakTemp);
  if (clock) {
    set(x, IterationColumn::Throttled, t.throttled_s);
    x.throttled_by_cause_s = causes;
  }
  double exposed = 0, bubble = 0;
  size_t traced = 0;
  const int64_t window = ra.range.t1 - ra.range.t0;
  for (const RankAnalysis& r : ra.ranks) {
    if (!tracedThrough(r.breakdown, window)) continue;
    ++traced;
    exposed += static_cast<double>(r.breakdown.exposed_comm_ns) * 1e-9;
    bubble += static_cast<double>(window - r.breakdown.compute_ns) * 1e-9;
  }
  if (traced) {
    set(x, IterationColumn::ExposedComm, exposed / static_cast<double>(traced));
    set(x, IterationColumn::Bubble, bubble / static_cast<double>(traced));
  }
  return x;
}

}  // namespace

std::vector<StepTime> completedSteps(const RunFile& run) {
  const int64_t end = std::max(run.info().end_ns, run.info().start_ns) + 1;
  return analyzeIterations(run.iterations(), scopeRanks(run, {}), {run.info().start_ns, end}).steps;
}

std::vector<IterationValues> iterationValues(const RunFile& run, const AnalysisOptions& options,
                                             const Progress& progress,
                                             const std::vector<int64_t>* steps) {
  std::vector<StepTime> wanted;
  for (const StepTime& st : completedSteps(run))
    if (!steps || std::binary_search(steps->begin(), steps->end(), st.step)) wanted.push_back(st);
  // The cost of heat of each step, as `wattline explain` gives it for the whole run.
  const ThrottleCost cost = estimateThrottleCost(run, scopeGpus(run, {}), scopeRanks(run, {}),
                                                 rangeInsideRun(run, {}), options);
  // Each step's analysis leaves the cost out: it is the one above.
  AnalysisOptions stepOptions = options;
  stepOptions.throttleCost = false;
  std::vector<IterationValues> out;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const StepTime& st = wanted[i];
    const double f0 = static_cast<double>(i) / static_cast<double>(wanted.size());
    const double f1 = static_cast<double>(i + 1) / static_cast<double>(wanted.size());
    progress.report(f0, fmt::format("step {}", st.step));
    AnalysisScope scope;
    scope.range = {st.start_ns, st.end_ns};
    const RunAnalysis ra = analyzeRun(run, scope, stepOptions, progress.sub(f0, f1));
    out.push_back(valuesOf(run, st, ra));
    for (const IterationCost& ic : cost.per_iteration)
      if (ic.step == st.step) set(out.back(), IterationColumn::HeatCost, ic.cost_s);
  }
  progress.report(1.0);
  return out;
}

IterationComparison compareIterations(const RunFile& a, const RunFile& b,
                                      const AnalysisOptions& options, const Progress& progress) {
  // The steps both runs completed (wholly inside each run).
  auto completed = [](const RunFile& r) {
    std::vector<int64_t> s;
    for (const StepTime& st : completedSteps(r))
      s.push_back(st.step);
    return s;
  };
  const std::vector<int64_t> sa = completed(a), sb = completed(b);
  std::vector<int64_t> common;
  std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(common));
  const std::vector<IterationValues> va =
      iterationValues(a, options, progress.sub(0.0, 0.5), &common);
  const std::vector<IterationValues> vb =
      iterationValues(b, options, progress.sub(0.5, 1.0), &common);

  IterationComparison out;
  std::array<std::vector<double>, kIterationColumnCount> colA, colB, colD;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i) {
    IterationComparisonRow row;
    row.step = va[i].step;
    row.a = va[i];
    row.b = vb[i];
    for (size_t c = 0; c < kIterationColumnCount; ++c) {
      const double x = row.a.v[c], y = row.b.v[c];
      row.delta[c] = std::isfinite(x) && std::isfinite(y) ? x - y : kNaN;
      row.delta_pct[c] = relativeDeltaPct(x, y);
      if (std::isfinite(x)) colA[c].push_back(x);
      if (std::isfinite(y)) colB[c].push_back(y);
      if (std::isfinite(row.delta[c])) colD[c].push_back(row.delta[c]);
    }
    for (size_t c = 0; c < kThrottleCauseCount; ++c)
      row.throttled_by_cause_delta_s[c] =
          row.a.throttled_by_cause_s[c] - row.b.throttled_by_cause_s[c];
    out.rows.push_back(std::move(row));
  }
  for (size_t c = 0; c < kIterationColumnCount; ++c) {
    out.a[c] = spreadOf(colA[c]);
    out.b[c] = spreadOf(colB[c]);
    out.delta[c] = spreadOf(colD[c]);
    out.mean_delta_pct[c] = relativeDeltaPct(out.a[c].mean, out.b[c].mean);
  }
  return out;
}

}  // namespace wl
