// SPDX-License-Identifier: GPL-3.0-or-later
// The analyses at the design's scale: 1,024 GPUs x 1 h x 20 Hz of telemetry and 10^7 kernels
// (docs/performance.md, "Analyses"). The input is generated here with RunWriter from the model
// below (simulated data, labelled so in the file) and cached in $WATTLINE_BENCH_DIR (default: the
// system temp folder) because writing it takes minutes.
//
// Synthetic model (version 1):
// - 128 nodes x 8 GPUs (slot = index in the node, 0 front .. 7 rear), H100-like: 700 W limit,
//   1,980 MHz max SM clock, slowdown at 87 C. 1 h at 20 Hz: power_w, temp_c, sm_clock_mhz,
//   mem_clock_mhz, util_pct and the NVML throttle-reason mask.
// - Idle for the first 60 s and the last 30 s (80 W, 345 MHz, 0 %). In between, 1.2 s
//   iterations: 1.0 s compute (650 W) then 0.2 s communication (350 W), utilization 100 % with a
//   95 % dip at each iteration boundary, power noise +-15 W from a hash of (GPU, sample).
// - Temperature follows power through a first-order model, tau = 30 s, 0.07 C/W, ambient
//   30 C + 1.5 C per slot: rear GPUs (slot 7) cross 87 C and throttle (SW thermal bit, 1,650 MHz,
//   power down to 560 W) until they cool to 85 C.
// - One GPU in 16 makes a power excursion every 5 min (3 samples at 720 W, SW power cap bit,
//   1,800 MHz).
// - Kernels: ranks 0-15 (GPUs 0-15), a compute stream (200 kernels of 40 names per iteration,
//   back to back with 2-7 us gaps) and a communication stream (8 NCCL kernels per iteration; the
//   last is an all-reduce with collective metadata, pg "0", seq = iteration; rear-slot ranks
//   arrive 3 ms late), ProfilerStep iterations: 16 x 3,000 x 208 = 9.98 M events.
//
// Run: ./build/bench/bench_analysis --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/analysis_options.h"
#include "analysis/burstiness.h"
#include "analysis/gaps.h"
#include "analysis/range_summary.h"
#include "analysis/run_analysis.h"
#include "analysis/telemetry_stats.h"
#include "analysis/thermal_response.h"
#include "analysis/throttle_detection.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"

namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kStep = 50'000'000;  // 20 Hz
constexpr int64_t kSamples = 72'000;   // 1 h
constexpr int kRanks = 16;
constexpr int kModelVersion = 1;

double noise(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 29;
  return static_cast<double>(x % 20001) / 10000.0 - 1.0;  // [-1, 1]
}

std::filesystem::path benchDir() {
  const char* d = std::getenv("WATTLINE_BENCH_DIR");
  return d ? std::filesystem::path(d) : std::filesystem::temp_directory_path();
}

