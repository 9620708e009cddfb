// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/synthetic_run.h"

#include <cmath>
#include <numbers>

#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_writer.h"

namespace wl::test {

SyntheticRun makeSyntheticRun(int nGpus, double seconds, int kernelsPerStream) {
  SyntheticRun r;
  const int64_t t0 = 1'700'000'000'000'000'000;  // 2023-11-14 22:13:20 UTC
  const int64_t dt = 50'000'000;                 // 50 ms
  const auto n = static_cast<int64_t>(seconds * 20);
  r.info.name = "synthetic";
  r.info.platform = "H100";
  r.info.model = "tiny-test";
  r.info.config.tp = 2;
  r.info.config.pp = 2;
  r.info.config.dp = 1;
  r.info.config.mbs = 1;
  r.info.config.gbs = 8;
  r.info.config.seq_len = 2048;
  r.info.config.nodes = nGpus > 2 ? 2 : 1;
  r.info.config.gpus_per_node = nGpus > 2 ? nGpus / 2 : nGpus;
  r.info.config.recompute = false;
  r.info.config.overlap = true;
  r.info.simulated = true;
  r.info.start_ns = t0;
  r.info.end_ns = t0 + n * dt;
  r.info.sample_interval_s = 0.05;
  r.info.created_by = "wattline tests";
  r.info.sources = {{"synthetic", "test", 0, "made by tests/support/synthetic_run.cpp"},
                    {"trace.json", "kineto", 1234, "rank 0"}};
  r.info.parameters_json = R"({"model":"sinusoidal test pattern"})";

  for (int g = 0; g < nGpus; ++g) {
    GpuInfo gi;
    gi.id = g;
    gi.node = nGpus > 2 ? g / (nGpus / 2) : 0;
    gi.local_index = nGpus > 2 ? g % (nGpus / 2) : g;
    gi.rank = g;
    gi.hostname = "node" + std::to_string(gi.node);
    gi.device_name = "NVIDIA H100 80GB HBM3";
    gi.uuid = "GPU-" + std::to_string(1000 + g);
    gi.power_limit_w = 700;
    gi.max_sm_clock_mhz = 1980;
    gi.max_mem_clock_mhz = 2619;
    gi.slowdown_temp_c = 87;
    gi.shutdown_temp_c = 92;
    gi.slot = gi.local_index;
    gi.package = g;
    r.gpus.push_back(gi);
    r.ranks.push_back({g, g, gi.hostname, 4000 + g, "trace.json"});

    TelemetryTable t;
    TelemetryColumn power{std::string(metric::kPower), {}};
    TelemetryColumn temp{std::string(metric::kTemp), {}};
    TelemetryColumn clock{std::string(metric::kSmClock), {}};
    TelemetryColumn util{std::string(metric::kUtil), {}};
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ts = t0 + i * dt;
      const double s = static_cast<double>(i * dt) * 1e-9;
      if (g == 2 && s >= 4.0 && s < 7.0) continue;  // a sampling gap
      t.t_ns.push_back(ts);
      double p = 300 + 10 * g + 100 * std::sin(2 * std::numbers::pi * s / 4.0);
      if (g == 1 && i == 37) p = 900;
      if (g == 3 && i == 10) p = kNaN;
      power.values.push_back(p);
      temp.values.push_back(std::floor(40 + g + 0.5 * s));
      const bool capped = g == 0 && s >= 5.0 && s < 6.0;
      clock.values.push_back(capped ? 1500 : 1980);
      util.values.push_back(100);
      t.throttle_reasons.push_back(capped ? throttle::kSwPowerCap : 0);
    }
    t.columns = {power, temp, clock, util};
    r.telemetry.push_back(std::move(t));
  }
  r.truthThrottle = {{0, t0 + 5'000'000'000, t0 + 6'000'000'000, throttle::kSwPowerCap}};
  r.truthEnergy.assign(static_cast<size_t>(nGpus), 0.0);

