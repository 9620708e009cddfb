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
#include <vector>

#include "loaders/core/throttle_reasons.h"
#include "loaders/sim/memory_model.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"
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

// Finding: past a certain microbatch size, bursty execution and peak power excursions worsen
// thermal throttling. Llama3-8B TP 2 x PP 2 x DP 2 at global batch 256, 180 s in a hot aisle (so
// the rear GPUs reach their thermal limits), microbatch 1, 2, 4, 8 and 16, each at eight seeds.
// A seed is a node (the parts' leakage and thermal resistances, the inlet offset, the jitter), so
// the microbatches are compared node by node. The margin is the model's noise, by a sign test: a
// measure moves from one microbatch to the next only if it moves the same way on all eight nodes
// (if the microbatch made no difference, each node would go either way: all eight alike has a
// chance of 2 x 2^-8 < 1 %). No margin comes from the numbers being compared.
struct MicrobatchPoint {
  int mbs = 0;
  std::vector<double> p2a, peakW, meanW, rearT, throttleS, peakT;  // one value per seed
};

double meanOf(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s / static_cast<double>(v.size());
}

// b above a on every seed.
bool risesOnEverySeed(const std::vector<double>& a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!(b[i] > a[i])) return false;
  return !a.empty();
}

std::string perSeed(const std::vector<double>& v) {
  std::string s;
  for (double x : v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3g", s.empty() ? "" : " ", x);
    s += buf;
  }
  return s;
}

class MicrobatchSweep : public ::testing::Test {
 protected:
  static constexpr int kMicrobatches[] = {1, 2, 4, 8, 16};
  static constexpr uint64_t kSeeds[] = {1, 2, 3, 4, 5, 6, 7, 8};
  static std::vector<MicrobatchPoint>* points_;

  static void SetUpTestSuite() {
    points_ = new std::vector<MicrobatchPoint>;
    test::TempDir dir;
    for (int mbs : kMicrobatches) {
      MicrobatchPoint p;
      p.mbs = mbs;
      for (uint64_t seed : kSeeds) {
        sim::SimConfig c = llama8b();
        c.gbs = 256;
        c.durationS = 180;
        EXPECT_TRUE(sim::applyThermalScenario("hot-aisle", c));
        c.mbs = mbs;
        c.seed = seed;
        const auto run = test::simulateAndOpen(c, dir / "mbs.h5");
        const double t0 = trainStart(c) + 5, t1 = trainEnd(c);
        p.p2a.push_back(peakToAverage(*run, t0, t1));
        p.peakW.push_back(maxSample(*run, "power_w"));
        p.meanW.push_back(meanPower(*run, t0, t1));
        p.rearT.push_back(slotMean(*run, 1, "temp_c", t1 - 60, t1));
        p.throttleS.push_back(thermalThrottleS(*run));
        p.peakT.push_back(maxSample(*run, "temp_c"));
      }
      std::printf(
          "mbs %2d, mean of 8 seeds: P2A %.3f, peak %.0f W, mean %.0f W, rear T (last 60 s) "
          "%.2f C, peak T %.1f C, thermal throttle %.2f GPU-s (per seed: %s)\n",
          mbs, meanOf(p.p2a), meanOf(p.peakW), meanOf(p.meanW), meanOf(p.rearT), meanOf(p.peakT),
          meanOf(p.throttleS), perSeed(p.throttleS).c_str());
      points_->push_back(std::move(p));
    }
  }
  static void TearDownTestSuite() {
    delete points_;
    points_ = nullptr;
  }
  static const std::vector<MicrobatchPoint>& points() { return *points_; }
};

std::vector<MicrobatchPoint>* MicrobatchSweep::points_ = nullptr;

// Reproduced: every larger microbatch is burstier: on every node, a higher peak-to-average power
// and higher power peaks than the next smaller one.
TEST_F(MicrobatchSweep, ReproducedEveryLargerMicrobatchIsBurstierWithHigherPowerPeaks) {
  const auto& p = points();
  for (size_t i = 1; i < p.size(); ++i) {
    EXPECT_TRUE(risesOnEverySeed(p[i - 1].p2a, p[i].p2a))
        << "P2A mbs " << p[i - 1].mbs << " -> " << p[i].mbs << ": " << perSeed(p[i - 1].p2a)
        << " -> " << perSeed(p[i].p2a);
    EXPECT_TRUE(risesOnEverySeed(p[i - 1].peakW, p[i].peakW))
        << "peak W mbs " << p[i - 1].mbs << " -> " << p[i].mbs << ": " << perSeed(p[i - 1].peakW)
        << " -> " << perSeed(p[i].peakW);
  }
}

