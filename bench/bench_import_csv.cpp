// SPDX-License-Identifier: GPL-3.0-or-later
// Telemetry CSV import throughput: nvidia-smi --query-gpu CSV, the most common telemetry input.
// Run: ./build/bench/bench_import_csv   (generates /tmp/wattline-bench-nvsmi.csv, ~210 MB, once)
//
// Row model of the generated file (as `nvidia-smi --query-gpu=timestamp,index,name,power.draw,
// temperature.gpu,temperature.memory,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,
// memory.used,clocks_event_reasons.active --format=csv -lms 100` writes it, units in values): 8
// GPUs per burst, one burst every 100 ms, power 80..700 W following a slow sine plus per-GPU
// offsets, temperatures 35..85 C, SM clock 1410..1980 MHz, utilization 0..100 %, memory used in
// MiB, and a throttle mask that is 0x4 (SW power cap) whenever power is above 680 W, else 0x0.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "loaders/import/importer.h"

namespace {

constexpr int kGpus = 8;
constexpr uint64_t kTargetBytes = 210ull << 20;

std::filesystem::path benchFile() {
  return std::filesystem::temp_directory_path() / "wattline-bench-nvsmi.csv";
}

void generate(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) >= kTargetBytes && !ec) return;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path.string());
  std::string buf =
      "timestamp, index, name, power.draw [W], temperature.gpu, temperature.memory, "
      "clocks.sm [MHz], clocks.mem [MHz], utilization.gpu [%], utilization.memory [%], "
      "memory.used [MiB], clocks_event_reasons.active\n";
  uint64_t written = 0;
  for (int64_t burst = 0; written < kTargetBytes; ++burst) {
    const int64_t ms = burst * 100;
    const int64_t s = ms / 1000;
    const int h = static_cast<int>(s / 3600 % 24), m = static_cast<int>(s / 60 % 60),
              sec = static_cast<int>(s % 60);
    const int day = 1 + static_cast<int>(s / 86400 % 28);
    for (int g = 0; g < kGpus; ++g) {
      const double phase = static_cast<double>(burst) * 0.003 + g * 0.4;
      const double power = 390 + 310 * std::sin(phase) + g;
      const double temp = 60 + 25 * std::sin(phase - 0.5);
      const int sm = power > 680 ? 1410 + (burst % 300) : 1980;
      fmt::format_to(std::back_inserter(buf),
                     "2025/03/{:02} {:02}:{:02}:{:02}.{:03}, {}, NVIDIA H100 80GB HBM3, {:.2f} W, "
                     "{:.0f}, {:.0f}, {} MHz, 2619 MHz, {} %, {} %, {} MiB, 0x{:016X}\n",
                     day, h, m, sec, ms % 1000, g, power, temp, temp + 4, sm,
                     static_cast<int>(50 + 50 * std::sin(phase * 3)),
                     static_cast<int>(20 + 15 * std::sin(phase * 2)), 40000 + 100 * g,
                     power > 680 ? 4 : 0);
    }
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      written += buf.size();
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
}

void BM_ImportNvidiaSmiCsv(benchmark::State& state) {
  const auto path = benchFile();
  generate(path);
  const uint64_t bytes = std::filesystem::file_size(path);
  const wl::import::Importer* imp = wl::import::findImporter("nvidia-smi-csv");
  size_t rows = 0;
  for (auto _ : state) {
    const wl::import::ImportedData d = imp->read(path, {}, wl::Progress{});
    rows = 0;
    for (const auto& g : d.gpus)
      rows += g.table.size();
    benchmark::DoNotOptimize(rows);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_ImportNvidiaSmiCsv)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
