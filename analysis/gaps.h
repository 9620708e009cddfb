// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Sampling gaps: two consecutive valid samples of a metric further apart than the GPU's gap
// threshold, max(1 s, 5 x median sampling interval) (docs/analyses.md, "Gaps"). Gaps are neither
// integrated across nor weighted in means; they are listed so that a user sees them.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/format/run_file.h"

namespace wl {

struct Gap {
  int gpu = -1;
  int64_t start_ns = 0;  // the last sample before the gap
  int64_t end_ns = 0;    // the first sample after it

  double length_s() const { return static_cast<double>(end_ns - start_ns) * 1e-9; }
  bool operator==(const Gap&) const = default;
};

// Reference: the gaps between valid samples (t sorted, NaN = missing) that overlap `range`.
std::vector<Gap> findGapsInSamples(std::span<const int64_t> t, std::span<const double> v,
                                   int64_t gapThresholdNs, TimeRange range = {}, int gpu = -1);

// The gaps of one metric of the given GPUs that overlap `range`, sorted by GPU then time.
// A GPU whose segments cover at least (run span - gap threshold) provably has no gap (a gap is
// longer than the threshold, and the covered time is the span of its samples minus its gaps), so
// that test runs on the pyramid and raw samples are read only for the GPUs that fail it.
std::vector<Gap> findGaps(const RunFile& run, std::string_view metric, const std::vector<int>& gpus,
                          TimeRange range = {});

}  // namespace wl
