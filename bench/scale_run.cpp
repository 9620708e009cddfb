// SPDX-License-Identifier: GPL-3.0-or-later
#include "scale_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_writer.h"

namespace wl::bench {

std::filesystem::path benchDir() {
  const char* d = std::getenv("WATTLINE_BENCH_DIR");
  return d && *d ? std::filesystem::path(d) : std::filesystem::temp_directory_path();
}

std::filesystem::path scaleRun(const ScaleSpec& s) {
  const int traced = s.tracedRanks > 0 ? std::min(s.tracedRanks, s.gpus) : s.gpus;
  // Runs with every rank traced keep their earlier names (and caches).
  const std::string tracedPart = traced == s.gpus ? "" : fmt::format("-{}r", traced);
  const auto path = benchDir() / fmt::format("wattline-bench-v2-{}gpu-{}s-{}hz-{}m-{}k{}.h5",
                                             s.gpus, static_cast<long>(s.seconds), s.hz, s.metrics,
                                             s.kernelsTotal, tracedPart);
  if (std::filesystem::exists(path)) return path;
  std::fprintf(stderr, "writing benchmark run %s ...\n", path.c_str());
  const int64_t t0 = 1'700'000'000'000'000'000;
  const auto n = static_cast<int64_t>(s.seconds * s.hz);
  const auto dt = static_cast<int64_t>(1e9 / s.hz);
  RunInfo info;
  info.name = fmt::format("bench-{}gpu", s.gpus);
  info.platform = "H100";
  info.simulated = true;
  info.start_ns = t0;
  info.end_ns = t0 + n * dt + 1'000'000'000;
  info.sample_interval_s = 1.0 / s.hz;
  info.parameters_json = R"({"model":"bench/scale_run.h"})";
  std::vector<GpuInfo> gpus(static_cast<size_t>(s.gpus));
  std::vector<RankInfo> ranks;
  for (int g = 0; g < s.gpus; ++g) {
    gpus[static_cast<size_t>(g)].node = g / 8;
    gpus[static_cast<size_t>(g)].local_index = g % 8;
    gpus[static_cast<size_t>(g)].rank = g;
    gpus[static_cast<size_t>(g)].device_name = "NVIDIA H100 80GB HBM3";
    if (g < traced) ranks.push_back({g, g, "", -1, ""});
  }
  WriteOptions opt;
  opt.deflate = 1;  // faster to write; reading costs about the same
  // Elements per chunk (the writer's default unless set): for studies of the chunk size. The file
  // name does not say it, so use a separate WATTLINE_BENCH_DIR per size.
  if (const char* c = std::getenv("WATTLINE_BENCH_CHUNK"); c && std::atoll(c) > 0)
    opt.chunk = static_cast<size_t>(std::atoll(c));
  RunWriter w(path, info, gpus, ranks, opt);
  const char* ids[] = {"power_w",       "temp_c",   "sm_clock_mhz",
                       "mem_clock_mhz", "util_pct", "mem_util_pct"};
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0.0, 8.0);
  for (int g = 0; g < s.gpus; ++g) {
    TelemetryTable t;
    t.t_ns.resize(static_cast<size_t>(n));
    std::vector<std::vector<double>> cols(static_cast<size_t>(s.metrics),
                                          std::vector<double>(static_cast<size_t>(n)));
    t.throttle_reasons.resize(static_cast<size_t>(n));
    double temp = 35;
    for (int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<size_t>(i);
      t.t_ns[k] = t0 + i * dt;
      const double sec = static_cast<double>(i) / s.hz;
      const double busy = std::fmod(sec + g * 0.37, 30.0) < 26.0 ? 1.0 : 0.15;
      const bool capped = std::fmod(sec * 7.3 + g, 1000.0) < 10.0;
      double p = 300 + 350 * busy + noise(rng);
      if (rng() % 200000 == 0) p = 1100;  // rare one-sample spike
      temp += (35 + 0.06 * p + g % 8 - temp) * (1.0 / (30.0 * s.hz));
      const double vals[] = {p,      std::round(temp), capped ? 1500.0 : 1980.0,
                             2619.0, busy * 100,       busy * 60};
      for (int m = 0; m < s.metrics; ++m)
        cols[static_cast<size_t>(m)][k] = vals[m];
      t.throttle_reasons[k] = capped ? throttle::kSwPowerCap : 0;
    }
    for (int m = 0; m < s.metrics; ++m)
      t.columns.push_back({ids[m], std::move(cols[static_cast<size_t>(m)])});
    w.addGpuTelemetry(g, std::move(t));
  }
  StringTable names;
  const uint32_t gemm = names.intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
  const uint32_t ew = names.intern("void at::native::vectorized_elementwise_kernel<4>");
  const uint32_t nccl = names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const long perTrack = s.kernelsTotal / (2L * traced);
  for (int g = 0; g < traced; ++g) {
    for (int stream = 0; stream < 2; ++stream) {
      KernelTrack tr{g, stream == 0 ? 7 : 13, g, {}, {}, {}};
      tr.events.reserve(static_cast<size_t>(perTrack));
      const double avg = s.seconds * 1e9 / static_cast<double>(perTrack);
      double now = static_cast<double>(t0) + 1e6 * stream;
      for (long k = 0; k < perTrack; ++k) {
        const double dur = avg * (stream == 0 ? 0.7 : 0.3) *
                           (0.3 + 1.4 * static_cast<double>(rng() % 1000) / 1000.0);
        KernelEvent e;
        e.start_ns = static_cast<int64_t>(now);
        e.dur_ns = static_cast<int64_t>(dur);
        e.name = stream == 1 ? nccl : (k % 3 ? gemm : ew);
        e.cls = stream == 1 ? KernelClass::Communication : KernelClass::Compute;
        e.correlation = k;
        tr.events.push_back(e);
        now += avg;
      }
      w.addKernelTrack(std::move(tr), names);
    }
  }
  w.finish();
  return path;
}

}  // namespace wl::bench
