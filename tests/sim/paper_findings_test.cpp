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

#include "loaders/core/throttle_reasons.h"
#include "loaders/sim/comm_model.h"
#include "loaders/sim/memory_model.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"
#include "loaders/sim/topology.h"
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
  const double peakTSmall = maxSample(*small, "temp_c"), peakTLarge = maxSample(*large, "temp_c");
  std::printf(
      "mbs 1 -> 4: P2A %.3f -> %.3f, peak %.0f -> %.0f W, peak T %.0f -> %.0f C, rear T (last 60"
      " s) %.2f -> %.2f C, thermal throttle %.2f -> %.2f GPU-s\n",
      p2aSmall, p2aLarge, peakSmall, peakLarge, peakTSmall, peakTLarge, hotSmall, hotLarge,
      thermSmall, thermLarge);
  EXPECT_GT(p2aLarge, p2aSmall + 0.03);
  EXPECT_GT(peakLarge, peakSmall + 20);
  EXPECT_GE(peakTLarge, peakTSmall);
  EXPECT_GT(hotLarge, hotSmall);
  EXPECT_GT(thermLarge, thermSmall + 1.0);
}

// Past the threshold, at the paper's fixed global batch: a microbatch so large that few
// microbatches remain per iteration leaves a larger pipeline bubble, so the mean power falls, yet
// the bursts after each bubble overshoot the power limit further and heat the dies past their
// thermal limit more often.
TEST(PaperFindings, VeryLargeMicrobatchesDrawLessOnAverageYetThrottleMore) {
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

// Finding: tensor + pipeline parallelism reaches lower link bandwidth than tensor or pipeline
// parallelism alone. What one microbatch moves per layer boundary on 8 GPUs of a node, Llama3-8B
// at 2048 tokens (D = T h 2 bytes of activations): TP 4 all-reduces D twice per layer; PP 4 sends
// D to the next stage; TP 2 x PP 2 all-reduces D over 2 ranks and sends D / 2 per rank
// (scatter-gather of the pipeline exchange over the tensor-parallel ranks). Achieved bandwidth =
// the bytes each rank sends / the time the collective plan takes, summed over the layer.
TEST(PaperFindings, TensorPlusPipelineUsesTheLinksWorse) {
  sim::SimConfig c = test::tinyConfig();
  c.model = *sim::findModel("Llama3-8B");
  c.seqLen = 2048, c.mbs = 1;
  const double D = 1.0 * c.seqLen * c.model.hidden * 2;
  struct Moved {
    double bytes = 0, seconds = 0;
    void add(const sim::CollectivePlan& p) { bytes += p.bytesPerRank, seconds += p.seconds; }
    double gbs() const { return bytes / seconds * 1e-9; }
  };
  struct Layer {
    Moved tp, pp, all;
  };
  auto layout = [&](int tp, int pp) {
    c.tp = tp, c.pp = pp, c.dp = 8 / (tp * pp);
    c.gbs = c.dp * 8;
    const sim::Topology topo(c);
    Layer m;
    using K = sim::CollectiveKind;
    for (int i = 0; tp > 1 && i < 2; ++i) {
      const auto p =
          sim::planCollective(K::AllReduce, D, *topo.worstGroup(sim::GroupKind::Tp, 0), c.platform);
      m.tp.add(p), m.all.add(p);
    }
    if (pp > 1) {
      const auto p = sim::planCollective(K::SendRecv, D / tp,
                                         *topo.worstGroup(sim::GroupKind::P2pPair, 0), c.platform);
      m.pp.add(p), m.all.add(p);
    }
    return m;
  };
  const Layer tp = layout(4, 1), pp = layout(1, 4), both = layout(2, 2);
  std::printf(
      "achieved GB/s per rank: TP 4 %.0f, PP 4 %.0f (exchange %.0f), TP 2 x PP 2 %.0f "
      "(all-reduce %.0f, exchange %.0f)\n",
      tp.all.gbs(), pp.all.gbs(), pp.pp.gbs(), both.all.gbs(), both.tp.gbs(), both.pp.gbs());
  // Reproduced: the pipeline exchange split over the tensor-parallel ranks moves smaller chunks
  // and reaches less of the link than the whole exchange of pipeline parallelism alone.
  EXPECT_LT(both.pp.gbs(), 0.9 * pp.pp.gbs());
  // Not reproduced (docs/simulator.md): over the whole layer the mix lies between the two, as
  // the tensor-parallel all-reduce of the mix still moves most bytes at NVLink speed.
  EXPECT_GT(both.all.gbs(), pp.all.gbs());
  EXPECT_LT(both.all.gbs(), tp.all.gbs());
}

double lastIterationS(const RunFile& run) {
  const Iteration& it = run.iterations().back();
  return static_cast<double>(it.end_ns - it.start_ns) * 1e-9;
}

// Finding: scale-up (32 H200) against scale-out (64 H100) at the same global batch: which wins
// depends on whether the configuration is communication-bound. Communication-bound: Llama3-8B
// with TP 8 inside each node and the data-parallel gradient all-reduce across nodes over the
// node's one 100 Gb/s NIC, global batch 8 (twice the GPUs halve the compute, not the all-reduce,
// whose ring over 8 nodes moves 2 x 7/8 of the gradients against 2 x 3/4 over 4). Compute-bound:
// Llama3-70B with TP 8 inside each node and the pipeline across nodes (small exchanges).
TEST(PaperFindings, ScaleUpWinsWhenCommunicationBoundScaleOutOtherwise) {
  test::TempDir dir;
  auto iteration = [&](const char* platform, int nodes, const char* model, int pp, int gbs,
                       const char* name) {
    sim::SimConfig c = test::tinyConfig();
    c.platform = *sim::findProfile(platform);
    c.model = *sim::findModel(model);
    c.nodes = nodes;
    c.tp = 8, c.pp = pp, c.dp = nodes / pp;
    c.mbs = 1, c.gbs = gbs, c.seqLen = 4096;
    c.recompute = true;
    c.durationS = 0, c.iterations = 2;
    return lastIterationS(*test::simulateAndOpen(c, dir / name));
  };
  const double upComm = iteration("h200", 4, "Llama3-8B", 1, 8, "up-comm.h5");
  const double outComm = iteration("h100", 8, "Llama3-8B", 1, 8, "out-comm.h5");
  const double upComp = iteration("h200", 4, "Llama3-70B", 4, 64, "up-comp.h5");
  const double outComp = iteration("h100", 8, "Llama3-70B", 8, 64, "out-comp.h5");
  std::printf(
      "iteration s, 32 H200 vs 64 H100: communication-bound %.3f vs %.3f, compute-bound "
      "%.3f vs %.3f\n",
      upComm, outComm, upComp, outComp);
  EXPECT_LT(upComm, outComm);
  EXPECT_LT(outComp, 0.8 * upComp);
}

// Finding: activation recomputation trades memory for compute: less activation memory, longer
// iterations. Llama3-8B, TP 2 x PP 2 x DP 2 at 4096 tokens (with the distributed optimizer, so
// that the run without recomputation fits in 80 GB).
TEST(PaperFindings, RecomputationTradesMemoryForCompute) {
  test::TempDir dir;
  sim::SimConfig c = llama8b();
  c.seqLen = 4096, c.mbs = 2, c.gbs = 64;
  c.distributedOptimizer = true;
  c.durationS = 0, c.iterations = 3;
  c.recompute = false;
  const sim::MemoryReport keep = sim::memoryPlan(c);
  const double keepS = lastIterationS(*test::simulateAndOpen(c, dir / "keep.h5"));
  c.recompute = true;
  const sim::MemoryReport redo = sim::memoryPlan(c);
  const double redoS = lastIterationS(*test::simulateAndOpen(c, dir / "redo.h5"));
  const double gib = 1024.0 * 1024 * 1024;
  std::printf("recompute: activations %.1f -> %.1f GiB (stage 0), iteration %.3f -> %.3f s\n",
              keep.stages[0].activations / gib, redo.stages[0].activations / gib, keepS, redoS);
  ASSERT_TRUE(keep.fits());
  EXPECT_LT(redo.stages[0].activations, 0.5 * keep.stages[0].activations);
  // The forward pass again in every backward pass: about a third more compute.
  EXPECT_GT(redoS, 1.2 * keepS);
  EXPECT_LT(redoS, 1.45 * keepS);
}

// Finding: the two GCDs of an MI250 differ by 5-10 C (the second breathes the first one's air
// inside the package). Per package, the mean temperature difference of its GCDs over the last
// 30 s of training, averaged over the node's four packages.
TEST(PaperFindings, Mi250GcdsOfOnePackageDifferBy5To10C) {
  test::TempDir dir;
  sim::SimConfig c = llama8b();
  c.platform = *sim::findProfile("mi250");
  c.seqLen = 4096, c.mbs = 1, c.gbs = 32;
  c.durationS = 90;
  const auto run = test::simulateAndOpen(c, dir / "mi250.h5");
  const double t1 = trainEnd(c), t0 = t1 - 30;
  std::map<int, std::vector<double>> packages;
  for (const GpuInfo& g : run->gpus())
    packages[g.package].push_back(
        test::timeWeightedMean(test::series(*run, g.id, "temp_c"), t0, t1));
  double sum = 0;
  for (const auto& [p, temps] : packages) {
    ASSERT_EQ(temps.size(), 2u);
    sum += std::fabs(temps[1] - temps[0]);
  }
  const double skew = sum / static_cast<double>(packages.size());
  std::printf("MI250 GCD skew: %.1f C (mean of %zu packages)\n", skew, packages.size());
  EXPECT_GE(skew, 5.0);
  EXPECT_LE(skew, 10.0);
}

// Finding: LoRA fine-tuning draws less power and runs cooler than pre-training the same model
// (no weight-gradient GEMMs; the adapters' thin GEMMs are memory-bound). Same layout, same batch.
TEST(PaperFindings, LoraLowersPowerAndTemperature) {
  test::TempDir dir;
  sim::SimConfig c = llama8b();
  c.seqLen = 4096, c.mbs = 2, c.gbs = 64;
  c.durationS = 90;
  const auto pre = test::simulateAndOpen(c, dir / "pretrain.h5");
  c.workload = sim::Workload::Lora;
  const auto lora = test::simulateAndOpen(c, dir / "lora.h5");
  const double t0 = trainStart(c) + 5, t1 = trainEnd(c);
  const double pP = meanPower(*pre, t0, t1), pL = meanPower(*lora, t0, t1);
  const double tP = slotMean(*pre, 1, "temp_c", t1 - 30, t1);
  const double tL = slotMean(*lora, 1, "temp_c", t1 - 30, t1);
  std::printf(
      "LoRA vs pre-training: mean power %.0f vs %.0f W, rear T (last 30 s) %.2f vs %.2f C\n", pL,
      pP, tL, tP);
  EXPECT_LT(pL, pP - 10);
  EXPECT_LT(tL, tP - 0.5);
}

}  // namespace
}  // namespace wl
