// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Scores detected throttling against ground truth (a simulated run's /ground_truth): the
// simulator records, per physics step, which limit bound each GPU's clock and the clock it would
// have run at without it (docs/simulator.md, "Ground truth"), with no threshold of the detector in
// it, so the scores measure the detector's rules themselves (docs/analyses.md, "Validation").
//
// - Time overlap: precision = overlap / detected time, recall = overlap / true time, summed over
//   GPUs (wall-clock intervals);
// - the same per family of limits (power: a power cap or brake; thermal: SW or HW thermal
//   slowdown), a detected sample counting toward every family of its causes;
// - clock deficit: the detector's (reference - clock) x utilization x dt against the truth's
//   (unthrottled - actual clock) x busy x dt, and throttled kernel time against the truth's.

#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "analysis/throttle_detection.h"
#include "loaders/core/run_model.h"

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

struct ThrottleValidation {
  OverlapScore time;                    // every limit
  OverlapScore power;                   // power-cap truth vs throttled samples with a power cause
  OverlapScore thermal;                 // thermal truth vs throttled samples with a thermal cause
  double truth_deficit_mhz_s = 0.0;     // truth: (unthrottled - clock) x busy, integrated
  double detected_deficit_mhz_s = 0.0;  // detector: (reference - clock) x utilization x dt
  double truth_busy_s = 0.0;            // truth: kernel time while a limit held the clock
  double detected_throttled_s = 0.0;    // detector: kernel time of throttled samples
  bool truth_has_deficit = false;       // the truth carries deficits (files since issue 13)

  // (detected - truth) / truth; NaN without truth deficits.
  double deficitError() const;
  double throttledTimeError() const;
};

// Detection (GPUs of `detected`) against the truth of the same GPUs, clipped to `range`. A truth
// interval partly inside the range contributes its deficit and kernel time in proportion.
ThrottleValidation validateThrottleDetection(const std::vector<GpuThrottle>& detected,
                                             const std::vector<ThrottleTruth>& truth,
                                             TimeRange range = {});

}  // namespace wl