wl::TelemetryTable gpuTelemetry(int g) {
  wl::TelemetryTable t;
  t.t_ns.resize(kSamples);
  t.columns = {{"power_w", std::vector<double>(kSamples)},
               {"temp_c", std::vector<double>(kSamples)},
               {"sm_clock_mhz", std::vector<double>(kSamples)},
               {"mem_clock_mhz", std::vector<double>(kSamples)},
               {"util_pct", std::vector<double>(kSamples)}};
  t.throttle_reasons.assign(kSamples, 0);
  const int slot = g % 8;
  const double ambient = 30.0 + 1.5 * slot;
  const double decay = std::exp(-0.05 / 30.0);
  double temp = ambient + 0.07 * 80;
  bool hot = false;
  for (int64_t i = 0; i < kSamples; ++i) {
    const double s = static_cast<double>(i) * 0.05;
    t.t_ns[static_cast<size_t>(i)] = kT0 + i * kStep;
    double power = 80, clock = 345, util = 0;
    uint32_t mask = wl::throttle::kGpuIdle;
    if (s >= 60 && s < 3570) {
      const double ph = std::fmod(s - 60, 1.2);
      power =
          (ph < 1.0 ? 650 : 350) + 15 * noise(static_cast<uint64_t>(g), static_cast<uint64_t>(i));
      util = ph < 0.05 ? 95 : 100;
      clock = 1980;
      mask = 0;
      if (temp >= 87) hot = true;
      if (temp <= 85) hot = false;
      if (hot) {
        clock = 1650;
        power = std::min(power, 560.0);
        mask = wl::throttle::kSwThermal;
      }
      if (g % 16 == 5 && std::fmod(s, 300) < 0.15) {
        power = 720;
        clock = 1800;
        mask |= wl::throttle::kSwPowerCap;
      }
    }
    const auto k = static_cast<size_t>(i);
    t.columns[0].values[k] = std::round(power * 100) / 100;
    t.columns[1].values[k] = std::round(temp);
    t.columns[2].values[k] = clock;
    t.columns[3].values[k] = util > 0 ? 2619 : 1593;
    t.columns[4].values[k] = util;
    t.throttle_reasons[k] = mask;
    const double target = ambient + 0.07 * power;
    temp = target + (temp - target) * decay;
  }
  return t;
}

