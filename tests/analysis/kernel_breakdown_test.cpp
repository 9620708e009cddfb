// SPDX-License-Identifier: GPL-3.0-or-later
// HTA breakdown of a rank whose kernels overlap in known ways, its idle breakdown per stream,
// kernel categories (seed paper order and corrected), the kernel table and iterations.
#include <gtest/gtest.h>

#include "analysis/iterations.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/kernel_categories.h"
#include "analysis/kernel_table.h"
#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kT0;
constexpr int64_t kUs = 1000;

// Rank 0 (times in us after kT0):
//   stream 7:  compute A [0, 100), compute B [150, 300), memcpy M [400, 450)
//   stream 13: comm C1 [50, 200), comm C2 [350, 420)
//   stream 20: other O [500, 510)
test::RunSpec overlapRun() {
  test::RunSpec s = test::baseRun(1, 1.0);
  const uint32_t gemm = s.names.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const uint32_t ew = s.names.intern("vectorized_elementwise_kernel");
  const uint32_t nccl = s.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const uint32_t mc = s.names.intern("Memcpy DtoD (Device -> Device)");
  const uint32_t sync = s.names.intern("Event Sync");
  auto ev = [&](int64_t a, int64_t b, uint32_t name, KernelClass c, GpuEventKind k) {
    return KernelEvent{kT0 + a * kUs, (b - a) * kUs, name, c, k, -1};
  };
  KernelTrack s7{0, 7, 0, {}, {}, {}};
  s7.events = {ev(0, 100, gemm, KernelClass::Compute, GpuEventKind::Kernel),
               ev(150, 300, ew, KernelClass::Compute, GpuEventKind::Kernel),
               ev(400, 450, mc, KernelClass::Memory, GpuEventKind::Memcpy)};
  KernelTrack s13{0, 13, 0, {}, {}, {}};
  s13.events = {ev(50, 200, nccl, KernelClass::Communication, GpuEventKind::Kernel),
                ev(350, 420, nccl, KernelClass::Communication, GpuEventKind::Kernel)};
  KernelTrack s20{0, 20, 0, {}, {}, {}};
  s20.events = {ev(500, 510, sync, KernelClass::Other, GpuEventKind::Other)};
  s.tracks = {s7, s13, s20};
  return s;
}

TEST(KernelBreakdown, HtaDefinitionsByHand) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(overlapRun(), dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  ASSERT_EQ(a.ranks.size(), 1u);
  const RankBreakdown& b = a.ranks[0].breakdown;
  EXPECT_EQ(b.kernels, 6u);
  EXPECT_EQ(b.comm_kernels, 2u);
  EXPECT_EQ(b.compute_kernels, 2u);
  EXPECT_EQ(b.memory_ops, 1u);
  EXPECT_EQ(b.span_ns, 510 * kUs);
  EXPECT_EQ(b.busy_ns, (300 + 100 + 10) * kUs);  // [0,300) [350,450) [500,510)
  EXPECT_EQ(b.idle_ns, 100 * kUs);
  EXPECT_EQ(b.compute_ns, 250 * kUs);
  EXPECT_EQ(b.comm_ns, 220 * kUs);
  EXPECT_EQ(b.overlap_ns, 100 * kUs);       // [50,100) [150,200)
  EXPECT_EQ(b.exposed_comm_ns, 120 * kUs);  // [100,150) [200,200)... [350,420)
  EXPECT_EQ(b.memory_ns, 50 * kUs);
  EXPECT_EQ(b.exposed_memory_ns, 30 * kUs);  // [420,450)
  EXPECT_EQ(b.non_compute_ns, 160 * kUs);    // exposed comm + exposed memory + other
  EXPECT_DOUBLE_EQ(b.overlap_ratio, 100.0 / 220.0);
  ASSERT_EQ(b.streams.size(), 3u);
  EXPECT_EQ(b.streams[0].stream, 7);
  EXPECT_EQ(b.streams[0].idle_ns, (50 + 100) * kUs);
  EXPECT_EQ(b.streams[0].other_wait_ns, (50 + 100) * kUs);
  EXPECT_EQ(b.streams[0].gaps, 2u);

  // Clipped to [80, 420) us.
  const RunAnalysis c = analyzeRun(*run, {{kT0 + 80 * kUs, kT0 + 420 * kUs}, {}, {}});
  const RankBreakdown& r = c.ranks[0].breakdown;
  EXPECT_EQ(r.span_ns, 340 * kUs);
  EXPECT_EQ(r.idle_ns, 50 * kUs);
  EXPECT_EQ(r.compute_ns, 170 * kUs);
  EXPECT_EQ(r.comm_ns, 190 * kUs);
  EXPECT_EQ(r.overlap_ns, 70 * kUs);
  EXPECT_EQ(r.exposed_comm_ns, 120 * kUs);
  EXPECT_EQ(r.memory_ns, 20 * kUs);
  EXPECT_EQ(r.exposed_memory_ns, 0);
  EXPECT_EQ(r.non_compute_ns, 120 * kUs);
}

