// SPDX-License-Identifier: GPL-3.0-or-later
// Collectives on 4 ranks with known arrival skews: instances matched across ranks, skew
// statistics, the straggler, and its GPU's telemetry naming the cause.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <vector>

#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "loaders/core/error.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/h5/h5.h"
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

// The keys the matcher reads are the table's own rows: per track, sorted by event, and where the
// tracks' rows lie.
TEST(Stragglers, CollectiveKeysAreTheTablesRows) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(collectiveRun(), dir / "run.h5");
  const std::vector<CollectiveRecord> records = run->collectives();
  ASSERT_EQ(records.size(), 80u);
  const auto blocks = run->collectiveBlocks();
  ASSERT_TRUE(blocks.has_value());
  ASSERT_EQ(blocks->size(), run->tracks().size());
  const auto byTrack = run->collectiveKeysByTrack();
  ASSERT_EQ(byTrack.size(), run->tracks().size());
  size_t row = 0;
  for (size_t t = 0; t < run->tracks().size(); ++t) {
    std::vector<CollectiveKey> expected;
    for (const CollectiveRecord& r : records)
      if (r.track == t)
        expected.push_back({r.event, r.info.seq, r.info.pg_name, r.info.collective});
    // RunWriter writes track after track: 20 rows each, in order.
    EXPECT_EQ((*blocks)[t].first, row);
    EXPECT_EQ((*blocks)[t].end, row + expected.size());
    row += expected.size();
    const std::vector<CollectiveKey> keys = run->collectiveKeys(t, (*blocks)[t]);
    for (const auto* got : {&keys, &byTrack[t]}) {
      ASSERT_EQ(got->size(), 20u);
      for (size_t i = 0; i < got->size(); ++i) {
        EXPECT_EQ((*got)[i].event, expected[i].event);
        EXPECT_EQ((*got)[i].seq, expected[i].seq);
        EXPECT_EQ((*got)[i].pg_name, expected[i].pg_name);
        EXPECT_EQ((*got)[i].collective, expected[i].collective);
      }
    }
  }
  // Rows that are not the track's are an error, not a wrong match.
  EXPECT_THROW(run->collectiveKeys(0, (*blocks)[1]), Error);
}

// Rewrites every column of /kernels/collectives with its rows in the order `perm`.
void permuteCollectiveRows(const std::filesystem::path& file, const std::vector<size_t>& perm) {
  std::lock_guard lock(h5::lock());
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  auto rewrite = [&](const char* name, auto type) {
    using T = decltype(type);
    const std::string path = std::string("kernels/collectives/") + name;
    const hid_t ds = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
    ASSERT_GE(ds, 0) << path;
    const std::vector<T> v = h5::read<T>(ds);
    ASSERT_EQ(v.size(), perm.size()) << path;
    std::vector<T> w(v.size());
    for (size_t i = 0; i < perm.size(); ++i)
      w[i] = v[perm[i]];
    EXPECT_GE(H5Dwrite(ds, h5::nativeType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data()), 0);
    H5Dclose(ds);
  };
  rewrite("event", uint64_t{});
  rewrite("collective", uint32_t{});
  rewrite("in_nelems", int64_t{});
  rewrite("out_nelems", int64_t{});
  rewrite("group_size", int32_t{});
  rewrite("dtype", uint32_t{});
  rewrite("pg_name", uint32_t{});
  rewrite("pg_desc", uint32_t{});
  rewrite("pg_ranks", uint32_t{});
  rewrite("seq", int64_t{});
  H5Fclose(f);
}

