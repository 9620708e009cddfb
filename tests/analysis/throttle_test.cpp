// SPDX-License-Identifier: GPL-3.0-or-later
// Throttle detection: a hand-built clock trace with known throttled busy intervals, recorded and
// inferred reasons, an idle clock drop that is not throttling; the pyramid path against the raw
// reference; time-overlap precision and recall against ground truth.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/interval_set.h"
#include "analysis/telemetry_stats.h"
#include "analysis/throttle_detection.h"
#include "analysis/throttle_validation.h"
#include "analysis_test_util.h"
#include "loaders/core/throttle_reasons.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

// 60 s at 10 Hz on GPU 0 (H100: 1980 MHz, 700 W limit, slowdown 87 C); threshold 0.95 x 1980.
//   [10, 12) s  1500 MHz, SW power cap bit
//   [20, 21) s  1600 MHz, HW slowdown + HW thermal bits
//   [30, 33) s  1700 MHz, reasons not recorded, 90 C      -> thermal (inferred)
//   [40, 41) s  1700 MHz, reasons not recorded, 690 W     -> power cap (inferred)
//   [45, 46) s  1800 MHz, recorded "no reason", 60 C 500 W -> unknown
//   [5, 6) s    1900 MHz: above the threshold, not throttled
//   [50, 60) s  idle (0 % utilization), clock 800 MHz from 55 s: not throttling
test::RunSpec handThrottleRun() {
  test::RunSpec s = test::baseRun(1, 60.0);
  s.info.sample_interval_s = 0.1;
  TelemetryTable t;
  t.columns = {{"power_w", {}}, {"temp_c", {}}, {"sm_clock_mhz", {}}, {"util_pct", {}}};
  for (int i = 0; i < 600; ++i) {
    const double sec = i * 0.1 + 1e-9;
    double clock = 1980, temp = 60, power = 500, util = 100;
    uint32_t mask = 0;
    auto in = [&](double a, double b) { return sec >= a && sec < b; };
    if (in(10, 12)) clock = 1500, mask = throttle::kSwPowerCap;
    if (in(20, 21)) clock = 1600, mask = throttle::kHwSlowdown | throttle::kHwThermal;
    if (in(30, 33)) clock = 1700, mask = throttle::kUnknown, temp = 90;
    if (in(40, 41)) clock = 1700, mask = throttle::kUnknown, power = 690;
    if (in(45, 46)) clock = 1800;
    if (in(5, 6)) clock = 1900;
    if (in(50, 60)) util = 0, power = 80;
    if (in(55, 60)) clock = 800;
    t.t_ns.push_back(kT0 + static_cast<int64_t>(i) * 100 * kMs);
    t.columns[0].values.push_back(power);
    t.columns[1].values.push_back(temp);
    t.columns[2].values.push_back(clock);
    t.columns[3].values.push_back(util);
    t.throttle_reasons.push_back(mask);
  }
  s.telemetry.push_back(t);
  return s;
}

double causeS(const GpuThrottle& g, ThrottleCause c) {
  return g.by_cause_s[static_cast<size_t>(c)];
}