void addKernels(wl::RunWriter& w, wl::StringTable& names) {
  std::vector<uint32_t> compute;
  for (int i = 0; i < 40; ++i)
    compute.push_back(names.intern(
        i % 3 == 0   ? "sm90_xmma_gemm_bf16bf16_bf16f32_" + std::to_string(i)
        : i % 3 == 1 ? "void at::native::vectorized_elementwise_kernel_" + std::to_string(i)
                     : "triton_poi_fused_add_mul_" + std::to_string(i)));
  const uint32_t ar = names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const uint32_t ag = names.intern("ncclDevKernel_AllGather_RING_LL");
  const uint32_t allreduce = names.intern("allreduce");
  const uint32_t pg = names.intern("0");
  const uint32_t pgRanks = names.intern("[0, ..., 15]");
  const uint32_t bf16 = names.intern("BFloat16");
  std::vector<wl::Iteration> iterations;
  for (int r = 0; r < kRanks; ++r) {
    wl::KernelTrack comp{r, 7, r, {}, {}, {}}, comm{r, 13, r, {}, {}, {}};
    comp.events.reserve(3000 * 200);
    comm.events.reserve(3000 * 8);
    for (int it = 0; it < 3000; ++it) {
      const int64_t base = kT0 + 60'000'000'000 + static_cast<int64_t>(it) * 1'200'000'000;
      int64_t at = base + 20'000;
      for (int k = 0; k < 200; ++k) {
        const auto n = static_cast<uint64_t>(it) * 200 + static_cast<uint64_t>(k);
        const int64_t dur = 2'000'000 + static_cast<int64_t>(1'900'000 * noise(r, n));
        comp.events.push_back({at, dur, compute[n % 40], wl::KernelClass::Compute,
                               wl::GpuEventKind::Kernel, static_cast<int64_t>(n)});
        at += dur + 2'000 + static_cast<int64_t>(2'500 * (1 + noise(r + 99, n)));
      }
      for (int k = 0; k < 8; ++k) {
        const bool last = k == 7;
        const int64_t late = last && r % 8 == 7 ? 3'000'000 : 0;
        const int64_t start = base + 100'000'000 * (k + 3) + late +
                              static_cast<int64_t>(1'000'000 * (1 + noise(r + 7, it * 8 + k)));
        comm.events.push_back({start, 20'000'000, last ? ar : ag, wl::KernelClass::Communication,
                               wl::GpuEventKind::Kernel, -1});
        if (last)
          comm.collectives.push_back({static_cast<uint32_t>(comm.events.size() - 1), allreduce,
                                      1 << 24, 1 << 24, kRanks, bf16, pg, pg, pgRanks, it});
      }
      iterations.push_back({r, it, base, base + 1'200'000'000});
    }
    w.addKernelTrack(std::move(comp), names);
    w.addKernelTrack(std::move(comm), names);
  }
  w.addIterations(iterations);
}

// Writes (once) a run of `gpus` GPUs following the model; kernels only when withKernels.
std::filesystem::path benchRun(int gpus, bool withKernels) {
  const auto path = benchDir() / ("wattline-bench-analysis-v" + std::to_string(kModelVersion) +
                                  "-" + std::to_string(gpus) + (withKernels ? "k" : "") + ".h5");
  if (std::filesystem::exists(path)) return path;
  wl::RunInfo info;
  info.name = "bench-analysis-" + std::to_string(gpus);
  info.platform = "H100";
  info.simulated = true;
  info.start_ns = kT0;
  info.end_ns = kT0 + kSamples * kStep;
  info.sample_interval_s = 0.05;
  info.config.gbs = 1024;
  info.config.seq_len = 4096;
  info.config.nodes = gpus / 8;
  info.config.gpus_per_node = 8;
  info.created_by = "bench_analysis";
  info.parameters_json = R"({"model":"bench_analysis synthetic model v1"})";
  std::vector<wl::GpuInfo> gi(static_cast<size_t>(gpus));
  std::vector<wl::RankInfo> ranks;
  for (int g = 0; g < gpus; ++g) {
    auto& x = gi[static_cast<size_t>(g)];
    x.id = g;
    x.node = g / 8;
    x.local_index = g % 8;
    x.slot = g % 8;
    x.rank = g < kRanks ? g : -1;
    x.hostname = "node" + std::to_string(g / 8);
    x.power_limit_w = 700;
    x.max_sm_clock_mhz = 1980;
    x.slowdown_temp_c = 87;
  }
  if (withKernels)
    for (int r = 0; r < kRanks; ++r)
      ranks.push_back({r, r, "node" + std::to_string(r / 8), -1, "bench"});
  wl::RunWriter w(path, info, gi, ranks);
  for (int g = 0; g < gpus; ++g)
    w.addGpuTelemetry(g, gpuTelemetry(g));
  wl::StringTable names;
  if (withKernels) addKernels(w, names);
  w.finish();
  return path;
}

const std::filesystem::path& bigRun() {
  static const std::filesystem::path p = benchRun(1024, true);
  return p;
}
const std::filesystem::path& run64() {
  static const std::filesystem::path p = benchRun(64, true);
  return p;
}

std::vector<int> allGpus(const wl::RunFile& run) {
  std::vector<int> g(run.gpus().size());
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = static_cast<int>(i);
  return g;
}

// The whole report over the whole run (default options: raw-only analyses within the budget).
void BM_AnalyzeRun(benchmark::State& state) {
  const auto run = wl::RunFile::open(bigRun());
  for (auto _ : state)
    benchmark::DoNotOptimize(wl::analyzeRun(*run));
}
BENCHMARK(BM_AnalyzeRun)->Unit(benchmark::kMillisecond)->Iterations(3);

// Each analysis alone, the file opened afresh (cold HDF5 chunk caches) every iteration.
template <typename F>
void coldRun(benchmark::State& state, F f) {
  for (auto _ : state) {
    state.PauseTiming();
    const auto run = wl::RunFile::open(bigRun());
    const auto gpus = allGpus(*run);
    state.ResumeTiming();
    f(*run, gpus);
  }
}

void BM_TelemetryStats(benchmark::State& state) {
  coldRun(state, [](const wl::RunFile& run, const std::vector<int>& gpus) {
    for (const char* m : {"power_w", "temp_c", "sm_clock_mhz", "mem_clock_mhz", "util_pct"})
      benchmark::DoNotOptimize(wl::metricStats(run, m, gpus, wl::TimeRange{}));
  });
}
BENCHMARK(BM_TelemetryStats)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Gaps(benchmark::State& state) {
  coldRun(state, [](const wl::RunFile& run, const std::vector<int>& gpus) {
    benchmark::DoNotOptimize(wl::findGaps(run, "power_w", gpus));
  });
}
BENCHMARK(BM_Gaps)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ThrottleDetection(benchmark::State& state) {
  coldRun(state, [](const wl::RunFile& run, const std::vector<int>& gpus) {
    benchmark::DoNotOptimize(wl::detectThrottle(run, gpus, wl::TimeRange{}, {}));
  });
}
BENCHMARK(BM_ThrottleDetection)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_BurstinessPyramid(benchmark::State& state) {
  coldRun(state, [](const wl::RunFile& run, const std::vector<int>& gpus) {
    const auto p = wl::metricStats(run, "power_w", gpus, wl::TimeRange{});
    benchmark::DoNotOptimize(wl::analyzeBurstiness(run, gpus, p, wl::TimeRange{}, false));
  });
}
BENCHMARK(BM_BurstinessPyramid)->Unit(benchmark::kMillisecond)->Iterations(3);

// |dP/dt| percentiles need every raw power sample: 73.7 M here.
void BM_BurstinessRawDpdt(benchmark::State& state) {
  coldRun(state, [](const wl::RunFile& run, const std::vector<int>& gpus) {
    const auto p = wl::metricStats(run, "power_w", gpus, wl::TimeRange{});
    benchmark::DoNotOptimize(wl::analyzeBurstiness(run, gpus, p, wl::TimeRange{}, true));
  });
}
BENCHMARK(BM_BurstinessRawDpdt)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_ThermalFits(benchmark::State& state) {
  coldRun(state, [](const wl::RunFile& run, const std::vector<int>& gpus) {
    benchmark::DoNotOptimize(wl::thermalFits(run, gpus, wl::TimeRange{}, {}));
  });
}
BENCHMARK(BM_ThermalFits)->Unit(benchmark::kMillisecond)->Iterations(3);

// Kernel breakdown, kernel table, categories, iterations and stragglers over the 10^7 kernels
// (the report with no GPU telemetry in scope).
void BM_KernelAnalyses(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    const auto run = wl::RunFile::open(bigRun());
    wl::AnalysisScope scope;
    scope.gpus = {0};
    state.ResumeTiming();
    benchmark::DoNotOptimize(wl::analyzeRun(*run, scope));
  }
}
BENCHMARK(BM_KernelAnalyses)->Unit(benchmark::kMillisecond)->Iterations(3);

