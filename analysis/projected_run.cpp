// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/projected_run.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <system_error>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/string_table.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

constexpr double kNsPerS = 1e9;
constexpr uint32_t kLimitBits = throttle::kSwPowerCap | throttle::kSwThermal |
                                throttle::kHwSlowdown | throttle::kHwThermal |
                                throttle::kHwPowerBrake;

// Metrics the projection contradicts and does not write: the energy counter (the power changed),
// the hotspot and memory temperatures (the heat changed).
bool dropped(std::string_view metric) {
  return metric == metric::kEnergy || metric == metric::kHotspotTemp || metric == metric::kMemTemp;
}
bool modelled(std::string_view metric) {
  return metric == metric::kPower || metric == metric::kTemp || metric == metric::kSmClock;
}

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// The time map old -> new: piecewise linear between knots (s since the run start), the identity
// before the first, a shift after the last.
struct TimeMap {
  std::vector<double> x, X;  // old and new knots
  std::vector<double> f;     // slope of each interval (new length / old length)
  int64_t start = 0;

  double at(double s) const {
    if (x.empty() || s <= x.front()) return s;
    if (s >= x.back()) return s + (X.back() - x.back());
    const size_t k = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), s) - x.begin()) - 1;
    return X[k] + (s - x[k]) * f[k];
  }
  int64_t ns(int64_t t) const {
    const double s = static_cast<double>(t - start) / kNsPerS;
    if (x.empty() || s <= x.front()) return t;
    return start + std::llround(at(s) * kNsPerS);
  }
};

// Overlaps of (lo, hi] with the map's intervals: calls fn(k, seconds).
template <class Fn>
void eachInterval(const std::vector<double>& x, double lo, double hi, Fn fn) {
  if (x.size() < 2 || hi <= lo) return;
  size_t k = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), lo) - x.begin());
  k = k ? k - 1 : 0;
  for (; k + 1 < x.size() && x[k] < hi; ++k) {
    const double a = std::max(lo, x[k]), b = std::min(hi, x[k + 1]);
    if (b > a) fn(k, b - a);
  }
}

// Each GPU's sample times (s since the run start) and exact timestamps, on its temp_c samples.
struct GpuTimes {
  std::vector<int64_t> t_ns;
  std::vector<double> t;
};

std::vector<GpuTimes> gpuTimes(const RunFile& run) {
  std::vector<GpuTimes> out(run.gpus().size());
  for (size_t g = 0; g < out.size(); ++g) {
    out[g].t_ns = run.readAllSamples(SeriesKind::Gpu, g, metric::kTemp).t_ns;
    for (int64_t t : out[g].t_ns)
      out[g].t.push_back(static_cast<double>(t - run.info().start_ns) / kNsPerS);
  }
  return out;
}

// Per GPU and map interval: compute time measured and at the setting, and the stretch's energy
// (each over the GPU's traced share, as the replay's totals).
struct StepShares {
  std::vector<std::vector<double>> compute, computeNew, stretchEnergy;
};

StepShares stepShares(const ProjectedSamples& p, const std::vector<GpuTimes>& times,
                      const std::vector<double>& x) {
  const size_t steps = x.size() - 1, n = p.gpus.size();
  StepShares s;
  s.compute.assign(n, std::vector<double>(steps, 0.0));
  s.computeNew = s.compute, s.stretchEnergy = s.compute;
  for (size_t g = 0; g < n; ++g) {
    const ProjectedGpuSamples& q = p.gpus[g];
    const std::vector<double>& t = times[g].t;
    for (size_t i = 1; i < t.size() && i < q.held_s.size(); ++i) {
      if (q.held_s[i] <= 0) continue;
      const double w = 1.0 / (q.held_s[i] * q.traced);
      eachInterval(x, t[i - 1], t[i], [&](size_t k, double h) {
        s.compute[g][k] += q.compute_s[i] * h * w;
        s.computeNew[g][k] += q.compute_new_s[i] * h * w;
        s.stretchEnergy[g][k] += q.stretch_energy_j[i] * h * w;
      });
    }
  }
  return s;
}

