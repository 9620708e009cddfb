// SPDX-License-Identifier: GPL-3.0-or-later
// The phased test runs of the two-run comparison tests (model in phased_run.h).
#include "phased_run.h"

#include <cmath>
#include <numeric>

#include "analysis_test_util.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"

namespace wl::test {

std::array<int64_t, 4> phasedStepBounds(const PhasedRunSpec& s, size_t k) {
  int64_t t = s.start + s.leadNs;
  for (size_t i = 0; i < k; ++i)
    t += s.stepNs[i];
  const int64_t len = s.stepNs[k];
  auto whole = [&](double share) {
    return std::llround(share * static_cast<double>(len) / static_cast<double>(s.sampleNs)) *
           s.sampleNs;
  };
  const int64_t fwd = whole(s.phaseShare[0]), bwd = whole(s.phaseShare[1]);
  return {t, t + fwd, t + fwd + bwd, t + len};
}

namespace {

// The phase (0 forward, 1 backward, 2 optimizer, 3 idle) of rank / GPU g at t, and its step.
std::pair<int, size_t> phaseAt(const PhasedRunSpec& s, int g, int64_t t) {
  const int64_t skew = s.rankSkewNs * g;
  for (size_t k = 0; k < s.stepNs.size(); ++k) {
    const auto b = phasedStepBounds(s, k);
    if (t < b[0] + skew) break;
    for (int p = 0; p < 3; ++p)
      if (t < b[static_cast<size_t>(p) + 1] + skew) return {p, k};
  }
  return {3, 0};
}

int64_t runEnd(const PhasedRunSpec& s) {
  return s.start + s.leadNs + std::accumulate(s.stepNs.begin(), s.stepNs.end(), int64_t{0}) +
         s.tailNs;
}

}  // namespace

double phasedPower(const PhasedRunSpec& s, int gpu, int64_t t) {
  return s.phasePowerW[static_cast<size_t>(phaseAt(s, gpu, t).first)] + 10.0 * gpu;
}

std::shared_ptr<const RunFile> writePhasedRun(const PhasedRunSpec& s,
                                              const std::filesystem::path& out) {
  RunSpec r = baseRun(s.gpus, 1.0);
  RunInfo& info = r.info;
  info.name = s.name;
  info.model = "phased-test";
  info.config = s.config;
  info.start_ns = s.start;
  info.end_ns = runEnd(s);
  info.sample_interval_s = static_cast<double>(s.sampleNs) * 1e-9;
  for (int g = 0; g < s.gpus; ++g) {
    TelemetryTable t = sampled(s.start, info.end_ns + 1, s.sampleNs,
                               {std::string(metric::kPower), std::string(metric::kTemp),
                                std::string(metric::kSmClock), std::string(metric::kUtil)},
                               [&](size_t m, int64_t ts) {
                                 const auto [phase, step] = phaseAt(s, g, ts);
                                 const double p = phasedPower(s, g, ts);
                                 const bool throttled = g == 0 && phase == 1 &&
                                                        static_cast<int>(step) == s.throttleStep;
                                 const double v[4] = {p, 30 + p / 20, throttled ? 1500.0 : 1980.0,
                                                      phase == 3 ? 0.0 : 100.0};
                                 return v[m];
                               });
    for (size_t i = 0; i < t.t_ns.size(); ++i)
      t.throttle_reasons.push_back(t.columns[2].values[i] < 1980 ? throttle::kSwPowerCap : 0);
    r.telemetry.push_back(std::move(t));
  }
  const uint32_t phaseName[3] = {r.names.intern("forward"), r.names.intern("backward"),
                                 r.names.intern("optimizer")};
  const uint32_t gemm = r.names.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const uint32_t nccl = r.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  for (int g = 0; g < s.gpus; ++g) {
    const int64_t skew = s.rankSkewNs * g;
    KernelTrack compute{g, 7, g, {}, {}, {}};
    KernelTrack comm{g, 13, g, {}, {}, {}};
    for (size_t k = 0; k < s.stepNs.size(); ++k) {
      const auto b = phasedStepBounds(s, k);
      r.iterations.push_back({g, s.firstStep + static_cast<int64_t>(k), b[0] + skew, b[3] + skew});
      if (s.annotations)
        for (size_t p = 0; p < 3; ++p)
          r.annotations.push_back({g, b[p] + skew, b[p + 1] - b[p], phaseName[p], true});
      compute.events.push_back(
          {b[0] + skew, b[1] - b[0], gemm, KernelClass::Compute, GpuEventKind::Kernel, -1});
      compute.events.push_back(
          {b[1] + skew, b[2] - b[1], gemm, KernelClass::Compute, GpuEventKind::Kernel, -1});
      comm.events.push_back({b[2] + skew, (b[3] - b[2]) / 2, nccl, KernelClass::Communication,
                             GpuEventKind::Kernel, -1});
    }
    if (s.kernels) {
      r.tracks.push_back(std::move(compute));
      r.tracks.push_back(std::move(comm));
    }
  }
  return writeAndOpen(r, out);
}

}  // namespace wl::test
