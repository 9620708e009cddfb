// SPDX-License-Identifier: GPL-3.0-or-later
// Throttle detection against the simulator's independent ground truth (docs/analyses.md,
// "Validation"): the truth says, per 5 ms physics step, which limit bound each GPU's clock while
// it ran kernels and what clock it would have run at otherwise; the detector sees 20 Hz telemetry
// (the default rate, the seed paper's 50 ms) and applies its own rules (busy at >= 20 %
// utilization, throttled below 0.95 x the observed maximum clock). The floors below sit under the
// measured scores (printed by each test; docs/analyses.md lists them) by a margin for seeds.
#include <gtest/gtest.h>

#include <cstdio>

#include "analysis/throttle_detection.h"
#include "analysis/throttle_validation.h"
#include "loaders/format/run_file.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

sim::SimConfig baseConfig() {
  sim::SimConfig c;
  c.platform = *sim::findProfile("h100");
  c.model = *sim::findModel("TinyLlama-1.1B");
  c.nodes = 1;
  c.gpusPerNode = 8;
  c.tp = 1, c.pp = 1, c.dp = 8;
  c.mbs = 2;
  c.gbs = 64;
  c.seqLen = 2048;
  c.durationS = 40;
  c.seed = 11;
  c.trace.ranks = sim::TraceSelection::Ranks::None;
  return c;
}

struct Scored {
  ThrottleValidation v;
  std::array<double, kThrottleCauseCount> byCause{};
};

Scored detectAndScore(const sim::SimConfig& c, const std::filesystem::path& out,
                      const char* label) {
  sim::simulate(c, out, {}, nullptr);
  const auto run = RunFile::open(out);
  std::vector<int> gpus;
  for (const GpuInfo& g : run->gpus())
    gpus.push_back(g.id);
  const auto detected = detectThrottle(*run, gpus, TimeRange{}, AnalysisOptions{});
  Scored s;
  s.v = validateThrottleDetection(detected, run->truthThrottle());
  for (const GpuThrottle& g : detected)
    for (size_t k = 0; k < kThrottleCauseCount; ++k)
      s.byCause[k] += g.by_cause_s[k];
  std::printf(
      "%s: truth %.1f s, detected %.1f s, precision %.3f, recall %.3f; power %.3f/%.3f, thermal "
      "%.3f/%.3f; deficit truth %.0f MHz s, detected %.0f (%+.1f %%); throttled kernel time "
      "truth %.1f s, detected %.1f s (%+.1f %%)\n",
      label, s.v.time.truth_s, s.v.time.detected_s, s.v.time.precision(), s.v.time.recall(),
      s.v.power.precision(), s.v.power.recall(), s.v.thermal.precision(), s.v.thermal.recall(),
      s.v.truth_deficit_mhz_s, s.v.detected_deficit_mhz_s, 100 * s.v.deficitError(),
      s.v.truth_busy_s, s.v.detected_throttled_s, 100 * s.v.throttledTimeError());
  return s;
}

TEST(ThrottleTruth, PowerCapThrottlingAt20HzAgainstTheIndependentTruth) {
  test::TempDir dir;
  sim::SimConfig c = baseConfig();
  c.powerLimitW = 450;  // well below the ~700 W the dense compute would draw
  const Scored s = detectAndScore(c, dir / "powercap.h5", "power cap 450 W");
  ASSERT_GT(s.v.time.truth_s, 100.0) << "the simulator should throttle";
  ASSERT_TRUE(s.v.truth_has_deficit);
  EXPECT_GE(s.v.time.precision(), 0.90);
  EXPECT_GE(s.v.time.recall(), 0.85);
  EXPECT_GE(s.v.power.precision(), 0.90);
  EXPECT_LT(std::fabs(s.v.deficitError()), 0.10);
  EXPECT_EQ(s.v.thermal.truth_s, 0.0);
}

TEST(ThrottleTruth, ThermalThrottlingAt20HzAgainstTheIndependentTruth) {
  test::TempDir dir;
  sim::SimConfig c = baseConfig();
  c.mbs = 4, c.gbs = 128, c.seqLen = 4096;
  c.inletTempC = 45;  // hot air: the GPUs reach their max operating temperature
  c.durationS = 90;
  const Scored s = detectAndScore(c, dir / "thermal.h5", "inlet 45 C");
  ASSERT_GT(s.v.thermal.truth_s, 5.0) << "the simulator should throttle thermally";
  EXPECT_GE(s.v.time.precision(), 0.90);
  EXPECT_GE(s.v.time.recall(), 0.60);
  // Every step a thermal limit bound the clock is found with a thermal cause. The reverse does
  // not hold: NVML sets every limiter's bit that is in force, and here the power cap (leakage is
  // high at 87 C) usually sits below the thermal ceiling, so most samples with the thermal bit
  // were bound by the power cap (thermal precision ~0.1, docs/analyses.md).
  EXPECT_GE(s.v.thermal.recall(), 0.90);
  EXPECT_LT(std::fabs(s.v.deficitError()), 0.25);
}

TEST(ThrottleTruth, MildPowerCapTrimsBelowTheThresholdAreMissedAndReportedAsSuch) {
  // At the default 700 W limit a dense workload is trimmed by a few percent: the truth counts it,
  // the 0.95 x reference threshold does not. Recall measures exactly that.
  test::TempDir dir;
  sim::SimConfig c = baseConfig();
  c.mbs = 4, c.gbs = 128, c.seqLen = 4096;
  c.durationS = 60;
  const Scored s = detectAndScore(c, dir / "mild.h5", "700 W, dense");
  ASSERT_GT(s.v.time.truth_s, 50.0);
  EXPECT_LT(s.v.time.recall(), 0.9);
  EXPECT_LT(s.v.deficitError(), 0.0);  // the detector misses the small trims' deficit
}

}  // namespace
}  // namespace wl
