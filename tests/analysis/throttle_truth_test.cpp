// SPDX-License-Identifier: GPL-3.0-or-later
// Throttle detection against the simulator's ground truth: on simulated runs with power-cap and
// with thermal throttling, the detected intervals overlap the true ones with precision and recall
// of at least 0.95 (time overlap, summed over GPUs).
#include <gtest/gtest.h>

#include "format/run_file.h"
#include "sim/model_shape.h"
#include "sim/platform_profile.h"
#include "sim/simulator.h"
#include "support/temp_dir.h"
#include "throttle_detection.h"
#include "throttle_validation.h"

namespace wl {
namespace {

// Throttling here comes and goes with every iteration (the GPUs idle during the data-parallel
// all-reduce), in intervals of ~0.25 s. Telemetry places each boundary only to within one sampling
// interval, so a time-overlap score of 0.95 needs samples well under 1/20 of an interval: these
// runs sample at 100 Hz (nvidia-smi -lms 10, DCGM at 10 ms). At 20 Hz the same detector scores
// about 0.9, the resolution bound docs/analyses.md states.
constexpr double kSampleHz = 100;

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
  OverlapScore score;
  double throttled_s = 0;  // kernel time, as by_cause_s
  std::array<double, kThrottleCauseCount> byCause{};
};

Scored detectAndScore(const sim::SimConfig& c, const std::filesystem::path& out) {
  sim::simulate(c, out, {}, nullptr);
  const auto run = RunFile::open(out);
  std::vector<int> gpus;
  for (const GpuInfo& g : run->gpus())
    gpus.push_back(g.id);
  const auto detected = detectThrottle(*run, gpus, TimeRange{}, AnalysisOptions{});
  Scored s;
  s.score = scoreThrottleDetection(detected, run->truthThrottle());
  for (const GpuThrottle& g : detected) {
    s.throttled_s += g.throttled_s;
    for (size_t k = 0; k < kThrottleCauseCount; ++k)
      s.byCause[k] += g.by_cause_s[k];
  }
  return s;
}

TEST(ThrottleTruth, PowerCapThrottlingIsFoundWithPrecisionAndRecallAbove95Percent) {
  test::TempDir dir;
  sim::SimConfig c = baseConfig();
  c.powerLimitW = 450;  // below the ~690 W compute draw of an H100
  c.sampleHz = kSampleHz;
  const Scored s = detectAndScore(c, dir / "powercap.h5");
  ASSERT_GT(s.score.truth_s, 10.0) << "the simulator should throttle";
  EXPECT_GE(s.score.precision(), 0.95)
      << "detected " << s.score.detected_s << " s, overlap " << s.score.overlap_s << " s";
  EXPECT_GE(s.score.recall(), 0.95)
      << "truth " << s.score.truth_s << " s, overlap " << s.score.overlap_s << " s";
  EXPECT_GT(s.byCause[static_cast<size_t>(ThrottleCause::SwPowerCap)], 0.9 * s.throttled_s);
}

TEST(ThrottleTruth, ThermalThrottlingIsFoundWithPrecisionAndRecallAbove95Percent) {
  test::TempDir dir;
  sim::SimConfig c = baseConfig();
  c.inletTempC = 56;  // hot air: the GPUs reach their slowdown temperatures
  c.durationS = 90;
  c.sampleHz = kSampleHz;
  const Scored s = detectAndScore(c, dir / "thermal.h5");
  ASSERT_GT(s.score.truth_s, 5.0) << "the simulator should throttle";
  EXPECT_GE(s.score.precision(), 0.95)
      << "detected " << s.score.detected_s << " s, overlap " << s.score.overlap_s << " s";
  EXPECT_GE(s.score.recall(), 0.95)
      << "truth " << s.score.truth_s << " s, overlap " << s.score.overlap_s << " s";
  const double thermal = s.byCause[static_cast<size_t>(ThrottleCause::SwThermal)] +
                         s.byCause[static_cast<size_t>(ThrottleCause::HwThermal)];
  EXPECT_GT(thermal, 0.5 * s.throttled_s);
}

}  // namespace
}  // namespace wl
