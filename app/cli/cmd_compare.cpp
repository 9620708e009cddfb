// SPDX-License-Identifier: GPL-3.0-or-later
// wattline compare RUN.h5|FOLDER... [--baseline NAME] [--json|--csv] [--filter K=V,...]
//                  [--sort COLUMN] [--normalize none|gpu|token|iteration]
//                  [--per device|package] [--no-cache] ...
// wattline compare A.h5 B.h5 --iterations [--json|--csv] (cmd_compare_iterations.cpp)
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <unistd.h>

#include "analysis/study/study.h"
#include "analysis/study/study_report.h"
#include "analysis/study/study_table.h"
#include "app/cli/arg_parser.h"
#include "app/cli/cmd_compare_iterations.h"
#include "app/cli/commands.h"
#include "loaders/core/error.h"

namespace wl::cli {
namespace {

// Progress on stderr: a rewritten line on a terminal, otherwise a line every 10% naming what is
// being done, and "done" once, at the end.
Progress stderrProgress(bool quiet) {
  if (quiet) return {};
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto last = std::make_shared<int>(-1);
  auto lastTime = std::make_shared<std::chrono::steady_clock::time_point>();
  return Progress([tty, last, lastTime](double f, std::string_view stage) {
    const int pct = static_cast<int>(f * 100.0);
    const auto now = std::chrono::steady_clock::now();
    if (tty) {
      if (pct != *last || now - *lastTime > std::chrono::milliseconds(500)) {
        std::fprintf(stderr, "\r\033[Kcompare: %3d%% %.*s", pct, static_cast<int>(stage.size()),
                     stage.data());
        std::fflush(stderr);
        *last = pct;
        *lastTime = now;
      }
      if (f >= 1.0) std::fputs("\r\033[K", stderr);
    } else if ((pct / 10 != *last / 10 || *last < 0) && (stage != "done" || f >= 1.0)) {
      // A sub-task finishing reports "done" at its own end; in a log only the whole job's end
      // says done (nine "compare: NN% done" lines once told a log reader nothing).
      std::fprintf(stderr, "compare: %3d%% %.*s\n", pct, static_cast<int>(stage.size()),
                   stage.data());
      *last = pct;
    }
    return true;
  });
}

std::string num(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-";
}

std::string pct(double f) {
  return std::isfinite(f) ? fmt::format("{:+.1f}%", 100.0 * f) : "-";
}

std::string opt(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "-";
}

// The text table: a chosen set of columns; --csv and --json carry all of them.
void printText(const Study& study, const StudyTable& table) {
  struct Shown {
    const char* id;
    const char* head;
    int digits;
  };
  static constexpr Shown kShown[] = {{"energy_per_token_j", "J/token", 4},
                                     {"tokens_per_s", "tokens/s", 0},
                                     {"efficiency_samples_per_s_mj", "eff", 2},
                                     {"mean_power_w", "P mean", 1},
                                     {"peak_power_w", "P peak", 1},
                                     {"temp_max_c", "T max", 1},
                                     {"throttled_fraction", "throttled", 3},
                                     {"throttle_cost_s", "heat cost s", 3},
                                     {"peak_to_average", "P2A", 2}};
  const auto columns = studyColumns();
  std::vector<size_t> idx;
  for (const Shown& s : kShown)
    for (size_t c = 0; c < columns.size(); ++c)
      if (columns[c].id == s.id) idx.push_back(c);
  size_t labelWidth = 5;
  for (const StudyRow& row : table.rows)
    labelWidth = std::max(labelWidth, study.runs[row.run].label.size());
  labelWidth = std::min<size_t>(labelWidth, 64);

  std::string out;
  out += fmt::format(
      "{} runs{}{}\n", table.rows.size(),
      table.normalization == Normalization::None
          ? std::string()
          : fmt::format(", normalized per {}", table.normalization == Normalization::PerGpu &&
                                                       table.per == PerUnit::Package
                                                   ? std::string_view("package")
                                                   : normalizationId(table.normalization)),
      table.baseline >= 0
          ? fmt::format(", baseline '{}'", study.runs[static_cast<size_t>(table.baseline)].label)
          : std::string());
  out += fmt::format("mean power and \"per GPU\": {}\n", perUnitText(table.per));
  out += fmt::format("{:<{}} {:<8} {:>4} {:>3} {:>3} {:>4} {:>4} {:>3} {:>3}", "run", labelWidth,
                     "platform", "gpus", "tp", "pp", "dp", "mbs", "rc", "ov");
  for (size_t k = 0; k < idx.size(); ++k)
    out += fmt::format(" {:>12}", kShown[k].head);
  if (table.baseline >= 0) out += fmt::format(" {:>10} {:>10}", "d J/token", "d tokens/s");
  out += "\n";
  const size_t ept = idx[0], tps = idx[1];
  for (const StudyRow& row : table.rows) {
    const StudyRun& r = study.runs[row.run];
    const RunSummary& s = r.summary;
    const ParallelConfig& c = s.config;
    // Too long: elide the middle, keeping the end (a duplicate's file name tells runs apart).
    std::string label = r.label;
    if (label.size() > labelWidth) {
      const size_t tail = (labelWidth - 2) / 2;
      label = label.substr(0, labelWidth - 2 - tail) + ".." + label.substr(label.size() - tail);
    }
    out += fmt::format("{:<{}} {:<8} {:>4} {:>3} {:>3} {:>4} {:>4} {:>3} {:>3}", label, labelWidth,
                       s.platform.empty() ? "-" : s.platform.substr(0, 8),
                       s.readable ? std::to_string(s.gpu_count) : "-", opt(c.tp), opt(c.pp),
                       opt(c.dp), opt(c.mbs), c.recompute ? (*c.recompute ? "y" : "n") : "-",
                       c.overlap ? (*c.overlap ? "y" : "n") : "-");
    if (!s.valid) {
      // The first two reasons; --json and --csv carry them all.
      std::string reasons;
      for (size_t k = 0; k < s.invalid_reasons.size() && k < 2; ++k)
        reasons += (k ? "; " : "") + s.invalid_reasons[k];
      if (s.invalid_reasons.size() > 2)
        reasons += fmt::format(" (and {} more)", s.invalid_reasons.size() - 2);
      out += "  INVALID: " + reasons + "\n";
      continue;
    }
    for (size_t k = 0; k < idx.size(); ++k)
      out += fmt::format(" {:>12}", num(row.values[idx[k]], kShown[k].digits));
    if (table.baseline >= 0)
      out += fmt::format(" {:>10} {:>10}", pct(row.deltas[ept].relative),
                         pct(row.deltas[tps].relative));
    out += "\n";
  }
  const std::vector<std::string> front = paretoLabels(study, table);
  if (!front.empty()) {
    out += "\nPareto front (tokens/s vs J/token):";
    for (const std::string& f : front)
      out += " '" + f + "'";
    out += "\n";
  }
  std::fputs(out.c_str(), stdout);
}

}  // namespace

int cmdCompare(const Args& args) {
  ArgParser p("compare",
              "Compare runs: a table of every analysis per run (the totals of 'wattline analyze' "
              "and more), normalized per GPU, token or iteration, with deltas to a baseline, "
              "ranks and the throughput / energy-per-token Pareto front (docs/compare.md). "
              "Summaries are cached beside each run (RUN.h5.summary.json), so a study opens "
              "again without reading samples.");
  p.flag("iterations",
         "compare exactly two runs step by step: what differs, the iteration-warped alignment "
         "and per common step the step time, energy, power, temperature, throttling, exposed "
         "communication and bubble of A, B and A - B (docs/compare.md, \"Two runs\")")
      .flag("json", "print JSON (schema in docs/compare.md)")
      .flag("csv", "print the table as CSV")
      .option("baseline", "NAME", "the run deltas are relative to: its label, name, file or path")
      .option("filter", "KEY=VALUE,...",
              "keep runs whose configuration matches (model, platform, gpus, nodes, tp, pp, dp, "
              "ep, cp, mbs, gbs, seq_len, recompute, overlap, valid, simulated, name, label); a "
              "key given twice matches either value")
      .option("sort", "COLUMN", "sort by a column id or configuration key; -COLUMN descending")
      .option("normalize", "MODE", "none (default), gpu, token or iteration")
      .option("per", "UNIT",
              "what \"per GPU\" and mean power are per: device (default; a GPU, one GCD on "
              "MI250) or package (a power domain: an MI250 package of two GCDs, a board on "
              "H100/H200)")
      .option("cache-dir", "DIR", "keep the summary cache in DIR instead of beside each run")
      .flag("no-cache", "neither read nor write the summary cache")
      .option("threads", "N", "runs analysed at once (default: cores, at most 4)")
      .flag("quiet", "no progress on stderr")
      .positionals("RUN.h5|FOLDER", "runs, or folders searched recursively for *.h5", 1, -1);
  std::vector<std::string> normalizations, pers;
  for (Normalization n : {Normalization::None, Normalization::PerGpu, Normalization::PerToken,
                          Normalization::PerIteration})
    normalizations.emplace_back(normalizationId(n));
  for (PerUnit u : {PerUnit::Device, PerUnit::Package})
    pers.emplace_back(perUnitId(u));
  p.choices("normalize", std::move(normalizations)).choices("per", std::move(pers));
  if (!p.parse(args)) return 0;
  if (p.has("json") && p.has("csv")) throw UsageError("--json and --csv exclude each other");
  if (p.has("iterations")) return cmdCompareIterations(p, stderrProgress(p.has("quiet")));

  StudyTableOptions table;
  try {
    if (auto v = p.value("normalize")) table.normalization = parseNormalization(*v);
    if (auto v = p.value("per")) table.per = parsePerUnit(*v);
    if (auto v = p.value("filter")) {
      parseRunFilter(*v);  // reject bad syntax before any run is read
      table.filter = *v;
    }
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (auto v = p.value("sort")) {
    try {
      parseSortKey(*v);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    table.sort = *v;
  }
  if (auto v = p.value("baseline")) table.baseline = *v;

  StudyLoadOptions load;
  if (p.has("no-cache")) load.cache.read = load.cache.write = false;
  if (auto v = p.value("cache-dir")) load.cache.dir = *v;
  if (auto n = p.intValue("threads")) {
    if (*n < 1 || *n > 64) throw UsageError(fmt::format("--threads must be 1..64, got {}", *n));
    load.threads = static_cast<unsigned>(*n);
  }

  std::vector<std::filesystem::path> inputs;
  for (const std::string& s : p.positional())
    inputs.emplace_back(s);
  const std::vector<std::filesystem::path> runs = expandRunPaths(inputs);
  if (runs.empty()) throw Error("no run files (*.h5) in the folders given");
  const Study study = loadStudy(runs, load, stderrProgress(p.has("quiet")));
  for (const StudyRun& r : study.runs) {
    if (r.source == SummarySource::Unreadable)
      std::fprintf(stderr, "compare: warning: %s\n", r.summary.load_error.c_str());
    if (!r.cache_error.empty()) std::fprintf(stderr, "compare: note: %s\n", r.cache_error.c_str());
  }

  // A baseline that names no run is a user error (exit 1, one line).
  const StudyTable t = makeStudyTable(study, table);
  // A filter that keeps no run is a mistake (a value misspelt, a model not in the folder): say
  // which values the runs have for each key of the filter, rather than print an empty table.
  if (!table.filter.empty() && t.rows.empty() && !study.runs.empty()) {
    std::string have;
    for (const auto& [key, wanted] : parseRunFilter(table.filter).terms) {
      std::set<std::string> values;
      for (const StudyRun& r : study.runs) {
        const std::string v = configValue(r, key);
        values.insert(v.empty() ? "unknown" : v);
      }
      std::string list;
      for (const std::string& v : values)
        list += (list.empty() ? "" : ", ") + v;
      have += fmt::format("{}{}: {}", have.empty() ? "" : "; ", key, list);
    }
    throw Error(fmt::format("--filter {}: no run of the {} matches (the runs have {})",
                            table.filter, study.runs.size(), have));
  }
  if (p.has("json")) {
    std::fputs((compareJson(study, t).dump(2) + "\n").c_str(), stdout);
  } else if (p.has("csv")) {
    std::fputs(compareCsv(study, t).c_str(), stdout);
  } else {
    printText(study, t);
  }
  return 0;
}

}  // namespace wl::cli
