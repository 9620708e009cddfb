// SPDX-License-Identifier: GPL-3.0-or-later
// wattline analyze RUN.h5 [--json] [--range START:END] [--gpus LIST] [--ranks LIST]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/analysis_json.h"
#include "analysis/notes.h"
#include "analysis/projected_run.h"
#include "analysis/run_analysis.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/range_args.h"
#include "loaders/core/error.h"
#include "loaders/core/time_format.h"
#include "loaders/format/run_file.h"

namespace wl::cli {
namespace {

// Fixed-point with `digits` decimals; a value too large for that to be read (|v| >= 1e12: a
// corrupt input) in scientific notation with 4 significant digits.
std::string fixedOrSci(double v, int digits) {
  return std::fabs(v) < 1e12 ? fmt::format("{:.{}f}", v, digits) : fmt::format("{:.4g}", v);
}

std::string num(double v, int digits = 1) {
  return std::isfinite(v) ? fixedOrSci(v, digits) : "-";
}

std::string pct(double f, int digits = 1) {
  return std::isfinite(f) ? fixedOrSci(100.0 * f, digits) + " %" : "-";
}

std::string ms(int64_t ns) {
  return fmt::format("{:.1f}", static_cast<double>(ns) * 1e-6);
}

std::string energyText(double j) {
  if (!std::isfinite(j)) return "-";
  if (std::fabs(j) >= 1e6) return fixedOrSci(j * 1e-6, 3) + " MJ";
  if (std::fabs(j) >= 1e3) return fmt::format("{:.2f} kJ", j * 1e-3);
  return fmt::format("{:.1f} J", j);
}

// Power domains of several GPUs (MI250 packages): their power, cap and power-cap throttling, with
// each GPU's estimated share of the energy. Nothing when every domain is one GPU's board.
std::string domainsText(const RunAnalysis& a) {
  bool anyPackage = false;
  for (const DomainAnalysis& d : a.domains)
    anyPackage = anyPackage || d.domain.gpus.size() > 1;
  if (!anyPackage) return "";
  std::string s =
      fmt::format("\npower domains ({}; power and energy per domain)\n", a.domains.size());
  s += fmt::format("  {:>4} {:<12} {:<9} {:>6} {:>11} {:>7} {:>7} {:>6} {:>9}  {}\n", "id", "name",
                   "gpus", "power", "energy", "P mean", "P max", "cap", "cap thr.",
                   "estimated share per GPU");
  for (const DomainAnalysis& d : a.domains) {
    std::string gpus, shares;
    for (int g : d.domain.gpus) {
      gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
      if (const GpuAnalysis* ga = a.gpu(g))
        shares += fmt::format("{}gpu {} {}", shares.empty() ? "" : ", ", g,
                              energyText(ga->energy_share.energy_j));
    }
    s += fmt::format(
        "  {:>4} {:<12} {:<9} {:>6} {:>11} {:>7} {:>7} {:>6} {:>9}  {}{}\n", d.domain.id,
        d.domain.name, gpus,
        d.domain.power_gpu >= 0 ? "gpu " + std::to_string(d.domain.power_gpu) : std::string("sum"),
        energyText(d.energy_j), num(d.power.mean), num(d.power.max), num(d.domain.power_limit_w, 0),
        pct(d.powerCapFraction()), shares,
        d.domain.gpus.size() > 1 && !shares.empty() ? " (estimated)" : "");
  }
  s += "  (P in W; cap thr.: kernel time throttled by a power cause against the domain's cap)\n";
  return s;
}

// The run, its range and validity.
std::string runText(const RunAnalysis& a) {
  std::string s;
  const RunInfo& i = a.info;
  s += fmt::format("run        {}{}\n", i.name.empty() ? "(unnamed)" : i.name,
                   i.simulated         ? "  [SIMULATED]"
                   : isProjectedRun(i) ? "  [PROJECTED]"
                                       : "");
  s += fmt::format("platform   {}\n", i.platform.empty() ? "(unknown)" : i.platform);
  s += fmt::format("range      {} .. {} ({}), {} GPUs, {} ranks\n", formatUtc(a.range.t0),
                   formatUtc(std::min(a.range.t1, i.end_ns)),
                   formatDuration(static_cast<int64_t>(a.duration_s * 1e9)), a.gpus.size(),
                   a.ranks.size());
  if (a.quality.valid) {
    s += "data       valid\n";
  } else {
    s += "data       INVALID RUN:";
    for (const std::string& r : a.quality.invalid_reasons)
      s += " " + r + ";";
    s += "\n";
  }
  return s;
}

// The totals: energy, power, throttling, iterations, throughput and efficiency.
std::string totalsText(const RunAnalysis& a) {
  std::string s;
  const RunTotals& t = a.totals;
  s += "\ntotals\n";
  s += fmt::format("  energy              {}\n", energyText(t.energy_j));
  const bool boards = t.domain_kind == "board" || t.domain_kind.empty();
  const std::string over = boards ? std::string("GPUs")
                                  : fmt::format("{} power domains{}", t.domains,
                                                t.domain_kind == "package" ? " (packages)" : "");
  s += fmt::format("  mean power          {} W (mean over {})", num(t.mean_power_w), over);
  if (!boards)
    s += fmt::format(", {} W per GPU over {} GPUs", num(t.mean_power_per_device_w), t.domain_gpus);
  s += "\n";
  s += fmt::format("  peak power          {} W{}\n", num(t.peak_power_w),
                   boards ? "" : " (of one power domain)");
  std::string reasons;
  for (size_t c = 0; c < kThrottleCauseCount; ++c)
    if (std::isfinite(t.by_cause_fraction[c]) && t.by_cause_fraction[c] > 0)
      reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ",
                             throttleCauseId(static_cast<ThrottleCause>(c)),
                             pct(t.by_cause_fraction[c], 2));
  s += fmt::format("  throttled           {} of kernel time{}\n", pct(t.throttled_fraction, 2),
                   reasons.empty() ? "" : " (" + reasons + ")");
  if (t.iterations > 0) {
    s += fmt::format("  iterations          {} of {} s (cv {})\n", t.iterations,
                     num(t.iteration_time_s, 3), num(a.iterations.step_s.cv, 3));
    s += fmt::format("  throughput          {} samples/s, {} tokens/s\n",
                     num(t.throughput_samples_per_s, 2), num(t.tokens_per_s, 0));
    s += fmt::format(
        "  energy / iteration  {}   energy / token {} J   efficiency {} "
        "samples/(s*MJ)\n",
        energyText(t.energy_per_iteration_j), num(t.energy_per_token_j, 4),
        num(t.efficiency_samples_per_s_mj, 2));
  }
  return s;
}

// One line per GPU.
std::string gpusText(const RunAnalysis& a) {
  std::string s;
  s += fmt::format("\nGPUs ({})\n", a.gpus.size());
  s += fmt::format(
      "  {:>4} {:>4} {:>4} {:>11} {:>7} {:>7} {:>7} {:>6} {:>6} {:>7} {:>9} {:>10} "
      "{:>5} {:>6} {:>9}\n",
      "gpu", "node", "slot", "energy", "P mean", "P min", "P max", "T mean", "T max", "clk",
      "throttled", "deficit", "P2A", "excurs", "dP/dt p99");
  for (const GpuAnalysis& g : a.gpus) {
    const Burstiness& b = g.burstiness;
    s += fmt::format(
        "  {:>4} {:>4} {:>4} {:>11} {:>7} {:>7} {:>7} {:>6} {:>6} {:>7} {:>9} {:>10} {:>5} {:>6} "
        "{:>9}\n",
        g.info.id, g.info.node, g.info.slot >= 0 ? g.info.slot : g.info.local_index,
        energyText(g.energy_j), num(g.power.mean), num(g.power.min), num(g.power.max),
        num(g.temp.mean), num(g.temp.max), num(g.sm_clock.mean, 0), pct(g.throttle.fraction()),
        num(g.throttle.has_clock ? g.throttle.clock_deficit_mhz_s : kNaN, 0),
        num(b.peak_to_average, 2),
        std::isfinite(b.power_limit_w) ? std::to_string(b.excursions) : "-",
        b.ramp_computed ? num(b.ramp.p99, 0) : "-");
  }
  s += "  (energy trapezoid; P in W, T in C, clock in MHz, deficit in MHz*s, dP/dt in W/s)\n";
  return s;
}

// The first 20 throttle intervals.
std::string throttleIntervalsText(const RunAnalysis& a) {
  std::string s;
  size_t nIntervals = 0;
  for (const GpuAnalysis& g : a.gpus)
    nIntervals += g.throttle.intervals.size();
  s += fmt::format("\nthrottle intervals ({})\n", nIntervals);
  size_t shown = 0;
  for (const GpuAnalysis& g : a.gpus)
    for (const ThrottleInterval& iv : g.throttle.intervals) {
      if (shown++ >= 20) break;
      s += fmt::format("  gpu {:>4}  at {:>10} s  for {:>9}  {:<20} min clock {} MHz\n", iv.gpu,
                       num(static_cast<double>(iv.start_ns - a.range.t0) * 1e-9, 2),
                       formatDuration(iv.end_ns - iv.start_ns), throttleCauseLabel(iv.cause),
                       num(iv.min_clock_mhz, 0));
    }
  if (nIntervals > 20) s += fmt::format("  ... {} more (see --json)\n", nIntervals - 20);
  return s;
}

// One line per rank: the HTA breakdown.
std::string ranksText(const RunAnalysis& a) {
  std::string s;
  s += fmt::format("\nranks ({}; HTA breakdown, times in ms)\n", a.ranks.size());
  s += fmt::format(
      "  {:>5} {:>4} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} "
      "{:>8}\n",
      "rank", "gpu", "kernels", "comm", "span", "idle", "compute", "non-comp", "comm", "exposed",
      "memory", "overlap");
  for (const RankAnalysis& r : a.ranks) {
    const RankBreakdown& b = r.breakdown;
    s += fmt::format(
        "  {:>5} {:>4} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8}\n", b.rank,
        b.gpu, b.kernels, b.comm_kernels, ms(b.span_ns), ms(b.idle_ns), ms(b.compute_ns),
        ms(b.non_compute_ns), ms(b.comm_ns), ms(b.exposed_comm_ns), ms(b.memory_ns),
        pct(b.overlap_ratio));
  }
  return s;
}

// The top kernels and the kernel categories.
std::string kernelsText(const RunAnalysis& a) {
  std::string s;
  if (!a.top_kernels.empty()) {
    s += "\ntop kernels (by total time)\n";
    s += fmt::format("  {:>12} {:>9} {:>11} {:<14} {}\n", "total ms", "count", "mean us", "class",
                     "name");
    for (const KernelStat& k : a.top_kernels)
      s += fmt::format("  {:>12} {:>9} {:>11} {:<14} {}\n", ms(k.total_ns), k.count,
                       num(k.mean_ns() * 1e-3, 1), k.others ? "" : kernelClassName(k.cls),
                       k.name_text.substr(0, 80));
    s += "\nkernel categories (ms; seed paper order / corrected order)\n";
    for (size_t c = 0; c < kKernelCategoryCount; ++c)
      if (a.seed_categories[c] || a.corrected_categories[c])
        s += fmt::format("  {:<22} {:>12} {:>12}\n",
                         kernelCategoryLabel(static_cast<KernelCategory>(c)),
                         ms(a.seed_categories[c]), ms(a.corrected_categories[c]));
  }
  return s;
}

// Collective arrival skew and the straggler.
std::string stragglersText(const RunAnalysis& a) {
  std::string s;
  const StragglerReport& st = a.stragglers;
  if (st.instances > 0) {
    s += fmt::format("\nstragglers ({} collective instances matched across ranks)\n", st.instances);
    s += fmt::format("  arrival skew        mean {} ms, p50 {} ms, p99 {} ms, max {} ms\n",
                     num(st.skew_mean_ns * 1e-6, 3), num(st.skew_p50_ns * 1e-6, 3),
                     num(st.skew_p99_ns * 1e-6, 3), num(st.skew_max_ns * 1e-6, 3));
    if (st.straggler_rank >= 0)
      s += fmt::format(
          "  straggler           rank {} (GPU {}), last at {} of instances; likely "
          "cause: {}\n",
          st.straggler_rank, st.straggler_gpu, pct(st.straggler_share), st.likely_cause);
  }
  return s;
}

// Spatial imbalance by slot and inside packages.
std::string spatialText(const RunAnalysis& a) {
  std::string s;
  if (a.spatial.by_slot.size() > 1) {
    s += "\nspatial imbalance (mean over nodes, by slot)\n";
    for (const SlotSummary& sl : a.spatial.by_slot)
      s += fmt::format("  slot {:>2}  {:>3} GPUs  T {:>6} C  clock {:>6} MHz  power {:>6} W\n",
                       sl.slot, sl.gpus, num(sl.temp_mean_c), num(sl.clock_mean_mhz, 0),
                       num(sl.power_mean_w));
    // No slot has a temperature (a run with traces but no telemetry): unknown, not slot -1.
    if (a.spatial.hottest_slot < 0 || a.spatial.coolest_slot < 0)
      s += "  hottest and coolest slot: unknown (no temperature samples)\n";
    else
      s += fmt::format("  hottest slot {} is {} hotter than coolest slot {}\n",
                       a.spatial.hottest_slot, num(a.spatial.hottest_vs_coolest_pct) + " %",
                       a.spatial.coolest_slot);
  }
  if (!a.spatial.packages.empty()) {
    const Spread& sk = a.spatial.package_temp_skew_c;
    s += fmt::format(
        "\nintra-package GCD skew ({} packages): mean temperature skew {} C (mean), {} C (max); "
        "clock skew {} MHz (mean)\n",
        a.spatial.packages.size(), num(sk.mean), num(sk.max),
        num(a.spatial.package_clock_skew_mhz.mean, 0));
    size_t shown = 0;
    for (const PackageSkew& p : a.spatial.packages) {
      if (shown++ >= 16) {
        s += fmt::format("  ... {} more (see --json)\n", a.spatial.packages.size() - 16);
        break;
      }
      std::string temps;
      for (size_t k = 0; k < p.gpus.size(); ++k)
        temps += fmt::format("{}gpu {} {} C", k ? ", " : "", p.gpus[k], num(p.temp_mean_c[k]));
      s += fmt::format("  {:<12} node {:>3}  {}  skew {} C (peak {} C), clock {} MHz\n", p.name,
                       p.node, temps, num(p.temp_skew_c), num(p.temp_max_skew_c),
                       num(p.clock_skew_mhz, 0));
    }
  }
  return s;
}

// Data-quality notes and the analysis notes.
std::string qualityText(const RunAnalysis& a) {
  std::string s;
  s += fmt::format("\ndata quality ({} notes)\n", a.quality.notes.size());
  for (const QualityNote& n : a.quality.notes)
    s += fmt::format("  {:<7} {}: {}\n", n.severity == Severity::Warning ? "warning" : "info",
                     n.subject, n.message);
  for (const std::string& n : a.notes)
    s += fmt::format("\nnote: {}\n", n);
  return s;
}

// What heat and power limits cost the job (`wattline explain`'s sentences).
std::string costText(const RunAnalysis& a) {
  std::string s = "\ncost of heat and power limits (wattline explain)\n";
  for (const std::string& line : explainCost(a.cost))
    s += "  " + line + "\n";
  return s;
}

// The run's notes (RUN.h5.notes.json): range, scope, energy and text.
std::string notesText(const nlohmann::json& notes) {
  std::string s = fmt::format("\nnotes ({}; analyze --json: timeline_notes)\n", notes.size());
  for (const nlohmann::json& n : notes) {
    const auto range = n["range_ns"].get<std::vector<int64_t>>();
    const std::string gpus = formatIdList(n["gpus"].get<std::vector<int>>());
    const std::string ranks = formatIdList(n["ranks"].get<std::vector<int>>());
    std::string numbers;
    if (n.contains("error")) {
      numbers = n["error"].get<std::string>();
    } else {
      const nlohmann::json& e = n["analysis"]["totals"]["energy_j"];
      numbers = "energy " + energyText(e.is_number() ? e.get<double>() : kNaN);
    }
    s +=
        fmt::format("  {} .. {}  gpus {}{}  {}\n    {}\n", formatDuration(range[0]),
                    formatDuration(range[1]), gpus.empty() ? "all" : gpus,
                    ranks.empty() ? "" : ", ranks " + ranks, numbers, n["text"].get<std::string>());
  }
  return s;
}

void printText(const RunAnalysis& a) {
  std::string s;
  s += runText(a);
  s += totalsText(a);
  s += costText(a);
  s += gpusText(a);
  s += domainsText(a);
  s += throttleIntervalsText(a);
  s += ranksText(a);
  s += kernelsText(a);
  s += stragglersText(a);
  s += spatialText(a);
  s += qualityText(a);
  std::fputs(s.c_str(), stdout);
}

}  // namespace

