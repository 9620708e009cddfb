// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The energy of one power series over any interval (docs/analyses.md, "Energy attribution"):
// used by the class-state sweep of kernel_breakdown.h and by energy_attribution.h.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/interval_set.h"

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

}  // namespace wl
