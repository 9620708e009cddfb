// SPDX-License-Identifier: GPL-3.0-or-later
// The analyses on the 10^8-kernel run of issue 17 (scale_run.h, kScale1e8: 1,024 GPUs x 1 h x
// 20 Hz x 6 metrics, 64 traced ranks x 2 streams of 781,250 kernels), with 1 and 2 analysis
// threads (docs/performance.md, "10^8 kernels"). Wall time and the process's CPU time (every
// thread) are reported; the file is opened afresh each iteration (cold HDF5 chunk caches).
//
// Run: WATTLINE_BENCH_DIR=/tmp/wlbench nice -n 19 ./build/bench/bench_scale
// The first run writes the ~2.5 GB input (about half an hour on 2 shared cores).
#include <benchmark/benchmark.h>

#include <algorithm>

#include "analysis/range_summary.h"
#include "analysis/run_analysis.h"
#include "loaders/format/run_file.h"
#include "scale_run.h"

namespace {

const std::filesystem::path& run1e8() {
  static const std::filesystem::path p = wl::bench::scaleRun(wl::bench::kScale1e8);
  return p;
}

void analyze(benchmark::State& state, const wl::AnalysisScope& scope) {
  wl::AnalysisOptions o;
  o.threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    const auto run = wl::RunFile::open(run1e8());
    state.ResumeTiming();
    benchmark::DoNotOptimize(wl::analyzeRun(*run, scope, o));
  }
}

// The whole report (`wattline analyze`).
void BM_AnalyzeRun1e8(benchmark::State& state) {
  analyze(state, {});
}
BENCHMARK(BM_AnalyzeRun1e8)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// The kernel analyses over the 10^8 kernels (one GPU's telemetry in scope), as BM_KernelAnalyses.
void BM_KernelAnalyses1e8(benchmark::State& state) {
  wl::AnalysisScope scope;
  scope.gpus = {0};
  analyze(state, scope);
}
BENCHMARK(BM_KernelAnalyses1e8)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// Decoding one rank's two kernel tracks (1.56 M events, the columns the analyses read): the part
// of the kernel analyses that runs under the HDF5 lock.
void BM_ReadRankKernels1e8(benchmark::State& state) {
  const auto run = wl::RunFile::open(run1e8());
  constexpr unsigned columns =
      wl::RunFile::kKernelName | wl::RunFile::kKernelClass | wl::RunFile::kKernelKind;
  size_t events = 0;
  for (auto _ : state)
    for (size_t t = 0; t < 2; ++t) {
      const auto ev = run->readAllKernels(t, columns);
      events += ev.size();
      benchmark::DoNotOptimize(ev.data());
    }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadRankKernels1e8)->Unit(benchmark::kMillisecond)->Iterations(3);

// The Selection dock's numbers after a drag over 10 minutes (widgets/panels/selection_summary_view:
// every GPU and every traced rank, summarizeRange), on an open file: the first selection (cold
// chunk caches: the file is opened afresh) and a second one, the same span moved by a minute.
void BM_SelectionSummary1e8_10min(benchmark::State& state) {
  const bool warm = state.range(0) != 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto run = wl::RunFile::open(run1e8());
    std::vector<int> gpus, ranks;
    for (const wl::GpuInfo& g : run->gpus())
      gpus.push_back(g.id);
    for (const wl::TrackInfo& t : run->tracks())
      if (std::find(ranks.begin(), ranks.end(), t.rank) == ranks.end()) ranks.push_back(t.rank);
    const int64_t t0 = run->info().start_ns + 1200'000'000'000;
    if (warm)
      benchmark::DoNotOptimize(wl::summarizeRange(*run, t0, t0 + 600'000'000'000, gpus, ranks));
    state.ResumeTiming();
    const int64_t at = warm ? t0 + 60'000'000'000 : t0;
    benchmark::DoNotOptimize(wl::summarizeRange(*run, at, at + 600'000'000'000, gpus, ranks));
  }
}
BENCHMARK(BM_SelectionSummary1e8_10min)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