TEST(KernelBreakdown, StreamIdleKernelWaitThreshold) {
  // Gaps of 20 ns (kernel wait under HTA's 30 ns), 30 ns and 1000 ns (other), one overlap (0).
  const std::vector<KernelEvent> ev = {
      {0, 100, 0, KernelClass::Compute, GpuEventKind::Kernel, -1},
      {120, 100, 0, KernelClass::Compute, GpuEventKind::Kernel, -1},
      {250, 100, 0, KernelClass::Compute, GpuEventKind::Kernel, -1},
      {1350, 100, 0, KernelClass::Compute, GpuEventKind::Kernel, -1},
      {1400, 100, 0, KernelClass::Compute, GpuEventKind::Kernel, -1}};
  const StreamIdle s = streamIdle(ev, 7, TimeRange{}, 30);
  EXPECT_EQ(s.kernel_wait_ns, 20);
  EXPECT_EQ(s.other_wait_ns, 30 + 1000);
  EXPECT_EQ(s.idle_ns, 1050);
  EXPECT_EQ(s.gaps, 3u);
  EXPECT_EQ(s.busy_ns, 100 + 100 + 100 + 150);
}

TEST(KernelCategories, SeedPaperOrderAndCorrected) {
  struct Case {
    const char* name;
    KernelClass cls;
    GpuEventKind kind;
    KernelCategory seed, corrected;
  };
  using C = KernelCategory;
  const KernelClass comp = KernelClass::Compute, comm = KernelClass::Communication;
  const GpuEventKind k = GpuEventKind::Kernel;
  const Case cases[] = {
      {"ncclKernel_AllReduce_RING_LL_Sum_float", comm, k, C::AllReduce, C::AllReduce},
      {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", comm, k, C::ReduceScatter, C::ReduceScatter},
      {"ncclDevKernel_AllGather_RING_LL", comm, k, C::AllGather, C::AllGather},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", comm, k, C::SendRecv, C::SendRecv},
      {"ncclDevKernel_Broadcast_RING_LL", comm, k, C::SendRecv, C::SendRecv},
      // No paper rule names all-to-all: "kernel" sends it to Elementwise.
      {"ncclDevKernel_AllToAll", comm, k, C::Elementwise, C::Communication},
      {"triton_poi_fused_add_mul_0", comp, k, C::Memory, C::Elementwise},
      {"triton_tem_fused_gemm_1", comp, k, C::MatMul, C::MatMul},
      {"sm90_xmma_gemm_bf16bf16_bf16f32", comp, k, C::MatMul, C::MatMul},
      {"ampere_sgemm_128x64_nn", comp, k, C::MatMul, C::MatMul},
      // cuBLAS's Hopper GEMMs (tests/data/h200): no paper rule names them.
      {"nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN", comp, k, C::Other, C::MatMul},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1", comp,
       k, C::MatMul, C::Attention},
      {"void at::native::vectorized_elementwise_kernel<4>", comp, k, C::Elementwise,
       C::Elementwise},
      // The paper's order tries "kernel" before "norm".
      {"void at::native::layer_norm_kernel<float>", comp, k, C::Elementwise, C::LayerNorm},
      {"RMSNorm", comp, k, C::LayerNorm, C::LayerNorm},
      {"flash_fwd_kernel", comp, k, C::Elementwise, C::Attention},
      {"Memcpy DtoD (Device -> Device)", KernelClass::Memory, GpuEventKind::Memcpy, C::Other,
       C::Memory},
      {"userbuffers_pushsend", comp, k, C::Memory, C::Memory},
      {"some_custom_op", comp, k, C::Other, C::Other},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(seedPaperCategory(c.name), c.seed) << c.name;
    EXPECT_EQ(correctedCategory(c.name, c.cls, c.kind), c.corrected) << c.name;
  }
}

