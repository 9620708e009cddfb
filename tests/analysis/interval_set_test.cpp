// SPDX-License-Identifier: GPL-3.0-or-later
// Interval-set operations on hand-made sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analysis/interval_set.h"

namespace wl {
namespace {

TEST(IntervalSet, UnionMergesOverlappingAndTouching) {
  const IntervalSet u = unionOf({{5, 8}, {0, 3}, {2, 4}, {8, 9}, {10, 10}, {12, 15}});
  EXPECT_EQ(u, (IntervalSet{{0, 4}, {5, 9}, {12, 15}}));
  EXPECT_EQ(totalLength(u), 4 + 4 + 3);
}

TEST(IntervalSet, IntersectSubtractUnite) {
  const IntervalSet a{{0, 10}, {20, 30}};
  const IntervalSet b{{5, 25}, {28, 40}};
  EXPECT_EQ(intersect(a, b), (IntervalSet{{5, 10}, {20, 25}, {28, 30}}));
  EXPECT_EQ(subtract(a, b), (IntervalSet{{0, 5}, {25, 28}}));
  EXPECT_EQ(subtract(b, a), (IntervalSet{{10, 20}, {30, 40}}));
  EXPECT_EQ(unite(a, b), (IntervalSet{{0, 40}}));
  EXPECT_EQ(overlapLength(a, b), 5 + 5 + 2);
  EXPECT_EQ(clip(a, 3, 22), (IntervalSet{{3, 10}, {20, 22}}));
  // b covers all of a's middle; a hole inside one interval.
  EXPECT_EQ(subtract(IntervalSet{{0, 100}}, IntervalSet{{10, 20}, {30, 40}}),
            (IntervalSet{{0, 10}, {20, 30}, {40, 100}}));
}

// clip (a binary search for the first interval) against the definition, interval by interval:
// random sets, windows before, inside, across and after them, empty and reversed windows.
TEST(IntervalSet, ClipIsEveryIntervalCutToTheWindow) {
  std::mt19937 rng(31);
  for (int round = 0; round < 200; ++round) {
    std::vector<Interval> raw;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int64_t s = static_cast<int64_t>(rng() % 1000);
      raw.push_back({s, s + 1 + static_cast<int64_t>(rng() % 30)});
    }
    const IntervalSet a = unionOf(raw);
    for (int w = 0; w < 20; ++w) {
      const auto lo = static_cast<int64_t>(rng() % 1100) - 50;
      const auto hi = lo + static_cast<int64_t>(rng() % 300) - 20;
      IntervalSet want;
      for (const Interval& iv : a)
        if (std::min(iv.end, hi) > std::max(iv.start, lo))
          want.push_back({std::max(iv.start, lo), std::min(iv.end, hi)});
      ASSERT_EQ(clip(a, lo, hi), want) << "window " << lo << ".." << hi;
    }
  }
}

}  // namespace
}  // namespace wl