// A table whose tracks' rows are interleaved (the format does not forbid it) is read whole and
// matched to the same report, on one thread and on four.
TEST(Stragglers, InterleavedTableMatchesTheSame) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(collectiveRun(), dir / "run.h5");
  const StragglerReport expected = analyzeRun(*run).stragglers;
  test::RunSpec spec = collectiveRun();
  test::writeAndOpen(spec, dir / "mixed.h5");
  // Row i of the new table is instance i / 4 of rank i % 4 (reversed within each instance).
  std::vector<size_t> perm;
  for (size_t i = 0; i < 80; ++i)
    perm.push_back((3 - i % 4) * 20 + i / 4);
  permuteCollectiveRows(dir / "mixed.h5", perm);
  const auto mixed = RunFile::open(dir / "mixed.h5");
  EXPECT_FALSE(mixed->collectiveBlocks().has_value());
  for (int threads : {1, 4}) {
    AnalysisOptions o;
    o.threads = threads;
    const StragglerReport s = analyzeRun(*mixed, {}, o).stragglers;
    EXPECT_EQ(s.instances, expected.instances);
    EXPECT_EQ(s.skew_mean_ns, expected.skew_mean_ns);
    EXPECT_EQ(s.straggler_rank, expected.straggler_rank);
    ASSERT_EQ(s.ranks.size(), expected.ranks.size());
    for (size_t r = 0; r < s.ranks.size(); ++r) {
      EXPECT_EQ(s.ranks[r].instances, 20u);
      EXPECT_EQ(s.ranks[r].last, expected.ranks[r].last);
      EXPECT_EQ(s.ranks[r].caused_skew_ns, expected.ranks[r].caused_skew_ns);
    }
    ASSERT_EQ(s.worst.size(), expected.worst.size());
    for (size_t i = 0; i < s.worst.size(); ++i)
      EXPECT_EQ(s.worst[i].at_ns, expected.worst[i].at_ns);
  }
}

// A collective only one rank ran is no instance, and that arrival does not count for its rank;
// where ranks call an instance by different kinds, the last rank in rank order names it, whatever
// the number of threads.
TEST(Stragglers, LoneArrivalsAndDisagreeingKinds) {
  test::RunSpec spec = collectiveRun();
  const uint32_t allgather = spec.names.intern("allgather");
  // Rank 3's instance 7 has a sequence number no other rank has.
  spec.tracks[3].collectives[7].seq = 1000;
  // Rank 3 calls instance 4 an all-gather; ranks 0-2 an all-reduce.
  spec.tracks[3].collectives[4].collective = allgather;
  // Rank 0 calls instance 5 an all-gather; ranks 1-3 an all-reduce.
  spec.tracks[0].collectives[5].collective = allgather;
  test::TempDir dir;
  const auto run = test::writeAndOpen(spec, dir / "run.h5");
  for (int threads : {1, 4}) {
    AnalysisOptions o;
    o.threads = threads;
    const StragglerReport s = analyzeRun(*run, {}, o).stragglers;
    // 20 instances: instance 7 of ranks 0-2 still has three arrivals; seq 1000 is alone.
    EXPECT_EQ(s.instances, 20u);
    ASSERT_EQ(s.ranks.size(), 4u);
    EXPECT_EQ(s.ranks[0].instances, 20u);
    EXPECT_EQ(s.ranks[3].instances, 19u);
    // Rank 2 is still last at 15 (instance 7 among them, now without rank 3).
    EXPECT_EQ(s.ranks[2].last, 15u);
  }
  CollectiveMatcher m(*run);
  // Filed in reverse rank order: the result must not depend on it.
  for (size_t t = run->tracks().size(); t-- > 0;)
    m.addTrack(static_cast<size_t>(run->tracks()[t].rank), t, 0,
               run->readAllKernels(t, RunFile::kAllKernelColumns), TimeRange{});
  const MatchedCollectives matched = m.result();
  ASSERT_EQ(matched.instances.size(), 20u);
  EXPECT_EQ(run->str(matched.instances[4].collective), "allgather");
  EXPECT_EQ(run->str(matched.instances[5].collective), "allreduce");
  EXPECT_EQ(matched.instances[7].arrivals, 3u);
  EXPECT_EQ(matched.instances[0].arrivals, 4u);
  EXPECT_EQ(matched.arrivalsByRank.at(3), 19u);
}

}  // namespace
}  // namespace wl
