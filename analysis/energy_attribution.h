// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Energy attribution (docs/analyses.md, "Energy attribution"): the GPU's power integrated
// (trapezoid, linear between samples, nothing across gaps) over sets of intervals: each iteration,
// each annotated phase (forward / backward / optimizer), and the rank's kernel classes (compute,
// exposed communication, exposed memory, other, idle inside the rank's span). Telemetry resolution
// bounds the precision: an interval shorter than the sampling interval gets the interpolated power,
// not what the GPU drew during it (NVML itself averages power over up to ~1 s on some GPUs).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "analysis/iterations.h"
#include "analysis/kernel_breakdown.h"
#include "loaders/core/run_model.h"

namespace wl {

// Cumulative trapezoid energy of one power series, for integrals over any interval in O(log n).
class EnergyIntegral {
 public:
  EnergyIntegral(std::vector<int64_t> t, std::vector<double> p, int64_t gapThresholdNs);
  // Joules between a and b (a <= b), linear between samples, zero across gaps and outside data.
  double between(int64_t a, int64_t b) const;
  double over(const IntervalSet& set) const;

  // Energy from the first sample to x. A cursor remembers where the last lookup ended, so
  // increasing x walk forward in amortised constant time.
  struct Cursor {
    size_t i = 0;
  };
  double cumulativeAt(int64_t x, Cursor& c) const;
  // Joules between a and b; calls with increasing a walk forward from the cursor.
  double integrate(int64_t a, int64_t b, Cursor& c) const {
    // The usual call of the class-state sweep: [a, b) inside the cursor's sample interval.
    const size_t i = c.i;
    if (i + 1 < t_.size() && t_[i] <= a && a < b && b <= t_[i + 1]) {
      double e = 0.0;  // the same arithmetic as integrateAcross() on one segment
      if (!gapAfter_[i]) {
        const double mid = 0.5 * static_cast<double>(a + b) - static_cast<double>(t_[i]);
        e += static_cast<double>(b - a) * (p_[i] + slope_[i] * mid) * 1e-9;
      }
      if (b >= t_[i + 1] && i + 2 < t_.size()) ++c.i;
      return e;
    }
    return integrateAcross(a, b, c);
  }

 private:
  double integrateAcross(int64_t a, int64_t b, Cursor& c) const;

  std::vector<int64_t> t_;
  std::vector<double> p_;
  std::vector<double> cum_;    // energy from the first sample to sample i
  std::vector<double> slope_;  // W per ns from sample i to i + 1
  std::vector<char> gapAfter_;
  int64_t gap_ = 0;
};

struct EnergyAttribution {
  int rank = -1;
  int gpu = -1;
  double total_j = kNaN;  // over the range
  double compute_j = kNaN;
  double exposed_comm_j = kNaN;
  double exposed_memory_j = kNaN;
  double other_events_j = kNaN;  // events of class "other" not covered by the above
  double idle_j = kNaN;          // inside the rank's span, no event running
  double outside_span_j = kNaN;  // in the range but before the first / after the last event
  SpreadStats iteration_j;       // over the rank's iterations inside the range
  std::vector<std::pair<std::string, double>> phases_j;  // "forward", "backward", "optimizer"
  double sample_interval_s = kNaN;  // the GPU's median sampling interval (precision bound)
};

// The phase a range annotation belongs to ("forward", "backward", "optimizer"), or "".
std::string phaseOf(std::string_view annotationName);

// `states` must come from sweepClassStates(unions, &power).
EnergyAttribution attributeEnergy(const EnergyIntegral& power, TimeRange range,
                                  const RankBreakdown& breakdown, const ClassStateTotals& states,
                                  const std::vector<Iteration>& rankIterations,
                                  const std::vector<std::pair<std::string, IntervalSet>>& phases);

}  // namespace wl
