// SPDX-License-Identifier: GPL-3.0-or-later
// Per-iteration comparison on a small phased pair whose numbers are worked out by hand, and equal
// to analyzeRun() over each step's window.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/compare/iteration_compare.h"
#include "analysis/run_analysis.h"
#include "phased_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr int64_t kS = 1'000'000'000;
using C = IterationColumn;

// A: 3 steps of 3 s sampled every 10 ms; B: 4 steps of 2 s sampled every 20 ms, 0.7 s later,
// drawing 650 W (not 600) in backward. Both: 2 GPUs, forward 40 %, backward 50 %, optimizer 10 %
// of the step; global batch 8 x 1024 tokens; GPU 0 throttled (1500 MHz, SW power cap) through
// backward of step 1.
class IterationCompare : public ::testing::Test {
 protected:
  void SetUp() override {
    sa.name = "A";
    sa.stepNs = {3 * kS, 3 * kS, 3 * kS};
    sa.config.gbs = 8;
    sa.config.seq_len = 1024;
    sb = sa;
    sb.name = "B";
    sb.stepNs = {2 * kS, 2 * kS, 2 * kS, 2 * kS};
    sb.start += 700'000'000;
    sb.sampleNs = 20'000'000;
    sb.phasePowerW = {400, 650, 250, 100};
    a = test::writePhasedRun(sa, dir / "a.h5");
    b = test::writePhasedRun(sb, dir / "b.h5");
  }
  test::TempDir dir;
  test::PhasedRunSpec sa, sb;
  std::shared_ptr<const RunFile> a, b;
};