// The timeline's selection summary on a 64-GPU run: all 64 GPUs and 16 ranks, a 5-minute
// selection that moves by 7 s per call (warm: what dragging a selection costs), and cold.
void BM_SummarizeRange64(benchmark::State& state) {
  const auto run = wl::RunFile::open(run64());
  const auto gpus = allGpus(*run);
  std::vector<int> ranks(kRanks);
  for (int r = 0; r < kRanks; ++r)
    ranks[static_cast<size_t>(r)] = r;
  int64_t at = kT0 + 600'000'000'000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(wl::summarizeRange(*run, at, at + 300'000'000'000, gpus, ranks));
    at += 7'000'000'000;
  }
}
BENCHMARK(BM_SummarizeRange64)->Unit(benchmark::kMillisecond)->Iterations(20);

void BM_SummarizeRange64Cold(benchmark::State& state) {
  std::vector<int> ranks(kRanks);
  for (int r = 0; r < kRanks; ++r)
    ranks[static_cast<size_t>(r)] = r;
  int64_t at = kT0 + 600'000'000'000;
  for (auto _ : state) {
    state.PauseTiming();
    const auto run = wl::RunFile::open(run64());
    const auto gpus = allGpus(*run);
    state.ResumeTiming();
    benchmark::DoNotOptimize(wl::summarizeRange(*run, at, at + 300'000'000'000, gpus, ranks));
    at += 97'000'000'000;
  }
}
BENCHMARK(BM_SummarizeRange64Cold)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_AnalyzeRun64(benchmark::State& state) {
  const auto run = wl::RunFile::open(run64());
  for (auto _ : state)
    benchmark::DoNotOptimize(wl::analyzeRun(*run));
}
BENCHMARK(BM_AnalyzeRun64)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
