// SPDX-License-Identifier: GPL-3.0-or-later
// Trace selection, platform files, cancellation, stragglers and thermal slowdown.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "loaders/core/error.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/sim/platform_profile.h"
#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

TEST(TraceSelection, FirstPerStageTracesTensorAndDataRankZeroOfEveryStage) {
  sim::SimConfig c = test::tinyConfig();
  c.nodes = 2;
  c.tp = 2, c.pp = 2, c.dp = 4;
  c.trace.ranks = sim::TraceSelection::Ranks::FirstPerStage;
  // rank = tp + 2 (dp + 4 pp): stage 0 starts at rank 0, stage 1 at rank 8.
  EXPECT_EQ(sim::tracedRanks(c), (std::vector<int>{0, 8}));
  c.trace.ranks = sim::TraceSelection::Ranks::Auto;  // 16 GPUs: all
  EXPECT_EQ(sim::tracedRanks(c).size(), 16u);
}

TEST(TraceSelection, EveryKthIterationIsTracedAndThePartialTraceIsNoted) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 2, c.dp = 2;
  c.mbs = 1, c.gbs = 4;
  c.durationS = 0;
  c.iterations = 5;
  c.trace.ranks = sim::TraceSelection::Ranks::List;
  c.trace.rankList = {0};
  c.trace.steps = sim::TraceSelection::Steps::Every;
  c.trace.everyStep = 2;
  const auto run = test::simulateAndOpen(c, dir / "every.h5");
  // Kernels only inside iterations 0, 2 and 4 of rank 0.
  std::vector<Iteration> its;
  for (const Iteration& i : run->iterations())
    if (i.rank == 0) its.push_back(i);
  ASSERT_EQ(its.size(), 5u);
  std::map<int64_t, int> perStep;
  for (size_t t = 0; t < run->tracks().size(); ++t) {
    EXPECT_EQ(run->tracks()[t].rank, 0);
    for (const KernelEvent& e : run->readAllKernels(t))
      for (const Iteration& i : its)
        if (e.start_ns >= i.start_ns && e.start_ns < i.end_ns) ++perStep[i.step];
  }
  EXPECT_GT(perStep[0], 100);
  EXPECT_EQ(perStep[1], 0);
  EXPECT_EQ(perStep[2], perStep[0]);
  EXPECT_EQ(perStep[3], 0);
  EXPECT_EQ(perStep[4], perStep[0]);
  bool noted = false;
  for (const QualityNote& n : run->quality())
    noted = noted || n.code == "partial_trace";
  EXPECT_TRUE(noted);
}

TEST(PlatformFile, BadContentIsRefusedWithTheFileAndJsonPath) {
  test::TempDir dir;
  const sim::PlatformProfile& h100 = *sim::findProfile("h100");
  auto expectError = [&](const std::string& json, const std::string& part) {
    std::ofstream(dir / "p.json") << json;
    try {
      sim::loadPlatformFile(dir / "p.json", h100);
      ADD_FAILURE() << "accepted " << json;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("p.json"), std::string::npos) << msg;
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
  };
  expectError("[1, 2]", "expected a JSON object");
  expectError("{\"max_sm_clock_mhz\": \"fast\"}", "/max_sm_clock_mhz: expected a number");
  expectError("{\"base\": \"a100\"}", "/base: unknown platform");
  expectError("{\"sink_tau_s\": -3}", "/sink_tau_s");
  expectError("{\"slowdown_temp_c\": 99}", "temperatures must rise");
  expectError("{\"gemm_efficiency\": 1.5}", "at most 1");
  expectError("{not json", "not valid JSON");
  std::ofstream(dir / "ok.json") << R"({"base": "mi250", "inter_node_gbps": 400})";
  const sim::PlatformProfile p = sim::loadPlatformFile(dir / "ok.json", h100);
  EXPECT_EQ(p.platform, "MI250");
  EXPECT_EQ(p.gcds_per_package, 2);
  EXPECT_DOUBLE_EQ(p.inter_node_gbps, 400);
}

TEST(Simulation, CancellingLeavesNoFileBehind) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  int calls = 0;
  const Progress cancel([&](double, std::string_view) { return ++calls < 3; });
  EXPECT_THROW(sim::simulate(c, dir / "cancelled.h5", cancel), Cancelled);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Simulation, HotterGpusClockLowerAndBecomeTheStragglersOfTheirGroup) {
  // Tensor parallelism across the whole node: every layer's all-reduce waits for the slowest of
  // eight GPUs. No one picks the straggler; the rear GPUs get warmer, their leakage higher, their
  // power-capped clock lower, so they arrive last.
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.model = *sim::findModel("Llama3-8B");
  c.tp = 8, c.pp = 1, c.dp = 1;
  c.mbs = 1, c.gbs = 2;
  c.seqLen = 8192;
  c.powerLimitW = 500;  // dense compute runs power-capped, so the clock follows the leakage
  c.durationS = 0;
  c.iterations = 400;  // ~135 s: the heatsinks, and the leakage, have warmed up
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  c.trace.steps = sim::TraceSelection::Steps::Range;
  c.trace.firstStep = 397;
  c.trace.lastStep = 399;
  const auto run = test::simulateAndOpen(c, dir / "tp8.h5");
  // Latest arrival (start) per all-reduce instance, matched by process group and sequence.
  std::map<int64_t, std::pair<int64_t, int>> latest;  // seq -> (start, rank)
  std::map<size_t, std::vector<KernelEvent>> events;
  for (const CollectiveRecord& r : run->collectives()) {
    if (run->str(r.info.collective) != "allreduce" || r.info.group_size != 8) continue;
    auto& ev = events[r.track];
    if (ev.empty()) ev = run->readAllKernels(r.track);
    const int64_t start = ev[r.event].start_ns;
    auto [it, fresh] = latest.try_emplace(r.info.seq, start, run->tracks()[r.track].rank);
    if (!fresh && start > it->second.first) it->second = {start, run->tracks()[r.track].rank};
  }
  ASSERT_GT(latest.size(), 300u);
  std::map<int, int> lastCount;
  for (const auto& [seq, who] : latest)
    ++lastCount[who.second];
  int front = 0, rear = 0;
  for (const auto& [rank, n] : lastCount)
    (run->gpus()[static_cast<size_t>(rank)].slot == 0 ? front : rear) += n;
  EXPECT_GT(rear, 3 * front) << "front GPUs last " << front << " times, rear " << rear;
}

TEST(Simulation, HotInletAirBringsThermalSlowdownInTruthAndReasonBits) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.inletTempC = 45;
  c.durationS = 150;
  const auto run = test::simulateAndOpen(c, dir / "hot.h5");
  bool truthThermal = false;
  for (const ThrottleTruth& t : run->truthThrottle())
    truthThermal = truthThermal || (t.reasons & throttle::kSwThermal);
  EXPECT_TRUE(truthThermal);
  int thermalSamples = 0, hotSamples = 0;
  for (const GpuInfo& g : run->gpus()) {
    const test::Series temp = test::series(*run, g.id, "temp_c");
    const auto bits = run->readThrottle(g.id, 0, temp.v.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      thermalSamples += (bits[i] & throttle::kSwThermal) != 0;
      hotSamples += temp.v[i] >= 88;  // above the 87 C max operating temperature
    }
  }
  EXPECT_GT(thermalSamples, 100);
  EXPECT_GT(hotSamples, 100);
}

}  // namespace
}  // namespace wl