TEST_F(IterationCompare, ValuesWorkedOutByHand) {
  const IterationComparison c = compareIterations(*a, *b);
  ASSERT_EQ(c.rows.size(), 3u);  // the steps both completed: 0, 1, 2
  // Energy of GPU g in a step of A: (400 + 10g) 1.2 s + (600 + 10g) 1.5 s + (250 + 10g) 0.3 s =
  // 1455 + 30g J, plus the trapezoid's half-sample ramps at each phase change inside the step and
  // at its end: (600 - 400) / 2 x 10 ms + (250 - 600) / 2 x 10 ms + (next - 250) / 2 x 10 ms,
  // which is 0 when the next phase is forward (400 W) and -1.5 J when it is idle (100 W, after
  // the last step). Two GPUs: 2940 J, and 2937 J for step 2.
  // B: (400 + 10g) 0.8 + (650 + 10g) 1.0 + (250 + 10g) 0.2 = 1020 + 20g, ramps (250 - 400 + 150)
  // / 2 x 20 ms = 0 (B's step 3 follows step 2): 2060 J.
  const double energyA[3] = {2940, 2940, 2937};
  for (size_t k = 0; k < 3; ++k) {
    const IterationComparisonRow& r = c.rows[k];
    SCOPED_TRACE(k);
    EXPECT_EQ(r.step, static_cast<int64_t>(k));
    EXPECT_EQ(r.a.start_ns, test::phasedStepBounds(sa, k)[0]);
    EXPECT_EQ(r.b.end_ns, test::phasedStepBounds(sb, k)[3]);
    EXPECT_DOUBLE_EQ(r.a[C::Duration], 3.0);
    EXPECT_DOUBLE_EQ(r.b[C::Duration], 2.0);
    EXPECT_NEAR(r.a[C::Energy], energyA[k], 1e-6);
    EXPECT_NEAR(r.b[C::Energy], 2060, 1e-6);
    EXPECT_NEAR(r.a[C::EnergyPerToken], energyA[k] / 8192, 1e-9);
    // Time-weighted mean power of GPU g: (1455 + 30g) / 3 s = 485 + 10g; of B (1020 + 20g) / 2 s.
    EXPECT_NEAR(r.a[C::MeanPower], 490, 1e-9);
    EXPECT_NEAR(r.b[C::MeanPower], 515, 1e-9);
    EXPECT_EQ(r.a[C::PeakPower], 610);  // GPU 1 in backward
    EXPECT_EQ(r.b[C::PeakPower], 660);
    EXPECT_EQ(r.a[C::PeakTemp], 30 + 610.0 / 20);
    EXPECT_EQ(r.b[C::PeakTemp], 30 + 660.0 / 20);
    // Throttled kernel time: GPU 0's backward of step 1 (utilization 100 %).
    EXPECT_NEAR(r.a[C::Throttled], k == 1 ? 1.5 : 0.0, 1e-9);
    EXPECT_NEAR(r.b[C::Throttled], k == 1 ? 1.0 : 0.0, 1e-9);
    EXPECT_NEAR(r.a.throttled_by_cause_s[static_cast<size_t>(ThrottleCause::SwPowerCap)],
                k == 1 ? 1.5 : 0.0, 1e-9);
    EXPECT_NEAR(r.delta[static_cast<size_t>(C::Throttled)], k == 1 ? 0.5 : 0.0, 1e-9);
    EXPECT_NEAR(r.throttled_by_cause_delta_s[static_cast<size_t>(ThrottleCause::SwPowerCap)],
                k == 1 ? 0.5 : 0.0, 1e-9);
    // The communication kernel runs through the first half of the optimizer phase, under no
    // compute: 0.15 s (A) and 0.1 s (B) exposed; the bubble (no compute) is the whole optimizer
    // phase: 0.3 s and 0.2 s.
    EXPECT_NEAR(r.a[C::ExposedComm], 0.15, 1e-9);
    EXPECT_NEAR(r.b[C::ExposedComm], 0.10, 1e-9);
    EXPECT_NEAR(r.a[C::Bubble], 0.3, 1e-9);
    EXPECT_NEAR(r.b[C::Bubble], 0.2, 1e-9);
    // Deltas: a - b and 100 (a - b) / |b|.
    EXPECT_NEAR(r.delta[static_cast<size_t>(C::Duration)], 1.0, 1e-12);
    EXPECT_NEAR(r.delta_pct[static_cast<size_t>(C::Duration)], 50.0, 1e-9);
    EXPECT_NEAR(r.delta[static_cast<size_t>(C::Energy)], energyA[k] - 2060, 1e-6);
    EXPECT_NEAR(r.delta[static_cast<size_t>(C::MeanPower)], -25, 1e-9);
    EXPECT_NEAR(r.delta_pct[static_cast<size_t>(C::PeakPower)], -50.0 / 660 * 100, 1e-9);
    EXPECT_TRUE(std::isnan(r.delta_pct[static_cast<size_t>(C::Throttled)]) == (k != 1));
  }
  // Over the steps: A's energy 2940, 2940, 2937: mean 2939, population stddev sqrt(2).
  const size_t e = static_cast<size_t>(C::Energy);
  EXPECT_EQ(c.a[e].n, 3u);
  EXPECT_NEAR(c.a[e].mean, 2939, 1e-6);
  EXPECT_NEAR(c.a[e].stddev, std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(c.b[e].stddev, 0, 1e-6);
  EXPECT_NEAR(c.delta[e].mean, 879, 1e-6);
  EXPECT_NEAR(c.mean_delta_pct[e], 879.0 / 2060 * 100, 1e-6);
  EXPECT_NEAR(c.a[static_cast<size_t>(C::Throttled)].mean, 0.5, 1e-9);
}

TEST_F(IterationCompare, EveryValueIsAnalyzeOverTheStepsWindow) {
  const std::vector<IterationValues> va = iterationValues(*a);
  ASSERT_EQ(va.size(), 3u);
  const RunAnalysis whole = analyzeRun(*a);
  for (size_t k = 0; k < va.size(); ++k) {
    const StepTime& st = whole.iterations.steps[k];
    EXPECT_EQ(va[k].step, st.step);
    EXPECT_EQ(va[k][C::Duration], st.duration_s);
    AnalysisScope scope;
    scope.range = {st.start_ns, st.end_ns};
    const RunAnalysis r = analyzeRun(*a, scope);
    EXPECT_EQ(va[k][C::Energy], r.totals.energy_j);
    EXPECT_EQ(va[k][C::MeanPower], r.totals.mean_power_w);
    EXPECT_EQ(va[k][C::PeakPower], r.totals.peak_power_w);
    EXPECT_EQ(va[k][C::Throttled], r.totals.throttled_s);
    EXPECT_EQ(va[k][C::PeakTemp], std::max(r.gpus[0].temp.max, r.gpus[1].temp.max));
  }
  // Only some steps.
  const std::vector<int64_t> one{2};
  const auto v2 = iterationValues(*a, {}, {}, &one);
  ASSERT_EQ(v2.size(), 1u);
  EXPECT_EQ(v2[0].step, 2);
  EXPECT_EQ(v2[0][C::Energy], va[2][C::Energy]);
}

TEST_F(IterationCompare, UnknownValuesStayUnknown) {
  // No traces, no batch size: exposed communication, bubble and energy per token are unknown.
  sa.kernels = sb.kernels = false;
  sa.config = {};
  const auto a2 = test::writePhasedRun(sa, dir / "a2.h5");
  const auto b2 = test::writePhasedRun(sb, dir / "b2.h5");
  const IterationComparison c = compareIterations(*a2, *b2);
  ASSERT_EQ(c.rows.size(), 3u);
  for (C col : {C::ExposedComm, C::Bubble, C::EnergyPerToken}) {
    EXPECT_TRUE(std::isnan(c.rows[0].a[col]));
    EXPECT_TRUE(std::isnan(c.rows[0].delta[static_cast<size_t>(col)]));
    EXPECT_EQ(c.a[static_cast<size_t>(col)].n, 0u);
  }
  EXPECT_FALSE(std::isnan(c.rows[0].b[C::EnergyPerToken]));
  // No common step: no rows.
  sb.firstStep = 50;
  const auto b3 = test::writePhasedRun(sb, dir / "b3.h5");
  EXPECT_TRUE(compareIterations(*a, *b3).rows.empty());
}

// The bundled microbatch-1 sample traces step 19 only (154-162 s); the last kernels of step 19
// reach into step 20's window (which starts at the earliest rank's step 20). Step 20's exposed
// communication and bubble are unknown, not 0 and the whole step, and stay out of the means.
TEST(IterationCompareSamples, AStepTheTraceOnlyGrazesIsUnknown) {
  const auto a = RunFile::open(WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5");
  const auto b = RunFile::open(WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs1.h5");
  const IterationComparison c = compareIterations(*a, *b);
  const IterationComparisonRow* s19 = nullptr;
  const IterationComparisonRow* s20 = nullptr;
  for (const IterationComparisonRow& r : c.rows) {
    if (r.step == 19) s19 = &r;
    if (r.step == 20) s20 = &r;
  }
  ASSERT_NE(s19, nullptr);
  ASSERT_NE(s20, nullptr);
  // Step 20 of B: some kernels of step 19 overlap its window, but they span a small part of it.
  AnalysisScope scope;
  scope.range = {s20->b.start_ns, s20->b.end_ns};
  const RunAnalysis ra = analyzeRun(*b, scope);
  uint64_t kernels = 0;
  for (const RankAnalysis& r : ra.ranks) {
    kernels += r.breakdown.kernels;
    EXPECT_LT(r.breakdown.span_ns, (s20->b.end_ns - s20->b.start_ns) / 2) << r.breakdown.rank;
  }
  EXPECT_GT(kernels, 0u);  // the case that printed a bubble of the whole step
  EXPECT_TRUE(std::isnan(s20->b[C::ExposedComm]));
  EXPECT_TRUE(std::isnan(s20->b[C::Bubble]));
  // Step 19 of B is traced: its bubble is a part of the step.
  EXPECT_TRUE(std::isfinite(s19->b[C::Bubble]));
  EXPECT_GT(s19->b[C::Bubble], 0.0);
  EXPECT_LT(s19->b[C::Bubble], 0.5 * s19->b[C::Duration]);
  EXPECT_TRUE(std::isfinite(s19->b[C::ExposedComm]));
  // Only traced steps enter B's mean: here step 19 alone of the common steps.
  size_t known = 0;
  for (const IterationComparisonRow& r : c.rows)
    known += std::isfinite(r.b[C::Bubble]) ? 1 : 0;
  EXPECT_EQ(c.b[static_cast<size_t>(C::Bubble)].n, known);
  EXPECT_EQ(known, 1u);
  EXPECT_DOUBLE_EQ(c.b[static_cast<size_t>(C::Bubble)].mean, s19->b[C::Bubble]);
}

}  // namespace
}  // namespace wl