TEST(ThrottleDetection, HandBuiltTraceByReason) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(handThrottleRun(), dir / "run.h5");
  const GpuThrottle g = detectThrottle(*run, {0}, TimeRange{}, AnalysisOptions{})[0];
  EXPECT_DOUBLE_EQ(g.reference_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(g.threshold_mhz, 0.95 * 1980);
  EXPECT_EQ(g.busy_source, BusySource::Utilization);
  EXPECT_NEAR(g.busy_s, 50.0, 1e-9);  // samples at 0.0 .. 49.9 s own 0.1 s each
  EXPECT_NEAR(g.throttled_s, 2 + 1 + 3 + 1 + 1, 1e-9);
  EXPECT_NEAR(g.fraction(), 8.0 / 50.0, 1e-12);
  EXPECT_NEAR(causeS(g, ThrottleCause::SwPowerCap), 2, 1e-9);
  EXPECT_NEAR(causeS(g, ThrottleCause::HwSlowdown), 1, 1e-9);
  EXPECT_NEAR(causeS(g, ThrottleCause::HwThermal), 1, 1e-9);
  EXPECT_NEAR(causeS(g, ThrottleCause::ThermalInferred), 3, 1e-9);
  EXPECT_NEAR(causeS(g, ThrottleCause::PowerCapInferred), 1, 1e-9);
  EXPECT_NEAR(causeS(g, ThrottleCause::Unknown), 1, 1e-9);
  EXPECT_NEAR(causeS(g, ThrottleCause::SwThermal), 0, 1e-12);
  EXPECT_NEAR(g.clock_deficit_mhz_s, 2 * 480 + 380 + 3 * 280 + 280 + 180, 1e-6);
  ASSERT_EQ(g.intervals.size(), 5u);
  const int64_t starts[] = {10, 20, 30, 40, 45}, ends[] = {12, 21, 33, 41, 46};
  const ThrottleCause causes[] = {ThrottleCause::SwPowerCap, ThrottleCause::HwSlowdown,
                                  ThrottleCause::ThermalInferred, ThrottleCause::PowerCapInferred,
                                  ThrottleCause::Unknown};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(g.intervals[i].start_ns, kT0 + starts[i] * kSec) << i;
    EXPECT_EQ(g.intervals[i].end_ns, kT0 + ends[i] * kSec) << i;
    EXPECT_EQ(g.intervals[i].cause, causes[i]) << i;
  }
  EXPECT_EQ(g.intervals[1].recorded_reasons, throttle::kHwSlowdown | throttle::kHwThermal);
  EXPECT_DOUBLE_EQ(g.intervals[0].min_clock_mhz, 1500);
  EXPECT_NEAR(g.intervals[2].deficit_mhz_s, 3 * 280, 1e-6);

  // A range cuts intervals at its edges: [11 s, 30.5 s) holds 1 + 1 + 0.5 s of 19.5 busy s.
  const GpuThrottle r =
      detectThrottle(*run, {0}, {kT0 + 11 * kSec, kT0 + 30500 * kMs}, AnalysisOptions{})[0];
  EXPECT_NEAR(r.busy_s, 19.5, 1e-9);
  EXPECT_NEAR(r.throttled_s, 2.5, 1e-9);
  ASSERT_EQ(r.intervals.size(), 3u);
  EXPECT_EQ(r.intervals[0].start_ns, kT0 + 11 * kSec);
  EXPECT_EQ(r.intervals[2].end_ns, kT0 + 30500 * kMs);

  // The nominal clock reference gives the same threshold here (metadata says 1980 MHz).
  AnalysisOptions nominal;
  nominal.clockReference = ClockReference::Nominal;
  EXPECT_DOUBLE_EQ(detectThrottle(*run, {0}, TimeRange{}, nominal)[0].threshold_mhz, 1881);
}

TEST(ThrottleDetection, SlowdownOfComputeKernels) {
  GpuThrottle g;
  g.reference_clock_mhz = 2000;
  g.segments = {{100, 200, 1000.0f, 0, 0}, {200, 300, 1500.0f, 0, 0}};
  // Compute runs 150-250 and 290-400: 50 ns at half clock, 50 + 10 ns at 3/4 clock.
  const ThrottleSlowdown s = estimateSlowdown(g, {{150, 250}, {290, 400}});
  EXPECT_EQ(s.throttled_compute_ns, 110);
  EXPECT_DOUBLE_EQ(s.lost_ns, 50 * 0.5 + 60 * 0.25);
}

