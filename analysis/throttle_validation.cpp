// SPDX-License-Identifier: GPL-3.0-or-later
#include "throttle_validation.h"

namespace wl {

OverlapScore& OverlapScore::operator+=(const OverlapScore& o) {
  detected_s += o.detected_s;
  truth_s += o.truth_s;
  overlap_s += o.overlap_s;
  return *this;
}

OverlapScore scoreOverlap(const IntervalSet& detected, const IntervalSet& truth) {
  OverlapScore s;
  s.detected_s = static_cast<double>(totalLength(detected)) * 1e-9;
  s.truth_s = static_cast<double>(totalLength(truth)) * 1e-9;
  s.overlap_s = static_cast<double>(overlapLength(detected, truth)) * 1e-9;
  return s;
}

OverlapScore scoreThrottleDetection(const std::vector<GpuThrottle>& detected,
                                    const std::vector<ThrottleTruth>& truth, TimeRange range) {
  OverlapScore total;
  for (const GpuThrottle& g : detected) {
    std::vector<Interval> d, t;
    for (const ThrottleInterval& iv : g.intervals)
      d.push_back({iv.start_ns, iv.end_ns});
    for (const ThrottleTruth& tt : truth)
      if (tt.gpu == g.gpu) t.push_back({tt.start_ns, tt.end_ns});
    total +=
        scoreOverlap(clip(unionOf(d), range.t0, range.t1), clip(unionOf(t), range.t0, range.t1));
  }
  return total;
}

}  // namespace wl
