// SPDX-License-Identifier: GPL-3.0-or-later
// Native format: write and read throughput of telemetry series and pyramids.
// Run: ./build/bench/bench_format --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cmath>
#include <filesystem>

#include "loaders/format/lod.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"

namespace {

std::filesystem::path tempFile(const char* name) {
  return std::filesystem::temp_directory_path() / name;
}

wl::TelemetryTable makeTable(size_t n) {
  wl::TelemetryTable t;
  t.t_ns.resize(n);
  for (size_t i = 0; i < n; ++i)
    t.t_ns[i] = static_cast<int64_t>(i) * 50'000'000;
  for (const char* m :
       {"power_w", "temp_c", "sm_clock_mhz", "mem_clock_mhz", "util_pct", "mem_util_pct"}) {
    wl::TelemetryColumn c{m, std::vector<double>(n)};
    for (size_t i = 0; i < n; ++i)
      c.values[i] = 300 + 100 * std::sin(static_cast<double>(i) * 0.01);
    t.columns.push_back(std::move(c));
  }
  return t;
}

// One GPU-hour at 20 Hz, 6 metrics, written with pyramids (shuffle + deflate).
void BM_WriteGpuHour(benchmark::State& state) {
  const wl::TelemetryTable table = makeTable(72000);
  const auto path = tempFile("wattline-bench-write.h5");
  for (auto _ : state) {
    wl::RunInfo info;
    info.end_ns = 72000LL * 50'000'000;
    wl::RunWriter w(path, info, std::vector<wl::GpuInfo>(1), {});
    w.addGpuTelemetry(0, table);
    w.finish();
  }
  state.SetItemsProcessed(state.iterations() * 72000 * 6);
  std::filesystem::remove(path);
}
BENCHMARK(BM_WriteGpuHour)->Unit(benchmark::kMillisecond);

void BM_BuildTelemetryLod(benchmark::State& state) {
  const wl::TelemetryTable table = makeTable(72000);
  const auto grid = wl::LodGrid::forTelemetry(0, 72000LL * 50'000'000, 50'000'000);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        wl::buildTelemetryLod(grid, table.t_ns, table.columns[0].values, 1'000'000'000));
  state.SetItemsProcessed(state.iterations() * 72000);
}
BENCHMARK(BM_BuildTelemetryLod)->Unit(benchmark::kMillisecond);

// Reading one GPU-hour of one metric back (20 Hz).
void BM_ReadSeries(benchmark::State& state) {
  const auto path = tempFile("wattline-bench-read.h5");
  {
    wl::RunInfo info;
    info.end_ns = 72000LL * 50'000'000;
    wl::RunWriter w(path, info, std::vector<wl::GpuInfo>(1), {});
    w.addGpuTelemetry(0, makeTable(72000));
    w.finish();
  }
  const auto run = wl::RunFile::open(path);
  for (auto _ : state)
    benchmark::DoNotOptimize(run->readAllSamples(wl::SeriesKind::Gpu, 0, "power_w"));
  state.SetItemsProcessed(state.iterations() * 72000);
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReadSeries)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
