// SPDX-License-Identifier: GPL-3.0-or-later
// Counter deltas with the seed paper's 32-bit wrap rule, resets, and counters read from a run.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/counters.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

TEST(Counters, WrapAndResetByHand) {
  const double k32 = 4294967296.0;
  EXPECT_EQ(counterDelta(100, 350), 250);
  // prev 2^32 - 6, cur 100: (2^32 - 1 - prev) + cur = 5 + 100.
  EXPECT_EQ(counterDelta(k32 - 6, 100), 105);
  // A decrease from beyond 32 bits cannot be a 32-bit wrap: a reset, delta unknown.
  EXPECT_TRUE(std::isnan(counterDelta(5e9, 10)));

  const std::vector<int64_t> t = {0, 1, 2, 3, 4, 5, 6};
  const std::vector<double> v = {k32 - 296, k32 - 6, 100, kNaN, 300, 6e9, 50};
  const CounterSummary s = summarizeCounter(t, v);
  // 290 + 105 + 200 (across the missing sample) + (6e9 - 300); the reset 6e9 -> 50 is left out.
  EXPECT_DOUBLE_EQ(s.total, 290 + 105 + 200 + (6e9 - 300));
  EXPECT_EQ(s.wraps, 1u);
  EXPECT_EQ(s.resets, 1u);
  EXPECT_EQ(s.intervals, 4u);
  EXPECT_EQ(s.first_wrap_ns, 2);
  // A range keeps the deltas whose two samples lie inside it.
  const CounterSummary r = summarizeCounter(t, v, {1, 3});
  EXPECT_DOUBLE_EQ(r.total, 105);
}

TEST(Counters, ReadFromARun) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(1, 10.0);
  const double k32 = 4294967296.0;
  // An energy counter in J that wraps once: +1,000 J per second from 2^32 - 2,500.
  s.telemetry.push_back(test::sampled(test::kT0, test::kT0 + 10 * test::kSec, test::kSec,
                                      {"power_w", "energy_j"}, [&](size_t m, int64_t t) {
                                        const double secs =
                                            static_cast<double>(t - test::kT0) * 1e-9;
                                        if (m == 0) return 1000.0;
                                        const double raw = k32 - 2500 + 1000 * secs;
                                        return raw >= k32 ? raw - k32 : raw;
                                      }));
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const auto c = counterSummaries(*run, {0}, TimeRange{});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].metric, "energy_j");
  EXPECT_EQ(c[0].wraps, 1u);
  // 9 intervals of 1,000 J, one of them through the wrap, which the paper's rule counts 1 short.
  EXPECT_DOUBLE_EQ(c[0].total, 9000 - 1);
}

}  // namespace
}  // namespace wl
