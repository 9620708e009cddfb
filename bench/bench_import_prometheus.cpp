// SPDX-License-Identifier: GPL-3.0-or-later
// The Prometheus import at cluster scale (docs/performance.md): a dcgm-exporter history of
// 1,024 GPUs (128 nodes x 8) x 10 min x 1 Hz x 6 metrics (3,686,400 samples) is written as
// OpenMetrics, loaded into a real prometheus on 127.0.0.1 (promtool), and imported through the
// HTTP API into a run file. Prints the time of each stage and checks that every sample arrived.
//
//   ./build/bench/bench_import_prometheus [--gpus N] [--seconds S] [--concurrency C] [--keep DIR]
//
// A run-once program rather than a Google Benchmark: the server setup takes longer than the
// import, and the import is measured once, end to end.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "loaders/core/metrics.h"
#include "loaders/import/import_job.h"
#include "loaders/import/prometheus/prometheus_import.h"
#include "prometheus_server.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kT0 = 1767225600;  // 2026-01-01T00:00:00Z
constexpr int kGpusPerNode = 8;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// dcgm-exporter's six most used metrics with its labels; values vary per GPU and second.
void writeHistory(const std::filesystem::path& file, int gpus, int secondsLong) {
  std::ofstream out(file);
  const char* names[] = {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP",
                         "DCGM_FI_DEV_SM_CLOCK",    "DCGM_FI_DEV_MEM_CLOCK",
                         "DCGM_FI_DEV_GPU_UTIL",    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"};
  std::string line;
  for (int m = 0; m < 6; ++m) {
    out << "# TYPE " << names[m] << " gauge\n";
    for (int g = 0; g < gpus; ++g) {
      const int node = g / kGpusPerNode, index = g % kGpusPerNode;
      const std::string labels = fmt::format(
          "gpu=\"{}\",UUID=\"GPU-{:08x}-0000-0000-0000-{:012x}\",pci_bus_id=\"00000000:{:02X}:00."
          "0\","
          "device=\"nvidia{}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node{:04}\"",
          index, g, g, 0x18 + 0x10 * index, index, node, node);
      int64_t energy = 1000000;
      for (int s = 0; s < secondsLong; ++s) {
        const int power = 300 + (g * 7 + s * 13) % 400;
        double v = 0;
        switch (m) {
          case 0:
            v = power;
            break;
          case 1:
            v = 40 + (s + g) % 40;
            break;
          case 2:
            v = 1980 - 15 * ((s + g) % 10);
            break;
          case 3:
            v = 2619;
            break;
          case 4:
            v = (s * 3 + g) % 101;
            break;
          default:
            energy += power * 1000;
            v = static_cast<double>(energy);
            break;
        }
        line.clear();
        fmt::format_to(std::back_inserter(line), "{}{{{}}} {} {}\n", names[m], labels, v, kT0 + s);
        out << line;
      }
    }
  }
  out << "# EOF\n";
}

}  // namespace

int main(int argc, char** argv) {
  int gpus = 1024, secondsLong = 600, concurrency = 4;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "wattline-bench-prometheus";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--gpus")) gpus = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seconds")) secondsLong = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--concurrency")) concurrency = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--keep")) dir = argv[i + 1];
  }
  if (wl::test::findExecutable("prometheus").empty()) {
    std::fputs("prometheus is not installed (scripts/setup-debian.sh)\n", stderr);
    return 1;
  }
  std::filesystem::remove_all(dir / "server");
  std::filesystem::create_directories(dir);
  const size_t expected = static_cast<size_t>(gpus) * static_cast<size_t>(secondsLong) * 6;
  fmt::print("history: {} GPUs x {} s x 1 Hz x 6 metrics = {} samples\n", gpus, secondsLong,
             expected);

  auto t0 = Clock::now();
  writeHistory(dir / "history.om", gpus, secondsLong);
  auto t1 = Clock::now();
  fmt::print("OpenMetrics written: {:.1f} s, {:.0f} MB\n", seconds(t0, t1),
             static_cast<double>(std::filesystem::file_size(dir / "history.om")) / 1e6);
  wl::test::PrometheusServer server(dir / "history.om", dir / "server");
  auto t2 = Clock::now();
  fmt::print("promtool blocks + prometheus ready: {:.1f} s\n", seconds(t1, t2));
  std::filesystem::remove(dir / "history.om");

  wl::import::prom::Source src;
  src.url = server.url();
  src.start_ns = kT0 * 1'000'000'000;
  src.end_ns = (kT0 + secondsLong) * 1'000'000'000;
  src.concurrency = concurrency;
  wl::import::prom::FetchStats stats;
  const double cpu0 = cpuSeconds();
  auto t3 = Clock::now();
  wl::import::ImportRequest req;
  req.output = dir / "run.h5";
  req.remote.push_back({"prometheus:" + server.url(), "prometheus", [&](const wl::Progress& p) {
                          auto d = wl::import::prom::fetch(src, p, &stats);
                          fmt::print("fetched: {:.1f} s ({} queries, {} retries, {} splits)\n",
                                     seconds(t3, Clock::now()), stats.queries, stats.retries,
                                     stats.splits);
                          return d;
                        }});
  wl::import::ImportJob job(std::move(req));
  const wl::import::ImportSummary s = job.run();
  auto t4 = Clock::now();
  const double cpu = cpuSeconds() - cpu0;
  fmt::print("import (fetch + assemble + write {}): {:.1f} s wall, {:.1f} s CPU of this process\n",
             s.output.string(), seconds(t3, t4), cpu);
  const size_t written = s.telemetrySamples * 6;
  fmt::print("samples fetched {} / expected {}; GPUs {}; rows written {} x 6 metrics = {}\n",
             stats.samples, expected, s.gpus.size(), s.telemetrySamples, written);
  const bool ok = stats.samples == expected && written == expected &&
                  s.gpus.size() == static_cast<size_t>(gpus) && stats.missingWindows == 0;
  fmt::print("{}\n", ok ? "every sample accounted for" : "MISMATCH");
  server.stop();
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
