// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/energy_integral.h"

#include <algorithm>
#include <cmath>

namespace wl {

EnergyIntegral::EnergyIntegral(std::vector<int64_t> t, std::vector<double> p, int64_t gap)
    : gap_(gap) {
  // Keep the valid samples only.
  for (size_t i = 0; i < std::min(t.size(), p.size()); ++i)
    if (std::isfinite(p[i])) {
      t_.push_back(t[i]);
      p_.push_back(p[i]);
    }
  cum_.assign(t_.size(), 0.0);
  slope_.assign(t_.size(), 0.0);
  gapAfter_.assign(t_.size(), 1);
  for (size_t i = 0; i + 1 < t_.size(); ++i) {
    const int64_t d = t_[i + 1] - t_[i];
    double e = 0.0;
    if (d > 0 && d <= gap_) {
      e = 0.5 * (p_[i] + p_[i + 1]) * static_cast<double>(d) * 1e-9;
      slope_[i] = (p_[i + 1] - p_[i]) / static_cast<double>(d);
      gapAfter_[i] = 0;
    }
    cum_[i + 1] = cum_[i] + e;
  }
}

double EnergyIntegral::cumulativeAt(int64_t x, Cursor& c) const {
  const size_t n = t_.size();
  if (n == 0 || x <= t_.front()) return 0.0;
  if (x >= t_.back()) return cum_.back();
  // Find i with t_[i] <= x < t_[i + 1]: usually the cursor's segment or one just after it.
  size_t i = c.i < n - 1 && t_[c.i] <= x ? c.i : 0;
  if (t_[i + 1] <= x) {
    if (i + 8 < n && t_[i + 8] <= x) {
      i = static_cast<size_t>(
              std::upper_bound(t_.begin() + static_cast<std::ptrdiff_t>(i) + 8, t_.end(), x) -
              t_.begin()) -
          1;
    } else {
      while (t_[i + 1] <= x)
        ++i;
    }
  }
  c.i = i;
  if (gapAfter_[i]) return cum_[i];
  const double u = static_cast<double>(x - t_[i]);
  return cum_[i] + (p_[i] + 0.5 * slope_[i] * u) * u * 1e-9;
}

double EnergyIntegral::integrateAcross(int64_t a, int64_t b, Cursor& c) const {
  const size_t n = t_.size();
  if (n < 2) return 0.0;
  a = std::max(a, t_.front());
  b = std::min(b, t_.back());
  if (b <= a) return 0.0;
  // Position the cursor: t_[c.i] <= a < t_[c.i + 1] (usually it is there already: the sweeps call
  // this with short, increasing intervals).
  if (!(c.i + 1 < n && t_[c.i] <= a && a < t_[c.i + 1])) cumulativeAt(a, c);
  size_t i = c.i;
  double e = 0.0;
  while (a < b) {
    const int64_t end = std::min(b, t_[i + 1]);
    if (!gapAfter_[i]) {
      // Power is linear on the segment: the midpoint value times the length is exact.
      const double mid = 0.5 * static_cast<double>(a + end) - static_cast<double>(t_[i]);
      e += static_cast<double>(end - a) * (p_[i] + slope_[i] * mid) * 1e-9;
    }
    a = end;
    if (a >= t_[i + 1] && i + 2 < n) ++i;
  }
  c.i = i;
  return e;
}

double EnergyIntegral::between(int64_t a, int64_t b) const {
  if (b <= a) return 0.0;
  Cursor c;
  const double ca = cumulativeAt(a, c);
  return cumulativeAt(b, c) - ca;
}

double EnergyIntegral::over(const IntervalSet& set) const {
  double e = 0.0;
  Cursor c;  // the set is sorted: one forward walk over the samples
  for (const Interval& iv : set) {
    const double a = cumulativeAt(iv.start, c);
    e += cumulativeAt(iv.end, c) - a;
  }
  return e;
}

}  // namespace wl
