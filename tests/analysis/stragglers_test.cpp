// SPDX-License-Identifier: GPL-3.0-or-later
// Collectives on 4 ranks with known arrival skews: instances matched across ranks, skew
// statistics, the straggler, and its GPU's telemetry naming the cause.
#include <gtest/gtest.h>

#include <iterator>
#include <limits>

#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "loaders/core/throttle_reasons.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

// 20 all-reduce instances, one per second from 1 s. Arrival offsets: rank 0 at 0, rank 1 at
// 1 ms; in the first 15 instances rank 3 at 2 ms and rank 2 last at 5 ms; in the last 5 rank 2 at
// 0.5 ms and rank 3 last at 3 ms. GPU 2 runs throttled (SW thermal) the whole time.
test::RunSpec collectiveRun() {
  test::RunSpec s = test::baseRun(4, 30.0);
  s.info.sample_interval_s = 0.1;
  const uint32_t nccl = s.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const uint32_t allreduce = s.names.intern("allreduce");
  const uint32_t pg = s.names.intern("0");
  const uint32_t ranks = s.names.intern("[0, 1, 2, 3]");
  const uint32_t bf16 = s.names.intern("BFloat16");
  for (int r = 0; r < 4; ++r) {
    KernelTrack t{r, 13, r, {}, {}, {}};
    for (int i = 0; i < 20; ++i) {
      int64_t off = 0;
      if (r == 1) off = 1 * kMs;
      if (r == 2) off = i < 15 ? 5 * kMs : kMs / 2;
      if (r == 3) off = i < 15 ? 2 * kMs : 3 * kMs;
      t.events.push_back({kT0 + (1 + i) * kSec + off, 20 * kMs, nccl, KernelClass::Communication,
                          GpuEventKind::Kernel, i});
      t.collectives.push_back(
          {static_cast<uint32_t>(i), allreduce, 1024, 1024, 4, bf16, pg, pg, ranks, i});
    }
    s.tracks.push_back(t);
    TelemetryTable tel = test::sampled(
        kT0, s.info.end_ns, 100 * kMs, {"power_w", "temp_c", "sm_clock_mhz", "util_pct"},
        [&](size_t m, int64_t) {
          const double v[] = {600, r == 2 ? 86.0 : 70.0, r == 2 ? 1500.0 : 1980.0, 100};
          return v[m];
        });
    tel.throttle_reasons.assign(tel.size(), r == 2 ? throttle::kSwThermal : 0u);
    s.telemetry.push_back(tel);
  }
  return s;
}

// Sequence numbers are whatever the file says: near int64's maximum they are matched as any other
// (the instance key's hash once overflowed int64 on them: undefined behaviour, found by the
// run_file fuzzer; the sanitizer build runs this test with UBSan stopping on it).
TEST(Stragglers, SequenceNumbersAtInt64sEndsAreMatched) {
  test::RunSpec spec = collectiveRun();
  const int64_t seqs[] = {std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::max() - 1, int64_t{9007199254740996},
                          std::numeric_limits<int64_t>::min()};
  for (KernelTrack& t : spec.tracks)
    for (size_t i = 0; i < std::size(seqs); ++i)
      t.collectives[i].seq = seqs[i];
  test::TempDir dir;
  const auto run = test::writeAndOpen(spec, dir / "run.h5");
  const StragglerReport s = analyzeRun(*run).stragglers;
  // The negative one means "no sequence number" and is left out: instance 3, which rank 2 ended.
  EXPECT_EQ(s.instances, 19u);
  EXPECT_EQ(s.ranks[2].last, 14u);
}

TEST(Stragglers, KnownSkewsAndCause) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(collectiveRun(), dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  const StragglerReport& s = a.stragglers;
  EXPECT_EQ(s.instances, 20u);
  EXPECT_DOUBLE_EQ(s.skew_mean_ns, (15 * 5.0 + 5 * 3.0) / 20 * kMs);
  EXPECT_DOUBLE_EQ(s.skew_p50_ns, 5.0 * kMs);
  EXPECT_DOUBLE_EQ(s.skew_max_ns, 5.0 * kMs);
  EXPECT_EQ(s.straggler_rank, 2);
  EXPECT_EQ(s.straggler_gpu, 2);
  EXPECT_DOUBLE_EQ(s.straggler_share, 0.75);
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.ranks[2].last, 15u);
  EXPECT_EQ(s.ranks[2].caused_skew_ns, 15 * 5 * kMs);
  EXPECT_EQ(s.ranks[3].last, 5u);
  EXPECT_EQ(s.ranks[0].last, 0u);
  EXPECT_EQ(s.likely_cause, "throttling (sw_thermal)");
  EXPECT_NEAR(s.straggler.throttled_fraction, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.others.throttled_fraction, 0.0);
  ASSERT_EQ(s.worst.size(), 10u);
  EXPECT_EQ(s.worst[0].skew_ns, 5 * kMs);
  EXPECT_EQ(s.worst[0].at_ns, kT0 + kSec + 5 * kMs);
  EXPECT_DOUBLE_EQ(s.worst[0].clock_mhz, 1500);
  EXPECT_DOUBLE_EQ(s.worst[0].temp_c, 86);
  EXPECT_EQ(s.worst[0].collective, "allreduce");

  // Restricted to ranks 0, 1 and 3, rank 3 is last in every instance.
  const RunAnalysis b = analyzeRun(*run, {{}, {}, {0, 1, 3}});
  EXPECT_EQ(b.stragglers.straggler_rank, 3);
  EXPECT_DOUBLE_EQ(b.stragglers.skew_mean_ns, (15 * 2.0 + 5 * 3.0) / 20 * kMs);
}

}  // namespace
}  // namespace wl
