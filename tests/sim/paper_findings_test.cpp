// SPDX-License-Identifier: GPL-3.0-or-later
// The seed paper's findings as directional tests (docs/simulator.md, "The seed paper's findings"):
// each test simulates the smallest configuration that shows the finding, measures it from what
// the run file records (telemetry, kernel traces, ground truth) with short references written
// here, and prints the numbers the table in the docs quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "core/throttle_reasons.h"
#include "sim/comm_model.h"
#include "sim/model_shape.h"
#include "sim/platform_profile.h"
#include "sim/topology.h"
#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

// Llama3-8B on one 8-GPU H100 node, TP 2 x PP 2 x DP 2, recomputation on (without it the
// first stage needs more than 80 GB at 8192 tokens per microbatch).
sim::SimConfig llama8b() {
  sim::SimConfig c = test::tinyConfig();
  c.model = *sim::findModel("Llama3-8B");
  c.tp = 2, c.pp = 2, c.dp = 2;
  c.seqLen = 2048;
  c.recompute = true;
  c.seed = 1;
  return c;
}

double trainStart(const sim::SimConfig& c) {
  return c.leadInS;
}
double trainEnd(const sim::SimConfig& c) {
  return c.leadInS + c.durationS;
}

// Per GPU max / time-weighted mean of the power samples in [t0, t1), averaged over GPUs.
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

double maxSample(const RunFile& run, std::string_view metric) {
  double m = -1e300;
  for (const GpuInfo& g : run.gpus())
    for (double v : test::series(run, g.id, metric).v)
      if (std::isfinite(v)) m = std::max(m, v);
  return m;
}

// Ground-truth seconds the GPUs spent held by a thermal limit (SW thermal or HW slowdown), over
// all GPUs.
double thermalThrottleS(const RunFile& run) {
  double s = 0;
  for (const ThrottleTruth& t : run.truthThrottle())
    if (t.reasons & (throttle::kSwThermal | throttle::kHwSlowdown | throttle::kHwThermal))
      s += static_cast<double>(t.end_ns - t.start_ns) * 1e-9;
  return s;
}

// Mean over the GPUs of one chassis slot of the time-weighted mean of a metric in [t0, t1).
double slotMean(const RunFile& run, int slot, std::string_view metric, double t0, double t1) {
  double sum = 0;
  int n = 0;
  for (const GpuInfo& g : run.gpus())
    if (g.slot == slot) sum += test::timeWeightedMean(test::series(run, g.id, metric), t0, t1), ++n;
  return n ? sum / n : 0.0;
}

// Mean power over all GPUs in [t0, t1).
double meanPower(const RunFile& run, double t0, double t1) {
  double sum = 0;
  for (const GpuInfo& g : run.gpus())
    sum += test::timeWeightedMean(test::series(run, g.id, "power_w"), t0, t1);
  return sum / static_cast<double>(run.gpus().size());
}

// Finding: past a threshold, a larger microbatch gives burstier execution (higher peak-to-average
// power, higher power peaks), a higher peak temperature and more thermal throttling. Global batch
// 256 (so the pipeline bubble stays small), 180 s in a hot aisle so the rear GPUs reach their
// thermal limits.
TEST(PaperFindings, LargerMicrobatchIsBurstierHotterAndThrottlesMore) {
  test::TempDir dir;
  sim::SimConfig c = llama8b();
  c.gbs = 256;
  c.durationS = 180;
  ASSERT_TRUE(sim::applyThermalScenario("hot-aisle", c));
  c.mbs = 1;
  const auto small = test::simulateAndOpen(c, dir / "mbs1.h5");
  c.mbs = 4;
  const auto large = test::simulateAndOpen(c, dir / "mbs4.h5");
  const double t0 = trainStart(c) + 5, t1 = trainEnd(c);
  const double p2aSmall = peakToAverage(*small, t0, t1), p2aLarge = peakToAverage(*large, t0, t1);
  const double peakSmall = maxSample(*small, "power_w"), peakLarge = maxSample(*large, "power_w");
  const double hotSmall = slotMean(*small, 1, "temp_c", t1 - 60, t1);
  const double hotLarge = slotMean(*large, 1, "temp_c", t1 - 60, t1);
  const double thermSmall = thermalThrottleS(*small), thermLarge = thermalThrottleS(*large);
  std::printf(
      "mbs 1 -> 4: P2A %.3f -> %.3f, peak %.0f -> %.0f W, rear T (last 60 s) %.2f -> %.2f C,"
      " thermal throttle %.1f -> %.1f GPU-s\n",
      p2aSmall, p2aLarge, peakSmall, peakLarge, hotSmall, hotLarge, thermSmall, thermLarge);
  EXPECT_GT(p2aLarge, p2aSmall + 0.03);
  EXPECT_GT(peakLarge, peakSmall + 20);
  EXPECT_GT(thermSmall, 0.0);
  EXPECT_GT(thermLarge, thermSmall * 1.1);
}

