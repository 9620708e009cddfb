// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/whatif.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "analysis/gpu_series.h"
#include "analysis/kernel_categories.h"
#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_file.h"

namespace wl {
namespace {

constexpr double kNsPerS = 1e9;
constexpr uint32_t kLimitBits = throttle::kSwPowerCap | throttle::kSwThermal |
                                throttle::kHwSlowdown | throttle::kHwThermal |
                                throttle::kHwPowerBrake;

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

using Series = GpuSeries;

// The GPU's series; empty when the run has no temperature, on whose samples the others lie.
Series readSeries(const RunFile& run, size_t gpu) {
  if (!run.series().metric(metric::kTemp)) return {};
  return readGpuSeries(run, gpu);
}

uint32_t reasonAt(const Series& s, size_t i) {
  return i < s.reasons.size() && s.reasons[i] != throttle::kUnknown ? s.reasons[i] : 0u;
}

// Busy time of the four compute classes of one rank (merged intervals, s since the run start).
struct Busy {
  std::vector<double> start, end, before;
  double in(double a, double b) const {
    if (start.empty() || b <= a) return 0;
    auto cum = [&](double t) {
      const auto it = std::upper_bound(start.begin(), start.end(), t);
      if (it == start.begin()) return 0.0;
      const size_t i = static_cast<size_t>(it - start.begin()) - 1;
      return before[i] + std::min(t, end[i]) - start[i];
    };
    return cum(b) - cum(a);
  }
};
constexpr size_t kComputeClasses = 4;  // matmul, attention, norm, elementwise
using RankBusy = std::array<Busy, kComputeClasses>;

size_t classIndex(KernelCategory c) {
  switch (c) {
    case KernelCategory::MatMul:
      return 0;
    case KernelCategory::Attention:
      return 1;
    case KernelCategory::LayerNorm:
      return 2;
    case KernelCategory::AllReduce:
    case KernelCategory::ReduceScatter:
    case KernelCategory::AllGather:
    case KernelCategory::SendRecv:
    case KernelCategory::Communication:
      return kComputeClasses;
    default:
      return 3;
  }
}

RankBusy readRank(const RunFile& run, int rank) {
  std::array<std::vector<std::pair<double, double>>, kComputeClasses> iv;
  const int64_t t0 = run.info().start_ns;
  for (size_t tr = 0; tr < run.tracks().size(); ++tr) {
    if (run.tracks()[tr].rank != rank) continue;
    for (const KernelEvent& e : run.readAllKernels(tr)) {
      if (e.dur_ns <= 0) continue;
      const size_t c = classIndex(correctedCategory(run.str(e.name), e.cls, e.kind));
      if (c >= kComputeClasses) continue;
      const double a = static_cast<double>(e.start_ns - t0) / kNsPerS;
      iv[c].emplace_back(a, a + static_cast<double>(e.dur_ns) / kNsPerS);
    }
  }
  RankBusy out;
  for (size_t c = 0; c < kComputeClasses; ++c) {
    std::sort(iv[c].begin(), iv[c].end());
    Busy& b = out[c];
    double total = 0;
    for (const auto& [a, e] : iv[c]) {
      if (!b.end.empty() && a <= b.end.back()) {
        if (e > b.end.back()) total += e - b.end.back(), b.end.back() = e;
        continue;
      }
      b.before.push_back(total), b.start.push_back(a), b.end.push_back(e);
      total += e - a;
    }
  }
  return out;
}

// The whole iterations of the run (every rank that reports iterations finished them).
struct Window {
  double a = kNaN, b = kNaN;  // s since the run start
  int steps = 0;
  std::vector<std::pair<double, double>> spans;  // each whole iteration's, by step
};

Window wholeIterations(const RunFile& run) {
  std::map<int64_t, std::pair<int64_t, int64_t>> span;
  std::map<int64_t, int> ranks;
  std::vector<int> rankIds;
  for (const Iteration& it : run.iterations()) {
    auto [pos, fresh] = span.try_emplace(it.step, it.start_ns, it.end_ns);
    if (!fresh)
      pos->second.first = std::min(pos->second.first, it.start_ns),
      pos->second.second = std::max(pos->second.second, it.end_ns);
    ++ranks[it.step];
    rankIds.push_back(it.rank);
  }
  std::sort(rankIds.begin(), rankIds.end());
  const int world = static_cast<int>(std::unique(rankIds.begin(), rankIds.end()) - rankIds.begin());
  Window w;
  const int64_t t0 = run.info().start_ns;
  for (const auto& [step, se] : span) {
    if (ranks[step] < world) continue;
    const double a = static_cast<double>(se.first - t0) / kNsPerS;
    const double b = static_cast<double>(se.second - t0) / kNsPerS;
    w.a = std::isnan(w.a) ? a : std::min(w.a, a);
    w.b = std::isnan(w.b) ? b : std::max(w.b, b);
    w.spans.emplace_back(a, b);
    ++w.steps;
  }
  if (w.steps == 0)
    throw Error(
        fmt::format("{}: cannot project: the run has no whole iteration (the step time "
                    "needs ProfilerStep annotations or simulator iterations)",
                    run.path().string()));
  return w;
}

double tokensPerStep(const RunFile& run) {
  const ParallelConfig& c = run.info().config;
  return c.gbs && c.seq_len ? static_cast<double>(*c.gbs) * *c.seq_len : kNaN;
}

// Sample i's share of the window [a, b] (sample and hold: it stands for (t[i-1], t[i]]).
double heldSpan(const Series& s, size_t i, double a, double b) {
  const double lo = std::max(a, i ? s.t[i - 1] : s.t[i]), hi = std::min(b, s.t[i]);
  return std::max(0.0, hi - lo);
}

struct Perturbation {
  double powerSd = 0;        // the cap holds this many power-fit rms errors more
  double sensitivitySd = 0;  // clock sensitivities shifted by this many spreads
};

// Everything the replay needs of the run, read once.
struct Inputs {
  const Calibration* cal = nullptr;
  Window window;
  double tokens = kNaN;
  std::vector<Series> series;
  std::vector<RankBusy> busy;              // per GPU (its rank's kernels)
  std::vector<std::vector<double>> share;  // per GPU, per class and sample: busy time in (t-1, t]
  std::array<double, kComputeClasses> sensitivity{}, spread{};
  double capFrac = 1.0;
  double thermalThresholdC = kNaN;  // where the SW thermal slowdown starts
  double thermalPerC = kNaN;        // clock ratio lost per degree above it
  double inletC = kNaN;             // the measured setting's inlet
  double pipelineFactor = 1.0;      // (m + p - 1) / m
  std::vector<std::string> notes;
};

Inputs readInputs(const RunFile& run, const Calibration& cal) {
  Inputs in;
  in.cal = &cal;
  in.window = wholeIterations(run);
  in.tokens = tokensPerStep(run);
  const size_t n = run.gpus().size();
  if (cal.gpus.size() != n)
    throw Error(fmt::format("{}: cannot project: the calibration has {} GPUs, the run {}",
                            run.path().string(), cal.gpus.size(), n));
  std::map<int, RankBusy> rankBusy;
  for (size_t g = 0; g < n; ++g) {
    in.series.push_back(readSeries(run, g));
    const int rank = run.gpus()[g].rank;
    if (rank >= 0 && !rankBusy.count(rank)) rankBusy[rank] = readRank(run, rank);
    in.busy.push_back(rank >= 0 ? rankBusy[rank] : RankBusy{});
    const Series& s = in.series.back();
    if (s.t.empty() ||
        std::all_of(s.clock.begin(), s.clock.end(), [](double v) { return std::isnan(v); }))
      throw Error(
          fmt::format("{}: cannot project: GPU {} has no temperature or SM clock "
                      "telemetry",
                      run.path().string(), g));
  }
  for (const ClassResponse& r : cal.classes) {
    const size_t c = static_cast<size_t>(r.cls);
    if (c >= kComputeClasses) continue;
    const bool compute = r.cls == ActivityClass::Matmul || r.cls == ActivityClass::Attention;
    in.sensitivity[c] = std::isfinite(r.clock_sensitivity)
                            ? std::clamp(r.clock_sensitivity, 0.0, 1.0)
                            : (compute ? 1.0 : 0.0);
    in.spread[c] = std::isfinite(r.spread) ? r.spread : 0.0;
    if (!std::isfinite(r.clock_sensitivity))
      in.notes.push_back(fmt::format("{}: no clock sensitivity fitted; {} assumed",
                                     activityClassId(r.cls), compute ? 1 : 0));
  }
  // The power the cap holds over the limit: the GPUs capped steadily; 1 where none was.
  std::vector<double> fr, thr, slope, inlets;
  for (const GpuCalibration& g : cal.gpus) {
    if (g.governor.steady_capped_samples >= 20 && std::isfinite(g.governor.cap_power_frac))
      fr.push_back(g.governor.cap_power_frac);
    if (std::isfinite(g.governor.thermal_clock_per_c) && g.governor.thermal_clock_per_c < 0)
      slope.push_back(-g.governor.thermal_clock_per_c / g.governor.max_clock_mhz);
    if (g.thermal.upstream_gpu < 0 && std::isfinite(g.thermal.inlet_c))
      inlets.push_back(g.thermal.inlet_c);
  }
  // What the cap holds where it holds all the time: the dense bursts after a pipeline wait lift
  // the sensor's average above the setpoint where the cap acts only now and then (the
  // calibration's median), not where it never lets go. The tenth percentile of the power of the
  // samples whose whole sensor window was capped, over the limit.
  std::vector<double> capped;
  for (size_t g = 0; g < n; ++g) {
    const Series& s = in.series[g];
    const double limit = cal.gpus[g].governor.power_limit_w;
    size_t run = 0;
    for (size_t i = 0; i < s.t.size(); ++i) {
      run = reasonAt(s, i) & throttle::kSwPowerCap ? run + 1 : 0;
      if (run > 1 && s.t[i] - s.t[i + 1 - run] >= cal.power_window_s && !std::isnan(s.power[i]) &&
          limit > 0)
        capped.push_back(s.power[i] / limit);
    }
  }
  if (capped.size() >= 20) {
    std::sort(capped.begin(), capped.end());
    in.capFrac = capped[capped.size() / 10];
  } else {
    in.capFrac = fr.empty() ? 1.0 : median(fr);
    if (fr.empty())
      in.notes.push_back("no GPU was held at its power cap: the cap is assumed to hold the limit");
  }
  in.inletC = median(inlets);
  // The SW thermal slowdown: its slope from the calibration, where it starts from the samples
  // with the thermal bit and no power cap bit (the clock's ceiling fmax - k (T - T0)).
  if (!slope.empty()) {
    in.thermalPerC = median(slope);
    for (size_t g = 0; g < n; ++g) {
      const Series& s = in.series[g];
      const double fmax = cal.gpus[g].governor.max_clock_mhz;
      for (size_t i = 0; i < s.t.size(); ++i) {
        const uint32_t r = reasonAt(s, i);
        if ((r & throttle::kSwThermal) && !(r & throttle::kSwPowerCap) && s.clock[i] > 0)
          thr.push_back(s.temp[i] - (1.0 - s.clock[i] / fmax) / in.thermalPerC);
      }
    }
    in.thermalThresholdC = median(thr);
  }
  if (std::isnan(in.thermalThresholdC))
    in.notes.push_back(
        "the run never reached its SW thermal slowdown: a projection that would is not slowed "
        "by it");
  const ParallelConfig& pc = cal.config;
  if (pc.pp && *pc.pp > 1 && pc.gbs && pc.mbs && pc.dp && *pc.dp * *pc.mbs > 0) {
    const double m = static_cast<double>(*pc.gbs) / (*pc.dp * *pc.mbs);
    if (m >= 1) in.pipelineFactor = (m + *pc.pp - 1) / m;
  }
  // Per sample: compute-class busy time in (t[i-1], t[i]].
  for (size_t g = 0; g < n; ++g) {
    const Series& s = in.series[g];
    std::vector<double> sh(s.t.size() * kComputeClasses, 0.0);
    for (size_t i = 1; i < s.t.size(); ++i)
      for (size_t c = 0; c < kComputeClasses; ++c)
        sh[i * kComputeClasses + c] = in.busy[g][c].in(s.t[i - 1], s.t[i]);
    in.share.push_back(std::move(sh));
  }
  return in;
}

// Mean clock over (t - window, t], as the calibration's power fit reads it.
double windowClock(const Series& s, size_t k, double window) {
  double sum = 0;
  int n = 0;
  for (size_t i = k + 1; i-- > 0 && s.t[i] > s.t[k] - window;)
    if (!std::isnan(s.clock[i])) sum += s.clock[i], ++n;
  return n ? sum / n : kNaN;
}

struct GpuReplay {
  double compute = 0, computeNew = 0;  // compute-class busy time in the window (s)
  double energy = 0;                   // J in the window, before the step's stretch
  double stretchEnergy = 0;            // J of the busy time's own stretch
  double waitPower = kNaN;
  double peak = kNaN;
  size_t busy = 0, limited = 0;
};

// What the replay shares between GPUs: per sample each GPU's power change, clock ratio (new /
// measured) and temperature change, read by the GPUs behind it and its package partner; each
// GPU's time inside the window.
struct ReplayShared {
  std::vector<std::vector<double>> dP, ratio, dTemp;
  std::vector<int> partner;
  std::vector<double> dt;
  double dInlet = 0;
  std::array<double, kComputeClasses> sens{};
};

bool anyValue(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
}

// A GPU that reports no power of its own (the second GCD of an MI250 package, whose socket power
// the first reports) follows the GPU that reports its package's power: one power limit and one
// heatsink. -1 for the others.
std::vector<int> packagePartners(const Inputs& in) {
  const Calibration& cal = *in.cal;
  const size_t n = in.series.size();
  std::vector<int> partner(n, -1);
  for (size_t g = 0; g < n; ++g) {
    if (anyValue(in.series[g].power)) continue;
    for (size_t o = 0; o < n; ++o)
      if (o != g && cal.gpus[g].package >= 0 && cal.gpus[o].package == cal.gpus[g].package &&
          cal.gpus[o].node == cal.gpus[g].node && anyValue(in.series[o].power))
        partner[g] = static_cast<int>(o);
  }
  return partner;
}

// One GPU's calibrated model at the setting.
struct GpuModel {
  double window = 0, fmax = 0, cap = 0, gexp = 1.5, idleW = 0, cT = 0;
  double rDie = 0, rSink = 0, tau = 30, rUp = 0;
  int up = -1;
  bool free = false, hasPower = false;
};

GpuModel gpuModel(const Inputs& in, const WhatifSetting& set, const Perturbation& pert, size_t g) {
  const Calibration& cal = *in.cal;
  const Series& s = in.series[g];
  const GpuCalibration& gc = cal.gpus[g];
  const PowerFit& pf = gc.power;
  const ThermalFit& th = gc.thermal;
  GpuModel m;
  // An instantaneous sensor: the sample spacing is the window (as the calibration reads it).
  const double spacing =
      s.t.size() > 1 ? (s.t.back() - s.t.front()) / static_cast<double>(s.t.size() - 1) : 0.0;
  m.window = std::max(cal.power_window_s, spacing);
  m.fmax = gc.governor.max_clock_mhz;
  m.free = std::find(set.unthrottled_gpus.begin(), set.unthrottled_gpus.end(), gc.gpu) !=
           set.unthrottled_gpus.end();
  const double limit = set.power_limit_w.value_or(gc.governor.power_limit_w);
  m.cap = in.capFrac * limit + pert.powerSd * pf.quality.rmse;
  m.gexp = std::isfinite(pf.clock_exponent) ? pf.clock_exponent : 1.5;
  // The power above idle follows the clock: the idle power (the lowest clock) bounds what does
  // not (board, memory, fans), and the leakage the fitted intercept holds at the busy
  // temperature falls with the voltage as the clock does.
  m.idleW = std::isfinite(pf.idle_w) ? pf.idle_w : 0.0;
  m.cT = std::isfinite(pf.temp_coef_w_per_c) ? pf.temp_coef_w_per_c : 0.0;
  m.rDie = std::isfinite(th.die_resistance_c_per_w) ? th.die_resistance_c_per_w : 0;
  m.rSink = std::isfinite(th.sink_resistance_c_per_w) ? th.sink_resistance_c_per_w : 0;
  m.tau = std::isfinite(th.tau_s) ? th.tau_s : 30.0;
  m.up = th.upstream_gpu;
  m.rUp = m.up >= 0 && std::isfinite(th.upstream_c_per_w) ? th.upstream_c_per_w : 0;
  m.hasPower = anyValue(s.power);
  return m;
}

// The clock the power cap and the SW thermal slowdown allow at sample i, as a fraction of the
// maximum: the clock at which the window's power would be what the cap holds; yFree when neither
// binds.
double limitedClock(const Inputs& in, const Series& s, size_t i, const GpuModel& m, double y,
                    double yFree, double dT) {
  double yNew = yFree;
  const double xw = windowClock(s, i, m.window) / m.fmax;
  const double p = s.power[i];
  if (m.hasPower && !std::isnan(p) && xw > 0) {
    const double a = std::max(1.0, (p - m.idleW) / std::pow(xw, m.gexp));
    const double xg = std::pow(std::min(1.0, xw * yFree / y), m.gexp);
    const double pFree = p + m.cT * dT + a * (xg - std::pow(xw, m.gexp));
    if (pFree > m.cap) {
      const double xc = std::pow(std::max(1e-6, std::pow(xw, m.gexp) + (m.cap - p - m.cT * dT) / a),
                                 1.0 / m.gexp);
      yNew = std::min(yNew, y * xc / xw);
    }
  }
  if (std::isfinite(in.thermalThresholdC) && s.temp[i] + dT > in.thermalThresholdC)
    yNew = std::min(yNew, 1.0 - in.thermalPerC * (s.temp[i] + dT - in.thermalThresholdC));
  return yNew;
}

// The value of another GPU's per-sample vector at its sample at or before t.
double valueAt(const Inputs& in, size_t other, const std::vector<double>& v, double t) {
  const auto& pt = in.series[other].t;
  const auto it = std::upper_bound(pt.begin(), pt.end(), t);
  const size_t j = it == pt.begin() ? 0 : static_cast<size_t>(it - pt.begin()) - 1;
  return j < v.size() ? v[j] : kNaN;
}

void startTrace(const Series& s, ProjectedGpuSamples& t) {
  const size_t k = s.t.size();
  t.power_w.assign(k, kNaN), t.sm_clock_mhz.assign(k, kNaN), t.temp_c.assign(k, kNaN);
  t.limit_bits.assign(k, 0u);
  t.held_s.assign(k, 0.0), t.compute_s.assign(k, 0.0), t.compute_new_s.assign(k, 0.0);
  t.stretch_energy_j.assign(k, 0.0);
}

// Which limit lowered a busy sample's clock (for a projected run's throttle reasons): the SW
// thermal slowdown where its ceiling is what the clock came to, else the power cap.
uint32_t limitBits(const Inputs& in, const Series& s, size_t i, double yNew, double dT) {
  if (std::isfinite(in.thermalThresholdC) && s.temp[i] + dT > in.thermalThresholdC &&
      1.0 - in.thermalPerC * (s.temp[i] + dT - in.thermalThresholdC) <= yNew + 1e-9)
    return throttle::kSwThermal;
  return throttle::kSwPowerCap;
}

// Replays GPU g's samples at the setting into r and the shared per-sample vectors; with `trace`,
// also each sample's projected values (the replay's arithmetic is the same either way).
void replayGpu(const Inputs& in, const GpuModel& m, size_t g, ReplayShared& sh, GpuReplay& r,
               ProjectedGpuSamples* trace) {
  const Series& s = in.series[g];
  const size_t n = in.series.size();
  const int partner = sh.partner[g];
  sh.dP[g].assign(s.t.size(), 0.0);
  sh.ratio[g].assign(s.t.size(), 1.0);
  sh.dTemp[g].assign(s.t.size(), sh.dInlet);
  double lagP = 0, lagUp = 0, dT = sh.dInlet;
  double waitE = 0, waitT = 0;
  if (trace) startTrace(s, *trace);
  for (size_t i = 0; i < s.t.size(); ++i) {
    const double dTBefore = dT;  // what limitedClock() reads
    const double step = i ? s.t[i] - s.t[i - 1] : 0.0;
    const double y = s.clock[i] / m.fmax;
    const double busyShare = std::isnan(s.util[i]) ? 0.0 : s.util[i] / 100.0;
    double yNew = y, yFree = y;
    if (busyShare > 0 && y > 0) {
      if (reasonAt(s, i) & kLimitBits) yFree = std::max(y, 1.0);
      yNew = m.free ? yFree : limitedClock(in, s, i, m, y, yFree, dT);
      if (partner >= 0 && !m.free) {
        const double q = valueAt(in, static_cast<size_t>(partner),
                                 sh.ratio[static_cast<size_t>(partner)], s.t[i]);
        if (std::isfinite(q)) yNew = std::min(yFree, y * q);
      }
      yNew = std::clamp(yNew, 0.2, std::max(1.0, y));
    }
    sh.ratio[g][i] = y > 0 ? yNew / y : 1.0;
    // Power at the new clock (the calibrated model's change added to the measured power).
    double pNew = s.power[i];
    if (m.hasPower && !std::isnan(pNew)) {
      const double xw = windowClock(s, i, m.window) / m.fmax;
      if (xw > 0 && y > 0 && yNew != y) {
        const double a = std::max(0.0, (pNew - m.idleW) / std::pow(xw, m.gexp));
        pNew += a * (std::pow(std::min(1.0, xw * yNew / y), m.gexp) - std::pow(xw, m.gexp));
      }
      pNew += m.cT * dT;
      sh.dP[g][i] = pNew - s.power[i];
    }
    // Temperature: the die follows at once, the heatsink with its lag; the GPU in front too.
    const double d = i ? std::exp(-step / m.tau) : 0.0;
    lagP = i ? sh.dP[g][i - 1] + (lagP - sh.dP[g][i - 1]) * d : sh.dP[g][i];
    double upNow = 0;
    if (m.up >= 0 && static_cast<size_t>(m.up) < n && !sh.dP[static_cast<size_t>(m.up)].empty()) {
      upNow = valueAt(in, static_cast<size_t>(m.up), sh.dP[static_cast<size_t>(m.up)], s.t[i]);
      if (std::isnan(upNow)) upNow = 0.0;
    }
    lagUp = i ? lagUp + (upNow - lagUp) * (1 - d) : upNow;
    dT = sh.dInlet + m.rDie * sh.dP[g][i] + m.rSink * lagP + m.rUp * lagUp;
    if (partner >= 0) {
      const double d2 =
          valueAt(in, static_cast<size_t>(partner), sh.dTemp[static_cast<size_t>(partner)], s.t[i]);
      if (std::isfinite(d2)) dT = d2;
    }
    sh.dTemp[g][i] = dT;
    const double tNew = s.temp[i] + dT;
    const bool limited = busyShare > 0 && yNew < yFree - 0.002;
    if (trace) {
      trace->power_w[i] = pNew, trace->sm_clock_mhz[i] = s.clock[i] * sh.ratio[g][i];
      trace->temp_c[i] = tNew;
      trace->limit_bits[i] = limited ? limitBits(in, s, i, yNew, dTBefore) : 0u;
    }
    // Inside the whole iterations: time, energy, peak, throttled share.
    const double held = heldSpan(s, i, in.window.a, in.window.b);
    if (held <= 0) continue;
    const double frac = step > 0 ? held / step : 0.0;
    double comp = 0, compNew = 0;
    for (size_t c = 0; c < kComputeClasses; ++c) {
      const double b = in.share[g][i * kComputeClasses + c] * frac;
      comp += b;
      compNew += b * (1 - sh.sens[c] + (yNew > 0 && y > 0 ? sh.sens[c] * y / yNew : sh.sens[c]));
    }
    r.compute += comp, r.computeNew += compNew;
    if (trace) {
      trace->held_s[i] = held, trace->compute_s[i] = comp, trace->compute_new_s[i] = compNew;
      trace->stretch_energy_j[i] = std::isnan(pNew) ? 0.0 : pNew * (compNew - comp);
    }
    if (!std::isnan(pNew)) {
      r.energy += pNew * held;
      r.stretchEnergy += pNew * (compNew - comp);
      if (comp < 0.5 * held) waitE += pNew * held, waitT += held;
    }
    sh.dt[g] += held;
    r.peak = std::isnan(r.peak) ? tNew : std::max(r.peak, tNew);
    if (busyShare > 0) {
      ++r.busy;
      if (limited) ++r.limited;
    }
  }
  r.waitPower = waitT > 0 ? waitE / waitT : (sh.dt[g] > 0 ? r.energy / sh.dt[g] : kNaN);
  // Only part of the run may be traced: its compute time stands for the whole window's.
  double first = INFINITY, last = -INFINITY;
  for (const Busy& b : in.busy[g])
    if (!b.start.empty())
      first = std::min(first, b.start.front()), last = std::max(last, b.end.back());
  const double traced = std::max(0.0, std::min(last, in.window.b) - std::max(first, in.window.a)) /
                        (in.window.b - in.window.a);
  if (traced > 0.01) r.compute /= traced, r.computeNew /= traced, r.stretchEnergy /= traced;
  if (trace) trace->traced = traced > 0.01 ? traced : 1.0, trace->wait_power_w = r.waitPower;
}

// The step (the slowest GPU's compute time sets it), energy, peak and throttled share.
WhatifOutcome outcomeOf(const Inputs& in, const std::vector<GpuReplay>& out, double measuredStep) {
  const double steps = in.window.steps;
  double maxOld = 0, maxNew = 0;
  for (const GpuReplay& r : out)
    maxOld = std::max(maxOld, r.compute), maxNew = std::max(maxNew, r.computeNew);
  WhatifOutcome o;
  o.step_s = measuredStep + in.pipelineFactor * (maxNew - maxOld) / steps;
  const double extra = (o.step_s - measuredStep) * steps;  // more time in the window
  double energy = 0, peak = kNaN;
  size_t busy = 0, limited = 0;
  for (const GpuReplay& r : out) {
    double e = r.energy + r.stretchEnergy;
    if (std::isfinite(r.waitPower)) e += r.waitPower * (extra - (r.computeNew - r.compute));
    energy += e;
    if (!std::isnan(r.peak)) peak = std::isnan(peak) ? r.peak : std::max(peak, r.peak);
    busy += r.busy, limited += r.limited;
  }
  o.tokens_per_s = in.tokens / o.step_s;
  o.energy_per_token_j = energy / (steps * in.tokens);
  o.peak_temp_c = peak;
  o.throttled_fraction = busy ? static_cast<double>(limited) / static_cast<double>(busy) : kNaN;
  return o;
}

WhatifOutcome replay(const Inputs& in, const WhatifSetting& set, const Perturbation& pert,
                     double measuredStep, std::vector<ProjectedGpuSamples>* trace = nullptr) {
  const Calibration& cal = *in.cal;
  const size_t n = in.series.size();
  std::vector<GpuReplay> out(n);
  ReplayShared sh;
  sh.dP.resize(n), sh.ratio.resize(n), sh.dTemp.resize(n);
  sh.partner = packagePartners(in);
  sh.dt.assign(n, 0.0);
  sh.dInlet = set.inlet_temp_c && std::isfinite(in.inletC) ? *set.inlet_temp_c - in.inletC : 0.0;
  for (size_t c = 0; c < kComputeClasses; ++c)
    sh.sens[c] = std::clamp(in.sensitivity[c] + pert.sensitivitySd * in.spread[c], 0.0, 1.0);
  // GPUs in front first: a rear GPU's inlet follows the power of the GPU it breathes from.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  auto rankOf = [&](size_t g) {
    return sh.partner[g] >= 0 ? 2 : cal.gpus[g].thermal.upstream_gpu >= 0 ? 1 : 0;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rankOf(a) < rankOf(b); });
  if (trace) trace->assign(n, {});
  for (size_t g : order)
    replayGpu(in, gpuModel(in, set, pert, g), g, sh, out[g], trace ? &(*trace)[g] : nullptr);
  return outcomeOf(in, out, measuredStep);
}

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json outcomeJson(const WhatifOutcome& o) {
  return {{"step_s", num(o.step_s)},
          {"tokens_per_s", num(o.tokens_per_s)},
          {"energy_per_token_j", num(o.energy_per_token_j)},
          {"peak_temp_c", num(o.peak_temp_c)},
          {"throttled_fraction", num(o.throttled_fraction)}};
}