// The map: a knot at each whole iteration's start and at the last one's end; each interval gains
// its share of the projection's added time, by the change of its slowest GPU's compute time (the
// ranks wait on it), or by its length where those shares do not all point the projection's way.
TimeMap timeMap(const ProjectedSamples& p, const StepShares& sh, std::vector<double> x,
                int64_t start) {
  TimeMap m;
  m.start = start;
  m.x = std::move(x);
  const size_t steps = m.x.size() - 1;
  std::vector<double> len(steps), raw(steps, 0.0), add(steps, 0.0);
  const double extra = std::isfinite(p.extra_s) ? p.extra_s : 0.0;
  double total = 0, rawSum = 0;
  bool oneWay = extra != 0;
  for (size_t k = 0; k < steps; ++k) {
    len[k] = m.x[k + 1] - m.x[k], total += len[k];
    double before = 0, after = 0;
    for (size_t g = 0; g < sh.compute.size(); ++g)
      before = std::max(before, sh.compute[g][k]), after = std::max(after, sh.computeNew[g][k]);
    raw[k] = after - before, rawSum += raw[k];
    if (raw[k] * extra < 0) oneWay = false;
  }
  auto spread = [&](bool byCompute) {
    bool ok = true;
    for (size_t k = 0; k < steps; ++k) {
      add[k] = extra * (byCompute ? raw[k] / rawSum : len[k] / total);
      ok = ok && len[k] + add[k] > 0.05 * len[k];
    }
    return ok;
  };
  if (!(oneWay && rawSum != 0 && spread(true))) spread(false);
  m.X.push_back(m.x.front());
  for (size_t k = 0; k < steps; ++k) {
    m.f.push_back(std::max(0.05, (len[k] + add[k]) / len[k]));
    m.X.push_back(m.X.back() + len[k] * m.f.back());
  }
  return m;
}

// The old knots: the whole iterations' starts and the last one's end (s since the run start).
std::vector<double> knots(const ProjectedSamples& p) {
  std::vector<double> x;
  double end = -INFINITY;
  for (const auto& [a, b] : p.steps_s)
    x.push_back(a), end = std::max(end, b);
  std::sort(x.begin(), x.end());
  x.erase(std::unique(x.begin(), x.end()), x.end());
  while (!x.empty() && x.back() >= end)
    x.pop_back();
  x.push_back(end);
  return x;
}

// The file's power of GPU g's samples: the projected power over the sample's share of the
// whole iterations, plus over the time its step added, the GPU's own stretched kernels and its
// wait power, spread over the step in proportion to time. Its integral is the projection's energy.
std::vector<double> filePower(const ProjectedGpuSamples& q, const GpuTimes& tm, const TimeMap& m,
                              const StepShares& sh, size_t g) {
  std::vector<double> out = q.power_w;
  const double wait = std::isfinite(q.wait_power_w) ? q.wait_power_w : 0.0;
  for (size_t i = 1; i < tm.t.size() && i < out.size(); ++i) {
    if (q.held_s[i] <= 0 || std::isnan(out[i])) continue;
    double energy = out[i] * q.held_s[i], held = 0;
    eachInterval(m.x, tm.t[i - 1], tm.t[i], [&](size_t k, double h) {
      const double len = m.x[k + 1] - m.x[k];
      const double added = len * (m.f[k] - 1);
      const double own = sh.computeNew[g][k] - sh.compute[g][k];
      energy += (sh.stretchEnergy[g][k] + wait * (added - own)) * h / len;
      held += h * m.f[k];
    });
    if (held > 0) out[i] = energy / held;
  }
  return out;
}

// GPU g's telemetry with the projected columns and the mapped timestamps.
TelemetryTable projectedTable(const RunFile& run, size_t g, const ProjectedGpuSamples& q,
                              const GpuTimes& tm, const std::vector<double>& power,
                              const TimeMap& m) {
  TelemetryTable t;
  const SeriesGroupMeta& meta = run.series();
  t.t_ns = run.readAllSamples(SeriesKind::Gpu, g, "").t_ns;
  // Row of each temp_c sample (the GPU's metrics share their timestamps in the native format).
  std::vector<size_t> sampleOfRow(t.t_ns.size(), SIZE_MAX);
  for (size_t r = 0, i = 0; r < t.t_ns.size(); ++r) {
    while (i < tm.t_ns.size() && tm.t_ns[i] < t.t_ns[r])
      ++i;
    if (i < tm.t_ns.size() && tm.t_ns[i] == t.t_ns[r]) sampleOfRow[r] = i;
  }
  for (const MetricInfo& mi : meta.metrics) {
    if (dropped(mi.id)) continue;
    TelemetryColumn c{mi.id, run.readAllSamples(SeriesKind::Gpu, g, mi.id).v};
    if (c.values.size() != t.t_ns.size()) c.values.assign(t.t_ns.size(), kNaN);
    const std::vector<double>* v = mi.id == metric::kPower     ? &power
                                   : mi.id == metric::kTemp    ? &q.temp_c
                                   : mi.id == metric::kSmClock ? &q.sm_clock_mhz
                                                               : nullptr;
    if (v)
      for (size_t r = 0; r < c.values.size(); ++r)
        if (sampleOfRow[r] < v->size()) c.values[r] = (*v)[sampleOfRow[r]];
    t.columns.push_back(std::move(c));
  }
  if (meta.hasThrottle) {
    t.throttle_reasons = run.readThrottle(g, 0, t.t_ns.size());
    for (size_t r = 0; r < t.throttle_reasons.size(); ++r) {
      uint32_t& mask = t.throttle_reasons[r];
      const uint32_t bits = sampleOfRow[r] < q.limit_bits.size() ? q.limit_bits[sampleOfRow[r]] : 0;
      if (mask != throttle::kUnknown)
        mask = (mask & ~kLimitBits) | bits;
      else if (bits)
        mask = bits;
    }
  }
  for (int64_t& ts : t.t_ns)
    ts = m.ns(ts);
  return t;
}

