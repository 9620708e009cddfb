// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A typical iteration (docs/compare.md, "Two runs"): a GPU's metric over the normalized phase of
// its run's steps, 0 % at a step's start and 100 % at its end (the earliest start and latest end
// over the ranks), in equal bins. In each step, a bin's value is the sample the GPU holds at the
// bin's centre (its last sample at or before that time, not across a sampling gap), so every bin
// has one value per step however coarse the sampling; over the steps, the bin shows their mean
// and the min-max band. The picture of why one configuration draws more power or throttles more:
// where in the step the power rises, the temperature climbs and the clock drops, and how much it
// varies from step to step.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/iterations.h"
#include "loaders/core/progress.h"
#include "loaders/format/run_file.h"

namespace wl {

struct ProfileBand {
  std::vector<double> mean, min, max;  // per bin; NaN where no step has a value
  std::vector<uint32_t> steps;         // per bin: the steps with a value
};

// The band of one GPU's metric over the given steps (each [start_ns, end_ns) on the run's clock).
ProfileBand iterationProfile(const RunFile& run, int gpu, std::string_view metric,
                             const std::vector<StepTime>& steps, size_t bins = 100);

// The steps a typical iteration is made of: the run's completed steps (analyze's), without the
// first when there are 3 or more (it often includes warm-up).
std::vector<StepTime> typicalSteps(const RunFile& run);

struct IterationProfileOptions {
  size_t bins = 100;
  std::vector<std::string> metrics{"power_w", "temp_c", "sm_clock_mhz"};
};

struct MetricProfilePair {
  std::string metric, label, unit;
  ProfileBand a, b;
};
struct PairProfile {
  int gpu_a = -1, gpu_b = -1;
  std::vector<MetricProfilePair> metrics;
};
struct IterationProfiles {
  size_t bins = 0;
  std::vector<int64_t> steps_a, steps_b;  // the steps each band is made of
  std::vector<std::string> missing;       // metrics asked for that a run lacks (left out)
  std::vector<PairProfile> pairs;
};

// For each GPU pair (gpu of a, gpu of b), each metric both runs have: A's band over
// typicalSteps(a) and B's over typicalSteps(b). Empty pairs when either run has no step.
IterationProfiles iterationProfiles(const RunFile& a, const RunFile& b,
                                    const std::vector<std::pair<int, int>>& pairs,
                                    const IterationProfileOptions& options = {},
                                    const Progress& progress = {});

}  // namespace wl