int cmdAnalyze(const Args& args) {
  ArgParser p("analyze",
              "Run the built-in analyses on a run: telemetry statistics and energy, throttle "
              "detection, burstiness, thermal response, HTA kernel breakdowns, kernel tables, "
              "iterations, stragglers, spatial imbalance and data quality (docs/analyses.md).");
  p.flag("json", "print JSON instead of tables (schema in docs/analyses.md)")
      .option("range", "START:END",
              "analyse only [START, END): durations after the run start (10s:25.5s, 1m:2m, bare "
              "seconds) or absolute times in ns; either side may be empty")
      .option("gpus", "LIST", "analyse only these GPUs (0,2,4-7)")
      .option("ranks", "LIST", "analyse only these ranks (0,2,4-7)")
      .option("raw-budget", "N",
              "most raw samples for |dP/dt|, histograms and counters (default 20000000; 0: no "
              "limit)")
      .option("threads", "N",
              "threads for the per-GPU and per-rank steps (default: $WATTLINE_THREADS, else "
              "every core; the results do not depend on it)")
      .positionals("RUN.h5", "a Wattline run", 1, 1);
  if (!p.parse(args)) return 0;
  AnalysisScope scope;
  AnalysisOptions options;
  if (auto v = p.value("gpus")) scope.gpus = parseIndexList("gpus", *v);
  if (auto v = p.value("ranks")) scope.ranks = parseIndexList("ranks", *v);
  if (auto v = p.value("raw-budget")) {
    try {
      size_t used = 0;
      const long long n = std::stoll(*v, &used);
      if (used != v->size() || n < 0) throw std::invalid_argument("negative");
      options.rawSampleBudget = static_cast<uint64_t>(n);
    } catch (const std::logic_error&) {
      throw UsageError(fmt::format("--raw-budget expects a number of samples, got '{}'", *v));
    }
  }
  if (auto v = p.value("threads")) {
    try {
      size_t used = 0;
      const int n = std::stoi(*v, &used);
      if (used != v->size() || n < 1) throw std::invalid_argument("not positive");
      options.threads = n;
    } catch (const std::logic_error&) {
      throw UsageError(
          fmt::format("--threads expects a number of threads (1 or more), got '{}'", *v));
    }
  }
  std::optional<std::string> rangeText = p.value("range");
  if (rangeText) checkRangeSyntax(*rangeText);  // before the run is opened
  const auto run = RunFile::open(p.positional().front());
  if (rangeText)
    scope.range = rangeInsideRun(*run, parseRunRange(*rangeText, run->info().start_ns));
  const RunAnalysis a = analyzeRun(*run, scope, options);
  // The run's notes (its sidecar) with their ranges' numbers; a bad sidecar is named on stderr
  // and the analysis goes on without it.
  nlohmann::json notes;
  try {
    const std::vector<Note> list = readNotes(p.positional().front());
    if (!list.empty()) notes = notesAnalysisJson(*run, list, options);
  } catch (const Error& e) {
    std::fprintf(stderr, "wattline: warning: notes not read: %s\n", e.what());
  }
  if (p.has("json")) {
    nlohmann::json j = toJson(a);
    if (!notes.is_null()) j["timeline_notes"] = notes;
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else {
    printText(a);
    if (!notes.is_null()) std::fputs(notesText(notes).c_str(), stdout);
  }
  return 0;
}

}  // namespace wl::cli