TEST(KernelTable, TopKernelsAndOthers) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(overlapRun(), dir / "run.h5");
  AnalysisOptions o;
  o.topKernels = 2;
  const RunAnalysis a = analyzeRun(*run, {}, o);
  ASSERT_EQ(a.top_kernels.size(), 3u);
  // nccl: 2 events, 150 + 70 us; elementwise 150 us; then gemm 100, memcpy 50, sync 10.
  EXPECT_EQ(a.top_kernels[0].name_text, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  EXPECT_EQ(a.top_kernels[0].count, 2u);
  EXPECT_EQ(a.top_kernels[0].total_ns, 220 * kUs);
  EXPECT_EQ(a.top_kernels[0].min_ns, 70 * kUs);
  EXPECT_EQ(a.top_kernels[0].max_ns, 150 * kUs);
  EXPECT_DOUBLE_EQ(a.top_kernels[0].mean_ns(), 110.0 * kUs);
  EXPECT_EQ(a.top_kernels[1].total_ns, 150 * kUs);
  EXPECT_TRUE(a.top_kernels[2].others);
  EXPECT_EQ(a.top_kernels[2].count, 3u);
  EXPECT_EQ(a.top_kernels[2].total_ns, (100 + 50 + 10) * kUs);
  EXPECT_EQ(a.top_kernels[2].min_ns, 10 * kUs);
  // Categories sum the same durations.
  EXPECT_EQ(a.seed_categories[static_cast<size_t>(KernelCategory::AllReduce)], 220 * kUs);
  EXPECT_EQ(a.seed_categories[static_cast<size_t>(KernelCategory::MatMul)], 100 * kUs);
  EXPECT_EQ(a.seed_categories[static_cast<size_t>(KernelCategory::Elementwise)], 150 * kUs);
  EXPECT_EQ(a.corrected_categories[static_cast<size_t>(KernelCategory::Memory)], 50 * kUs);
}

TEST(Iterations, StepTimesAndSpreadByHand) {
  const std::vector<Iteration> its = {
      {0, 10, 0, 100}, {1, 10, 5, 110}, {0, 11, 100, 250}, {1, 11, 110, 240}, {0, 12, 250, 999}};
  const IterationStats s = analyzeIterations(its, {}, {0, 500});
  ASSERT_EQ(s.steps.size(), 2u);  // step 12 ends outside the range
  EXPECT_EQ(s.steps[0].start_ns, 0);
  EXPECT_EQ(s.steps[0].end_ns, 110);
  EXPECT_DOUBLE_EQ(s.steps[0].duration_s, 110e-9);
  EXPECT_NEAR(s.steps[0].rank_spread_s, 5e-9, 1e-18);   // 105 - 100
  EXPECT_NEAR(s.steps[1].rank_spread_s, 20e-9, 1e-18);  // 150 - 130
  EXPECT_NEAR(s.step_s.mean, 130e-9, 1e-18);            // (110 + 150) / 2
  EXPECT_NEAR(s.step_s.stddev, 20e-9, 1e-18);
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_NEAR(s.ranks[1].duration_s.mean, 117.5e-9, 1e-18);  // (105 + 130) / 2
  EXPECT_EQ(analyzeIterations(its, {1}, {0, 500}).steps[1].ranks, 1);
}

}  // namespace
}  // namespace wl