double measuredPowerLimit(const Calibration& cal) {
  double limit = kNaN;
  for (const GpuCalibration& g : cal.gpus)
    if (std::isfinite(g.governor.power_limit_w))
      limit =
          std::isnan(limit) ? g.governor.power_limit_w : std::max(limit, g.governor.power_limit_w);
  return limit;
}

WhatifOutcome measureRun(const RunFile& run) {
  const Window w = wholeIterations(run);
  const double tokens = tokensPerStep(run);
  double energy = 0, peak = kNaN;
  size_t busy = 0, limited = 0;
  for (size_t g = 0; g < run.gpus().size(); ++g) {
    const Series s = readSeries(run, g);
    for (size_t i = 0; i < s.t.size(); ++i) {
      const double held = heldSpan(s, i, w.a, w.b);
      if (held <= 0) continue;
      if (!std::isnan(s.power[i])) energy += s.power[i] * held;
      if (!std::isnan(s.temp[i])) peak = std::isnan(peak) ? s.temp[i] : std::max(peak, s.temp[i]);
      if (s.util[i] > 0) {
        ++busy;
        if (reasonAt(s, i) & kLimitBits) ++limited;
      }
    }
  }
  WhatifOutcome o;
  o.step_s = (w.b - w.a) / w.steps;
  o.tokens_per_s = tokens / o.step_s;
  o.energy_per_token_j = energy / (w.steps * tokens);
  o.peak_temp_c = peak;
  o.throttled_fraction = busy ? static_cast<double>(limited) / static_cast<double>(busy) : kNaN;
  return o;
}

