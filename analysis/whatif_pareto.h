// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The time / energy trade-off of a what-if sweep
// (docs/user-guide.md#what-if-another-power-limit-or-inlet-temperature): which settings of a
// power-limit sweep are on the Pareto front of step time and energy per token, and the power limits
// such a sweep visits. Qt-free: the What-if panel draws what these return.

#include <cstddef>
#include <vector>

namespace wl {

struct TradeoffPoint {
  double step_s = 0;
  double energy_per_token_j = 0;
};

// The indices of the points no other point dominates: none has a step time and an energy per
// token both at most the point's with at least one of them smaller. Points equal in both are all
// kept; a point with a non-finite coordinate is never on the front and dominates nothing. Sorted
// by step time, then energy per token, then index.
std::vector<size_t> paretoFront(const std::vector<TradeoffPoint>& points);

// `points` power limits from half of `limit_w` to `limit_w` (the last exactly `limit_w`, the
// others rounded to whole watts), ascending; empty when the limit is not a positive number or
// points < 2.
std::vector<double> powerLimitSweep(double limit_w, int points = 15);

}  // namespace wl
