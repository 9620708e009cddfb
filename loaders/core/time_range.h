// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A half-open time range [t0, t1) in ns on a run's clock: what an analysis covers, what the
// timeline shows, what the user selected. The default covers everything.

#include <cstdint>
#include <limits>

namespace wl {

struct TimeRange {
  int64_t t0 = std::numeric_limits<int64_t>::min();
  int64_t t1 = std::numeric_limits<int64_t>::max();

  bool empty() const { return t1 <= t0; }
  bool contains(int64_t t) const { return t >= t0 && t < t1; }
  int64_t span() const { return t1 - t0; }
  bool operator==(const TimeRange&) const = default;
};

}  // namespace wl