WhatifProjection projectRun(const RunFile& run, const Calibration& cal,
                            const std::vector<WhatifSetting>& settings) {
  const Inputs in = readInputs(run, cal);
  WhatifProjection p;
  p.run = run.path().string();
  p.steps = in.window.steps;
  p.tokens_per_step = in.tokens;
  p.notes = in.notes;
  if (std::isnan(in.tokens))
    p.notes.push_back(
        "the run's configuration lacks the global batch or sequence length: no tokens per "
        "second or energy per token");
  const WhatifOutcome measured = measureRun(run);
  const double limit = measuredPowerLimit(cal);
  const WhatifSetting here{limit, in.inletC, {}};
  auto row = [&](std::string kind, const WhatifSetting& s) {
    WhatifRow r;
    r.kind = std::move(kind);
    r.power_limit_w = s.power_limit_w.value_or(limit);
    r.inlet_temp_c = s.inlet_temp_c.value_or(in.inletC);
    r.unthrottled_gpus = s.unthrottled_gpus;
    r.value = replay(in, s, {}, measured.step_s);
    // One standard error: the cap one power-fit rms higher, the clock sensitivities one spread
    // higher, the temperature one thermal-fit rms.
    const WhatifOutcome a = replay(in, s, {1.0, 0.0}, measured.step_s);
    const WhatifOutcome b = replay(in, s, {0.0, 1.0}, measured.step_s);
    double thermalRms = 0;
    for (const GpuCalibration& g : cal.gpus)
      if (std::isfinite(g.thermal.quality.rmse))
        thermalRms = std::max(thermalRms, g.thermal.quality.rmse);
    auto q = [](double x, double y) { return std::sqrt(x * x + y * y); };
    r.uncertainty.step_s = q(a.step_s - r.value.step_s, b.step_s - r.value.step_s);
    r.uncertainty.tokens_per_s = r.value.tokens_per_s * r.uncertainty.step_s / r.value.step_s;
    r.uncertainty.energy_per_token_j = q(a.energy_per_token_j - r.value.energy_per_token_j,
                                         b.energy_per_token_j - r.value.energy_per_token_j);
    r.uncertainty.peak_temp_c =
        q(q(a.peak_temp_c - r.value.peak_temp_c, b.peak_temp_c - r.value.peak_temp_c), thermalRms);
    r.uncertainty.throttled_fraction = q(a.throttled_fraction - r.value.throttled_fraction,
                                         b.throttled_fraction - r.value.throttled_fraction);
    return r;
  };
  WhatifRow m;
  m.kind = "measured";
  m.power_limit_w = limit;
  m.inlet_temp_c = in.inletC;
  m.value = measured;
  p.rows.push_back(m);
  p.rows.push_back(row("model at the measured setting", here));
  for (const WhatifSetting& s : settings)
    p.rows.push_back(row("projected", s));
  return p;
}