  // Node telemetry: CPU usage per node.
  for (int node = 0; node < (nGpus > 2 ? 2 : 1); ++node) {
    TelemetryTable t;
    TelemetryColumn cpu{"cpu_usage_pct", {}};
    for (int64_t i = 0; i < n; i += 4) {
      t.t_ns.push_back(t0 + i * dt);
      cpu.values.push_back(20 + node + static_cast<double>(i % 7));
    }
    t.columns = {cpu};
    r.nodeTelemetry.push_back(std::move(t));
  }

  // Kernels: two ranks (0 and 1), a compute stream and a communication stream each.
  const uint32_t gemm = r.names.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const uint32_t ew = r.names.intern("vectorized_elementwise_kernel");
  const uint32_t nccl = r.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const uint32_t memcpy = r.names.intern("Memcpy HtoD (Pageable -> Device)");
  const uint32_t allreduce = r.names.intern("allreduce");
  const uint32_t bf16 = r.names.intern("BFloat16");
  const uint32_t pg = r.names.intern("0");
  const uint32_t pgdesc = r.names.intern("default_pg");
  const uint32_t pgranks = r.names.intern("[0, 1]");
  const int64_t span = r.info.end_ns - r.info.start_ns;
  for (int rank = 0; rank < 2; ++rank) {
    KernelTrack compute{rank, 7, rank, {}, {}, {}};
    KernelTrack comm{rank, 13, rank, {}, {}, {}};
    const int64_t step = span / (kernelsPerStream + 1);
    for (int k = 0; k < kernelsPerStream; ++k) {
      const int64_t s = t0 + k * step;
      // Push out of order on purpose (reverse every 10th pair) to exercise the writer's sort.
      KernelEvent e{
          s,         step / 2, (k % 3 == 0) ? ew : gemm, KernelClass::Compute, GpuEventKind::Kernel,
          100000 + k};
      if (k % 10 == 0)
        e = {s, step / 4, memcpy, KernelClass::Memory, GpuEventKind::Memcpy, 200000 + k};
      compute.events.push_back(e);
      compute.truth_clock_mhz.push_back(1980.0f - static_cast<float>(k % 5));
      KernelEvent c{s + step / 4,         step / 2,  nccl, KernelClass::Communication,
                    GpuEventKind::Kernel, 300000 + k};
      comm.events.push_back(c);
      comm.truth_clock_mhz.push_back(1980.0f);
      comm.collectives.push_back(
          {static_cast<uint32_t>(k), allreduce, 1 << 20, 1 << 20, 2, bf16, pg, pgdesc, pgranks, k});
    }
    std::swap(compute.events[3], compute.events[4]);
    std::swap(compute.truth_clock_mhz[3], compute.truth_clock_mhz[4]);
    r.tracks.push_back(std::move(compute));
    r.tracks.push_back(std::move(comm));
    for (int it = 0; it < 3; ++it)
      r.iterations.push_back({rank, 10 + it, t0 + it * span / 3, t0 + (it + 1) * span / 3});
    r.annotations.push_back({rank, t0 + 1000, span / 2, r.names.intern("forward"), true});
  }
  r.notes.push_back({Severity::Info, "test_note", "run", "written by the format tests"});
  return r;
}

void writeSyntheticRun(const SyntheticRun& r, const std::filesystem::path& out,
                       const WriteOptions& options) {
  RunWriter w(out, r.info, r.gpus, r.ranks, options);
  w.setNodeCount(static_cast<int>(r.nodeTelemetry.size()));
  for (size_t g = 0; g < r.telemetry.size(); ++g)
    w.addGpuTelemetry(static_cast<int>(g), r.telemetry[g]);
  for (size_t n = 0; n < r.nodeTelemetry.size(); ++n)
    w.addNodeTelemetry(static_cast<int>(n), r.nodeTelemetry[n]);
  for (const KernelTrack& t : r.tracks)
    w.addKernelTrack(t, r.names);
  w.addIterations(r.iterations);
  w.addAnnotations(r.annotations, r.names);
  for (const QualityNote& q : r.notes)
    w.addQualityNote(q);
  w.setGroundTruth(r.truthThrottle, r.truthEnergy);
  w.finish();
}

}  // namespace wl::test
