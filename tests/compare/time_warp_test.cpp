// SPDX-License-Identifier: GPL-3.0-or-later
// The time warp of a two-run comparison: the piecewise-linear map itself (knots land exactly,
// monotonic, slope 1 beyond the ends, round trips, pieces), and the iteration warp of two runs
// (iteration and phase boundaries land exactly, common steps of runs with different iteration
// counts, identity for identical runs, a shift for runs that differ only in their start, the
// communication-kernel fallback).
#include <gtest/gtest.h>

#include <random>

#include "analysis/compare/time_warp.h"
#include "analysis/run_alignment.h"
#include "loaders/core/error.h"
#include "phased_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using Knot = TimeWarp::Knot;
constexpr int64_t kS = 1'000'000'000;

TEST(TimeWarp, ShiftAddsTheOffsetEverywhere) {
  const TimeWarp w = TimeWarp::shift(-7 * kS);
  EXPECT_TRUE(w.isShift());
  for (int64_t b : {int64_t{-5}, int64_t{0}, 3 * kS, 1'735'689'600'000'000'000}) {
    EXPECT_EQ(w.toA(b), b - 7 * kS);
    EXPECT_EQ(w.toB(b - 7 * kS), b);
    EXPECT_EQ(w.offsetAtA(b), -7 * kS);
    EXPECT_EQ(w.stretchAtA(b), 1.0);
  }
  const auto p = w.pieces(10 * kS, 20 * kS);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], (TimeWarp::Piece{10 * kS, 20 * kS, 17 * kS, 27 * kS}));
  EXPECT_TRUE(w.pieces(5, 5).empty());
  // The default-constructed warp is the identity; extreme times saturate instead of wrapping.
  EXPECT_EQ(TimeWarp().toA(42), 42);
  EXPECT_EQ(TimeWarp::shift(kS).toA(INT64_MAX), INT64_MAX);
  EXPECT_EQ(TimeWarp::shift(-kS).toA(INT64_MIN), INT64_MIN);
}

// B's [0, 2 s] onto A's [10 s, 13 s] (stretch 1.5), then B's [2 s, 6 s] onto A's [13 s, 15 s]
// (stretch 0.5).
TimeWarp twoPieces() {
  return TimeWarp::fromKnots({{2 * kS, 13 * kS}, {0, 10 * kS}, {6 * kS, 15 * kS}});
}

TEST(TimeWarp, KnotsLandExactlyAndPiecesInterpolateLinearly) {
  const TimeWarp w = twoPieces();
  EXPECT_FALSE(w.isShift());
  ASSERT_EQ(w.knots().size(), 3u);  // sorted
  EXPECT_EQ(w.knots()[0], (Knot{0, 10 * kS}));
  for (const Knot& k : w.knots()) {
    EXPECT_EQ(w.toA(k.b_ns), k.a_ns);
    EXPECT_EQ(w.toB(k.a_ns), k.b_ns);
  }
  EXPECT_EQ(w.toA(1 * kS), 11'500'000'000);  // halfway through the first piece
  EXPECT_EQ(w.toA(4 * kS), 14 * kS);         // halfway through the second
  EXPECT_EQ(w.toB(14 * kS), 4 * kS);
  EXPECT_EQ(w.toA(1), 10 * kS + 2);  // 1.5 ns, rounded half away from zero
  // Slope 1 beyond the ends: before the first knot the offset is the first knot's (10 s), after
  // the last the last knot's (9 s).
  EXPECT_EQ(w.toA(-3 * kS), 7 * kS);
  EXPECT_EQ(w.toA(10 * kS), 19 * kS);
  EXPECT_EQ(w.toB(7 * kS), -3 * kS);
  EXPECT_DOUBLE_EQ(w.stretchAtA(11 * kS), 1.5);
  EXPECT_DOUBLE_EQ(w.stretchAtA(13 * kS), 0.5);  // at a knot: the piece to its right
  EXPECT_DOUBLE_EQ(w.stretchAtA(15 * kS), 1.0);
  EXPECT_DOUBLE_EQ(w.stretchAtA(9 * kS), 1.0);
  EXPECT_EQ(w.offsetAtA(14 * kS), 10 * kS);
}

TEST(TimeWarp, PiecesCoverTheRangeClippedToIt) {
  const TimeWarp w = twoPieces();
  const auto p = w.pieces(9 * kS, 14 * kS);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], (TimeWarp::Piece{9 * kS, 10 * kS, -1 * kS, 0}));  // slope 1 before the knots
  EXPECT_EQ(p[1], (TimeWarp::Piece{10 * kS, 13 * kS, 0, 2 * kS}));
  EXPECT_EQ(p[2], (TimeWarp::Piece{13 * kS, 14 * kS, 2 * kS, 4 * kS}));  // clipped at 14 s
  const auto inner = w.pieces(11 * kS, 12 * kS);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].b0, w.toB(11 * kS));
  EXPECT_EQ(inner[0].b1, w.toB(12 * kS));
  // A piece's own stretch is the one stretchAtA reports inside it.
  for (const auto& q : p)
    EXPECT_NEAR(static_cast<double>(q.a1 - q.a0) / static_cast<double>(q.b1 - q.b0),
                w.stretchAtA(q.a0), 1e-9);
}

