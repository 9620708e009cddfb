// SPDX-License-Identifier: GPL-3.0-or-later
// The whole report: totals with throughput and energy per token, spatial imbalance, data quality
// and the invalid-run rule, scope validation.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "loaders/core/error.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

// Two GPUs at a constant 400 W and 600 W (60 C and 75 C) for 100 s at 10 Hz; ranks 0 and 1
// run ten 8 s iterations from 10 s to 90 s; gbs 32, sequence length 1024.
test::RunSpec steadyRun() {
  test::RunSpec s = test::baseRun(2, 100.0);
  s.info.sample_interval_s = 0.1;
  s.info.config.gbs = 32;
  s.info.config.seq_len = 1024;
  for (int g = 0; g < 2; ++g)
    s.telemetry.push_back(
        test::sampled(kT0, kT0 + 100 * kSec, 100 * kMs,
                      {"power_w", "temp_c", "sm_clock_mhz", "util_pct"}, [g](size_t m, int64_t) {
                        const double v[] = {g ? 600.0 : 400.0, g ? 75.0 : 60.0, 1980, 100};
                        return v[m];
                      }));
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 10; ++i)
      s.iterations.push_back({r, i, kT0 + (10 + 8 * i) * kSec, kT0 + (18 + 8 * i) * kSec});
  return s;
}

TEST(RunAnalysis, TotalsThroughputAndEnergyPerToken) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(steadyRun(), dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  const RunTotals& t = a.totals;
  EXPECT_NEAR(t.energy_j, (400 + 600) * 99.9, 1e-6);  // last samples at 99.9 s
  EXPECT_NEAR(t.mean_power_w, 500, 1e-9);
  EXPECT_DOUBLE_EQ(t.peak_power_w, 600);
  EXPECT_DOUBLE_EQ(t.throttled_fraction, 0);
  EXPECT_EQ(t.iterations, 10u);
  EXPECT_NEAR(t.iteration_time_s, 8, 1e-12);
  EXPECT_NEAR(t.throughput_samples_per_s, 4, 1e-12);
  EXPECT_NEAR(t.tokens_per_s, 4096, 1e-9);
  EXPECT_NEAR(t.iteration_window_power_w, 1000, 1e-9);
  EXPECT_NEAR(t.energy_per_iteration_j, 8000, 1e-6);
  EXPECT_NEAR(t.energy_per_token_j, 8000.0 / (32 * 1024), 1e-12);
  EXPECT_NEAR(t.efficiency_samples_per_s_mj, 4 / (1000 * 80 * 1e-6), 1e-9);
  EXPECT_DOUBLE_EQ(a.duration_s, 100);
  // Spatial imbalance by slot (local index): slot 1 is 25 % hotter.
  EXPECT_EQ(a.spatial.hottest_slot, 1);
  EXPECT_EQ(a.spatial.coolest_slot, 0);
  EXPECT_NEAR(a.spatial.hottest_vs_coolest_pct, 25, 1e-9);
  ASSERT_EQ(a.spatial.nodes.size(), 1u);
  EXPECT_NEAR(a.spatial.nodes[0].temp_mean_c.spread, 15, 1e-9);
  EXPECT_NEAR(a.spatial.nodes[0].power_mean_w.cv, 100.0 / 500.0, 1e-12);
  EXPECT_TRUE(a.quality.valid);
  // A range: the first 50 s hold 5 iterations.
  const RunAnalysis h = analyzeRun(*run, {{kT0, kT0 + 50 * kSec}, {}, {}});
  EXPECT_EQ(h.totals.iterations, 5u);
  EXPECT_NEAR(h.totals.energy_j, 1000 * 50, 1e-6);
  EXPECT_DOUBLE_EQ(h.duration_s, 50);
}

