// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/whatif_layout.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "loaders/format/run_file.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/power_model.h"
#include "loaders/sim/simulator.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];  // the upper middle, as analysis/whatif.cpp's
}

// The fitted inlet of the GPUs of one node that breathe no other GPU's exhaust (the measured
// row's inlet, as projectRun's).
double nodeInlet(const Calibration& cal, int node) {
  std::vector<double> v;
  for (const GpuCalibration& g : cal.gpus)
    if (g.node == node && g.thermal.upstream_gpu < 0) v.push_back(g.thermal.inlet_c);
  return median(v);
}

int need(const std::optional<int>& v, const RunFile& run, const char* what) {
  if (!v || *v < 1)
    throw Error(fmt::format("{}: the run's configuration lacks {}, which a layout change needs",
                            run.path().string(), what));
  return *v;
}

// The simulator's configuration of the measured run: its model, GPU type, layout, batch and
// sequence length as recorded, the calibration's inlet, power limit and power sensor window,
// everything else at the built-in profile's and the simulator's defaults.
sim::SimConfig measuredConfig(const RunFile& run, const Calibration& cal, double seconds,
                              uint64_t seed) {
  const RunInfo& info = run.info();
  const std::string file = run.path().string();
  const sim::PlatformProfile* prof = sim::findProfile(info.platform);
  if (!prof)
    throw Error(
        fmt::format("{}: a layout change simulates the run, and the simulator has no "
                    "profile for its GPU type '{}' (it has H100, H200, MI250)",
                    file, info.platform));
  const sim::ModelShape* model = sim::findModel(info.model);
  if (!model)
    throw Error(
        fmt::format("{}: a layout change simulates the run, and the simulator does not "
                    "know its model '{}'",
                    file, info.model.empty() ? std::string("(none recorded)") : info.model));
  const ParallelConfig& pc = info.config;
  sim::SimConfig c;
  c.platform = *prof;
  c.model = *model;
  c.tp = need(pc.tp, run, "the tensor parallel size");
  c.pp = need(pc.pp, run, "the pipeline parallel size");
  c.dp = need(pc.dp, run, "the data parallel size");
  c.ep = pc.ep.value_or(1);
  c.mbs = need(pc.mbs, run, "the microbatch size");
  c.gbs = need(pc.gbs, run, "the global batch size");
  c.seqLen = need(pc.seq_len, run, "the sequence length");
  c.nodes = pc.nodes.value_or(1);
  c.gpusPerNode = pc.gpus_per_node.value_or(static_cast<int>(run.gpus().size()) / c.nodes);
  c.recompute = pc.recompute.value_or(false);
  c.overlap = pc.overlap.value_or(false);
  c.durationS = seconds;
  c.seed = seed;
  c.powerWindowS = cal.power_window_s;
  const double limit = measuredPowerLimit(cal);
  if (std::isfinite(limit)) c.powerLimitW = limit;
  const double in0 = nodeInlet(cal, 0);
  if (std::isfinite(in0)) c.inletTempC = in0;
  if (c.nodes > 1) {
    const double inN = nodeInlet(cal, c.nodes - 1);
    if (std::isfinite(in0) && std::isfinite(inN)) c.inletRisePerNodeC = (inN - in0) / (c.nodes - 1);
  }
  c.trace.ranks = sim::TraceSelection::Ranks::None;
  c.sampleJitterMs = 0;
  c.runName = "whatif layout";
  return c;
}

// Experimental: the calibration's idle power, compute power and thermal resistance written into
// the profile (LayoutOptions::apply_fits).
void applyFits(sim::PlatformProfile& prof, const Calibration& cal) {
  std::vector<double> idle, idleT, w, r;
  for (const GpuCalibration& g : cal.gpus) {
    idle.push_back(g.power.idle_w), idleT.push_back(g.power.idle_temp_c);
    w.push_back(g.power.group_w[static_cast<size_t>(PowerGroup::Compute)]);
    if (g.thermal.upstream_gpu < 0) r.push_back(g.thermal.resistance_c_per_w);
  }
  const sim::PowerModel pm(prof, std::vector<double>(1, 1.0));
  const double i = median(idle), t = median(idleT);
  if (std::isfinite(i) && std::isfinite(t))
    prof.power_base_w =
        std::max(0.0, prof.power_base_w + i - pm.power(0, prof.idle_sm_clock_mhz, t, 0.0));
  const double wc = median(w);
  if (std::isfinite(wc) && wc > 0 && prof.activity_gemm > 0)
    prof.power_dyn_max_w = wc / prof.activity_gemm;
  const double rr = median(r), r0 = prof.die_resistance_c_per_w + prof.sink_resistance_c_per_w;
  if (std::isfinite(rr) && rr > 0 && r0 > 0) {
    prof.die_resistance_c_per_w *= rr / r0;
    prof.sink_resistance_c_per_w *= rr / r0;
  }
}