// The other side of the threshold, as the model has it: at a fixed global batch a microbatch so
// large that few microbatches remain per iteration leaves a pipeline bubble that cools the GPUs
// (the paper reports more throttling there; docs/simulator.md says why the model does not).
TEST(PaperFindings, VeryLargeMicrobatchesStayBurstyButTheBubbleCoolsThem) {
  test::TempDir dir;
  sim::SimConfig c = llama8b();
  c.gbs = 256;
  c.durationS = 180;
  ASSERT_TRUE(sim::applyThermalScenario("hot-aisle", c));
  c.mbs = 4;
  const auto mid = test::simulateAndOpen(c, dir / "mbs4.h5");
  c.mbs = 16;
  const auto huge = test::simulateAndOpen(c, dir / "mbs16.h5");
  const double t0 = trainStart(c) + 5, t1 = trainEnd(c);
  const double p2aMid = peakToAverage(*mid, t0, t1), p2aHuge = peakToAverage(*huge, t0, t1);
  const double thermMid = thermalThrottleS(*mid), thermHuge = thermalThrottleS(*huge);
  std::printf(
      "mbs 4 -> 16: P2A %.3f -> %.3f, mean power %.0f -> %.0f W, thermal throttle %.1f ->"
      " %.1f GPU-s\n",
      p2aMid, p2aHuge, meanPower(*mid, t0, t1), meanPower(*huge, t0, t1), thermMid, thermHuge);
  EXPECT_GT(p2aHuge, p2aMid + 0.03);
  EXPECT_LT(meanPower(*huge, t0, t1), meanPower(*mid, t0, t1));
  EXPECT_GT(thermHuge, thermMid * 2);
}

// Finding: overlapping communication with computation raises the peak temperature. TinyLlama,
// TP 2 x DP 4: below the power limit, so the power the overlapped communication adds is not
// clocked away (a run held at its limit, such as Llama3-8B at 4096 tokens, gains < 0.2 C).
TEST(PaperFindings, OverlapRaisesPeakTemperature) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 1, c.dp = 4;
  c.mbs = 2, c.gbs = 64;
  c.durationS = 90;
  const auto plain = test::simulateAndOpen(c, dir / "plain.h5");
  c.overlap = true;
  const auto overlapped = test::simulateAndOpen(c, dir / "overlap.h5");
  const double a = maxSample(*plain, "temp_c"), b = maxSample(*overlapped, "temp_c");
  const double t1 = trainEnd(c);
  const double ma = slotMean(*plain, 1, "temp_c", t1 - 30, t1);
  const double mb = slotMean(*overlapped, 1, "temp_c", t1 - 30, t1);
  std::printf("overlap: peak T %.0f -> %.0f C, rear T (last 30 s) %.2f -> %.2f C\n", a, b, ma, mb);
  EXPECT_GE(b, a + 1.0);
  EXPECT_GT(mb, ma + 0.5);
}

