// SPDX-License-Identifier: GPL-3.0-or-later
// wattline compare A.h5 B.h5 --iterations [--json | --csv]: what differs, how B is aligned, and
// the per-iteration table of both runs with A − B (the numbers of analysis/compare/).
#include "app/cli/cmd_compare_iterations.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "analysis/compare/two_run_report.h"
#include "analysis/energy_ledger.h"
#include "analysis/report_numbers.h"
#include "loaders/core/error.h"
#include "loaders/format/run_file.h"

namespace wl::cli {
namespace {

std::string cell(double v, int digits, bool sign = false) {
  if (!std::isfinite(v)) return "-";
  return sign ? fmt::format("{:+.{}f}", v, digits) : fmt::format("{:.{}f}", v, digits);
}

// "1234 ± 56", or "≈ 1234 ± 560" for a part finer than the sensor resolves (joules).
std::string ledgerCell(const LedgerValue& v, bool sign) {
  if (!std::isfinite(v.j)) return "-";
  const double j = std::round(v.j) == 0 ? 0.0 : v.j;  // no "-0"
  return fmt::format("{}{} ± {:.0f}", v.resolved ? "" : "≈ ",
                     sign ? fmt::format("{:+.0f}", j) : fmt::format("{:.0f}", j), v.u_j);
}

// The energy ledgers of the steps both runs traced (summed over their traced ranks).
std::string ledgerText(const std::vector<LedgerStepComparison>& ledgers) {
  if (ledgers.empty()) return {};
  constexpr int kW = 18;
  std::string out = fmt::format(
      "\nenergy ledger (J, summed over the traced ranks; ≈: finer than the power sensor resolves, "
      "± its whole power range):\n{:>5} {:<5}",
      "step", "run");
  for (size_t p = 0; p < kLedgerParts; ++p)
    out += fmt::format(" {:>{}}", ledgerPartId(static_cast<LedgerPart>(p)), kW);
  out += "\n";
  for (const LedgerStepComparison& l : ledgers) {
    auto line = [&](const std::string& step, const std::string& who,
                    const std::array<LedgerValue, kLedgerParts>& parts, bool sign) {
      out += fmt::format("{:>5} {:<5}", step, who);
      for (const LedgerValue& v : parts)
        out += fmt::format(" {:>{}}", ledgerCell(v, sign), kW);
      out += "\n";
    };
    line(std::to_string(l.step), fmt::format("A ({})", l.a.ranks), l.a.parts, false);
    line("", fmt::format("B ({})", l.b.ranks), l.b.parts, false);
    line("", "A-B", l.a_minus_b, true);
  }
  return out;
}

void printText(const TwoRunComparison& c) {
  const RunDifferences& d = c.differences;
  std::string out;
  out += fmt::format("A: {}  ({}, {})\n", d.label_a, c.name_a, c.path_a);
  out += fmt::format("B: {}  ({}, {})\n", d.label_b, c.name_b, c.path_b);
  for (const auto* list : {&d.config, &d.data})
    for (const RunDifference& x : *list)
      out += fmt::format("  {}: {} vs {}\n", x.label, x.a, x.b);
  for (const std::string& w : d.warnings)
    out += "warning: " + w + "\n";
  const TwoRunAlignment& al = c.alignment;
  if (al.warp) {
    out += fmt::format(
        "B warped onto A's clock ({} knots at the common steps' and phases' "
        "boundaries); {} GPU pairs by {}",
        al.knots, al.pairs.size(), al.pair_by);
    if (al.warp_power.n)
      out += fmt::format(
          ";\n  mean |A - B| power over the common steps: {:.1f} W (a shift at "
          "step {}: {:.1f} W)",
          al.warp_power.mean_abs, al.shift_step.value_or(0), al.shift_power.mean_abs);
    out += "\n";
  } else {
    out += "The runs share no step: no per-iteration comparison.\n";
  }
  const auto& cols = iterationColumns();
  const IterationComparison& it = c.iterations;
  if (!it.rows.empty()) {
    constexpr int kW = 12;
    out += fmt::format("\n{:>5} {:<5}", "step", "run");
    for (const IterationColumnInfo& col : cols)
      out += fmt::format(" {:>{}}", col.label, kW);
    out += fmt::format("\n{:>5} {:<5}", "", "");
    for (const IterationColumnInfo& col : cols)
      out += fmt::format(" {:>{}}", col.unit, kW);
    out += "\n";
    auto line = [&](const std::string& step, const char* who, const IterationArray& v, bool sign) {
      out += fmt::format("{:>5} {:<5}", step, who);
      for (size_t k = 0; k < kIterationColumnCount; ++k)
        out += fmt::format(" {:>{}}", cell(v[k], cols[k].digits, sign), kW);
      out += "\n";
    };
    for (const IterationComparisonRow& r : it.rows) {
      line(std::to_string(r.step), "A", r.a.v, false);
      line("", "B", r.b.v, false);
      line("", "A-B", r.delta, true);
    }
    // Mean ± stddev over the steps.
    out += fmt::format("\nover {} steps (mean ± stddev):\n", it.rows.size());
    auto summary = [&](const char* who, const std::array<SpreadStats, kIterationColumnCount>& s,
                       bool sign) {
      out += fmt::format("{:>5} {:<5}", "", who);
      for (size_t k = 0; k < kIterationColumnCount; ++k)
        out += fmt::format(" {:>{}}", cell(s[k].mean, cols[k].digits, sign), kW);
      out += fmt::format("\n{:>5} {:<5}", "", "±");
      for (size_t k = 0; k < kIterationColumnCount; ++k)
        out += fmt::format(" {:>{}}", cell(s[k].stddev, cols[k].digits), kW);
      out += "\n";
    };
    summary("A", it.a, false);
    summary("B", it.b, false);
    summary("A-B", it.delta, true);
    out += fmt::format("{:>5} {:<5}", "", "A-B %");
    for (size_t k = 0; k < kIterationColumnCount; ++k)
      out += fmt::format(" {:>{}}",
                         std::isfinite(it.mean_delta_pct[k])
                             ? fmt::format("{:+.1f}%", it.mean_delta_pct[k])
                             : std::string("-"),
                         kW);
    out += "\n";
  }
  out += ledgerText(c.ledgers);
  std::fputs(out.c_str(), stdout);
}

}  // namespace

int cmdCompareIterations(const ArgParser& p, const Progress& progress) {
  for (const char* study :
       {"baseline", "filter", "sort", "normalize", "cache-dir", "no-cache", "threads"})
    if (p.has(study))
      throw UsageError(fmt::format(
          "--{} applies to studies of many runs; --iterations compares two runs step by step",
          study));
  std::vector<std::filesystem::path> inputs;
  for (const std::string& s : p.positional())
    inputs.emplace_back(s);
  if (inputs.size() != 2)
    throw UsageError(
        fmt::format("--iterations compares exactly two runs (A.h5 B.h5), got {} argument{}",
                    inputs.size(), inputs.size() == 1 ? "" : "s"));
  for (const auto& in : inputs)
    if (std::filesystem::is_directory(in))
      throw UsageError(fmt::format(
          "--iterations compares exactly two runs (A.h5 B.h5), but {} is a folder", in.string()));
  const auto a = RunFile::open(inputs[0]);
  const auto b = RunFile::open(inputs[1]);
  const TwoRunComparison c = compareTwoRuns(*a, *b, {}, progress);
  if (p.has("json")) {
    std::fputs((twoRunJson(c).dump(2) + "\n").c_str(), stdout);
  } else if (p.has("csv")) {
    std::fputs(twoRunCsv(c).c_str(), stdout);
  } else {
    printText(c);
  }
  return 0;
}

}  // namespace wl::cli
