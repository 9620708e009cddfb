// SPDX-License-Identifier: GPL-3.0-or-later
// The typical iteration: bands of power, temperature and SM clock over normalized step phase, on
// phased runs whose phases and throttling are known.
#include <gtest/gtest.h>

#include "analysis/compare/iteration_compare.h"
#include "analysis/compare/iteration_profile.h"
#include "loaders/core/error.h"
#include "phased_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr int64_t kS = 1'000'000'000;

// Which phase bin j of 100 falls in for phase shares 40 / 50 / 10 %: its centre (j + 0.5) %.
int phaseOfBin(size_t j) {
  return j < 40 ? 0 : j < 90 ? 1 : 2;
}

TEST(IterationProfile, BandsFollowThePhasesAndTheThrottledStep) {
  test::TempDir dir;
  test::PhasedRunSpec sa;
  sa.stepNs = {3 * kS, 3 * kS, 3 * kS};
  test::PhasedRunSpec sb = sa;
  sb.stepNs = {2 * kS, 2 * kS, 2 * kS, 2 * kS};
  sb.sampleNs = 20'000'000;
  sb.phasePowerW = {400, 650, 250, 100};
  const auto a = test::writePhasedRun(sa, dir / "a.h5");
  const auto b = test::writePhasedRun(sb, dir / "b.h5");

  IterationProfileOptions o;
  o.metrics = {"power_w", "temp_c", "sm_clock_mhz", "mem_temp_c"};
  const IterationProfiles p = iterationProfiles(*a, *b, {{0, 0}, {1, 1}}, o);
  EXPECT_EQ(p.bins, 100u);
  EXPECT_EQ(p.steps_a, (std::vector<int64_t>{1, 2}));  // step 0 left out (warm-up)
  EXPECT_EQ(p.steps_b, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(p.missing, (std::vector<std::string>{"mem_temp_c"}));
  ASSERT_EQ(p.pairs.size(), 2u);
  const PairProfile& g1 = p.pairs[1];
  EXPECT_EQ(g1.gpu_a, 1);
  ASSERT_EQ(g1.metrics.size(), 3u);
  EXPECT_EQ(g1.metrics[0].metric, "power_w");
  EXPECT_EQ(g1.metrics[0].unit, "W");
  const double powerA[3] = {400, 600, 250}, powerB[3] = {400, 650, 250};
  for (size_t j = 0; j < 100; ++j) {
    SCOPED_TRACE(j);
    const int ph = phaseOfBin(j);
    // GPU 1 draws 10 W more; every step is alike, so the band is a line.
    const ProfileBand& pa = g1.metrics[0].a;
    EXPECT_EQ(pa.mean[j], powerA[ph] + 10);
    EXPECT_EQ(pa.min[j], pa.max[j]);
    EXPECT_EQ(pa.steps[j], 2u);
    EXPECT_EQ(g1.metrics[0].b.mean[j], powerB[ph] + 10);
    EXPECT_EQ(g1.metrics[1].a.mean[j], 30 + (powerA[ph] + 10) / 20);  // temperature
    // GPU 0's clock: 1500 MHz through backward of step 1 only.
    const MetricProfilePair& clock = p.pairs[0].metrics[2];
    EXPECT_EQ(clock.metric, "sm_clock_mhz");
    EXPECT_DOUBLE_EQ(clock.a.mean[j], ph == 1 ? (1500 + 1980) / 2.0 : 1980);
    EXPECT_EQ(clock.a.min[j], ph == 1 ? 1500 : 1980);
    EXPECT_EQ(clock.a.max[j], 1980);
    EXPECT_DOUBLE_EQ(clock.b.mean[j], ph == 1 ? (1500 + 2 * 1980) / 3.0 : 1980);
  }
}

TEST(IterationProfile, OneGpuOverChosenSteps) {
  test::TempDir dir;
  test::PhasedRunSpec s;
  s.stepNs = {2 * kS, 4 * kS};
  s.phaseShare = {0.5, 0.25, 0.25};
  const auto run = test::writePhasedRun(s, dir / "r.h5");
  const std::vector<StepTime> steps = completedSteps(*run);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(typicalSteps(*run).size(), 2u);  // fewer than 3: none left out
  const ProfileBand band = iterationProfile(*run, 0, "power_w", steps, 4);
  // Bin centres at 12.5, 37.5, 62.5 and 87.5 % of each step: forward, forward, backward,
  // optimizer in both steps.
  EXPECT_EQ(band.mean, (std::vector<double>{400, 400, 600, 250}));
  EXPECT_EQ(band.steps, (std::vector<uint32_t>{2, 2, 2, 2}));
  EXPECT_THROW(iterationProfile(*run, 5, "power_w", steps, 4), Error);
  EXPECT_THROW(iterationProfile(*run, 0, "power_w", steps, 0), Error);
  const ProfileBand none = iterationProfile(*run, 0, "no_metric", steps, 4);
  EXPECT_EQ(none.steps, (std::vector<uint32_t>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace wl