std::string settingText(const WhatifSetting& s) {
  std::string out;
  if (s.power_limit_w) out += fmt::format("power limit {:g} W", *s.power_limit_w);
  if (s.inlet_temp_c)
    out += fmt::format("{}inlet {:g} C", out.empty() ? "" : ", ", *s.inlet_temp_c);
  if (!s.unthrottled_gpus.empty()) {
    std::string g;
    for (int x : s.unthrottled_gpus)
      g += (g.empty() ? "" : ",") + std::to_string(x);
    out += (out.empty() ? "GPUs " : ", GPUs ") + g + " unthrottled";
  }
  return out.empty() ? std::string("the measured setting") : out;
}

nlohmann::json settingJson(const WhatifSetting& s) {
  return {{"power_limit_w", s.power_limit_w ? num(*s.power_limit_w) : nlohmann::json(nullptr)},
          {"inlet_temp_c", s.inlet_temp_c ? num(*s.inlet_temp_c) : nlohmann::json(nullptr)},
          {"unthrottled_gpus", s.unthrottled_gpus}};
}

// The projected run's metadata: the measured run's, renamed, marked and with the new limits.
RunInfo projectedInfo(const RunFile& run, const Calibration& cal, const WhatifSetting& setting,
                      const ProjectedSamples& p, const TimeMap& m) {
  RunInfo info = run.info();
  info.name = projectedRunName(run.info(), setting);
  info.simulated = false;
  info.end_ns = m.ns(run.info().end_ns);
  info.created_by = "wattline whatif";
  std::error_code ec;
  const auto bytes = fs::file_size(run.path(), ec);
  const WhatifOutcome& v = p.value;
  const nlohmann::json j = {
      {"projected",
       {{"source", run.path().filename().string()},
        {"source_name", run.info().name},
        {"source_bytes", ec ? nlohmann::json(nullptr) : nlohmann::json(bytes)},
        {"source_simulated", run.info().simulated},
        {"setting", settingJson(setting)},
        {"measured_step_s", num(p.measured_step_s)},
        {"outcome",
         {{"step_s", num(v.step_s)},
          {"tokens_per_s", num(v.tokens_per_s)},
          {"energy_per_token_j", num(v.energy_per_token_j)},
          {"peak_temp_c", num(v.peak_temp_c)},
          {"throttled_fraction", num(v.throttled_fraction)}}},
        {"notes", p.notes},
        {"calibration", toJson(cal)}}}};
  info.parameters_json = j.dump();
  info.sources.push_back({run.path().filename().string(), kProjectedSourceFormat, 0,
                          "projected: " + settingText(setting)});
  std::erase_if(info.sensors, [](const SensorInfo& s) { return dropped(s.metric); });
  return info;
}

// The GPUs' and domains' power limits at the setting.
void applyLimits(const Calibration& cal, const WhatifSetting& setting, std::vector<GpuInfo>& gpus,
                 std::vector<PowerDomain>& domains) {
  if (!setting.power_limit_w) return;
  const double w = *setting.power_limit_w;
  for (size_t g = 0; g < gpus.size() && g < cal.gpus.size(); ++g) {
    const double old = cal.gpus[g].governor.power_limit_w;
    if (std::isfinite(gpus[g].power_limit_w) && std::isfinite(old) && old > 0)
      gpus[g].power_limit_w = static_cast<float>(gpus[g].power_limit_w * w / old);
  }
  for (PowerDomain& d : domains)
    if (std::isfinite(d.power_limit_w)) d.power_limit_w = static_cast<float>(w);
}

