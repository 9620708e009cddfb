// SPDX-License-Identifier: GPL-3.0-or-later
// The cost of throttling (analysis/throttle_cost.h) on a run small enough to work out by hand:
// two ranks on two GPUs, two 1 s iterations. GPU 0 is held by the power cap at half the reference
// clock throughout; GPU 1 runs at the reference clock (2000 MHz) throughout.
//
// Iteration 0 is traced. Rank 0 computes [0, 0.6 s) and enters an all-reduce at 0.6 s; rank 1
// computes [0, 0.4 s) and enters it at 0.4 s; both leave it at 0.9 s. Unthrottled, rank 0's
// compute would save 0.6 x (1 - 1000 / 2000) = 0.3 s, so it would arrive at 0.3 s; the
// all-reduce would start at max(0.3, 0.4) = 0.4 s instead of 0.6 s: 0.2 s earlier (rank 1's wait
// absorbs the other 0.1 s). The iteration costs 0.2 s, all of it GPU 0's power cap.
// GPU 0's own lost time is its busy time x loss = 1 s x 0.5 = 0.5 s, so the traced iteration puts
// k = 0.2 / 0.5 = 0.4 of it on the critical path. Iteration 1 is not traced: k x 0.5 = 0.2 s.
// Energy: (500 + 300) W x 0.2 s = 160 J per iteration.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/analysis_json.h"
#include "analysis/iteration_matrix.h"
#include "analysis/run_analysis.h"
#include "analysis/throttle_cost.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_file.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr int64_t kMs = 1'000'000;

std::filesystem::path writeHandRun(const test::TempDir& dir) {
  test::SyntheticRun r = test::makeSyntheticRun(2, 2.0, 10);  // its kernels are replaced below
  const int64_t t0 = r.info.start_ns;
  r.info.end_ns = t0 + 2000 * kMs;
  r.tracks.clear();
  r.iterations.clear();
  r.annotations.clear();
  r.truthThrottle.clear();
  r.nodeTelemetry.clear();
  for (int g = 0; g < 2; ++g) {
    TelemetryTable t;
    TelemetryColumn power{std::string(metric::kPower), {}},
        clock{std::string(metric::kSmClock), {}}, util{std::string(metric::kUtil), {}};
    for (int i = 0; i <= 40; ++i) {
      t.t_ns.push_back(t0 + i * 50 * kMs);
      power.values.push_back(g == 0 ? 500 : 300);
      clock.values.push_back(g == 0 ? 1000 : 2000);
      util.values.push_back(100);
      t.throttle_reasons.push_back(g == 0 ? throttle::kSwPowerCap : 0);
    }
    t.columns = {power, clock, util};
    r.telemetry[static_cast<size_t>(g)] = std::move(t);
  }
  const uint32_t gemm = r.names.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const uint32_t nccl = r.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const uint32_t allreduce = r.names.intern("allreduce"), pg = r.names.intern("0");
  const int64_t computeEnd[2] = {600 * kMs, 400 * kMs};
  for (int rank = 0; rank < 2; ++rank) {
    KernelTrack tr{rank, 7, rank, {}, {}, {}};
    tr.events.push_back(
        {t0, computeEnd[rank], gemm, KernelClass::Compute, GpuEventKind::Kernel, 1});
    tr.events.push_back({t0 + computeEnd[rank], 900 * kMs - computeEnd[rank], nccl,
                         KernelClass::Communication, GpuEventKind::Kernel, 2});
    tr.collectives.push_back({1, allreduce, 1 << 20, 1 << 20, 2, 0, pg, 0, 0, 1});
    r.tracks.push_back(std::move(tr));
    for (int it = 0; it < 2; ++it)
      r.iterations.push_back({rank, it, t0 + it * 1000 * kMs, t0 + (it + 1) * 1000 * kMs});
  }
  const auto path = dir / "hand.h5";
  test::writeSyntheticRun(r, path);
  return path;
}