// Iterations of a small model are short: ten steps of 30 ms make a 0.3 s window, inside one
// pyramid bucket at 10 Hz (8 samples wide, 1.07 s), with no whole bucket to read. The window power
// comes from the raw samples. GPU 0 draws 400 W until 40.1 s, then 800 W; GPU 1 600 W.
TEST(RunAnalysis, IterationWindowInsideOneBucket) {
  test::TempDir dir;
  test::RunSpec s = steadyRun();
  s.telemetry.clear();
  s.iterations.clear();
  for (int g = 0; g < 2; ++g)
    s.telemetry.push_back(
        test::sampled(kT0, kT0 + 100 * kSec, 100 * kMs, {"power_w"}, [g](size_t, int64_t t) {
          if (g == 1) return 600.0;
          return t < kT0 + 40'100 * kMs ? 400.0 : 800.0;
        }));
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 10; ++i)
      s.iterations.push_back({r, i, kT0 + (40'000 + 30 * i) * kMs, kT0 + (40'030 + 30 * i) * kMs});
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunTotals t = analyzeRun(*run).totals;
  EXPECT_NEAR(t.iteration_window_s, 0.3, 1e-12);
  // Left Riemann over [40.0, 40.3): GPU 0 holds 400, 800, 800 W for 0.1 s each.
  const double power = (400 + 800 + 800) / 3.0 + 600;
  EXPECT_NEAR(t.iteration_window_power_w, power, 1e-9);
  EXPECT_NEAR(t.energy_per_iteration_j, power * 0.03, 1e-9);
  EXPECT_NEAR(t.energy_per_token_j, power * 0.03 / (32 * 1024), 1e-12);
}

TEST(RunAnalysis, InvalidRunAndDataQuality) {
  test::TempDir dir;
  test::RunSpec s = steadyRun();
  s.info.config.nodes = 1;
  s.info.config.gpus_per_node = 4;  // but the run has 2 GPUs
  // GPU 1: only 5 power samples.
  s.telemetry[1] = test::sampled(kT0, kT0 + 500 * kMs, 100 * kMs, {"power_w"},
                                 [](size_t, int64_t) { return 300.0; });
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_FALSE(a.quality.valid);
  ASSERT_EQ(a.quality.invalid_reasons.size(), 2u);
  EXPECT_EQ(a.quality.invalid_reasons[0], "the configuration has 4 GPUs, the run 2");
  EXPECT_EQ(a.quality.invalid_reasons[1], "gpu 1 has 5 power samples (fewer than 10)");
  EXPECT_EQ(a.quality.expected_gpus, 4);
  bool missing = false;
  for (const QualityNote& n : a.quality.notes)
    missing |= n.code == "missing_gpu";
  EXPECT_TRUE(missing);
}

TEST(RunAnalysis, UnknownScopeIsAnError) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(steadyRun(), dir / "run.h5");
  AnalysisScope scope;
  scope.gpus = {5};
  EXPECT_THROW(analyzeRun(*run, scope), Error);
  scope.gpus = {};
  scope.ranks = {9};
  EXPECT_THROW(analyzeRun(*run, scope), Error);
  scope.ranks = {1};
  scope.gpus = {1};
  const RunAnalysis a = analyzeRun(*run, scope);
  ASSERT_EQ(a.gpus.size(), 1u);
  EXPECT_EQ(a.gpus[0].info.id, 1);
  EXPECT_EQ(a.ranks.size(), 1u);
}

TEST(RunAnalysis, RawBudgetSkipsRawOnlyAnalyses) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(steadyRun(), dir / "run.h5");
  AnalysisOptions o;
  o.rawSampleBudget = 100;  // 2 x 1000 samples
  const RunAnalysis a = analyzeRun(*run, {}, o);
  EXPECT_FALSE(a.raw_analyses);
  EXPECT_FALSE(a.gpus[0].burstiness.ramp_computed);
  ASSERT_EQ(a.notes.size(), 1u);
  EXPECT_NE(a.notes[0].find("raw-sample budget"), std::string::npos);
  // Exact analyses are unaffected.
  EXPECT_NEAR(a.totals.energy_j, 1000 * 99.9, 1e-6);
}

}  // namespace
}  // namespace wl