TEST(TimeWarp, MonotonicAndRoundTripsWithinOneNanosecond) {
  // Uneven pieces with stretches from 0.4 to 2.5 on absolute times.
  const int64_t t0 = test::kPhasedT0;
  const TimeWarp w = TimeWarp::fromKnots({{t0, t0 + 5 * kS},
                                          {t0 + 3 * kS, t0 + 6'200'000'001},
                                          {t0 + 4 * kS + 7, t0 + 8'700'000'000},
                                          {t0 + 9 * kS, t0 + 11 * kS}});
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> d(t0 - 2 * kS, t0 + 13 * kS);
  std::vector<int64_t> bs(20000);
  for (int64_t& b : bs)
    b = d(rng);
  std::sort(bs.begin(), bs.end());
  int64_t prevA = INT64_MIN, prevB = INT64_MIN;
  for (int64_t b : bs) {
    const int64_t a = w.toA(b);
    EXPECT_GE(a, prevA);
    prevA = a;
    EXPECT_LE(std::llabs(w.toB(a) - b), 1) << b;  // dB/dA <= 2.5
    const int64_t back = w.toB(b);                // b read as a time of A
    EXPECT_GE(back, prevB);
    prevB = back;
    EXPECT_LE(std::llabs(w.toA(back) - b), 1) << b;  // dA/dB <= 2.5
  }
}

TEST(TimeWarp, KnotsWithOneOffsetAreAShiftAndBadKnotsAreRejected) {
  const TimeWarp w = TimeWarp::fromKnots({{0, 5}, {10, 15}, {30, 35}});
  EXPECT_TRUE(w.isShift());
  for (int64_t b : {-100, 0, 7, 22, 1000})
    EXPECT_EQ(w.toA(b), TimeWarp::shift(5).toA(b));
  EXPECT_EQ(w.pieces(0, 100).size(), 1u);
  EXPECT_THROW(TimeWarp::fromKnots({{0, 5}, {10, 5}}), Error);  // not increasing in A
  EXPECT_THROW(TimeWarp::fromKnots({{0, 5}, {0, 9}}), Error);   // not increasing in B
  EXPECT_THROW(TimeWarp::fromKnots({{0, 9}, {10, 5}}), Error);  // decreasing
  EXPECT_EQ(TimeWarp::fromKnots({}).toA(12), 12);
}

// Two runs, A with 4 steps of 3 s and B with 5 steps of 2 s (B starts 1.5 s later and samples
// every 20 ms).
class IterationWarp : public ::testing::Test {
 protected:
  void SetUp() override {
    sa.name = "A";
    sa.stepNs = {3 * kS, 3 * kS, 3 * kS, 3 * kS};
    sb.name = "B";
    sb.stepNs = {2 * kS, 2 * kS, 2 * kS, 2 * kS, 2 * kS};
    sb.start += 1'500'000'000;
    sb.sampleNs = 20'000'000;
    sb.phaseShare = {0.3, 0.6, 0.1};
  }
  std::shared_ptr<const RunFile> write(const test::PhasedRunSpec& s) {
    const auto p = dir / (s.name + std::to_string(n++) + ".h5");
    return test::writePhasedRun(s, p);
  }
  test::TempDir dir;
  test::PhasedRunSpec sa, sb;
  int n = 0;
};

TEST_F(IterationWarp, IterationAndPhaseBoundariesLandExactly) {
  const auto a = write(sa), b = write(sb);
  const auto w = iterationWarp(*a, *b);
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->isShift());
  // Common steps 0..3 (B's step 4 has no partner): per step its start, the backward and optimizer
  // starts and its end are knots (the forward start is the step start; phases end where the next
  // begins).
  std::vector<Knot> expected;
  for (size_t k = 0; k < 4; ++k) {
    const auto ba = test::phasedStepBounds(sa, k), bb = test::phasedStepBounds(sb, k);
    for (size_t i = 0; i < 4; ++i) {
      if (i == 3 && k < 3) continue;  // the end of step k is the start of step k + 1
      expected.push_back({bb[i], ba[i]});
      EXPECT_EQ(w->toA(bb[i]), ba[i]) << "step " << k << " boundary " << i;
      EXPECT_EQ(w->toB(ba[i]), bb[i]) << "step " << k << " boundary " << i;
    }
  }
  EXPECT_EQ(w->knots(), expected);
  // Inside B's forward phase of step 1 (0.6 s long) onto A's (1.2 s): stretch 2.
  const auto ba1 = test::phasedStepBounds(sa, 1);
  EXPECT_DOUBLE_EQ(w->stretchAtA(ba1[0] + 1), 2.0);
  // B's step 4 and idle tail keep their own length (slope 1 after the last knot).
  const auto bb4 = test::phasedStepBounds(sb, 4);
  EXPECT_EQ(w->toA(bb4[3]) - w->toA(bb4[0]), 2 * kS);
  // Iterations only: the knots are the step boundaries.
  const auto wi = iterationWarp(*a, *b, WarpBoundaries::Iterations);
  ASSERT_TRUE(wi);
  EXPECT_EQ(wi->knots().size(), 5u);
  EXPECT_DOUBLE_EQ(wi->stretchAtA(ba1[0] + 1), 1.5);
}

TEST_F(IterationWarp, IdenticalRunsGiveTheIdentityAndAShiftedCopyAShift) {
  const auto a = write(sa), a2 = write(sa);
  const auto w = iterationWarp(*a, *a2);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->isShift());
  for (const Knot& k : w->knots())
    EXPECT_EQ(k.a_ns, k.b_ns);
  EXPECT_EQ(w->toA(sa.start + 2 * kS + 17), sa.start + 2 * kS + 17);
  // The same run recorded 40 s later: the warp is the shift at any step.
  test::PhasedRunSpec later = sa;
  later.start += 40 * kS;
  const auto c = write(later);
  const auto ws = iterationWarp(*a, *c);
  ASSERT_TRUE(ws);
  EXPECT_TRUE(ws->isShift());
  const TimeWarp shift = TimeWarp::shift(*alignAtIteration(*a, *c, 2));
  for (int64_t t = later.start; t < later.start + 16 * kS; t += 333'333'333)
    EXPECT_EQ(ws->toA(t), shift.toA(t));
}

