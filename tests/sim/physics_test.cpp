// SPDX-License-Identifier: GPL-3.0-or-later
// Directional checks that mirror the seed paper's findings, on runs with fixed seeds, computed
// from the recorded samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "loaders/core/throttle_reasons.h"
#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

double maxOf(const std::vector<double>& v) {
  double m = -1e300;
  for (double x : v)
    if (std::isfinite(x)) m = std::max(m, x);
  return m;
}

// Mean SM clock over the samples in [t0, t1) where the GPU was busy.
double busyClock(const RunFile& run, size_t g, double t0, double t1) {
  const test::Series clk = test::series(run, g, "sm_clock_mhz");
  const test::Series util = test::series(run, g, "util_pct");
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < clk.t.size(); ++i)
    if (clk.t[i] >= t0 && clk.t[i] < t1 && util.v[i] >= 50) sum += clk.v[i], ++n;
  return n ? sum / n : 0.0;
}

TEST(SimulatedPhysics, RearSlotGpusRunHotterAndClockLowerThanFrontOnes) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.mbs = 4, c.gbs = 128, c.seqLen = 4096;  // dense enough to hold every GPU at its power limit
  c.durationS = 150;
  const auto run = test::simulateAndOpen(c, dir / "slots.h5");
  const double t0 = 90, t1 = 150;
  double frontT = 0, rearT = 0, frontClk = 0, rearClk = 0;
  int front = 0, rear = 0;
  for (const GpuInfo& g : run->gpus()) {
    const double temp = test::timeWeightedMean(test::series(*run, g.id, "temp_c"), t0, t1);
    const double clk = busyClock(*run, g.id, t0, t1);
    if (g.slot == 0) {
      frontT += temp, frontClk += clk, ++front;
    } else {
      rearT += temp, rearClk += clk, ++rear;
      // Each rear GPU breathes the air its front neighbour heated.
      const double neighbour =
          test::timeWeightedMean(test::series(*run, g.id - 4, "temp_c"), t0, t1);
      EXPECT_GT(temp, neighbour + 3.0) << "GPU " << g.id;
    }
  }
  ASSERT_EQ(front, 4);
  ASSERT_EQ(rear, 4);
  EXPECT_GT(rearT / rear, frontT / front + 5.0);
  EXPECT_LT(rearClk / rear, frontClk / front - 10.0);
}

// Peak-to-average power per GPU over the training part of the run, averaged over GPUs.
double peakToAverage(const RunFile& run, double t0, double t1) {
  double sum = 0;
  for (const GpuInfo& g : run.gpus()) {
    const test::Series p = test::series(run, g.id, "power_w");
    double peak = 0;
    for (size_t i = 0; i < p.t.size(); ++i)
      if (p.t[i] >= t0 && p.t[i] < t1) peak = std::max(peak, p.v[i]);
    sum += peak / test::timeWeightedMean(p, t0, t1);
  }
  return sum / static_cast<double>(run.gpus().size());
}

TEST(SimulatedPhysics, LargerMicrobatchRaisesPeakToAveragePower) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.tp = 1, c.pp = 2, c.dp = 4;
  c.gbs = 64;
  c.durationS = 30;
  c.mbs = 1;
  const auto small = test::simulateAndOpen(c, dir / "mbs1.h5");
  c.mbs = 8;
  const auto large = test::simulateAndOpen(c, dir / "mbs8.h5");
  const double a = peakToAverage(*small, 5, 30), b = peakToAverage(*large, 5, 30);
  EXPECT_GT(b, a + 0.05) << "mbs 1: " << a << ", mbs 8: " << b;
}

TEST(SimulatedPhysics, OverlapRaisesPeakTemperature) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 1, c.dp = 4;
  c.mbs = 2;
  c.gbs = 64;
  c.durationS = 60;
  const auto plain = test::simulateAndOpen(c, dir / "plain.h5");
  c.overlap = true;
  const auto overlapped = test::simulateAndOpen(c, dir / "overlap.h5");
  double a = 0, b = 0;
  for (const GpuInfo& g : plain->gpus()) {
    a = std::max(a, maxOf(test::series(*plain, g.id, "temp_c").v));
    b = std::max(b, maxOf(test::series(*overlapped, g.id, "temp_c").v));
  }
  EXPECT_GE(b, a + 2.0) << "peak " << a << " C without overlap, " << b << " C with";
}

TEST(SimulatedPhysics, PowerLimitBelowComputeDrawThrottlesInTruthAndInReasonBits) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.durationS = 10;
  const auto free = test::simulateAndOpen(c, dir / "free.h5");
  c.powerLimitW = 300;
  const auto capped = test::simulateAndOpen(c, dir / "capped.h5");
  // The cap holds power averaged over ~1 s (power_cap_tau_s): skip the first seconds.
  const double trainStart = c.leadInS + 3, trainEnd = c.leadInS + c.durationS;
  ASSERT_TRUE(capped->hasGroundTruth());
  const auto truth = capped->truthThrottle();
  for (const GpuInfo& g : capped->gpus()) {
    EXPECT_FLOAT_EQ(g.power_limit_w, 300.f);
    // Ground truth: power-capped for most of the training time.
    double cappedS = 0;
    for (const ThrottleTruth& t : truth)
      if (t.gpu == g.id && (t.reasons & throttle::kSwPowerCap))
        cappedS += static_cast<double>(t.end_ns - t.start_ns) * 1e-9;
    EXPECT_GT(cappedS, 0.8 * c.durationS) << "GPU " << g.id;
    // Recorded: the SW power cap bit on busy samples, and the power held near the limit.
    const test::Series util = test::series(*capped, g.id, "util_pct");
    const test::Series power = test::series(*capped, g.id, "power_w");
    const Samples raw = capped->readAllSamples(SeriesKind::Gpu, g.id, "power_w");
    const std::vector<uint32_t> bits = capped->readThrottle(g.id, 0, raw.t_ns.size());
    int busy = 0, withBit = 0;
    for (size_t i = 0; i < util.t.size(); ++i) {
      if (util.t[i] < trainStart || util.t[i] >= trainEnd || util.v[i] < 50) continue;
      ++busy;
      withBit += (bits[i] & throttle::kSwPowerCap) != 0;
    }
    ASSERT_GT(busy, 100);
    EXPECT_GT(withBit, busy * 8 / 10) << "GPU " << g.id;
    EXPECT_LT(test::timeWeightedMean(power, trainStart, trainEnd), 300 * 1.03);
    EXPECT_LT(busyClock(*capped, g.id, trainStart, trainEnd),
              busyClock(*free, g.id, trainStart, trainEnd) - 300);
  }
}

}  // namespace
}  // namespace wl
