// SPDX-License-Identifier: GPL-3.0-or-later
// Two runs compared step by step, and its JSON and CSV (two_run_report.h).
#include "analysis/compare/two_run_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "analysis/report_numbers.h"
#include "analysis/run_alignment.h"
#include "loaders/core/metrics.h"

namespace wl {
namespace {

using nlohmann::json;

json num(double v) {
  return jsonNumber(v);
}

std::string runName(const RunFile& r) {
  return r.info().name.empty() ? r.path().stem().string() : r.info().name;
}

json statsJson(const DifferenceStats& s) {
  return {{"samples", s.n},
          {"mean_a_w", num(s.mean_a)},
          {"mean_b_w", num(s.mean_b)},
          {"mean_w", num(s.mean)},
          {"mean_abs_w", num(s.mean_abs)},
          {"rms_w", num(s.rms)},
          {"max_abs_w", num(s.max_abs)}};
}

json causesJson(const CauseArray& v) {
  json j = json::object();
  for (size_t c = 0; c < kThrottleCauseCount; ++c)
    j[std::string(throttleCauseId(static_cast<ThrottleCause>(c)))] = num(v[c]);
  return j;
}

json columnsJson(const IterationArray& v) {
  json j = json::object();
  const auto& cols = iterationColumns();
  for (size_t c = 0; c < kIterationColumnCount; ++c)
    j[std::string(cols[c].id)] = num(v[c]);
  return j;
}

json valuesJson(const IterationValues& x) {
  json j = {{"start_ns", x.start_ns}, {"end_ns", x.end_ns}};
  j.update(columnsJson(x.v));
  j["throttled_by_reason_s"] = causesJson(x.throttled_by_cause_s);
  return j;
}

json spreadJson(const std::array<SpreadStats, kIterationColumnCount>& s) {
  json j = json::object();
  const auto& cols = iterationColumns();
  for (size_t c = 0; c < kIterationColumnCount; ++c)
    j[std::string(cols[c].id)] = {{"mean", num(s[c].mean)},
                                  {"stddev", num(s[c].stddev)},
                                  {"min", num(s[c].min)},
                                  {"max", num(s[c].max)},
                                  {"steps", s[c].n}};
  return j;
}

json differencesJson(const std::vector<RunDifference>& v) {
  json j = json::array();
  for (const RunDifference& d : v)
    j.push_back({{"key", d.key}, {"label", d.label}, {"a", d.a}, {"b", d.b}});
  return j;
}

}  // namespace

TwoRunComparison compareTwoRuns(const RunFile& a, const RunFile& b, const AnalysisOptions& options,
                                const Progress& progress) {
  TwoRunComparison c;
  c.path_a = a.path().string();
  c.path_b = b.path().string();
  c.name_a = runName(a);
  c.name_b = runName(b);
  progress.report(0.0, "what differs");
  c.differences = runDifferences(a, b);

  progress.report(0.05, "alignment");
  TwoRunAlignment& al = c.alignment;
  al.pairs = pairGpus(a, b, PairBy::Rank);
  al.pair_by = "rank";
  if (al.pairs.empty()) {
    al.pairs = pairGpus(a, b, PairBy::Index);
    al.pair_by = "index";
  }
  int64_t step = 0;
  const auto [mode, offset] = defaultAlignment(a, b, &step);
  if (mode == AlignMode::Warp) {
    const TimeWarp warp = *iterationWarp(a, b);
    al.warp = true;
    al.knots = warp.knots().size();
    al.shift_step = step;
    al.window = commonStepWindow(a, b);
    if (a.series().metric(metric::kPower) && b.series().metric(metric::kPower)) {
      al.warp_power = warpedDifferences(a, b, al.pairs, metric::kPower, warp, *al.window).stats;
      al.shift_power =
          warpedDifferences(a, b, al.pairs, metric::kPower, TimeWarp::shift(offset), *al.window)
              .stats;
    }
  }
  progress.report(0.1, "energy ledger");
  c.ledgers = compareLedgers(a, b);
  c.iterations = compareIterations(a, b, options, progress.sub(0.15, 1.0));
  return c;
}

json twoRunJson(const TwoRunComparison& c) {
  json j;
  j["a"] = {{"path", c.path_a}, {"name", c.name_a}, {"label", c.differences.label_a}};
  j["b"] = {{"path", c.path_b}, {"name", c.name_b}, {"label", c.differences.label_b}};
  j["differences"] = {{"config", differencesJson(c.differences.config)},
                      {"data", differencesJson(c.differences.data)}};
  j["warnings"] = c.differences.warnings;
  const TwoRunAlignment& al = c.alignment;
  json pairs = json::array();
  for (const auto& [ga, gb] : al.pairs)
    pairs.push_back({ga, gb});
  j["alignment"] = {
      {"mode", al.warp ? "warp" : "start"},
      {"knots", al.knots},
      {"shift_step", al.shift_step ? json(*al.shift_step) : json(nullptr)},
      {"window",
       al.window ? json{{"start_ns", al.window->t0}, {"end_ns", al.window->t1}} : json(nullptr)},
      {"pair_by", al.pair_by},
      {"gpu_pairs", pairs},
      {"power_difference",
       al.warp ? json{{"warp", statsJson(al.warp_power)}, {"shift", statsJson(al.shift_power)}}
               : json(nullptr)}};
  json cols = json::array();
  for (const IterationColumnInfo& col : iterationColumns())
    cols.push_back({{"id", col.id}, {"label", col.label}, {"unit", col.unit}});
  j["columns"] = cols;
  json rows = json::array();
  for (const IterationComparisonRow& r : c.iterations.rows) {
    json delta = columnsJson(r.delta);
    delta["throttled_by_reason_s"] = causesJson(r.throttled_by_cause_delta_s);
    rows.push_back({{"step", r.step},
                    {"a", valuesJson(r.a)},
                    {"b", valuesJson(r.b)},
                    {"delta", delta},
                    {"delta_pct", columnsJson(r.delta_pct)}});
  }
  j["iterations"] = rows;
  const IterationComparison& it = c.iterations;
  j["summary"] = {{"steps", it.rows.size()},
                  {"a", spreadJson(it.a)},
                  {"b", spreadJson(it.b)},
                  {"delta", spreadJson(it.delta)},
                  {"delta_pct", columnsJson(it.mean_delta_pct)}};
  json steps = json::array();
  for (const LedgerStepComparison& l : c.ledgers) {
    auto parts = [](const StepLedger& s) {
      json o;
      for (size_t p = 0; p < kLedgerParts; ++p)
        o[ledgerPartId(static_cast<LedgerPart>(p))] = {{"j", jsonNumber(s.parts[p].j)},
                                                       {"u_j", jsonNumber(s.parts[p].u_j)},
                                                       {"resolved", s.parts[p].resolved}};
      o["ranks"] = s.ranks;
      return o;
    };
    json d;
    for (size_t p = 0; p < kLedgerParts; ++p)
      d[ledgerPartId(static_cast<LedgerPart>(p))] = {{"j", jsonNumber(l.a_minus_b[p].j)},
                                                     {"u_j", jsonNumber(l.a_minus_b[p].u_j)}};
    steps.push_back({{"step", l.step}, {"a", parts(l.a)}, {"b", parts(l.b)}, {"a_minus_b", d}});
  }
  j["energy_ledger"] = {{"steps", steps}};
  return j;
}

std::string twoRunCsv(const TwoRunComparison& c) {
  const auto& cols = iterationColumns();
  std::string out = "step,a_start_ns,a_end_ns,b_start_ns,b_end_ns";
  for (const IterationColumnInfo& col : cols)
    out += fmt::format(",a_{0},b_{0},delta_{0},delta_pct_{0}", col.id);
  for (size_t k = 0; k < kThrottleCauseCount; ++k)
    out += fmt::format(",a_throttled_{0}_s,b_throttled_{0}_s,delta_throttled_{0}_s",
                       throttleCauseId(static_cast<ThrottleCause>(k)));
  for (size_t p = 0; p < kLedgerParts; ++p)
    out += fmt::format(
        ",a_ledger_{0}_j,a_ledger_{0}_u_j,a_ledger_{0}_resolved,b_ledger_{0}_j,b_ledger_{0}_u_j,"
        "b_ledger_{0}_resolved,delta_ledger_{0}_j,delta_ledger_{0}_u_j",
        ledgerPartId(static_cast<LedgerPart>(p)));
  out += "\n";
  for (const IterationComparisonRow& r : c.iterations.rows) {
    out +=
        fmt::format("{},{},{},{},{}", r.step, r.a.start_ns, r.a.end_ns, r.b.start_ns, r.b.end_ns);
    for (size_t k = 0; k < kIterationColumnCount; ++k)
      out += fmt::format(",{},{},{},{}", csvNumber(r.a.v[k]), csvNumber(r.b.v[k]),
                         csvNumber(r.delta[k]), csvNumber(r.delta_pct[k]));
    for (size_t k = 0; k < kThrottleCauseCount; ++k)
      out += fmt::format(",{},{},{}", csvNumber(r.a.throttled_by_cause_s[k]),
                         csvNumber(r.b.throttled_by_cause_s[k]),
                         csvNumber(r.throttled_by_cause_delta_s[k]));
    const auto l = std::find_if(c.ledgers.begin(), c.ledgers.end(),
                                [&](const LedgerStepComparison& x) { return x.step == r.step; });
    for (size_t p = 0; p < kLedgerParts; ++p) {
      if (l == c.ledgers.end()) {
        out += ",,,,,,,,";
        continue;
      }
      for (const LedgerValue* v : {&l->a.parts[p], &l->b.parts[p]})
        out += fmt::format(",{},{},{}", csvNumber(v->j), csvNumber(v->u_j), v->resolved ? 1 : 0);
      out += fmt::format(",{},{}", csvNumber(l->a_minus_b[p].j), csvNumber(l->a_minus_b[p].u_j));
    }
    out += "\n";
  }
  return out;
}

}  // namespace wl