// Reproduced: thermal throttling (ground truth) has a knee. The knee is the smallest microbatch
// from which every larger one throttles more on every node; below it, some step does not (on
// some node throttling falls or stays). It must lie inside the sweep, with at least two steps
// past it.
TEST_F(MicrobatchSweep, ReproducedThermalThrottlingGrowsPastAKnee) {
  const auto& p = points();
  size_t knee = p.size() - 1;
  while (knee > 0 && risesOnEverySeed(p[knee - 1].throttleS, p[knee].throttleS))
    --knee;
  std::printf(
      "knee: from microbatch %d on, every larger microbatch throttles more on all %zu "
      "nodes\n",
      p[knee].mbs, std::size(kSeeds));
  EXPECT_GE(knee, 1u) << "throttling rises from the smallest microbatch on: no knee";
  EXPECT_LE(knee + 2, p.size() - 1) << "fewer than two steps past the knee";
}

// Not reproduced: a hotter GPU. The peak temperature is held at the HW slowdown threshold (89 C
// on H100, +1 C of sensor noise and rounding) at every microbatch, and the rear row's mean
// temperature follows the mean power, which from the largest step on *falls* on every node (fewer
// microbatches per iteration leave a larger pipeline bubble): the extra throttling comes from the
// bursts overshooting the thermal limit, not from a hotter GPU.
TEST_F(MicrobatchSweep, NotReproducedTheTemperatureDoesNotRisePastTheKnee) {
  const auto& p = points();
  const double slowdown = sim::findProfile("h100")->slowdown_temp_c;
  for (const MicrobatchPoint& m : p)
    for (double t : m.peakT)
      EXPECT_LE(t, slowdown + 1) << "mbs " << m.mbs;
  const MicrobatchPoint &last = p.back(), &before = p[p.size() - 2];
  EXPECT_TRUE(risesOnEverySeed(last.meanW, before.meanW))
      << perSeed(before.meanW) << " -> " << perSeed(last.meanW);
  EXPECT_TRUE(risesOnEverySeed(last.rearT, before.rearT))
      << perSeed(before.rearT) << " -> " << perSeed(last.rearT);
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

// NVLink traffic of one GPU from its recorded counter (KiB, 32-bit, wrapping as NVML's do):
// the bytes it sent in [t0, t1), with the counter interpolated linearly at both ends.
double nvlinkTxBytes(const RunFile& run, size_t gpu, double t0, double t1) {
  const test::Series s = test::series(run, gpu, "nvlink_tx_kib");
  std::vector<double> unwrapped(s.v.size());
  double wraps = 0;
  for (size_t i = 0; i < s.v.size(); ++i) {
    if (i > 0 && s.v[i] < s.v[i - 1]) wraps += 4294967296.0;
    unwrapped[i] = s.v[i] + wraps;
  }
  auto at = [&](double t) {
    const auto it = std::lower_bound(s.t.begin(), s.t.end(), t);
    if (it == s.t.begin()) return unwrapped.front();
    if (it == s.t.end()) return unwrapped.back();
    const size_t i = static_cast<size_t>(it - s.t.begin());
    const double w = (t - s.t[i - 1]) / (s.t[i] - s.t[i - 1]);
    return unwrapped[i - 1] + w * (unwrapped[i] - unwrapped[i - 1]);
  };
  return (at(t1) - at(t0)) * 1024.0;
}

struct LinkUse {
  double gbs = 0;       // NVLink bytes sent per GPU per second, whole iterations, GB/s
  double errorGbs = 0;  // what reading the counter can be off by (one sample's traffic per end)
  double iterationS = 0;
};

// Over whole iterations (the second to the last; the first warms up): the NVLink bytes every GPU
// sent, from its counter, over the time those iterations took, averaged over the GPUs.
LinkUse linkUse(const RunFile& run) {
  double t0 = 1e300, t1 = -1e300;
  int64_t lastStep = 0;
  for (const Iteration& it : run.iterations()) {
    if (it.step < 1) continue;
    lastStep = std::max(lastStep, it.step);
    t0 = std::min(t0, static_cast<double>(it.start_ns - run.info().start_ns) * 1e-9);
    t1 = std::max(t1, static_cast<double>(it.end_ns - run.info().start_ns) * 1e-9);
  }
  const double sampleS = 1.0 / 20;  // the default --sample-hz
  LinkUse u;
  for (const GpuInfo& g : run.gpus()) {
    const double bytes = nvlinkTxBytes(run, g.id, t0, t1);
    u.gbs += bytes / (t1 - t0) * 1e-9;
    // Linear interpolation inside one sample interval at each end, plus the KiB resolution.
    const double perSample = bytes / (t1 - t0) * sampleS;
    u.errorGbs += (2 * perSample + 2048.0) / (t1 - t0) * 1e-9;
  }
  const double n = static_cast<double>(run.gpus().size());
  u.gbs /= n, u.errorGbs /= n;
  u.iterationS = (t1 - t0) / static_cast<double>(lastStep);
  return u;
}

// Finding: tensor + pipeline parallelism under-uses the links (inefficient chunking). Measured on
// simulated runs of Llama3-8B at 2048 tokens on one 8-GPU H100 node, TP 4 x DP 2, PP 4 x DP 2 and
// TP 2 x PP 2 x DP 2 (microbatch 1, eight microbatches per iteration), from the recorded NVLink
// counters over whole iterations: the mean link throughput of a GPU. Each layout runs at two
// seeds; a difference counts when it exceeds the two layouts' seed differences plus what reading
// the counters can be off by. What it shows (docs/simulator.md, "partly reproduced"): the mix
// uses the links less than tensor parallelism alone, but more than pipeline parallelism alone.
TEST(PaperFindings, PartlyReproducedTensorPlusPipelineUsesTheLinksLessThanTensorAloneOnly) {
  test::TempDir dir;
  struct Layout {
    const char* name;
    int tp, pp;
    LinkUse use[2];
    double gbs() const { return (use[0].gbs + use[1].gbs) / 2; }
    double noise() const {
      return std::fabs(use[0].gbs - use[1].gbs) + std::max(use[0].errorGbs, use[1].errorGbs);
    }
  };
  Layout layouts[] = {{"TP 4", 4, 1, {}}, {"PP 4", 1, 4, {}}, {"TP 2 x PP 2", 2, 2, {}}};
  for (Layout& l : layouts)
    for (int k = 0; k < 2; ++k) {
      sim::SimConfig c = llama8b();
      c.tp = l.tp, c.pp = l.pp, c.dp = 8 / (l.tp * l.pp);
      c.mbs = 1, c.gbs = c.dp * 8;
      c.durationS = 0, c.iterations = 6;
      c.seed = 1 + static_cast<uint64_t>(k);
      l.use[k] = linkUse(*test::simulateAndOpen(c, dir / "layout.h5"));
    }
  const Layout &tp = layouts[0], &pp = layouts[1], &both = layouts[2];
  std::printf(
      "NVLink GB/s per GPU over whole iterations (seeds 1, 2; counter error): TP 4 %.1f, %.1f "
      "(+-%.2f), PP 4 %.1f, %.1f (+-%.2f), TP 2 x PP 2 %.1f, %.1f (+-%.2f); link %.0f GB/s; "
      "iteration %.3f / %.3f / %.3f s\n",
      tp.use[0].gbs, tp.use[1].gbs, tp.use[0].errorGbs, pp.use[0].gbs, pp.use[1].gbs,
      pp.use[0].errorGbs, both.use[0].gbs, both.use[1].gbs, both.use[0].errorGbs,
      sim::findProfile("h100")->intra_node_gbs, tp.use[0].iterationS, pp.use[0].iterationS,
      both.use[0].iterationS);
  // Reproduced half: less than tensor parallelism alone.
  EXPECT_LT(both.gbs(), tp.gbs() - both.noise() - tp.noise());
  // Not reproduced half: more than pipeline parallelism alone.
  EXPECT_GT(both.gbs(), pp.gbs() + both.noise() + pp.noise());
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

// Calibrated, not reproduced: the two GCDs of an MI250 differ by 5-10 C (the second breathes the
// first one's air inside the package). This is the figure `package_air_conductance_w_per_k` (35
// W/K on MI250) was chosen to give (docs/simulator.md, profile table), so the test guards that
// calibration and cannot confirm the finding. Per package, the mean temperature difference of its
// GCDs over the last 30 s of training, averaged over the node's four packages.
TEST(PaperFindings, CalibratedMi250GcdsOfOnePackageDifferBy5To10C) {
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
