// SPDX-License-Identifier: GPL-3.0-or-later
// wattline calibrate RUN.h5 [-o|--output CAL.json] [--power-window S] [--json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "analysis/calibration.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "loaders/core/error.h"
#include "loaders/core/temp_files.h"
#include "loaders/format/run_file.h"

namespace wl::cli {
namespace {

std::string f(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : std::string("-");
}

std::string text(const Calibration& c) {
  std::string s = fmt::format("{}: {} GPUs, power window {} s ({})\n", c.run, c.gpus.size(),
                              c.power_window_s, c.power_window_source);
  s += "gpu slot  idle W  power fit: R2  rms W  | thermal: inlet C  R C/W  tau s  up  rms C  R2 "
       " | cap W   frac  capped\n";
  for (const GpuCalibration& g : c.gpus) {
    const PowerFit& p = g.power;
    const ThermalFit& t = g.thermal;
    const GovernorFit& v = g.governor;
    s += fmt::format(
        "{:>3} {:>4} {:>7} {:>14} {:>6} | {:>16} {:>6} {:>6} {:>3} {:>6} {:>4} | {:>5} {:>6} "
        "{:>6}\n",
        g.gpu, g.slot, f(p.idle_w, 1), f(p.quality.r2, 3), f(p.quality.rmse, 1), f(t.inlet_c, 1),
        f(t.resistance_c_per_w, 4), f(t.tau_s, 1),
        t.upstream_gpu >= 0 ? std::to_string(t.upstream_gpu) : "-", f(t.quality.rmse, 2),
        f(t.quality.r2, 3), f(v.cap_power_w, 0), f(v.cap_power_frac, 3), f(v.capped_fraction, 2));
  }
  s += "kernel class  clock sensitivity (1: duration ~ 1/clock)  spread  names  time share\n";
  for (const ClassResponse& r : c.classes)
    s += fmt::format("{:<13} {:>17} {:>29} {:>6} {:>11}\n", activityClassId(r.cls),
                     f(r.clock_sensitivity, 3), f(r.spread, 3), r.names, f(r.time_share, 3));
  return s;
}

void writeJson(const std::string& path, const nlohmann::json& j) {
  TempFile tmp(path);
  {
    std::ofstream out(tmp.path());
    out << j.dump(2) << "\n";
    out.close();
    if (!out) throw Error(fmt::format("{}: cannot write", path));
  }
  std::error_code ec;
  tmp.commit(ec);
  if (ec) throw Error(fmt::format("{}: cannot write: {}", path, ec.message()));
}

}  // namespace

int cmdCalibrate(const Args& args) {
  ArgParser p("calibrate",
              "Fit the run's own power, thermal and clock model from its telemetry and kernel "
              "traces: per GPU idle power, power per unit of activity by kernel class, thermal "
              "resistance, time constant, heat capacity and inlet (with the GPU whose exhaust it "
              "breathes), the power the cap holds and the clock's response, and each kernel "
              "class's clock sensitivity, each fit with its error (docs/whatif.md). Reads only "
              "what a measured run has.");
  p.option("output", "CAL.json", "write the calibration as JSON to this file (also -o)")
      .option("power-window", "S",
              "the power sensor's averaging window in seconds (default 1: NVML power.draw)")
      .flag("json", "print the calibration as JSON (schema in docs/whatif.md)")
      .positionals("RUN.h5", "a Wattline run with telemetry and kernel traces", 1, 1);
  Args mapped;
  for (const std::string& a : args)
    mapped.push_back(a == "-o" ? "--output" : a);
  if (!p.parse(mapped)) return 0;
  CalibrationOptions opt;
  if (auto w = p.doubleValue("power-window")) {
    if (!(*w >= 0 && *w <= 60)) throw UsageError("--power-window: expected 0 to 60 seconds");
    opt.power_window_s = *w;
  }
  const auto run = RunFile::open(p.positional().front());
  const Calibration cal = calibrateRun(*run, opt);
  const nlohmann::json j = toJson(cal);
  if (auto out = p.value("output")) writeJson(*out, j);
  if (p.has("json"))
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  else
    std::fputs(text(cal).c_str(), stdout);
  return 0;
}

}  // namespace wl::cli