// Finding: rear GPUs (breathing the air the front ones heated) run up to ~27 % hotter. Dense data
// parallel training (every GPU near its power limit) at steady state.
TEST(PaperFindings, RearGpusRunHotterThanTheFrontOnes) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.mbs = 4, c.gbs = 128, c.seqLen = 4096;
  c.durationS = 150;
  const auto run = test::simulateAndOpen(c, dir / "slots.h5");
  const double t1 = trainEnd(c), t0 = t1 - 30;
  double mean = 0, most = 0;
  for (const GpuInfo& g : run->gpus()) {
    if (g.slot != 1) continue;
    // The front GPU of the same column (GPUs 0-3 front, 4-7 behind them).
    const double rear = test::timeWeightedMean(test::series(*run, g.id, "temp_c"), t0, t1);
    const double front = test::timeWeightedMean(test::series(*run, g.id - 4, "temp_c"), t0, t1);
    mean += (rear / front - 1) / 4;
    most = std::max(most, rear / front - 1);
  }
  std::printf("rear vs front, steady state: mean +%.1f %%, most +%.1f %%\n", mean * 100,
              most * 100);
  EXPECT_GT(mean, 0.10);
  EXPECT_LT(most, 0.35);
}

// Finding: hotter GPUs clock lower and become the stragglers of collectives. TP 2 x DP 4 on one
// node: every data-parallel group has two front and two rear GPUs. Ranks 0, 2, 4, 6 (the group of
// tensor-parallel rank 0) traced; for every instance of their gradient all-reduce the member
// whose kernel starts last is the one the others waited for.
TEST(PaperFindings, HotterGpusClockLowerAndStraggle) {
  test::TempDir dir;
  sim::SimConfig c = llama8b();
  c.tp = 2, c.pp = 1, c.dp = 4;
  c.seqLen = 4096, c.mbs = 2, c.gbs = 64;
  c.durationS = 90;
  c.trace.ranks = sim::TraceSelection::Ranks::List;
  c.trace.rankList = {0, 2, 4, 6};
  const auto run = test::simulateAndOpen(c, dir / "traced.h5");
  const double t1 = trainEnd(c), t0 = t1 - 30;
  const double frontT = slotMean(*run, 0, "temp_c", t0, t1);
  const double rearT = slotMean(*run, 1, "temp_c", t0, t1);
  const double frontClk = slotMean(*run, 0, "sm_clock_mhz", t0, t1);
  const double rearClk = slotMean(*run, 1, "sm_clock_mhz", t0, t1);
  std::map<size_t, std::vector<KernelEvent>> kernels;
  std::map<std::pair<uint32_t, int64_t>, std::pair<int64_t, int>> last;  // -> (start, rank)
  for (const CollectiveRecord& r : run->collectives()) {
    if (run->str(r.info.pg_desc) != "DATA_PARALLEL_GROUP") continue;
    auto k = kernels.find(r.track);
    if (k == kernels.end()) k = kernels.emplace(r.track, run->readAllKernels(r.track)).first;
    const int64_t start = k->second[r.event].start_ns;
    const int rank = run->tracks()[r.track].rank;
    auto [it, fresh] = last.try_emplace({r.info.pg_name, r.info.seq}, start, rank);
    if (!fresh && start > it->second.first) it->second = {start, rank};
  }
  int rearLast = 0, frontLast = 0;
  for (const auto& [key, v] : last)
    ++(run->gpus()[static_cast<size_t>(v.second)].slot == 1 ? rearLast : frontLast);
  std::printf(
      "front vs rear: T %.1f / %.1f C, clock %.0f / %.0f MHz, last to arrive %d / %d"
      " of %zu collectives\n",
      frontT, rearT, frontClk, rearClk, frontLast, rearLast, last.size());
  EXPECT_GT(rearT, frontT + 3);
  EXPECT_LT(rearClk, frontClk - 10);
  ASSERT_GE(last.size(), 15u);
  EXPECT_GE(rearLast, 4 * frontLast);
}

}  // namespace
}  // namespace wl