ProjectedSamples projectSamples(const RunFile& run, const Calibration& cal,
                                const WhatifSetting& setting) {
  const Inputs in = readInputs(run, cal);
  ProjectedSamples p;
  p.measured_step_s = measureRun(run).step_s;
  // The same replay as projectRun's row for the setting, with each sample's values kept.
  p.value = replay(in, setting, {}, p.measured_step_s, &p.gpus);
  p.extra_s = (p.value.step_s - p.measured_step_s) * in.window.steps;
  p.steps_s = in.window.spans;
  p.notes = in.notes;
  return p;
}

nlohmann::json toJson(const WhatifProjection& p) {
  nlohmann::json settings = nlohmann::json::array();
  auto base = [](const WhatifRow& r) {
    nlohmann::json j = {{"power_limit_w", num(r.power_limit_w)},
                        {"inlet_temp_c", num(r.inlet_temp_c)},
                        {"unthrottled_gpus", r.unthrottled_gpus}};
    j.update(outcomeJson(r.value));
    return j;
  };
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const WhatifRow& r = p.rows[i];
    if (r.kind == "model at the measured setting") continue;
    nlohmann::json j = base(r);
    j["kind"] = r.kind;
    if (r.kind == "measured") {
      // The model's reproduction of the measured point: its error there.
      for (const WhatifRow& mr : p.rows)
        if (mr.kind == "model at the measured setting") {
          nlohmann::json model = outcomeJson(mr.value);
          model["uncertainty"] = outcomeJson(mr.uncertainty);
          j["model"] = model;
        }
      j["uncertainty"] = nullptr;
    } else {
      j["uncertainty"] = outcomeJson(r.uncertainty);
    }
    settings.push_back(j);
  }
  return {{"run", p.run},
          {"projected", true},
          {"whole_iterations", p.steps},
          {"tokens_per_step", num(p.tokens_per_step)},
          {"settings", settings},
          {"notes", p.notes}};
}

}  // namespace wl