TEST(ThrottleCost, ReplaysTheTracedIterationAndScalesTheUntracedOne) {
  test::TempDir dir;
  const auto run = RunFile::open(writeHandRun(dir));
  const ThrottleCost c =
      estimateThrottleCost(*run, {0, 1}, {0, 1}, rangeInsideRun(*run, {}), AnalysisOptions{});
  ASSERT_TRUE(c.unknown.empty()) << c.unknown;
  ASSERT_EQ(c.iterations, 2u);
  EXPECT_EQ(c.traced_iterations, 1u);
  EXPECT_EQ(c.method, "mixed");
  EXPECT_EQ(c.tracedSteps(), "0");
  const IterationCost& traced = c.per_iteration[0];
  const IterationCost& untraced = c.per_iteration[1];
  EXPECT_EQ(traced.method, CostMethod::Traced);
  EXPECT_EQ(untraced.method, CostMethod::Telemetry);
  EXPECT_NEAR(traced.cost_s, 0.2, 1e-9);
  EXPECT_NEAR(traced.gpu_own_s[0], 0.5, 1e-9);
  EXPECT_EQ(traced.gpu_own_s[1], 0.0);
  EXPECT_NEAR(traced.gpu_cost_s[0], 0.2, 1e-9);
  EXPECT_EQ(traced.gpu_cost_s[1], 0.0);
  EXPECT_NEAR(traced.rank_late_s[0], 0.2, 1e-9);  // arrived 0.2 s after rank 1
  EXPECT_EQ(traced.rank_late_s[1], 0.0);
  EXPECT_NEAR(c.telemetry_scale, 0.4, 1e-9);
  EXPECT_EQ(c.telemetry_scale_source, "traced iterations");
  EXPECT_NEAR(untraced.cost_s, 0.2, 1e-9);
  EXPECT_NEAR(c.step_s, 0.2, 1e-9);
  EXPECT_NEAR(c.mean_step_s, 1.0, 1e-9);
  EXPECT_NEAR(c.fraction, 0.2, 1e-9);
  EXPECT_NEAR(c.by_cause_s[static_cast<size_t>(ThrottleCause::SwPowerCap)], 0.2, 1e-9);
  EXPECT_NEAR(c.energy_j, 2 * 800 * 0.2, 1e-6);
  // Stated uncertainty: 15 % of the traced iteration's cost, 25 % of the scaled one's, per step.
  EXPECT_NEAR(c.uncertainty_s, (0.15 * 0.2 + 0.25 * 0.2) / 2, 1e-9);
  ASSERT_EQ(c.by_gpu.size(), 2u);
  EXPECT_EQ(c.by_gpu[0].gpu, 0);
  EXPECT_NEAR(c.by_gpu[0].share, 1.0, 1e-9);
  EXPECT_EQ(c.by_gpu[0].cause, "sw_power_cap");
  EXPECT_NEAR(c.by_gpu[0].unthrottled_step_s, 0.8, 1e-9);
  EXPECT_EQ(c.by_gpu[1].step_s, 0.0);
  EXPECT_TRUE(c.by_gpu[1].cause.empty());
  const std::vector<std::string> verdict = explainCost(c);
  ASSERT_GE(verdict.size(), 4u);
  EXPECT_NE(verdict[0].find("cost 20.0 % of step time: 0.200 s of every 1.000 s step"),
            std::string::npos)
      << verdict[0];
  EXPECT_NE(verdict[2].find("GPU 0 (front slot; SW power cap) caused 100 %"), std::string::npos)
      << verdict[2];
  EXPECT_EQ(verdict[3], "GPU 1 never throttled.");
  // The same numbers in analyze's report and its JSON.
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_EQ(a.cost.step_s, c.step_s);
  EXPECT_EQ(toJson(a)["cost"]["by_gpu"][0]["unthrottled_step_s"].get<double>(),
            c.by_gpu[0].unthrottled_step_s);
}

TEST(ThrottleCost, OnlyTheScopedGpusThrottlingCounts) {
  test::TempDir dir;
  const auto run = RunFile::open(writeHandRun(dir));
  const ThrottleCost c =
      estimateThrottleCost(*run, {1}, {0, 1}, rangeInsideRun(*run, {}), AnalysisOptions{});
  ASSERT_TRUE(c.unknown.empty()) << c.unknown;
  EXPECT_EQ(c.step_s, 0.0);
  EXPECT_NE(explainCost(c)[0].find("cost nothing measurable"), std::string::npos);
}

TEST(ThrottleCost, UnknownWithoutIterations) {
  test::TempDir dir;
  const auto run = RunFile::open(writeHandRun(dir));
  const int64_t t0 = run->info().start_ns;
  const ThrottleCost c = estimateThrottleCost(*run, {0, 1}, {0, 1},
                                              {t0 + 100 * kMs, t0 + 900 * kMs}, AnalysisOptions{});
  EXPECT_EQ(c.unknown, "no whole iteration in the range");
  EXPECT_EQ(toJson(c)["unknown"], "no whole iteration in the range");
  EXPECT_EQ(explainCost(c).front(),
            "The cost of throttling is unknown: no whole iteration in the range.");
}