// A longer run with random throttling, idle phases, NaNs and unrecorded masks: the pyramid path
// equals the raw reference over many ranges.
TEST(ThrottleDetection, PyramidPathEqualsRawReference) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(2, 1200.0);
  s.info.sample_interval_s = 0.05;
  std::mt19937_64 rng(3);
  for (int g = 0; g < 2; ++g) {
    TelemetryTable t;
    t.columns = {{"power_w", {}}, {"temp_c", {}}, {"sm_clock_mhz", {}}, {"util_pct", {}}};
    double clock = 1980, util = 100;
    for (int64_t ts = kT0; ts < s.info.end_ns; ts += 50 * kMs) {
      if (rng() % 200 == 0) clock = (rng() % 3 == 0) ? 1980 - 10.0 * (rng() % 40) : 1980;
      if (rng() % 400 == 0) util = (rng() % 4 == 0) ? 5 : 100;
      t.t_ns.push_back(ts);
      t.columns[0].values.push_back(400 + static_cast<double>(rng() % 300));
      t.columns[1].values.push_back(70 + static_cast<double>(rng() % 25));
      t.columns[2].values.push_back(rng() % 500 == 0 ? kNaN : clock);
      t.columns[3].values.push_back(rng() % 700 == 0 ? kNaN : util);
      const uint64_t m = rng() % 10;
      t.throttle_reasons.push_back(m == 0   ? throttle::kUnknown
                                   : m == 1 ? throttle::kSwThermal
                                            : 0u);
    }
    s.telemetry.push_back(t);
  }
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const SeriesGroupMeta& meta = run->series(SeriesKind::Gpu);
  const AnalysisOptions opt;
  const double observed = observedMaxClock(*run);
  std::vector<TimeRange> ranges = {TimeRange{}};
  for (int i = 0; i < 25; ++i) {
    int64_t a =
        kT0 + static_cast<int64_t>(rng() % 1200) * kSec + static_cast<int64_t>(rng() % kSec);
    int64_t b = kT0 + static_cast<int64_t>(rng() % 1200) * kSec;
    if (a > b) std::swap(a, b);
    ranges.push_back({a, b});
  }
  for (int g = 0; g < 2; ++g) {
    const auto gi = static_cast<size_t>(g);
    const Samples clk = run->readAllSamples(SeriesKind::Gpu, gi, "sm_clock_mhz");
    const auto util = run->readAllSamples(SeriesKind::Gpu, gi, "util_pct").v;
    const auto power = run->readAllSamples(SeriesKind::Gpu, gi, "power_w").v;
    const auto temp = run->readAllSamples(SeriesKind::Gpu, gi, "temp_c").v;
    const auto masks = run->readThrottle(gi, 0, clk.t_ns.size());
    const ThrottleParams p = throttleParams(*run, g, opt, observed);
    for (const TimeRange& r : ranges) {
      GpuThrottle ref;
      ref.gpu = g;
      ref.reference_clock_mhz = p.reference_clock_mhz;
      const TimeRange clipped{std::max(r.t0, kT0), r.t1};
      detectThrottleInSamples({clk.t_ns, clk.v, util, power, temp, masks}, p, {INT64_MIN, r.t1},
                              clipped, ref);
      finishThrottle(ref);
      // Busy time: the utilization's time-weighted integral / 100 (left Riemann over its
      // segments, as the mean is).
      const MetricStats u = statsOfSamples(clk.t_ns, util, p.gap_threshold_ns, clipped);
      ref.busy_s = u.covered_s > 0 ? u.mean * u.covered_s / 100 : 0;
      const GpuThrottle fast = detectThrottle(*run, {g}, r, opt)[0];
      SCOPED_TRACE(testing::Message() << "gpu " << g << " range " << r.t0 << ".." << r.t1);
      EXPECT_NEAR(fast.busy_s, ref.busy_s, 1e-6);
      EXPECT_NEAR(fast.throttled_s, ref.throttled_s, 1e-6);
      for (size_t c = 0; c < kThrottleCauseCount; ++c)
        EXPECT_NEAR(fast.by_cause_s[c], ref.by_cause_s[c], 1e-6) << c;
      EXPECT_NEAR(fast.clock_deficit_mhz_s, ref.clock_deficit_mhz_s, 1e-3);
      ASSERT_EQ(fast.intervals.size(), ref.intervals.size());
      for (size_t i = 0; i < ref.intervals.size(); ++i) {
        EXPECT_EQ(fast.intervals[i].start_ns, ref.intervals[i].start_ns);
        EXPECT_EQ(fast.intervals[i].end_ns, ref.intervals[i].end_ns);
      }
    }
    EXPECT_GT(meta.samples(gi), 0u);
  }
}