// Kernels, iterations and annotations through the map; collectives kept with their kernels.
void writeTraces(const RunFile& run, const TimeMap& m, RunWriter& w, const Progress& progress) {
  StringTable names;
  for (size_t i = 1; i < run.stringCount(); ++i)
    names.intern(run.str(static_cast<uint32_t>(i)));
  std::map<size_t, std::vector<CollectiveInfo>> coll;
  for (const CollectiveRecord& c : run.collectives())
    coll[c.track].push_back(c.info);
  for (size_t tr = 0; tr < run.tracks().size(); ++tr) {
    progress.report(static_cast<double>(tr) / static_cast<double>(run.tracks().size()), "kernels");
    const TrackInfo& ti = run.tracks()[tr];
    KernelTrack t{ti.rank, ti.stream, ti.device, run.readAllKernels(tr), {}, {}};
    for (KernelEvent& e : t.events) {
      const int64_t a = m.ns(e.start_ns), b = m.ns(e.start_ns + e.dur_ns);
      e.start_ns = a, e.dur_ns = b - a;
    }
    if (auto it = coll.find(tr); it != coll.end()) t.collectives = std::move(it->second);
    w.addKernelTrack(std::move(t), names);
  }
  std::vector<Iteration> its = run.iterations();
  for (Iteration& it : its)
    it.start_ns = m.ns(it.start_ns), it.end_ns = m.ns(it.end_ns);
  w.addIterations(its);
  std::vector<Annotation> an = run.annotations();
  for (Annotation& a : an) {
    const int64_t s = m.ns(a.start_ns);
    a.dur_ns = m.ns(a.start_ns + a.dur_ns) - s, a.start_ns = s;
  }
  w.addAnnotations(an, names);
}

void addNotes(const RunFile& run, const WhatifSetting& setting, RunWriter& w) {
  for (const QualityNote& q : run.quality())
    w.addQualityNote(q);
  w.addQualityNote({Severity::Info, "projected", "run",
                    fmt::format("projected from {} to {} with its own calibration (wattline "
                                "whatif), not measured",
                                run.path().filename().string(), settingText(setting))});
  std::string carried, gone;
  for (const MetricInfo& mi : run.series().metrics)
    if (dropped(mi.id))
      gone += (gone.empty() ? "" : ", ") + mi.id;
    else if (!modelled(mi.id))
      carried += (carried.empty() ? "" : ", ") + mi.id;
  if (!carried.empty())
    w.addQualityNote({Severity::Info, "projection_unmodelled", "run",
                      "carried over from the measured run unchanged (the projection does not "
                      "model them), on the projected time: " +
                          carried});
  if (!gone.empty() || run.hasNodeTelemetry())
    w.addQualityNote(
        {Severity::Info, "projection_dropped", "run",
         "not written (they would contradict the projected power and temperature): " + gone +
             (run.hasNodeTelemetry() ? (gone.empty() ? "" : ", ") + std::string("node telemetry")
                                     : std::string())});
}

}  // namespace

bool isProjectedRun(const RunInfo& info) {
  return std::any_of(info.sources.begin(), info.sources.end(),
                     [](const SourceInfo& s) { return s.format == kProjectedSourceFormat; });
}

std::string projectedRunName(const RunInfo& measured, const WhatifSetting& setting) {
  return fmt::format("{}, projected to {}", measured.name.empty() ? "run" : measured.name,
                     settingText(setting));
}

void writeProjectedRun(const RunFile& run, const Calibration& cal, const WhatifSetting& setting,
                       const fs::path& out, const Progress& progress) {
  std::error_code ec;
  if (fs::exists(out, ec) && fs::equivalent(out, run.path(), ec))
    throw Error(fmt::format("{}: the projection cannot replace the run it projects", out.string()));
  progress.report(0.0, "projecting");
  const ProjectedSamples p = projectSamples(run, cal, setting);
  const std::vector<GpuTimes> times = gpuTimes(run);
  const std::vector<double> x = knots(p);
  const StepShares sh = stepShares(p, times, x);
  const TimeMap m = timeMap(p, sh, x, run.info().start_ns);
  std::vector<GpuInfo> gpus = run.gpus();
  std::vector<PowerDomain> domains = run.domains();
  applyLimits(cal, setting, gpus, domains);
  RunWriter w(out, projectedInfo(run, cal, setting, p, m), gpus, run.ranks());
  w.setDomains(domains);
  const Progress tel = progress.sub(0.1, 0.4);
  for (size_t g = 0; g < gpus.size(); ++g) {
    tel.report(static_cast<double>(g) / static_cast<double>(gpus.size()), "telemetry");
    const std::vector<double> power = filePower(p.gpus[g], times[g], m, sh, g);
    w.addGpuTelemetry(static_cast<int>(g), projectedTable(run, g, p.gpus[g], times[g], power, m));
  }
  writeTraces(run, m, w, progress.sub(0.4, 0.7));
  addNotes(run, setting, w);
  w.finish(progress.sub(0.7, 1.0));
}

}  // namespace wl
