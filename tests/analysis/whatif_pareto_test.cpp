// SPDX-License-Identifier: GPL-3.0-or-later
// The Pareto front of a what-if sweep and the power limits it visits, on hand-made points.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "analysis/whatif_pareto.h"

namespace wl {
namespace {

constexpr double kNaNv = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(WhatifPareto, HandComputedFront) {
  // (step s, J/token). By hand: 0 (1, 5) fastest; 1 (2, 3) less energy; 2 (3, 4) dominated by
  // 1; 3 (4, 1) least energy; 4 (5, 1) dominated by 3 (slower, same energy); 5 (2.5, 3)
  // dominated by 1 (slower, same energy); 6 (1.5, 6) dominated by 0.
  const std::vector<TradeoffPoint> p = {{1, 5}, {2, 3}, {3, 4}, {4, 1}, {5, 1}, {2.5, 3}, {1.5, 6}};
  EXPECT_EQ(paretoFront(p), (std::vector<size_t>{0, 1, 3}));
}

TEST(WhatifPareto, MonotoneSweepIsAllFront) {
  // A power-limit sweep where a lower cap is slower and cheaper: nothing dominates anything;
  // the front comes sorted by step time whatever the input order.
  const std::vector<TradeoffPoint> p = {{9.0, 0.05}, {8.0, 0.07}, {8.5, 0.06}, {7.5, 0.08}};
  EXPECT_EQ(paretoFront(p), (std::vector<size_t>{3, 1, 2, 0}));
}

TEST(WhatifPareto, Ties) {
  // Equal in both: both kept (neither is better in one without being worse in none). Equal step
  // time: only the least energy. Equal energy: only the least step time.
  EXPECT_EQ(paretoFront({{2, 3}, {2, 3}}), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(paretoFront({{2, 4}, {2, 3}, {2, 3.5}}), (std::vector<size_t>{1}));
  EXPECT_EQ(paretoFront({{3, 1}, {2, 1}, {4, 1}}), (std::vector<size_t>{1}));
  // A tie on the front behind a faster point that has more energy: both kept.
  EXPECT_EQ(paretoFront({{1, 9}, {2, 3}, {2, 3}, {2, 5}}), (std::vector<size_t>{0, 1, 2}));
}

TEST(WhatifPareto, SingleAndEmpty) {
  EXPECT_EQ(paretoFront({{7.5, 0.06}}), (std::vector<size_t>{0}));
  EXPECT_TRUE(paretoFront({}).empty());
}

TEST(WhatifPareto, NonFiniteExcluded) {
  // Point 1 has no energy (NaN) and point 3 an infinite step: neither is on the front, and
  // neither dominates: without them point 2 is on it ((3, 2) against (1, 4)).
  const std::vector<TradeoffPoint> p = {{1, 4}, {0.5, kNaNv}, {3, 2}, {kInf, 0}, {kNaNv, 1}};
  EXPECT_EQ(paretoFront(p), (std::vector<size_t>{0, 2}));
  EXPECT_TRUE(paretoFront({{kNaNv, kNaNv}, {kNaNv, 1}}).empty());
}

TEST(WhatifPareto, PowerLimitSweep) {
  // 15 points from 350 to 700 W: 25 W apart.
  const std::vector<double> s = powerLimitSweep(700);
  ASSERT_EQ(s.size(), 15u);
  for (size_t i = 0; i < s.size(); ++i)
    EXPECT_EQ(s[i], 350 + 25.0 * static_cast<double>(i));
  // 5 points of 561 W: 280.5 -> 281 (rounded half away from zero), 350.625 -> 351,
  // 420.75 -> 421, 490.875 -> 491, then 561 itself.
  EXPECT_EQ(powerLimitSweep(561, 5), (std::vector<double>{281, 351, 421, 491, 561}));
  // The last point is the limit itself, unrounded.
  EXPECT_EQ(powerLimitSweep(699.5, 3), (std::vector<double>{350, 525, 699.5}));
  EXPECT_TRUE(powerLimitSweep(kNaNv).empty());
  EXPECT_TRUE(powerLimitSweep(0).empty());
  EXPECT_TRUE(powerLimitSweep(700, 1).empty());
}

}  // namespace
}  // namespace wl