TEST(ThrottleValidation, OverlapPrecisionRecallByHand) {
  const OverlapScore s =
      scoreOverlap({{0, 10 * kSec}, {20 * kSec, 30 * kSec}}, {{5 * kSec, 25 * kSec}});
  EXPECT_DOUBLE_EQ(s.detected_s, 20);
  EXPECT_DOUBLE_EQ(s.truth_s, 20);
  EXPECT_DOUBLE_EQ(s.overlap_s, 10);
  EXPECT_DOUBLE_EQ(s.precision(), 0.5);
  EXPECT_DOUBLE_EQ(s.recall(), 0.5);
}

// Ground truth on a hand-built run: throttle intervals of 2-30 s at random (not sample-aligned)
// times on two GPUs, with power-cap and thermal causes and no recorded reasons; clock noise and
// idle phases elsewhere. The detector must find them with precision and recall >= 0.95.
TEST(ThrottleValidation, DetectsKnownIntervalsWithHighPrecisionAndRecall) {
  test::TempDir dir;
  const double seconds = 900;
  test::RunSpec s = test::baseRun(2, seconds);
  s.info.sample_interval_s = 0.05;
  std::mt19937_64 rng(11);
  for (int g = 0; g < 2; ++g) {
    std::vector<ThrottleTruth> truth;
    int64_t at = kT0 + 20 * kSec;
    while (true) {
      const int64_t len =
          (2 + static_cast<int64_t>(rng() % 28)) * kSec + static_cast<int64_t>(rng() % kSec);
      if (at + len > s.info.end_ns - 30 * kSec) break;
      const bool thermal = rng() % 2;
      truth.push_back({g, at, at + len, thermal ? throttle::kSwThermal : throttle::kSwPowerCap});
      at += len + (10 + static_cast<int64_t>(rng() % 60)) * kSec;
    }
    TelemetryTable t;
    t.columns = {{"power_w", {}}, {"temp_c", {}}, {"sm_clock_mhz", {}}, {"util_pct", {}}};
    for (int64_t ts = kT0; ts < s.info.end_ns; ts += 50 * kMs) {
      const ThrottleTruth* in = nullptr;
      for (const ThrottleTruth& tt : truth)
        if (ts >= tt.start_ns && ts < tt.end_ns) in = &tt;
      const bool idle = ((ts - kT0) / kSec) % 97 < 3 && !in;
      double clock = 1960 + static_cast<double>(rng() % 21);
      double power = 550 + static_cast<double>(rng() % 100), temp = 70;
      if (in) {
        clock = 1500 + static_cast<double>(rng() % 300);
        if (in->reasons == throttle::kSwThermal)
          temp = 88;
        else
          power = 695;
      }
      if (idle) clock = 300, power = 90;
      t.t_ns.push_back(ts);
      t.columns[0].values.push_back(power);
      t.columns[1].values.push_back(temp);
      t.columns[2].values.push_back(clock);
      t.columns[3].values.push_back(idle ? 0 : 100);
    }
    s.telemetry.push_back(t);
    s.truth.insert(s.truth.end(), truth.begin(), truth.end());
  }
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  ASSERT_TRUE(run->hasGroundTruth());
  const auto detected = detectThrottle(*run, {0, 1}, TimeRange{}, AnalysisOptions{});
  const OverlapScore score = scoreThrottleDetection(detected, run->truthThrottle());
  EXPECT_GT(score.truth_s, 100.0);
  EXPECT_GE(score.precision(), 0.95);
  EXPECT_GE(score.recall(), 0.95);
  // Causes were inferred from temperature and power.
  for (const GpuThrottle& g : detected)
    for (const ThrottleInterval& iv : g.intervals)
      EXPECT_TRUE(iv.cause == ThrottleCause::ThermalInferred ||
                  iv.cause == ThrottleCause::PowerCapInferred);
}

}  // namespace
}  // namespace wl
