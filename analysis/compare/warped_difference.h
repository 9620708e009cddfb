// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A − B of one metric for a pair of GPUs on A's clock, B drawn through a time warp
// (docs/compare.md, "Two runs"): at every sample of A at time t, B's value is the sample B holds
// at warp.toB(t) (its last sample at or before that time, not across a sampling gap of B), the
// rule of the timeline's difference track zoomed in. With a shift warp this is the difference the
// timeline drew before warps; with the iteration warp it compares the same phase of the same
// iteration.

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/compare/time_warp.h"
#include "loaders/core/time_range.h"
#include "loaders/format/run_file.h"

namespace wl {

// Over A's samples that have a B value (A's NaN samples and those where B has none are left out;
// every sample counts equally).
struct DifferenceStats {
  size_t n = 0;
  double mean_a = kNaN, mean_b = kNaN;
  double mean = kNaN;      // mean of A − B
  double mean_abs = kNaN;  // mean of |A − B|
  double rms = kNaN;       // sqrt(mean of (A − B)^2)
  double max_abs = kNaN;
};

struct WarpedDifference {
  int gpu_a = -1, gpu_b = -1;
  std::vector<int64_t> t_ns;  // A's sample times (A's clock)
  std::vector<double> a, b;   // A's value, B's held value at warp.toB(t)
  DifferenceStats stats;
};

// A's samples in rangeA (A's clock). Throws wl::Error when a GPU is not in its run or the metric
// is in neither run.
WarpedDifference warpedDifference(const RunFile& a, int gpuA, const RunFile& b, int gpuB,
                                  std::string_view metric, const TimeWarp& warp,
                                  TimeRange rangeA = {});

struct WarpedDifferences {
  std::vector<WarpedDifference> pairs;
  DifferenceStats stats;  // over the samples of every pair
};
WarpedDifferences warpedDifferences(const RunFile& a, const RunFile& b,
                                    const std::vector<std::pair<int, int>>& pairs,
                                    std::string_view metric, const TimeWarp& warp,
                                    TimeRange rangeA = {});

// The part of A's clock where both runs train: from the start of the first common step to the end
// of the last (earliest / latest over the ranks); nullopt when they share no step.
std::optional<TimeRange> commonStepWindow(const RunFile& a, const RunFile& b);

}  // namespace wl
