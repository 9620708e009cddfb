// SPDX-License-Identifier: GPL-3.0-or-later
// The bundled samples (resources/samples/README.md) show what they are said to show: thermal
// throttling on the hot (rear) GPUs of the README's sample, and the seed paper's microbatch
// finding between the pair. Measured from the recorded telemetry here, not by the analyses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "loaders/core/throttle_reasons.h"
#include "sim_test_support.h"

namespace wl {
namespace {

const std::filesystem::path kSamples = WATTLINE_SOURCE_DIR "/resources/samples";

struct Measured {
  int thermalFront = 0, thermalRear = 0;  // busy samples with a thermal reason bit
  int busy = 0;
  double peakToAverage = 0;  // per GPU max / mean power over the training, mean over GPUs
  double peakTemp = 0;
};

// Over the training (the first to the last iteration), or its first `maxS` seconds.
Measured measure(const RunFile& run, double maxS = 1e30) {
  const double t0 =
      static_cast<double>(run.iterations().front().start_ns - run.info().start_ns) * 1e-9;
  const double t1 = std::min(
      t0 + maxS, static_cast<double>(run.iterations().back().end_ns - run.info().start_ns) * 1e-9);
  constexpr uint32_t thermal = throttle::kSwThermal | throttle::kHwThermal | throttle::kHwSlowdown;
  Measured m;
  for (const GpuInfo& g : run.gpus()) {
    const test::Series util = test::series(run, g.id, "util_pct");
    const test::Series power = test::series(run, g.id, "power_w");
    const test::Series temp = test::series(run, g.id, "temp_c");
    const std::vector<uint32_t> bits = run.readThrottle(g.id, 0, util.t.size());
    double peak = 0;
    for (size_t i = 0; i < util.t.size(); ++i) {
      if (util.t[i] < t0 || util.t[i] >= t1) continue;
      peak = std::max(peak, power.v[i]);
      m.peakTemp = std::max(m.peakTemp, temp.v[i]);
      if (util.v[i] < 50) continue;
      ++m.busy;
      if (bits[i] & thermal) ++(g.slot == 0 ? m.thermalFront : m.thermalRear);
    }
    m.peakToAverage +=
        peak / test::timeWeightedMean(power, t0, t1) / static_cast<double>(run.gpus().size());
  }
  return m;
}

TEST(Samples, ReadmeSampleThrottlesThermallyOnItsRearGpus) {
  const auto run = RunFile::open(kSamples / "llama3-8b-h100x8-mbs4.h5");
  const Measured m = measure(*run);
  EXPECT_EQ(m.thermalFront, 0);
  EXPECT_GT(m.thermalRear, m.busy / 100);  // over 1 % of the busy samples of the node
  // The ground truth agrees that a thermal limit, not only the power cap, bound rear clocks.
  double frontS = 0, rearS = 0;
  for (const ThrottleTruth& t : run->truthThrottle()) {
    if (!(t.reasons & (throttle::kSwThermal | throttle::kHwSlowdown))) continue;
    const double d = static_cast<double>(t.end_ns - t.start_ns) * 1e-9;
    (run->gpus()[static_cast<size_t>(t.gpu)].slot == 0 ? frontS : rearS) += d;
  }
  std::printf(
      "thermal-bound: front %.1f s, rear %.1f s; busy samples with a thermal bit: %d of "
      "%d\n",
      frontS, rearS, m.thermalRear, m.busy);
  EXPECT_EQ(frontS, 0.0);
  EXPECT_GT(rearS, 1.0);
}

// Over the same first 150 s of training: the microbatch-1 run goes on 30 s longer (so that it
// reaches step 20 and its step 19 is traced like the microbatch-4 run's), and heats further.
TEST(Samples, LargerMicrobatchIsBurstierAndThrottlesMoreThermally) {
  const Measured mbs4 = measure(*RunFile::open(kSamples / "llama3-8b-h100x8-mbs4.h5"), 150);
  const Measured mbs1 = measure(*RunFile::open(kSamples / "llama3-8b-h100x8-mbs1.h5"), 150);
  EXPECT_GT(mbs4.peakToAverage, mbs1.peakToAverage + 0.03);
  EXPECT_GE(mbs4.peakTemp, mbs1.peakTemp);
  EXPECT_GT(mbs4.thermalRear, mbs1.thermalRear);
}

TEST(Samples, EveryBundledRunIsUnder5MB) {
  for (const auto& e : std::filesystem::directory_iterator(kSamples)) {
    if (e.path().extension() == ".h5") {
      EXPECT_LT(e.file_size(), 5'000'000u) << e.path();
    }
  }
}

}  // namespace
}  // namespace wl
