// SPDX-License-Identifier: GPL-3.0-or-later
// The cost of throttling (analysis/throttle_cost.h) against its counterfactual: the simulator
// runs the same job (same seed, same work) with no power or thermal limit lowering any clock
// (SimConfig::noThrottle) or one GPU's (unthrottledGpus), and the measured difference of step
// times is the truth. The estimate reads the throttled run with its ground truth, platform
// profile and seed stripped (what a real run has). Bounds (issue 28): within 20 % of the true
// cost or 0.5 % of step time, whichever is larger, with traces; 40 % from telemetry alone.
// docs/analyses.md, "Cost of throttling", lists the measured errors this test prints.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "analysis/run_analysis.h"
#include "analysis/throttle_cost.h"
#include "loaders/format/run_file.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"
#include "support/strip_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

std::map<int64_t, double> stepTimes(const RunFile& run) {
  std::map<int64_t, double> out;
  for (const StepTime& s : analyzeIterations(run.iterations(), {}, {}).steps)
    out[s.step] = s.duration_s;
  return out;
}

ThrottleCost costOf(const RunFile& run) {
  return estimateThrottleCost(run, scopeGpus(run, {}), scopeRanks(run, {}), rangeInsideRun(run, {}),
                              {});
}

// Mean seconds per step the throttled run takes longer than its twin, over common steps.
double trueCost(const std::map<int64_t, double>& throttled, const std::map<int64_t, double>& twin,
                double* meanStep = nullptr) {
  double sum = 0, steps = 0;
  size_t n = 0;
  for (const auto& [step, d] : throttled)
    if (auto it = twin.find(step); it != twin.end()) sum += d - it->second, steps += d, ++n;
  if (meanStep) *meanStep = n ? steps / static_cast<double>(n) : kNaN;
  return n ? sum / static_cast<double>(n) : kNaN;
}

struct Case {
  const char* name;
  sim::SimConfig config;
  sim::TraceSelection traced;  // the traced variant's selection
};

struct Outcome {
  double truth = kNaN, step = kNaN;
  ThrottleCost traced, telemetry;
};

Outcome runCase(const Case& cs, const fs::path& dir) {
  Outcome o;
  sim::SimConfig twin = cs.config;
  twin.noThrottle = true;
  twin.trace.ranks = sim::TraceSelection::Ranks::None;
  sim::simulate(twin, dir / "twin.h5", {}, nullptr);
  sim::SimConfig traced = cs.config;
  traced.trace = cs.traced;
  sim::simulate(traced, dir / "traced.h5", {}, nullptr);
  sim::SimConfig untraced = cs.config;
  untraced.trace.ranks = sim::TraceSelection::Ranks::None;
  sim::simulate(untraced, dir / "untraced.h5", {}, nullptr);
  fs::copy_file(dir / "traced.h5", dir / "traced-as-simulated.h5");
  test::stripToWhatARealRunHas(dir / "traced.h5");
  test::stripToWhatARealRunHas(dir / "untraced.h5");
  const auto t = RunFile::open(dir / "traced.h5");
  const auto u = RunFile::open(dir / "untraced.h5");
  const auto w = RunFile::open(dir / "twin.h5");
  EXPECT_FALSE(t->hasGroundTruth());
  EXPECT_FALSE(t->info().simulated);
  o.truth = trueCost(stepTimes(*t), stepTimes(*w), &o.step);
  o.traced = costOf(*t);
  o.telemetry = costOf(*u);
  // The same numbers with or without what only the simulator knows.
  const ThrottleCost full = costOf(*RunFile::open(dir / "traced-as-simulated.h5"));
  EXPECT_EQ(full.step_s, o.traced.step_s);
  EXPECT_EQ(full.by_gpu.front().step_s, o.traced.by_gpu.front().step_s);
  std::printf(
      "%s: step %.3f s, true cost %.4f s (%.2f %%); traced (%zu of %zu iterations, k %.3f) %.4f "
      "s (%+.1f %%); telemetry (k %.3f from %s) %.4f s (%+.1f %%)\n",
      cs.name, o.step, o.truth, 100 * o.truth / o.step, o.traced.traced_iterations,
      o.traced.iterations, o.traced.telemetry_scale, o.traced.step_s,
      100 * (o.traced.step_s - o.truth) / o.truth, o.telemetry.telemetry_scale,
      o.telemetry.telemetry_scale_source.c_str(), o.telemetry.step_s,
      100 * (o.telemetry.step_s - o.truth) / o.truth);
  return o;
}

void expectWithinBounds(const Outcome& o) {
  ASSERT_GT(o.truth, 0.01 * o.step) << "the case should lose at least 1 % of step time";
  EXPECT_NEAR(o.traced.step_s, o.truth, std::max(0.2 * o.truth, 0.005 * o.step));
  EXPECT_NEAR(o.telemetry.step_s, o.truth, std::max(0.4 * o.truth, 0.005 * o.step));
  EXPECT_GT(o.traced.traced_iterations, 0u);
  EXPECT_EQ(o.telemetry.traced_iterations, 0u);
  EXPECT_EQ(o.telemetry.method, "telemetry");
  // The stated uncertainty covers the error.
  EXPECT_LE(std::fabs(o.traced.step_s - o.truth), o.traced.uncertainty_s + 0.005 * o.step);
  EXPECT_LE(std::fabs(o.telemetry.step_s - o.truth), o.telemetry.uncertainty_s + 0.005 * o.step);
}

sim::TraceSelection tracedSteps(int first, int last) {
  sim::TraceSelection t;
  t.ranks = sim::TraceSelection::Ranks::All;
  t.steps = sim::TraceSelection::Steps::Range;
  t.firstStep = first, t.lastStep = last;
  return t;
}

