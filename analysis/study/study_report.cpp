// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/study/study_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/analysis_json.h"
#include "analysis/report_numbers.h"
#include "analysis/run_overview.h"
#include "analysis/study/study_figures.h"

namespace wl {
namespace {

using nlohmann::json;

std::string_view betterId(Better b) {
  switch (b) {
    case Better::Lower:
      return "lower";
    case Better::Higher:
      return "higher";
    case Better::None:
      break;
  }
  return "none";
}

std::string_view scalingId(Scaling s) {
  switch (s) {
    case Scaling::Total:
      return "total";
    case Scaling::GpuSum:
      return "gpu_sum";
    case Scaling::PerRank:
      return "per_rank";
    case Scaling::Intensive:
      break;
  }
  return "intensive";
}

std::string_view sourceId(SummarySource s) {
  switch (s) {
    case SummarySource::Cache:
      return "cache";
    case SummarySource::Analyzed:
      return "analyzed";
    case SummarySource::Unreadable:
      break;
  }
  return "unreadable";
}

// The totals of `wattline analyze --json`; null for a file that could not be read (its totals are
// not known, and printing the zero defaults would look like a measurement).
json totalsOf(const RunSummary& s) {
  return s.readable ? toJson(s.totals) : json(nullptr);
}

// Delta of every number of `value` against the same key of `base`, keeping the nesting.
json deltaTree(const json& value, const json& base) {
  if (value.is_object() && base.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it)
      out[it.key()] = deltaTree(it.value(), base.contains(it.key()) ? base[it.key()] : json());
    return out;
  }
  if (value.is_number() && base.is_number()) {
    const Delta d = deltaOf(value.get<double>(), base.get<double>());
    return {{"absolute", jsonNumber(d.absolute)}, {"relative", jsonNumber(d.relative)}};
  }
  return nullptr;
}

// Nulls every leaf delta (an invalid run or baseline: deltas are not computed).
json nullTree(const json& value) {
  if (value.is_object()) {
    json out = json::object();
    for (auto it = value.begin(); it != value.end(); ++it)
      out[it.key()] = nullTree(it.value());
    return out;
  }
  return value.is_number() ? json{{"absolute", nullptr}, {"relative", nullptr}} : json(nullptr);
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csvNum(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

}  // namespace

std::vector<std::string> paretoLabels(const Study& study, const StudyTable& table) {
  const ThroughputEnergyScatter s = throughputEnergyScatter(study, tableRuns(table));
  std::vector<std::string> out;
  for (size_t k : s.front)
    out.push_back(study.runs[s.points[k].run].label);  // the unique label, not the axis one
  return out;
}

json compareJson(const Study& study, const StudyTable& table) {
  const auto columns = studyColumns();
  json j;
  j["normalization"] = normalizationId(table.normalization);
  j["per"] = perUnitId(table.per);
  j["baseline"] = table.baseline >= 0 ? json(study.runs[static_cast<size_t>(table.baseline)].label)
                                      : json(nullptr);
  json cols = json::array();
  for (const StudyColumn& c : columns)
    cols.push_back({{"id", c.id},
                    {"label", c.label},
                    {"unit", normalizedUnit(c, table.normalization, table.per)},
                    {"better", betterId(c.better)},
                    {"scaling", scalingId(c.scaling)}});
  j["columns"] = cols;

  const RunSummary* base =
      table.baseline >= 0 ? &study.runs[static_cast<size_t>(table.baseline)].summary : nullptr;
  const json baseTotals = base ? totalsOf(*base) : json(nullptr);
  json runs = json::array(), deltas = json::array();
  for (const StudyRow& row : table.rows) {
    const StudyRun& r = study.runs[row.run];
    const RunSummary& s = r.summary;
    json metrics = json::object(), ranks = json::object(), metricDeltas = json::object();
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string id(columns[c].id);
      metrics[id] = jsonNumber(row.values[c]);
      ranks[id] = row.ranks[c] > 0 ? json(row.ranks[c]) : json(nullptr);
      metricDeltas[id] = {{"absolute", jsonNumber(row.deltas[c].absolute)},
                          {"relative", jsonNumber(row.deltas[c].relative)}};
    }
    const json totals = totalsOf(s);
    runs.push_back(
        {{"name", s.name},
         {"label", r.label},
         {"path", s.path},
         {"config", toJson(s.config)},
         {"platform", s.platform},
         {"model", s.model},
         {"gpus", s.readable ? json(s.gpu_count) : json(nullptr)},
         {"domains", s.readable ? json(s.totals.domains) : json(nullptr)},
         {"domain_kind",
          s.readable && !s.totals.domain_kind.empty() ? json(s.totals.domain_kind) : json(nullptr)},
         {"simulated", s.simulated},
         {"valid", s.valid},
         {"invalid_reasons", s.invalid_reasons},
         {"source", sourceId(r.source)},
         {"totals", totals},
         {"metrics", metrics},
         {"ranks", ranks}});
    if (base) {
      const bool ok = s.valid && base->valid;
      deltas.push_back({{"name", s.name},
                        {"label", r.label},
                        {"totals", ok ? deltaTree(totals, baseTotals) : nullTree(baseTotals)},
                        {"metrics", metricDeltas}});
    }
  }
  j["runs"] = runs;
  j["deltas"] = deltas;
  j["pareto"] = paretoLabels(study, table);
  return j;
}

std::string compareCsv(const Study& study, const StudyTable& table) {
  static constexpr const char* kIdentity[] = {"label",
                                              "name",
                                              "path",
                                              "platform",
                                              "model",
                                              "gpus",
                                              "nodes",
                                              "tp",
                                              "pp",
                                              "dp",
                                              "ep",
                                              "mbs",
                                              "gbs",
                                              "seq_len",
                                              "recompute",
                                              "overlap",
                                              "simulated",
                                              "valid",
                                              "invalid_reasons"};
  const auto columns = studyColumns();
  std::string out;
  std::string header;
  for (const char* h : kIdentity)
    header += (header.empty() ? "" : ",") + std::string(h);
  for (const StudyColumn& c : columns)
    header += fmt::format(",{0},{0}_delta,{0}_delta_pct,{0}_rank", c.id);
  header += ",domains,domain_kind";  // added with power domains: after the columns
  out += header + "\n";
  for (const StudyRow& row : table.rows) {
    const StudyRun& r = study.runs[row.run];
    const RunSummary& s = r.summary;
    std::string reasons;
    for (const std::string& x : s.invalid_reasons)
      reasons += (reasons.empty() ? "" : "; ") + x;
    std::string line;
    for (const char* key : kIdentity) {
      const std::string k(key);
      std::string v;
      if (k == "path") {
        v = s.path;
      } else if (k == "invalid_reasons") {
        v = reasons;

      } else {
        v = configValue(r, k);
      }
      line += (line.empty() ? "" : ",") + csvField(v);
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      const Delta& d = row.deltas[c];
      line += "," + csvNum(row.values[c]) + "," + csvNum(d.absolute) + "," +
              csvNum(std::isfinite(d.relative) ? d.relative * 100.0 : kNaN) + "," +
              (row.ranks[c] > 0 ? std::to_string(row.ranks[c]) : std::string());
    }
    line += "," + (s.readable ? std::to_string(s.totals.domains) : std::string()) + "," +
            csvField(s.readable ? s.totals.domain_kind : std::string());
    out += line + "\n";
  }
  return out;
}

}  // namespace wl