// The rank x iteration matrix of the hand run: GPU 0 cost 0.2 s of each 1 s step (iteration 0
// replayed, iteration 1 scaled), GPU 1 nothing; rank 0 reached the all-reduce 0.2 s after rank 1
// in the traced iteration; the untraced one has no lateness (unknown, not 0).
TEST(IterationMatrix, CellsAreTheCostsPerGpuAndTheLatenessPerRank) {
  test::TempDir dir;
  const auto run = RunFile::open(writeHandRun(dir));
  const ThrottleCost c =
      estimateThrottleCost(*run, {0, 1}, {0, 1}, rangeInsideRun(*run, {}), AnalysisOptions{});
  ASSERT_TRUE(c.unknown.empty()) << c.unknown;
  const IterationMatrix m = buildIterationMatrix(c, run->ranks(), MatrixMeasure::Cost);
  ASSERT_EQ(m.rows(), 2u);
  ASSERT_EQ(m.cols(), 2u);
  EXPECT_EQ(m.ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.rankOf, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.columns[1].step, 1);
  EXPECT_EQ(m.columns[1].start_ns - m.columns[0].start_ns, 1000 * kMs);
  EXPECT_NEAR(m.at(0, 0), 0.2, 1e-9);
  EXPECT_NEAR(m.at(0, 1), 0.2, 1e-9);
  EXPECT_EQ(m.at(1, 0), 0.0);
  EXPECT_EQ(m.at(1, 1), 0.0);
  EXPECT_NEAR(m.max, 0.2, 1e-9);
  EXPECT_EQ(matrixRowLabel(m, 1), "GPU 1");

  std::vector<std::string> t = matrixCellText(m, c, 0, 0);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0], "Step 0 · GPU 0 (rank 0)");
  EXPECT_EQ(t[1],
            "Its throttling cost the step 0.200 s of 1.000 s (20.0 %); the step's whole cost was "
            "0.200 s.");
  // Own loss 0.5 s, 0.2 s of it on the critical path.
  EXPECT_EQ(t[2], "Its own clock lost 0.500 s of busy time; waits and slack absorbed the rest.");
  EXPECT_EQ(t[3], "Over the analysed steps its cost is mostly SW power cap; front slot.");
  EXPECT_NE(t[4].find("Replayed from the kernel traces"), std::string::npos);
  t = matrixCellText(m, c, 1, 1);
  EXPECT_EQ(t[1], "Its throttling cost the step nothing.");
  EXPECT_EQ(t[2], "Its clock was not lowered by a power or thermal limit while it was busy.");
  EXPECT_NE(t.back().find("Estimated from telemetry (this step is not traced)"), std::string::npos);
  EXPECT_NE(t.back().find("x 0.40"), std::string::npos) << t.back();

  const IterationMatrix l = buildIterationMatrix(c, run->ranks(), MatrixMeasure::Lateness);
  EXPECT_EQ(l.ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(l.gpuOf, (std::vector<int>{0, 1}));
  EXPECT_NEAR(l.at(0, 0), 0.2, 1e-9);
  EXPECT_EQ(l.at(1, 0), 0.0);
  EXPECT_TRUE(std::isnan(l.at(0, 1)));
  EXPECT_TRUE(std::isnan(l.at(1, 1)));
  EXPECT_NEAR(l.max, 0.2, 1e-9);
  t = matrixCellText(l, c, 0, 0);
  EXPECT_EQ(t[0], "Step 0 · rank 0 (GPU 0)");
  EXPECT_EQ(t[1], "It arrived 0.200 s after the earliest rank at the step's last collective.");
  EXPECT_EQ(t[2], "It arrived last: the collective, and so the step, waited for it.");
  EXPECT_EQ(t[3], "Its GPU's throttling cost the step 0.200 s (20.0 %).");
  EXPECT_EQ(matrixCellText(l, c, 1, 0)[1], "It arrived first at the step's last collective.");
  t = matrixCellText(l, c, 1, 1);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_NE(t[1].find("Not traced"), std::string::npos);
  EXPECT_TRUE(matrixCellText(l, c, 2, 0).empty());  // out of range: nothing, no crash

  MatrixMeasure parsed = MatrixMeasure::Cost;
  EXPECT_TRUE(matrixMeasureFromId("lateness", parsed));
  EXPECT_EQ(parsed, MatrixMeasure::Lateness);
  EXPECT_FALSE(matrixMeasureFromId("late", parsed));
}

// A telemetry-only import has no steps: the cost per step is unknown, and says why.
TEST(ThrottleCost, UnknownWithoutAnyIteration) {
  test::TempDir dir;
  test::SyntheticRun r = test::makeSyntheticRun(2, 2.0, 10);
  r.iterations.clear();
  r.annotations.clear();
  test::writeSyntheticRun(r, dir / "no-steps.h5");
  const auto run = RunFile::open(dir / "no-steps.h5");
  const ThrottleCost c =
      estimateThrottleCost(*run, {0, 1}, {}, rangeInsideRun(*run, {}), AnalysisOptions{});
  EXPECT_EQ(c.unknown.rfind("the run has no iterations (", 0), 0u) << c.unknown;
  EXPECT_TRUE(buildIterationMatrix(c, run->ranks(), MatrixMeasure::Cost).empty());
}

TEST(IterationMatrix, EmptyWhenTheCostIsUnknown) {
  test::TempDir dir;
  const auto run = RunFile::open(writeHandRun(dir));
  const int64_t t0 = run->info().start_ns;
  const ThrottleCost c = estimateThrottleCost(*run, {0, 1}, {0, 1},
                                              {t0 + 100 * kMs, t0 + 900 * kMs}, AnalysisOptions{});
  const IterationMatrix m = buildIterationMatrix(c, run->ranks(), MatrixMeasure::Cost);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.max, 0.0);
}

}  // namespace
}  // namespace wl
