// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Scores detected throttle intervals against ground truth (a simulated run's /ground_truth) by
// time overlap: precision = overlap / detected time, recall = overlap / true time, summed over
// GPUs. Used by the tests and by anyone who wants to check the detector on a simulated run.

#include <vector>

#include "analysis_options.h"
#include "core/run_model.h"
#include "interval_set.h"
#include "throttle_detection.h"

namespace wl {

struct OverlapScore {
  double detected_s = 0.0;
  double truth_s = 0.0;
  double overlap_s = 0.0;

  double precision() const { return detected_s > 0 ? overlap_s / detected_s : kNaN; }
  double recall() const { return truth_s > 0 ? overlap_s / truth_s : kNaN; }
  OverlapScore& operator+=(const OverlapScore& o);
};

OverlapScore scoreOverlap(const IntervalSet& detected, const IntervalSet& truth);

// Per GPU of `detected`, its intervals against the truth intervals of the same GPU, clipped to
// `range`, summed.
OverlapScore scoreThrottleDetection(const std::vector<GpuThrottle>& detected,
                                    const std::vector<ThrottleTruth>& truth, TimeRange range = {});

}  // namespace wl
