// SPDX-License-Identifier: GPL-3.0-or-later
// Burstiness (|dP/dt| percentiles, excursions above the power limit, peak-to-average) and thermal
// response (time above slowdown, headroom, first-order fit, temperature-power lag) on inputs
// whose answers are known.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/burstiness.h"
#include "analysis/run_analysis.h"
#include "analysis/thermal_response.h"
#include "analysis/threshold_time.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kSec;
using test::kT0;

TEST(Burstiness, RampPercentilesLikeNumpy) {
  // |dP/dt| = 200, 100, 400, 100 W/s; numpy.percentile([100,100,200,400], q) (linear).
  const std::vector<int64_t> t = {0, kSec, 2 * kSec, 3 * kSec, 4 * kSec};
  const std::vector<double> p = {100, 300, 200, 600, 500};
  const RampStats r = rampStats(t, p, 5 * kSec, TimeRange{});
  EXPECT_EQ(r.segments, 4u);
  EXPECT_DOUBLE_EQ(r.p50, 150);
  EXPECT_DOUBLE_EQ(r.p90, 340);
  EXPECT_DOUBLE_EQ(r.p99, 394);
  EXPECT_DOUBLE_EQ(r.max, 400);
}

TEST(Burstiness, ExcursionsAbovePowerLimit) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(1, 12.0);
  // 1 Hz: 650 720 730 690 710 650 ... W against a 700 W limit: runs [1, 3) and [4, 5) s.
  const double p[] = {650, 720, 730, 690, 710, 650, 600, 600, 600, 600, 600, 600};
  s.telemetry.push_back(test::sampled(kT0, kT0 + 12 * kSec, kSec, {"power_w"},
                                      [&](size_t, int64_t t) { return p[(t - kT0) / kSec]; }));
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  const Burstiness& b = a.gpus[0].burstiness;
  EXPECT_EQ(b.excursions, 2u);
  EXPECT_DOUBLE_EQ(b.excursion_s, 3.0);
  EXPECT_DOUBLE_EQ(b.excursion_peak_w, 730);
  ASSERT_EQ(b.excursion_runs.size(), 2u);
  EXPECT_EQ(b.excursion_runs[0].start, kT0 + kSec);
  EXPECT_EQ(b.excursion_runs[0].end, kT0 + 3 * kSec);
  double sum = 0;
  for (int i = 0; i < 11; ++i)
    sum += p[i];
  EXPECT_DOUBLE_EQ(b.peak_to_average, 730 / (sum / 11));
  ASSERT_TRUE(b.ramp_computed);
  EXPECT_DOUBLE_EQ(b.ramp.max, 70);  // the largest step: 650 -> 720 W in 1 s
}

TEST(ThermalResponse, FirstOrderFitRecoversAKnownSystem) {
  // T[n+1] = 0.9 T[n] + 0.01 P[n] + 2 exactly, P random: a = 0.9, tau = -1 s / ln 0.9.
  std::mt19937 rng(5);
  std::vector<double> p(400), t(400);
  t[0] = 40;
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = 200 + rng() % 500;
    if (i + 1 < t.size()) t[i + 1] = 0.9 * t[i] + 0.01 * p[i] + 2;
  }
  const FirstOrderFit f = fitFirstOrder(t, p, 1.0);
  EXPECT_NEAR(f.a, 0.9, 1e-9);
  EXPECT_NEAR(f.b, 0.01, 1e-9);
  EXPECT_NEAR(f.c, 2, 1e-6);
  EXPECT_NEAR(f.tau_s, -1.0 / std::log(0.9), 1e-6);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
}

TEST(ThermalResponse, LagOfAShiftedSeries) {
  std::mt19937 rng(9);
  std::vector<double> p(600), t(600, kNaN);
  for (double& x : p)
    x = 300 + rng() % 400;
  for (size_t i = 7; i < t.size(); ++i)
    t[i] = 30 + 0.05 * p[i - 7];  // temperature follows power 7 steps later
  const LagEstimate l = powerTemperatureLag(t, p, 2.0, 60.0);
  EXPECT_DOUBLE_EQ(l.lag_s, 14.0);
  EXPECT_NEAR(l.correlation, 1.0, 1e-9);
}

// A GPU heated by a square wave of power through a first-order model with tau = 30 s, sampled at
// 20 Hz for an hour: the fit on bucket means finds tau, the time above 87 C is counted exactly.
TEST(ThermalResponse, FromARun) {
  test::TempDir dir;
  const double tau = 30, k = 0.05, amb = 40;
  test::RunSpec s = test::baseRun(1, 3600.0);
  s.info.sample_interval_s = 0.05;
  TelemetryTable tab;
  tab.columns = {{"power_w", {}}, {"temp_c", {}}};
  double temp = amb + k * 300;
  const double a = std::exp(-0.05 / tau);
  double above = 0;
  for (int64_t i = 0; i < 72000; ++i) {
    const double sec = static_cast<double>(i) * 0.05;
    const double power = std::fmod(sec, 200.0) < 100.0 ? 300.0 : 1000.0;
    tab.t_ns.push_back(kT0 + i * 50'000'000);
    tab.columns[0].values.push_back(power);
    tab.columns[1].values.push_back(temp);
    if (temp >= 87 && i + 1 < 72000) above += 0.05;
    const double target = amb + k * power;
    temp = target + (temp - target) * a;
  }
  s.telemetry.push_back(tab);
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis r = analyzeRun(*run);
  const ThermalResponse& th = r.gpus[0].thermal;
  EXPECT_GE(th.fit_resolution_s, 2.0);
  EXPECT_NEAR(th.time_constant_s, tau, 0.05 * tau);
  EXPECT_GT(th.fit_r2, 0.99);
  EXPECT_NEAR(th.time_above_slowdown_s, above, 1e-6);
  EXPECT_DOUBLE_EQ(th.slowdown_c, 87);
  EXPECT_NEAR(th.headroom_c, 87 - r.gpus[0].temp.max, 1e-12);
  EXPECT_GT(th.lag_s, 0.0);
  EXPECT_LT(th.lag_s, 100.0);
}

TEST(ThresholdTime, RunsAreMergedAcrossPieces) {
  ThresholdTime acc;
  const std::vector<int64_t> t = {0, 10, 20, 30, 40};
  const std::vector<double> v = {5, 5, 1, 5, 5};
  accumulateAbove(acc, t, v, 100, 2, false, {0, 15}, {0, 100});
  accumulateAbove(acc, t, v, 100, 2, false, {15, 100}, {0, 100});
  finishAbove(acc);
  ASSERT_EQ(acc.runs.size(), 2u);
  EXPECT_EQ(acc.runs[0], (Interval{0, 20}));
  EXPECT_EQ(acc.runs[1], (Interval{30, 40}));
  EXPECT_DOUBLE_EQ(acc.time_s, 30e-9);
}

}  // namespace
}  // namespace wl
