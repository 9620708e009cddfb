// SPDX-License-Identifier: GPL-3.0-or-later
// Energy attribution: power integrated over kernel classes, iterations and phases, by hand.
#include <gtest/gtest.h>

#include "analysis/energy_attribution.h"
#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

TEST(EnergyIntegral, LinearBetweenSamplesNothingAcrossGaps) {
  // 100 W at 0 s, 300 W at 1 s, gap, 200 W at 10 s and 11 s (threshold 5 s).
  const EnergyIntegral e({0, kSec, 10 * kSec, 11 * kSec}, {100, 300, 200, 200}, 5 * kSec);
  EXPECT_DOUBLE_EQ(e.between(0, kSec), 200);
  EXPECT_DOUBLE_EQ(e.between(0, kSec / 2), 0.5 * (100 + 200) / 2);
  EXPECT_DOUBLE_EQ(e.between(kSec / 2, 10 * kSec + kSec / 2), 0.5 * (200 + 300) / 2 + 100);
  EXPECT_DOUBLE_EQ(e.over({{0, kSec}, {10 * kSec, 11 * kSec}}), 400);
  EXPECT_DOUBLE_EQ(e.between(-5 * kSec, 20 * kSec), 400);
}

// 10 Hz for 10 s: 300 W before 5 s and 500 W from 5 s (linear from 4.9 s to 5.0 s).
// Rank 0: compute [1, 2) s, communication [1.5, 3) s, memcpy [2.5, 3.5) s; iterations [0, 4)
// and [4, 8) s; annotations forward [1, 2) and backward [2, 4) s.
TEST(EnergyAttribution, ClassesIterationsPhasesByHand) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(1, 10.0);
  s.info.sample_interval_s = 0.1;
  s.telemetry.push_back(
      test::sampled(kT0, kT0 + 10 * kSec, 100 * kMs, {"power_w"},
                    [](size_t, int64_t t) { return t < kT0 + 5 * kSec ? 300.0 : 500.0; }));
  const uint32_t gemm = s.names.intern("gemm");
  const uint32_t nccl = s.names.intern("ncclKernel_AllReduce");
  const uint32_t mc = s.names.intern("Memcpy HtoD");
  KernelTrack a{0, 7, 0, {}, {}, {}}, b{0, 13, 0, {}, {}, {}};
  a.events = {{kT0 + kSec, kSec, gemm, KernelClass::Compute, GpuEventKind::Kernel, -1},
              {kT0 + 2500 * kMs, kSec, mc, KernelClass::Memory, GpuEventKind::Memcpy, -1}};
  b.events = {
      {kT0 + 1500 * kMs, 1500 * kMs, nccl, KernelClass::Communication, GpuEventKind::Kernel, -1}};
  s.tracks = {a, b};
  s.iterations = {{0, 1, kT0, kT0 + 4 * kSec}, {0, 2, kT0 + 4 * kSec, kT0 + 8 * kSec}};
  s.annotations = {{0, kT0 + kSec, kSec, s.names.intern("## forward ##"), false},
                   {0, kT0 + 2 * kSec, 2 * kSec, s.names.intern("## backward ##"), false}};
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis r = analyzeRun(*run);
  ASSERT_TRUE(r.ranks[0].energy.has_value());
  const EnergyAttribution& e = *r.ranks[0].energy;
  EXPECT_NEAR(e.compute_j, 300, 1e-9);         // [1, 2)
  EXPECT_NEAR(e.exposed_comm_j, 300, 1e-9);    // [2, 3)
  EXPECT_NEAR(e.exposed_memory_j, 150, 1e-9);  // [3, 3.5)
  EXPECT_NEAR(e.idle_j, 0, 1e-9);
  const double total = 300 * 4.9 + 0.1 * 400 + 500 * 4.9;  // last sample at 9.9 s
  EXPECT_NEAR(e.total_j, total, 1e-6);
  EXPECT_NEAR(e.outside_span_j, total - 750, 1e-6);
  EXPECT_EQ(e.iteration_j.n, 2u);
  EXPECT_NEAR(e.iteration_j.min, 1200, 1e-9);
  EXPECT_NEAR(e.iteration_j.max, 300 * 0.9 + 40 + 500 * 3, 1e-9);
  ASSERT_EQ(e.phases_j.size(), 2u);
  EXPECT_EQ(e.phases_j[0].first, "backward");
  EXPECT_NEAR(e.phases_j[0].second, 600, 1e-9);
  EXPECT_EQ(e.phases_j[1].first, "forward");
  EXPECT_NEAR(e.phases_j[1].second, 300, 1e-9);
  EXPECT_NEAR(e.sample_interval_s, 0.1, 1e-12);
  // The same power integral over the whole run is the GPU's energy.
  EXPECT_NEAR(r.gpus[0].energy_j, total, 1e-6);
}

}  // namespace
}  // namespace wl
