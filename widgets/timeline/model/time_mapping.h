// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The mapping between time (int64 ns) and horizontal pixels for one visible range and width.
// A small pure value type: every track, the ruler and the exporters use it, and it is tested with
// data-driven rows. Differences are taken in int64 before converting to double, so absolute epoch
// nanoseconds (~1.7e18) keep full precision.

#include <cmath>
#include <cstdint>

namespace wl {

struct TimeMapping {
  int64_t t0 = 0;      // time at x = 0
  int64_t t1 = 1;      // time at x = width
  double width = 1.0;  // pixels

  int64_t span() const { return t1 - t0; }
  double nsPerPx() const { return static_cast<double>(span()) / (width > 0 ? width : 1.0); }
  double x(int64_t t) const { return static_cast<double>(t - t0) / nsPerPx(); }
  int64_t t(double x) const { return t0 + static_cast<int64_t>(std::llround(x * nsPerPx())); }
  bool operator==(const TimeMapping&) const = default;
};

}  // namespace wl