sim::SimConfig llama8b(int nodes, int tp, int pp, int dp, int mbs, int gbs, int iterations) {
  sim::SimConfig c;
  c.platform = *sim::findProfile("h100");
  c.model = *sim::findModel("Llama3-8B");
  c.nodes = nodes;
  c.gpusPerNode = 8;
  c.tp = tp, c.pp = pp, c.dp = dp;
  c.mbs = mbs;
  c.gbs = gbs;
  c.seqLen = 2048;
  c.iterations = iterations;
  return c;
}

// The bundled sample's node: 8 H100 in a hot aisle (39 C), TP 2 x PP 2 x DP 2, microbatch 4; the
// rear GPUs run power-capped. Every iteration traced.
TEST(ThrottleCostTruth, HotAisleNodeAgainstItsUnthrottledTwin) {
  test::TempDir dir;
  Case cs{"hot-aisle 8 x H100 tp2 pp2 dp2", llama8b(1, 2, 2, 2, 4, 256, 12), tracedSteps(0, 11)};
  ASSERT_TRUE(sim::applyThermalScenario("hot-aisle", cs.config));
  cs.config.inletTempC = 39;
  cs.config.seed = 1;
  const Outcome o = runCase(cs, dir.path());
  expectWithinBounds(o);
  EXPECT_EQ(o.traced.method, "traced");
  EXPECT_EQ(o.traced.telemetry_scale_source, "traced iterations");
  // The front GPUs never throttle; the cost is the power cap's.
  for (const GpuCost& g : o.traced.by_gpu)
    if (g.gpu < 4) {
      EXPECT_EQ(g.step_s, 0.0) << "GPU " << g.gpu;
    }
  EXPECT_GT(o.traced.by_cause_s[static_cast<size_t>(ThrottleCause::SwPowerCap)],
            0.9 * o.traced.step_s);
  // The GPU ranked first gains the most when it alone runs unthrottled: the twins say so.
  const int top = o.traced.by_gpu.front().gpu;
  std::map<int, double> gainOf;
  for (int g : {top, top == 7 ? 6 : 7, 4}) {
    sim::SimConfig one = cs.config;
    one.unthrottledGpus = {g};
    one.trace.ranks = sim::TraceSelection::Ranks::None;
    const fs::path p = dir / ("one" + std::to_string(g) + ".h5");
    sim::simulate(one, p, {}, nullptr);
    const auto r = RunFile::open(p);
    double unused = 0;
    const auto throttled = stepTimes(*RunFile::open(dir / "untraced.h5"));
    gainOf[g] = trueCost(throttled, stepTimes(*r), &unused);
    std::printf("GPU %d alone unthrottled: the step gains %.4f s (twin)\n", g, gainOf[g]);
  }
  for (const auto& [g, gain] : gainOf)
    EXPECT_GE(gainOf[top], gain) << "GPU " << g;
  EXPECT_GT(gainOf[top], 0.0);
}

// A pipeline of 4 stages with 8 microbatches: bubbles absorb part of each stage's slowdown.
// Power cap 550 W; 10 of 60 iterations traced (the others estimated from telemetry, scaled by
// what the traced ones put on the critical path).
TEST(ThrottleCostTruth, PipelineWhoseBubblesAbsorbPartOfTheSlowdown) {
  test::TempDir dir;
  Case cs{"pipeline 8 x H100 tp1 pp4 dp2, 550 W", llama8b(1, 1, 4, 2, 4, 64, 60),
          tracedSteps(50, 59)};
  ASSERT_TRUE(sim::applyThermalScenario("hot-aisle", cs.config));
  cs.config.inletTempC = 42;
  cs.config.powerLimitW = 550;
  cs.config.seed = 2;
  const Outcome o = runCase(cs, dir.path());
  expectWithinBounds(o);
  EXPECT_EQ(o.traced.method, "mixed");
  // Part of the lost time is absorbed: the job loses less than the worst GPU's own loss.
  EXPECT_LT(o.traced.step_s, 0.95 * o.traced.by_gpu.front().own_s);
}

// 64 GPUs on 8 nodes; node 3's fans are limited to 35 %: its GPUs throttle thermally (SW
// thermal and HW slowdown) while the other nodes never do, and the slow node delays every
// data-parallel all-reduce.
TEST(ThrottleCostTruth, SixtyFourGpusWithOneFanFailureNode) {
  test::TempDir dir;
  Case cs{"64 x H100, node 3 fans at 35 %", llama8b(8, 2, 2, 16, 2, 256, 70), tracedSteps(62, 66)};
  cs.config.fanLimitedNodes = {3};
  cs.config.fanMaxFrac = 0.35;
  cs.config.inletTempC = 38;
  cs.config.seed = 3;
  cs.config.linkCounters = false;
  const Outcome o = runCase(cs, dir.path());
  expectWithinBounds(o);
  for (const ThrottleCost* c : {&o.traced, &o.telemetry}) {
    const GpuCost& top = c->by_gpu.front();
    EXPECT_GE(top.gpu, 24);
    EXPECT_LE(top.gpu, 31);
    double node3 = 0;
    for (const GpuCost& g : c->by_gpu)
      if (g.gpu >= 24 && g.gpu <= 31) node3 += g.step_s;
    EXPECT_NEAR(node3, c->step_s, 0.01 * c->step_s);
  }
  EXPECT_EQ(o.telemetry.telemetry_scale_source, "step times");
}

}  // namespace
}  // namespace wl
