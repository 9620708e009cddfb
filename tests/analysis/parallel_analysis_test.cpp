// SPDX-License-Identifier: GPL-3.0-or-later
// The analyses on several threads (analysis/parallel.h): parallelFor runs every task once and
// reports the error one thread would have met, and analyzeRun gives the same JSON bytes with 1 and
// with 2+ threads on the bundled samples and on a multi-rank run with collectives, iterations,
// throttling and gaps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "analysis/analysis_json.h"
#include "analysis/parallel.h"
#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "loaders/core/error.h"
#include "loaders/core/throttle_reasons.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

TEST(ParallelFor, EveryIndexOnceAndTicksCountThem) {
  for (unsigned threads : {1u, 2u, 5u}) {
    std::vector<std::atomic<int>> seen(1000);
    std::vector<size_t> ticks;
    parallelFor(
        seen.size(), threads, [&](size_t i) { ++seen[i]; },
        [&](size_t done) { ticks.push_back(done); });
    for (const auto& s : seen)
      EXPECT_EQ(s.load(), 1);
    // Ticks come from the calling thread only (which may find every task taken), with finished
    // counts that only grow.
    for (size_t k = 1; k < ticks.size(); ++k)
      EXPECT_LT(ticks[k - 1], ticks[k]);
    if (!ticks.empty()) {
      EXPECT_LE(ticks.back(), seen.size());
    }
    if (threads == 1) {
      EXPECT_EQ(ticks.size(), seen.size());
    }
  }
}

