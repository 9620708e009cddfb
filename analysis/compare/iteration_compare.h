// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Per-iteration comparison of two runs (docs/compare.md, "Two runs"): for every step both runs
// completed, each run's step time, energy, energy per token, mean and peak power, peak
// temperature, throttled time (by reason), the cost of heat, exposed communication and bubble time,
// their difference A − B (absolute and relative) and the mean ± standard deviation over the steps.
//
// One number everywhere: a step's values are those of `wattline analyze RUN --range START:END`
// over that step's window [start, end) (the earliest start and latest end over the ranks), i.e.
// analyzeRun() with that range, and its duration is analyze's iterations.steps[k].duration_s.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/iterations.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/throttle_detection.h"
#include "loaders/core/progress.h"
#include "loaders/format/run_file.h"

namespace wl {

enum class IterationColumn : size_t {
  Duration,        // duration_s: latest end - earliest start over the ranks
  Energy,          // energy_j: sum over GPUs of the trapezoid energy in the step
  EnergyPerToken,  // energy_per_token_j: energy / (global batch x sequence length)
  MeanPower,       // mean_power_w: mean over GPUs of the time-weighted mean power
  PeakPower,       // peak_power_w: max over GPUs
  PeakTemp,        // peak_temp_c: max over GPUs of the GPU temperature
  Throttled,       // throttled_s: throttled kernel time, sum over GPUs with an SM clock
  HeatCost,        // heat_cost_s: seconds heat and power limits added to the step (the run's
                   // estimateThrottleCost over the whole run, docs/analyses.md)
  ExposedComm,     // exposed_comm_s: communication not under compute, mean over the ranks
                   // traced through the step (tracedThrough); unknown when none is
  Bubble,          // bubble_s: step time - |compute union|, mean over traced ranks: the time
                   // the rank computes nothing (pipeline bubbles, whether it idles or waits in a
                   // receive kernel; exposed communication and copies; host gaps)
};
inline constexpr size_t kIterationColumnCount = 10;

struct IterationColumnInfo {
  std::string_view id, label, unit;
  int digits = 3;  // decimals in text tables
};
const std::array<IterationColumnInfo, kIterationColumnCount>& iterationColumns();

using IterationArray = std::array<double, kIterationColumnCount>;
using CauseArray = std::array<double, kThrottleCauseCount>;

// One run's numbers for one step; NaN where unknown (no power, no clock, no trace, no batch).
struct IterationValues {
  int64_t step = 0;
  int64_t start_ns = 0, end_ns = 0;  // the step's window on the run's clock
  IterationArray v;
  CauseArray throttled_by_cause_s;  // NaN when no GPU has an SM clock

  IterationValues() { v.fill(kNaN), throttled_by_cause_s.fill(kNaN); }
  double operator[](IterationColumn c) const { return v[static_cast<size_t>(c)]; }
};

// The run's completed steps exactly as `wattline analyze` lists them (iterations.steps): the steps
// wholly inside the run, over every rank it knows.
std::vector<StepTime> completedSteps(const RunFile& run);

// The values of every step wholly inside the run (analyze's iteration steps), or only those of
// `steps` when it is not null; ascending step.
std::vector<IterationValues> iterationValues(const RunFile& run,
                                             const AnalysisOptions& options = {},
                                             const Progress& progress = {},
                                             const std::vector<int64_t>* steps = nullptr);

struct IterationComparisonRow {
  int64_t step = 0;
  IterationValues a, b;
  IterationArray delta;      // a - b (NaN when either is unknown)
  IterationArray delta_pct;  // 100 (a - b) / |b| (NaN when b is 0 or unknown)
  CauseArray throttled_by_cause_delta_s;
};

struct IterationComparison {
  std::vector<IterationComparisonRow> rows;  // the steps both runs completed, ascending
  // Over the rows (steps where the value is unknown are skipped): mean, stddev (population), ...
  std::array<SpreadStats, kIterationColumnCount> a, b, delta;
  IterationArray mean_delta_pct;  // 100 (mean a - mean b) / |mean b|
};

IterationComparison compareIterations(const RunFile& a, const RunFile& b,
                                      const AnalysisOptions& options = {},
                                      const Progress& progress = {});

// Whether a rank's trace covers a step (its GPU events span kTracedSpanFraction of the window,
// iterations.h): otherwise its exposed communication and bubble are unknown, not 0 and the whole
// step (real traces usually cover a few steps).
bool tracedThrough(const RankBreakdown& breakdown, int64_t window_ns);

// 100 (a - b) / |b|, NaN when either is unknown or b is 0.
double relativeDeltaPct(double a, double b);

}  // namespace wl
