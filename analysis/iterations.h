// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Per-iteration times (docs/analyses.md, "Iterations"): ProfilerStep#N annotations delimit
// iterations on each rank. A step's time is the latest end minus the earliest start over the
// ranks analysed (the step as the whole job sees it); its rank spread is the largest minus the
// smallest per-rank duration of that step. Only iterations that lie wholly inside the range count.

#include <cstdint>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/run_model.h"

namespace wl {

// A rank's trace covers a step when its GPU events in the step's window span at least this
// fraction of the window. A training step keeps a GPU's streams busy (or waiting in a
// communication kernel) through most of it, so a shorter span means the trace starts or ends in
// the step, or only a neighbouring step's last kernels reach into it. The per-step comparison
// (compare/iteration_compare.h) and the cost of throttling (throttle_cost.h) both use it.
inline constexpr double kTracedSpanFraction = 0.5;

struct SpreadStats {
  size_t n = 0;
  double mean = kNaN, median = kNaN, min = kNaN, max = kNaN;
  double stddev = kNaN;  // population standard deviation
  double cv = kNaN;      // stddev / mean
};
SpreadStats spreadOf(std::vector<double> values);

struct StepTime {
  int64_t step = 0;
  int64_t start_ns = 0;  // earliest start over the ranks
  int64_t end_ns = 0;    // latest end
  double duration_s = 0.0;
  double rank_spread_s = 0.0;
  int ranks = 0;
};

struct RankIterations {
  int rank = 0;
  SpreadStats duration_s;
};

struct IterationStats {
  std::vector<StepTime> steps;  // sorted by step
  SpreadStats step_s;           // over steps
  SpreadStats rank_spread_s;    // over steps
  std::vector<RankIterations> ranks;
};

// `ranks` empty means every rank.
IterationStats analyzeIterations(const std::vector<Iteration>& iterations,
                                 const std::vector<int>& ranks, TimeRange range);

}  // namespace wl