TEST_F(IterationWarp, DifferentStepNumbersPairOnlyTheCommonOnes) {
  sb.firstStep = 2;  // B records steps 2..6, A steps 0..3: common 2 and 3
  const auto a = write(sa), b = write(sb);
  EXPECT_EQ(commonSteps(*a, *b), (std::vector<int64_t>{2, 3}));
  const auto w = iterationWarp(*a, *b, WarpBoundaries::Iterations);
  ASSERT_TRUE(w);
  const auto a2 = test::phasedStepBounds(sa, 2), a3 = test::phasedStepBounds(sa, 3);
  const auto b2 = test::phasedStepBounds(sb, 0), b3 = test::phasedStepBounds(sb, 1);
  EXPECT_EQ(w->knots(), (std::vector<Knot>{{b2[0], a2[0]}, {b3[0], a3[0]}, {b3[3], a3[3]}}));
  sb.firstStep = 100;
  const auto c = write(sb);
  EXPECT_FALSE(iterationWarp(*a, *c));
  EXPECT_EQ(defaultAlignment(*a, *c).first, AlignMode::Start);
  // The Warp mode without common steps falls back to the starts.
  EXPECT_EQ(alignmentWarp(*a, *c, AlignMode::Warp), TimeWarp::shift(alignAtStart(*a, *c)));
}

