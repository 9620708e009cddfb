// SPDX-License-Identifier: GPL-3.0-or-later
// The simulator: simulated GPU-seconds per second (telemetry only) and kernels per second (all
// ranks traced), each including writing the run file.
// Run: ./build/bench/bench_simulate --benchmark_min_time=1
// The scale runs (64 GPUs x 1 h with 10^7 kernels, 1,024 GPUs x 1 h) are commands, timed in
// docs/performance.md and docs/simulator.md.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"

namespace {

std::filesystem::path tempFile(const char* name) {
  return std::filesystem::temp_directory_path() / name;
}

wl::sim::SimConfig config(int nodes, double seconds, bool traced) {
  wl::sim::SimConfig c;
  c.platform = *wl::sim::findProfile("h100");
  c.model = *wl::sim::findModel("Llama3-70B");
  c.nodes = nodes;
  c.gpusPerNode = 8;
  c.tp = 8;
  c.pp = nodes > 1 ? 2 : 1;
  c.dp = nodes * 8 / (c.tp * c.pp);
  c.mbs = 1;
  c.gbs = c.dp * 16;
  c.seqLen = 4096;
  c.durationS = seconds;
  c.seed = 1;
  c.trace.ranks =
      traced ? wl::sim::TraceSelection::Ranks::All : wl::sim::TraceSelection::Ranks::None;
  c.trace.steps = wl::sim::TraceSelection::Steps::All;
  return c;
}

// 64 GPUs x 60 s of telemetry at 20 Hz, no kernel traces.
void BM_SimulateTelemetry64Gpus(benchmark::State& state) {
  const auto path = tempFile("wattline-bench-sim-telemetry.h5");
  for (auto _ : state) {
    const auto s = wl::sim::simulate(config(8, 60, false), path);
    benchmark::DoNotOptimize(s.samples);
  }
  state.counters["gpu_s_per_s"] =
      benchmark::Counter(64.0 * 64.0, benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(path);
}
BENCHMARK(BM_SimulateTelemetry64Gpus)->Unit(benchmark::kMillisecond);

// One 8-GPU node x 20 s with every rank traced.
void BM_SimulateKernels8Gpus(benchmark::State& state) {
  const auto path = tempFile("wattline-bench-sim-kernels.h5");
  uint64_t kernels = 0;
  for (auto _ : state) {
    const auto s = wl::sim::simulate(config(1, 20, true), path);
    kernels = s.kernels;
  }
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["kernels_per_s"] = benchmark::Counter(
      static_cast<double>(kernels), benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(path);
}
BENCHMARK(BM_SimulateKernels8Gpus)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
