// SPDX-License-Identifier: GPL-3.0-or-later
// wattline whatif RUN.h5 [--power-limit W] [--inlet-temp C] [--unthrottle-gpu N[,M...]]
//                        [--sweep power-limit=A:B:STEP] [--power-window S] [--json|--csv]
//                        [--tp N] [--pp N] [--dp N] [--mbs N] [-o|--output OUT.h5]
#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "analysis/calibration.h"
#include "analysis/projected_run.h"
#include "analysis/whatif.h"
#include "analysis/whatif_layout.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "loaders/core/error.h"
#include "loaders/format/run_file.h"

namespace wl::cli {
namespace {

std::string f(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : std::string("-");
}

std::string pm(double v, double u, int digits) {
  return std::isfinite(u) ? fmt::format("{} +- {}", f(v, digits), f(u, digits)) : f(v, digits);
}

std::string gpus(const std::vector<int>& g) {
  std::string s;
  for (int x : g)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s.empty() ? "-" : s;
}

double number(const std::string& opt, const std::string& s) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{}: expected a number, got '{}'", opt, s));
}

std::vector<int> gpuList(const std::string& s) {
  std::vector<int> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = std::min(s.find(',', a), s.size());
    const double v = number("--unthrottle-gpu", s.substr(a, b - a));
    if (v < 0 || v != std::floor(v))
      throw UsageError("--unthrottle-gpu: expected GPU indices (0, 1, ...)");
    out.push_back(static_cast<int>(v));
    a = b + 1;
  }
  return out;
}

int layoutSize(const std::string& opt, const std::string& s) {
  const double v = number(opt, s);
  if (!(v >= 1 && v <= 4096 && v == std::floor(v)))
    throw UsageError(fmt::format("{}: expected a whole number from 1 to 4096", opt));
  return static_cast<int>(v);
}

std::string layoutKind(const LayoutProjection& l) {
  return fmt::format("projected TP{} PP{} DP{} mbs{}", l.tp, l.pp, l.dp, l.mbs);
}

// Progress of the layout's two simulations on stderr: a rewritten line on a terminal, a line
// every 25 % otherwise.
Progress layoutProgress() {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto last = std::make_shared<int>(-1);
  return Progress([tty, last](double fr, std::string_view) {
    const int pct = static_cast<int>(fr * 100.0);
    if (tty && pct != *last) {
      std::fprintf(stderr, "\r\033[Kwhatif: simulating the layouts %3d%%%s", pct,
                   pct >= 100 ? "\n" : "");
      std::fflush(stderr);
      *last = pct;
    } else if (!tty && (pct / 25 != *last / 25 || *last < 0)) {
      std::fprintf(stderr, "whatif: simulating the layouts %3d%%\n", pct);
      *last = pct;
    }
    return true;
  });
}

std::string text(const WhatifProjection& p) {
  std::string s = fmt::format(
      "{}: {} whole iterations, {} tokens per step; projected from the run's own calibration, "
      "not measured\n",
      p.run, p.steps, f(p.tokens_per_step, 0));
  s += fmt::format("{:<30} {:>7} {:>7} {:>10} {:>16} {:>18} {:>16} {:>9}\n", "setting", "limit W",
                   "inlet C", "unthrottled", "step s", "energy/token J", "peak C", "throttled");
  for (const WhatifRow& r : p.rows)
    s += fmt::format(
        "{:<30} {:>7} {:>7} {:>10} {:>16} {:>18} {:>16} {:>9}\n", r.kind, f(r.power_limit_w, 0),
        f(r.inlet_temp_c, 1), gpus(r.unthrottled_gpus), pm(r.value.step_s, r.uncertainty.step_s, 3),
        pm(r.value.energy_per_token_j, r.uncertainty.energy_per_token_j, 4),
        pm(r.value.peak_temp_c, r.uncertainty.peak_temp_c, 1), f(r.value.throttled_fraction, 2));
  for (const std::string& n : p.notes)
    s += "note: " + n + "\n";
  return s;
}