TEST_F(IterationWarp, WithoutAnnotationsTheFirstCommunicationKernelIsAKnot) {
  sa.annotations = sb.annotations = false;
  const auto a = write(sa), b = write(sb);
  const auto w = iterationWarp(*a, *b);
  ASSERT_TRUE(w);
  // Per common step: start, the communication kernel at the optimizer's start, end.
  EXPECT_EQ(w->knots().size(), 4u * 2 + 1);
  for (size_t k = 0; k < 4; ++k)
    EXPECT_EQ(w->toA(test::phasedStepBounds(sb, k)[2]), test::phasedStepBounds(sa, k)[2]);
  // No traces either: iterations only.
  sa.kernels = sb.kernels = false;
  const auto a2 = write(sa), b2 = write(sb);
  EXPECT_EQ(iterationWarp(*a2, *b2)->knots().size(), 5u);
}

TEST_F(IterationWarp, StepBoundariesAreTheEarliestStartAndLatestEndOverRanks) {
  sa.gpus = sb.gpus = 3;
  sa.rankSkewNs = 40'000'000;  // rank r runs 40 ms x r behind rank 0
  sb.rankSkewNs = 10'000'000;
  const auto a = write(sa), b = write(sb);
  const auto w = iterationWarp(*a, *b, WarpBoundaries::Iterations);
  ASSERT_TRUE(w);
  const auto a3 = test::phasedStepBounds(sa, 3), b3 = test::phasedStepBounds(sb, 3);
  EXPECT_EQ(w->toA(b3[0]), a3[0]);                            // rank 0 starts first
  EXPECT_EQ(w->toA(b3[3] + 20'000'000), a3[3] + 80'000'000);  // rank 2 ends last
  EXPECT_EQ(*iterationStart(*a, 3), a3[0]);
}

TEST_F(IterationWarp, DefaultAlignmentIsTheWarpWithTheShiftOfTheSecondCommonStep) {
  const auto a = write(sa), b = write(sb);
  int64_t step = -1;
  const auto [mode, offset] = defaultAlignment(*a, *b, &step);
  EXPECT_EQ(mode, AlignMode::Warp);
  EXPECT_EQ(step, 1);
  EXPECT_EQ(offset, *alignAtIteration(*a, *b, 1));
  EXPECT_EQ(alignmentWarp(*a, *b, AlignMode::Warp), *iterationWarp(*a, *b));
  EXPECT_EQ(alignmentWarp(*a, *b, AlignMode::Iteration, 2),
            TimeWarp::shift(*alignAtIteration(*a, *b, 2)));
  EXPECT_EQ(alignmentWarp(*a, *b, AlignMode::Iteration, 42), TimeWarp::shift(alignAtStart(*a, *b)));
  EXPECT_EQ(alignmentWarp(*a, *b, AlignMode::Start), TimeWarp::shift(alignAtStart(*a, *b)));
  EXPECT_EQ(alignmentWarp(*a, *b, AlignMode::Absolute), TimeWarp::shift(0));
  EXPECT_EQ(alignmentWarp(*a, *b, AlignMode::Event, 0, 123), TimeWarp::shift(123));
}

}  // namespace
}  // namespace wl