TEST(ParallelFor, UsesSeveralThreads) {
  std::mutex m;
  std::set<std::thread::id> ids;
  // Each task waits for a second task to be running, which only another thread can start.
  std::atomic<int> running{0};
  parallelFor(2, 2, [&](size_t) {
    ++running;
    for (int spin = 0; running < 2 && spin < 2000; ++spin)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard lock(m);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ParallelFor, RethrowsTheLowestFailingIndex) {
  for (unsigned threads : {1u, 2u, 4u}) {
    try {
      parallelFor(64, threads, [](size_t i) {
        if (i == 9 || i == 40) throw Error("task " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "task 9");
    }
  }
}

TEST(ParallelFor, ThreadCountFromOptionsAndEnvironment) {
  EXPECT_EQ(analysisThreads(3), 3u);
  ::setenv("WATTLINE_THREADS", "1", 1);
  EXPECT_EQ(analysisThreads(), 1u);
  EXPECT_EQ(analysisThreads(2), 2u);  // an explicit request wins
  ::setenv("WATTLINE_THREADS", "7", 1);
  EXPECT_EQ(analysisThreads(), 7u);
  ::setenv("WATTLINE_THREADS", "two", 1);
  EXPECT_GE(analysisThreads(), 1u);  // ignored: the machine's cores
  ::unsetenv("WATTLINE_THREADS");
  EXPECT_GE(analysisThreads(), 1u);
}

// parallelBlocks: every index once, in contiguous blocks (one thread walks each block in order),
// and small loops stay on the calling thread.
TEST(ParallelBlocks, EveryIndexOnceInContiguousBlocks) {
  ::setenv("WATTLINE_THREADS", "3", 1);
  const size_t n = 1000;
  std::vector<std::atomic<int>> seen(n);
  std::vector<std::thread::id> by(n);
  parallelBlocks(n, 3 * kBlockWork, [&](size_t i) {
    ++seen[i];
    by[i] = std::this_thread::get_id();
  });
  for (const auto& s : seen)
    EXPECT_EQ(s.load(), 1);
  // Three blocks of 333, 333 and 334 indices (n * b / blocks), each walked by one thread (which
  // thread takes which block is up to the scheduler).
  for (size_t i = 1; i < n; ++i)
    if (i != 333 && i != 666) {
      EXPECT_EQ(by[i], by[i - 1]) << i;
    }
  // Under kBlockWork steps a block: the calling thread alone.
  const auto self = std::this_thread::get_id();
  bool others = false;
  parallelBlocks(n, kBlockWork - 1, [&](size_t) { others |= std::this_thread::get_id() != self; });
  EXPECT_FALSE(others);
  size_t calls = 0;
  parallelBlocks(0, 10 * kBlockWork, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0u);
  ::unsetenv("WATTLINE_THREADS");
}

std::string analysisJson(const RunFile& run, int threads, const AnalysisScope& scope = {}) {
  AnalysisOptions o;
  o.threads = threads;
  return toJson(analyzeRun(run, scope, o)).dump(2);
}

TEST(ParallelAnalysis, BundledSamplesSameBytes) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(WATTLINE_SOURCE_DIR "/resources/samples")) {
    if (e.path().extension() != ".h5") continue;
    ++n;
    const auto run = RunFile::open(e.path());
    const std::string one = analysisJson(*run, 1);
    for (int t : {2, 3, 8})
      EXPECT_EQ(analysisJson(*run, t), one) << e.path() << " with " << t << " threads";
    AnalysisScope part;
    part.range = {run->info().start_ns + 10 * kSec, run->info().start_ns + 40 * kSec};
    EXPECT_EQ(analysisJson(*run, 2, part), analysisJson(*run, 1, part)) << e.path();
  }
  EXPECT_GE(n, 3);
}

// 20 GPUs, 20 ranks x 2 streams (more ranks than one batch of the rank step on 1 and 2 threads):
// compute kernels of varying length, an all-reduce per 0.5 s iteration on the communication stream
// (rank 5 arrives 4 ms late), GPUs 2 and 6 throttled (SW thermal) in the second half, GPU 3's
// telemetry with a 5 s gap.
test::RunSpec multiRankRun() {
  test::RunSpec s = test::baseRun(20, 60.0);
  s.info.sample_interval_s = 0.1;
  const uint32_t gemm = s.names.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const uint32_t ew = s.names.intern("void at::native::vectorized_elementwise_kernel<4>");
  const uint32_t nccl = s.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const uint32_t allreduce = s.names.intern("allreduce");
  const uint32_t pg = s.names.intern("0");
  const uint32_t pgRanks = s.names.intern("[0, ..., 19]");
  const uint32_t bf16 = s.names.intern("BFloat16");
  for (int r = 0; r < 20; ++r) {
    KernelTrack comp{r, 7, r, {}, {}, {}}, comm{r, 13, r, {}, {}, {}};
    for (int it = 0; it < 110; ++it) {
      const int64_t base = kT0 + 2 * kSec + it * 500 * kMs;
      int64_t at = base;
      for (int k = 0; k < 40; ++k) {
        const int64_t dur = (1 + (k * 7 + r * 3 + it) % 9) * kMs;
        comp.events.push_back(
            {at, dur, k % 3 ? gemm : ew, KernelClass::Compute, GpuEventKind::Kernel, it * 40 + k});
        at += dur + 150'000;
      }
      comm.events.push_back({base + 420 * kMs + (r == 5 ? 4 * kMs : r * 100'000), 30 * kMs, nccl,
                             KernelClass::Communication, GpuEventKind::Kernel, -1});
      comm.collectives.push_back({static_cast<uint32_t>(comm.events.size() - 1), allreduce, 4096,
                                  4096, 20, bf16, pg, pg, pgRanks, it});
      s.iterations.push_back({r, it, base, base + 500 * kMs});
    }
    s.tracks.push_back(std::move(comp));
    s.tracks.push_back(std::move(comm));
    const bool hot = r == 2 || r == 6;
    TelemetryTable tel = test::sampled(
        kT0, s.info.end_ns, 100 * kMs, {"power_w", "temp_c", "sm_clock_mhz", "util_pct"},
        [&](size_t m, int64_t t) {
          const double sec = static_cast<double>(t - kT0) * 1e-9;
          if (r == 3 && sec >= 20 && sec < 25) return std::nan("");
          const bool throttled = hot && sec >= 30;
          const double wave = std::fmod(sec, 0.5) < 0.42 ? 1.0 : 0.4;
          const double v[] = {250 + 400 * wave + 3.0 * r, 60 + sec * 0.4 + r,
                              throttled ? 1500.0 : 1980.0, sec < 2 ? 0.0 : 100.0 * wave};
          return v[m];
        });
    tel.throttle_reasons.assign(tel.size(), 0u);
    for (size_t i = 0; i < tel.size(); ++i)
      if (hot && tel.t_ns[i] >= kT0 + 30 * kSec) tel.throttle_reasons[i] = throttle::kSwThermal;
    s.telemetry.push_back(std::move(tel));
  }
  return s;
}

TEST(ParallelAnalysis, MultiRankRunSameBytes) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(multiRankRun(), dir / "run.h5");
  AnalysisOptions o;
  o.threads = 1;
  const RunAnalysis a = analyzeRun(*run, {}, o);
  // The run exercises what the threads split: every rank, the matched collectives, throttling.
  ASSERT_EQ(a.ranks.size(), 20u);
  for (const RankAnalysis& r : a.ranks)
    EXPECT_EQ(r.breakdown.kernels, 110u * 41u) << "rank " << r.breakdown.rank;
  EXPECT_EQ(a.stragglers.instances, 110u);
  EXPECT_EQ(a.stragglers.straggler_rank, 5);
  EXPECT_GT(a.gpu(2)->throttle.throttled_s, 20.0);
  EXPECT_EQ(a.gpu(0)->throttle.throttled_s, 0.0);
  EXPECT_GE(a.gpu(3)->gaps, 1u);

  const std::string one = toJson(a).dump(2);
  for (int t : {2, 3, 7})
    EXPECT_EQ(analysisJson(*run, t), one) << t << " threads";
  AnalysisScope part;
  part.range = {kT0 + 17 * kSec + 3 * kMs, kT0 + 41 * kSec};
  part.gpus = {1, 2, 3, 6, 17};
  part.ranks = {0, 2, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  EXPECT_EQ(analysisJson(*run, 2, part), analysisJson(*run, 1, part));
}

// A viewer closes a run's open datasets now and then to free their chunk caches: reads after
// that reopen them and give the same values, also while another thread reads.
TEST(RunFileDatasets, ReleasingTheirCachesChangesNoByte) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(multiRankRun(), dir / "run.h5");
  const std::string before = analysisJson(*run, 1);
  run->releaseDatasetCaches();
  EXPECT_EQ(analysisJson(*run, 1), before);
  std::atomic<bool> done{false};
  std::thread releasing([&] {
    while (!done)
      run->releaseDatasetCaches();
  });
  const std::string during = analysisJson(*run, 2);
  done = true;
  releasing.join();
  EXPECT_EQ(during, before);
}

TEST(ParallelAnalysis, CancelStopsEveryThread) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(multiRankRun(), dir / "run.h5");
  AnalysisOptions o;
  o.threads = 2;
  int calls = 0;
  const Progress stopAtRanks([&](double, std::string_view stage) {
    ++calls;
    return stage != "kernel breakdown";
  });
  EXPECT_THROW(analyzeRun(*run, {}, o, stopAtRanks), Cancelled);
  EXPECT_GT(calls, 1);
}

}  // namespace
}  // namespace wl