std::string csv(const WhatifProjection& p) {
  std::string s =
      "kind,power_limit_w,inlet_temp_c,unthrottled_gpus,step_s,tokens_per_s,energy_per_token_j,"
      "peak_temp_c,throttled_fraction,step_s_sd,energy_per_token_j_sd,peak_temp_c_sd\n";
  auto c = [](double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(); };
  for (const WhatifRow& r : p.rows) {
    std::string g = gpus(r.unthrottled_gpus);
    if (g == "-") g.clear();
    s += fmt::format("{},{},{},\"{}\",{},{},{},{},{},{},{},{}\n", r.kind, c(r.power_limit_w),
                     c(r.inlet_temp_c), g, c(r.value.step_s), c(r.value.tokens_per_s),
                     c(r.value.energy_per_token_j), c(r.value.peak_temp_c),
                     c(r.value.throttled_fraction), c(r.uncertainty.step_s),
                     c(r.uncertainty.energy_per_token_j), c(r.uncertainty.peak_temp_c));
  }
  return s;
}

}  // namespace

int cmdWhatif(const Args& rawArgs) {
  Args args;  // -o is the one short option; the parser knows long ones
  for (const std::string& a : rawArgs)
    args.push_back(a == "-o" ? "--output" : a);
  ArgParser p("whatif",
              "Project a measured run to another power limit, inlet temperature, set of "
              "unthrottled GPUs or layout (--tp/--pp/--dp/--mbs: the simulator at both layouts, "
              "the measured run scaled by their ratio) with its own calibration (wattline "
              "calibrate): step time, "
              "throughput, energy per token, peak temperature and throttled share per setting, "
              "each with an uncertainty from the calibration's errors; the measured setting "
              "first, with the model's reproduction of it (docs/whatif.md). With -o, the "
              "projection of the one setting is also written as a run marked projected. "
              "Projections are not measurements.");
  p.option("power-limit", "W", "the power limit per GPU (per package on MI250)")
      .option("inlet-temp", "C", "the cold-aisle inlet temperature")
      .option("unthrottle-gpu", "N[,M...]",
              "these GPUs are never slowed by a power or thermal limit (a fixed fan)")
      .option("sweep", "power-limit=A:B:STEP",
              "project every power limit from A to B in steps of STEP (with the other options)")
      .option("tp", "N", "project to this tensor parallel size (simulates the run; docs/whatif.md)")
      .option("pp", "N", "project to this pipeline parallel size (simulates the run)")
      .option("dp", "N", "project to this data parallel size (simulates the run)")
      .option("mbs", "N", "project to this microbatch size (simulates the run)")
      .option("power-window", "S", "the power sensor's averaging window (as calibrate's)")
      .flag("json", "print the projection as JSON (schema in docs/whatif.md)")
      .flag("csv", "print the projection as CSV, one row per setting")
      .option("output", "OUT.h5",
              "also write the projection of the one setting as a run marked projected, which "
              "opens and compares like any other (also -o; not with --sweep)")
      .positionals("RUN.h5", "a Wattline run with telemetry, kernel traces and iterations", 1, 1);
  if (!p.parse(args)) return 0;
  if (p.has("json") && p.has("csv")) throw UsageError("--json and --csv exclude each other");
  const auto output = p.value("output");
  if (output && p.value("sweep"))
    throw UsageError("-o writes one projected run: give one setting, not --sweep");
  WhatifSetting base;
  if (auto v = p.value("power-limit")) {
    base.power_limit_w = number("--power-limit", *v);
    if (!(*base.power_limit_w > 0 && *base.power_limit_w <= 5000))
      throw UsageError("--power-limit: expected 1 to 5000 W");
  }
  if (auto v = p.value("inlet-temp")) {
    base.inlet_temp_c = number("--inlet-temp", *v);
    if (!(*base.inlet_temp_c >= -20 && *base.inlet_temp_c <= 80))
      throw UsageError("--inlet-temp: expected -20 to 80 C");
  }
  if (auto v = p.value("unthrottle-gpu")) base.unthrottled_gpus = gpuList(*v);
  WhatifLayout layout;
  if (auto v = p.value("tp")) layout.tp = layoutSize("--tp", *v);
  if (auto v = p.value("pp")) layout.pp = layoutSize("--pp", *v);
  if (auto v = p.value("dp")) layout.dp = layoutSize("--dp", *v);
  if (auto v = p.value("mbs")) layout.mbs = layoutSize("--mbs", *v);
  if (!layout.empty() && p.value("sweep"))
    throw UsageError("--tp/--pp/--dp/--mbs project one layout: not with --sweep");
  if (!layout.empty() && output)
    throw UsageError("-o does not write a projected layout yet: drop -o or --tp/--pp/--dp/--mbs");
  std::vector<WhatifSetting> settings;
  if (auto v = p.value("sweep")) {
    const std::string prefix = "power-limit=";
    const std::string spec = v->rfind(prefix, 0) == 0 ? v->substr(prefix.size()) : std::string();
    const size_t c1 = spec.find(':'), c2 = c1 == std::string::npos ? c1 : spec.find(':', c1 + 1);
    if (c2 == std::string::npos)
      throw UsageError("--sweep: expected power-limit=FROM:TO:STEP, e.g. power-limit=400:700:50");
    const double a = number("--sweep", spec.substr(0, c1));
    const double b = number("--sweep", spec.substr(c1 + 1, c2 - c1 - 1));
    const double st = number("--sweep", spec.substr(c2 + 1));
    if (!(a > 0 && b >= a && st > 0 && (b - a) / st <= 1000))
      throw UsageError("--sweep: expected 0 < FROM <= TO and STEP > 0 (at most 1000 settings)");
    for (double w = a; w <= b + 1e-9 * b; w += st) {
      WhatifSetting s = base;
      s.power_limit_w = w;
      settings.push_back(s);
    }
  } else if (layout.empty() &&
             (base.power_limit_w || base.inlet_temp_c || !base.unthrottled_gpus.empty())) {
    settings.push_back(base);
  }
  if (output && settings.empty())
    throw UsageError("-o needs a setting: --power-limit, --inlet-temp or --unthrottle-gpu");
  CalibrationOptions opt;
  if (auto w = p.doubleValue("power-window")) {
    if (!(*w >= 0 && *w <= 60)) throw UsageError("--power-window: expected 0 to 60 seconds");
    opt.power_window_s = *w;
  }
  std::error_code ec;
  if (output && std::filesystem::equivalent(*output, p.positional().front(), ec))
    throw UsageError("-o: the projected run cannot replace the run it projects");
  const auto run = RunFile::open(p.positional().front());
  for (int g : base.unthrottled_gpus)
    if (static_cast<size_t>(g) >= run->gpus().size())
      throw UsageError(
          fmt::format("--unthrottle-gpu: the run has GPUs 0 to {}", run->gpus().size() - 1));
  const Calibration cal = calibrateRun(*run, opt);
  WhatifProjection proj = projectRun(*run, cal, settings);
  if (output) writeProjectedRun(*run, cal, settings.front(), *output);
  nlohmann::json j;
  if (p.has("json")) j = toJson(proj);
  if (!layout.empty()) {
    // The layout's row: the simulator at both layouts, the measured run scaled by their ratio
    // (the power limit, inlet and unthrottled GPUs asked for apply to the new layout).
    LayoutProjection l;
    try {
      l = projectLayout(*run, cal, base, layout, {}, layoutProgress());
    } catch (const LayoutUnsupported& e) {
      throw UsageError(e.what());
    }
    WhatifRow r = l.row;
    r.kind = layoutKind(l);
    proj.rows.push_back(r);
    proj.notes.insert(proj.notes.end(), l.notes.begin(), l.notes.end());
    if (p.has("json")) {
      j["settings"].push_back(toJson(l));
      j["notes"] = proj.notes;
    }
  }
  if (p.has("json")) {
    if (output) j["output"] = *output;
    j["calibration"] = toJson(cal);
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else if (p.has("csv"))
    std::fputs(csv(proj).c_str(), stdout);
  else
    std::fputs(text(proj).c_str(), stdout);
  if (output && !p.has("json") && !p.has("csv"))
    std::printf("projected run written to %s\n", output->c_str());
  return 0;
}

}  // namespace wl::cli