struct TempFile {
  fs::path path;
  TempFile() {
    static std::atomic<unsigned> counter{0};
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() /
           fmt::format("wattline-whatif-{}-{}.h5", static_cast<long long>(now), counter++);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

WhatifOutcome simulateAndMeasure(const sim::SimConfig& c, const Progress& progress) {
  TempFile tmp;
  try {
    sim::simulate(c, tmp.path, progress, nullptr);
  } catch (const sim::InvalidConfig& e) {
    throw LayoutUnsupported(
        fmt::format("the simulator cannot run TP {} x PP {} x DP {}, "
                    "microbatch {}: {}",
                    c.tp, c.pp, c.dp, c.mbs, e.what()));
  }
  return measureRun(*RunFile::open(tmp.path));
}

double ratio(double measured, double b, double a) {
  return measured * b / a;
}

}  // namespace

LayoutProjection projectLayout(const RunFile& run, const Calibration& cal,
                               const WhatifSetting& setting, const WhatifLayout& layout,
                               const LayoutOptions& options, const Progress& progress) {
  const WhatifOutcome measured = measureRun(run);
  const double span = static_cast<double>(run.info().end_ns - run.info().start_ns) * 1e-9;
  // The measured run's training time (its span less the simulator's idle lead-in and lead-out),
  // at most max_simulated_s, and at least four measured steps.
  const double seconds =
      std::max(std::min(span - 4.0, options.max_simulated_s), 4.0 * measured.step_s);
  sim::SimConfig a = measuredConfig(run, cal, seconds, options.seed);
  if (options.apply_fits) applyFits(a.platform, cal);
  sim::SimConfig b = a;
  b.tp = layout.tp.value_or(a.tp), b.pp = layout.pp.value_or(a.pp);
  b.dp = layout.dp.value_or(a.dp), b.mbs = layout.mbs.value_or(a.mbs);
  if (setting.power_limit_w) b.powerLimitW = *setting.power_limit_w;
  if (setting.inlet_temp_c) b.inletTempC = *setting.inlet_temp_c;
  b.unthrottledGpus = setting.unthrottled_gpus;
  try {
    sim::validateConfig(b);
  } catch (const sim::InvalidConfig& e) {
    throw LayoutUnsupported(
        fmt::format("the simulator cannot run TP {} x PP {} x DP {}, "
                    "microbatch {}: {}",
                    b.tp, b.pp, b.dp, b.mbs, e.what()));
  }
  LayoutProjection p;
  p.tp = b.tp, p.pp = b.pp, p.dp = b.dp, p.mbs = b.mbs;
  p.simulated_s = seconds;
  p.sim_projected = simulateAndMeasure(b, progress.sub(0.0, 0.5));
  p.sim_measured = simulateAndMeasure(a, progress.sub(0.5, 1.0));
  const WhatifOutcome& sa = p.sim_measured;
  const WhatifOutcome& sb = p.sim_projected;
  WhatifRow& r = p.row;
  r.kind = "projected layout";
  r.power_limit_w = b.powerLimit();
  r.inlet_temp_c = b.inletTempC;
  r.unthrottled_gpus = setting.unthrottled_gpus;
  WhatifOutcome& v = r.value;
  v.step_s = ratio(measured.step_s, sb.step_s, sa.step_s);
  v.tokens_per_s = ratio(measured.tokens_per_s, sb.tokens_per_s, sa.tokens_per_s);
  v.energy_per_token_j =
      ratio(measured.energy_per_token_j, sb.energy_per_token_j, sa.energy_per_token_j);
  v.peak_temp_c = measured.peak_temp_c + (sb.peak_temp_c - sa.peak_temp_c);
  v.throttled_fraction = sb.throttled_fraction;
  // The uncertainty: how far the two estimates (the ratio and the simulation at B alone) differ.
  WhatifOutcome& u = r.uncertainty;
  u.step_s = std::abs(v.step_s - sb.step_s);
  u.tokens_per_s = std::abs(v.tokens_per_s - sb.tokens_per_s);
  u.energy_per_token_j = std::abs(v.energy_per_token_j - sb.energy_per_token_j);
  u.peak_temp_c = std::abs(v.peak_temp_c - sb.peak_temp_c);
  p.notes.push_back(fmt::format(
      "layout TP {} x PP {} x DP {}, microbatch {}: simulated {:.0f} s of training at the measured "
      "and the new layout from the built-in {} profile with the calibration's inlet, power limit "
      "and power window; projected = measured x simulated(new) / simulated(measured)",
      b.tp, b.pp, b.dp, b.mbs, seconds, a.platform.platform));
  return p;
}

nlohmann::json toJson(const LayoutProjection& p) {
  nlohmann::json j = {{"kind", p.row.kind},
                      {"power_limit_w", p.row.power_limit_w},
                      {"inlet_temp_c", p.row.inlet_temp_c},
                      {"unthrottled_gpus", p.row.unthrottled_gpus},
                      {"tp", p.tp},
                      {"pp", p.pp},
                      {"dp", p.dp},
                      {"mbs", p.mbs}};
  j.update(outcomeJson(p.row.value));
  j["uncertainty"] = outcomeJson(p.row.uncertainty);
  j["method"] = "measured x simulated(new layout) / simulated(measured layout)";
  j["simulated_s"] = p.simulated_s;
  j["simulated_measured_layout"] = outcomeJson(p.sim_measured);
  j["simulated_new_layout"] = outcomeJson(p.sim_projected);
  return j;
}

}  // namespace wl
