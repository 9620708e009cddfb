// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/throttle_validation.h"

#include <algorithm>
#include <cmath>

#include "loaders/core/throttle_reasons.h"

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

namespace {

enum class Family { Any, Power, Thermal };

bool truthIn(const ThrottleTruth& t, Family f) {
  switch (f) {
    case Family::Power:
      return (t.reasons & (throttle::kSwPowerCap | throttle::kHwPowerBrake)) != 0;
    case Family::Thermal:
      return (t.reasons & (throttle::kSwThermal | throttle::kHwThermal | throttle::kHwSlowdown)) !=
             0;
    case Family::Any:
      break;
  }
  return true;
}

// A throttled sample's segment belongs to a family when any of its causes does (a sample with
// both a power-cap and a thermal bit counts toward both, as the detector's by_cause does).
bool detectedIn(const ThrottleSegment& seg, Family f) {
  if (f == Family::Any) return true;
  for (size_t c = 0; c < kThrottleCauseCount; ++c) {
    if (!(seg.causes & (1u << c))) continue;
    const auto cause = static_cast<ThrottleCause>(c);
    if (f == Family::Power ? isPowerCause(cause) : isThermalCause(cause)) return true;
  }
  return false;
}

OverlapScore score(const std::vector<GpuThrottle>& detected,
                   const std::vector<ThrottleTruth>& truth, TimeRange range, Family f) {
  OverlapScore total;
  for (const GpuThrottle& g : detected) {
    std::vector<Interval> d, t;
    for (const ThrottleSegment& seg : g.segments)
      if (detectedIn(seg, f)) d.push_back({seg.start_ns, seg.end_ns});
    for (const ThrottleTruth& tt : truth)
      if (tt.gpu == g.gpu && truthIn(tt, f)) t.push_back({tt.start_ns, tt.end_ns});
    total +=
        scoreOverlap(clip(unionOf(d), range.t0, range.t1), clip(unionOf(t), range.t0, range.t1));
  }
  return total;
}

}  // namespace

OverlapScore scoreThrottleDetection(const std::vector<GpuThrottle>& detected,
                                    const std::vector<ThrottleTruth>& truth, TimeRange range) {
  return score(detected, truth, range, Family::Any);
}

double ThrottleValidation::deficitError() const {
  return truth_has_deficit && truth_deficit_mhz_s > 0
             ? (detected_deficit_mhz_s - truth_deficit_mhz_s) / truth_deficit_mhz_s
             : kNaN;
}

double ThrottleValidation::throttledTimeError() const {
  return truth_has_deficit && truth_busy_s > 0
             ? (detected_throttled_s - truth_busy_s) / truth_busy_s
             : kNaN;
}

ThrottleValidation validateThrottleDetection(const std::vector<GpuThrottle>& detected,
                                             const std::vector<ThrottleTruth>& truth,
                                             TimeRange range) {
  ThrottleValidation v;
  v.time = score(detected, truth, range, Family::Any);
  v.power = score(detected, truth, range, Family::Power);
  v.thermal = score(detected, truth, range, Family::Thermal);
  for (const GpuThrottle& g : detected) {
    v.detected_deficit_mhz_s += g.clock_deficit_mhz_s;
    v.detected_throttled_s += g.throttled_s;
    for (const ThrottleTruth& t : truth) {
      if (t.gpu != g.gpu || t.end_ns <= t.start_ns) continue;
      const int64_t lo = std::max(t.start_ns, range.t0), hi = std::min(t.end_ns, range.t1);
      if (hi <= lo) continue;
      if (std::isnan(t.deficit_mhz_s) || std::isnan(t.busy_s)) continue;
      v.truth_has_deficit = true;
      const double share =
          static_cast<double>(hi - lo) / static_cast<double>(t.end_ns - t.start_ns);
      v.truth_deficit_mhz_s += t.deficit_mhz_s * share;
      v.truth_busy_s += t.busy_s * share;
    }
  }
  return v;
}

}  // namespace wl
