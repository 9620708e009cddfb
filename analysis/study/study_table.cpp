// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/study/study_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "loaders/core/error.h"

namespace wl {
namespace {

// Mean over the traced ranks of one of their numbers (NaN values skipped).
template <class F>
double rankMean(const RunSummary& s, F get) {
  double sum = 0;
  size_t n = 0;
  for (const RankSummary& r : s.ranks) {
    const double v = get(r);
    if (std::isfinite(v)) sum += v, ++n;
  }
  return n ? sum / static_cast<double>(n) : kNaN;
}

double ns(int64_t v) {
  return static_cast<double>(v) * 1e-9;
}

using S = RunSummary;
constexpr Better kLow = Better::Lower, kHigh = Better::Higher, kNone = Better::None;
constexpr Scaling kTotal = Scaling::Total, kGpuSum = Scaling::GpuSum, kRank = Scaling::PerRank,
                  kInt = Scaling::Intensive;

// The table's columns. Totals first (the numbers of `wattline analyze`), then the other analyses.
const std::array kColumns = {
    StudyColumn{"energy_j", "energy", "J", kLow, kTotal,
                [](const S& s) { return s.totals.energy_j; }},
    StudyColumn{"mean_power_w", "mean power", "W", kNone, kInt,
                [](const S& s) { return s.totals.mean_power_w; },
                [](const S& s) { return s.meanPowerPerDevice(); }},
    StudyColumn{"peak_power_w", "peak power", "W", kLow, kInt,
                [](const S& s) { return s.totals.peak_power_w; }},
    StudyColumn{"busy_s", "busy time", "s", kNone, kTotal,
                [](const S& s) { return s.totals.busy_s; }},
    StudyColumn{"throttled_s", "throttled time", "s", kLow, kTotal,
                [](const S& s) { return s.totals.throttled_s; }},
    StudyColumn{"throttled_fraction", "throttled share", "", kLow, kInt,
                [](const S& s) { return s.totals.throttled_fraction; }},
    StudyColumn{"throttle_cost_s", "cost of throttling per step", "s", kLow, kInt,
                [](const S& s) { return s.throttle_cost_s; }},
    StudyColumn{"throttle_cost_fraction", "cost of throttling", "", kLow, kInt,
                [](const S& s) { return s.throttle_cost_fraction; }},
    StudyColumn{"iterations", "iterations", "", kNone, kInt,
                [](const S& s) { return static_cast<double>(s.totals.iterations); }},
    StudyColumn{"iteration_time_s", "iteration time", "s", kLow, kInt,
                [](const S& s) { return s.totals.iteration_time_s; }},
    StudyColumn{"iteration_window_power_w", "iteration power", "W", kNone, kGpuSum,
                [](const S& s) { return s.totals.iteration_window_power_w; }},
    StudyColumn{"throughput_samples_per_s", "throughput", "samples/s", kHigh, kGpuSum,
                [](const S& s) { return s.totals.throughput_samples_per_s; }},
    StudyColumn{"tokens_per_s", "tokens/s", "tokens/s", kHigh, kGpuSum,
                [](const S& s) { return s.totals.tokens_per_s; }},
    StudyColumn{"energy_per_iteration_j", "energy/iteration", "J", kLow, kGpuSum,
                [](const S& s) { return s.totals.energy_per_iteration_j; }},
    StudyColumn{"energy_per_token_j", "energy/token", "J", kLow, kGpuSum,
                [](const S& s) { return s.totals.energy_per_token_j; }},
    StudyColumn{"efficiency_samples_per_s_mj", "efficiency", "samples/(s*MJ)", kHigh, kInt,
                [](const S& s) { return s.totals.efficiency_samples_per_s_mj; }},
    StudyColumn{"temp_mean_c", "mean temperature", "C", kLow, kInt,
                [](const S& s) { return s.temp_mean_c; }},
    StudyColumn{"temp_max_c", "peak temperature", "C", kLow, kInt,
                [](const S& s) { return s.temp_max_c; }},
    StudyColumn{"clock_mean_mhz", "mean SM clock", "MHz", kHigh, kInt,
                [](const S& s) { return s.clock_mean_mhz; }},
    StudyColumn{"clock_min_mhz", "min SM clock", "MHz", kHigh, kInt,
                [](const S& s) { return s.clock_min_mhz; }},
    StudyColumn{"clock_max_mhz", "peak SM clock", "MHz", kNone, kInt,
                [](const S& s) { return s.clock_max_mhz; }},
    StudyColumn{"peak_to_average", "peak/average power", "", kLow, kInt,
                [](const S& s) { return s.peak_to_average; }},
    StudyColumn{"excursions", "power excursions", "", kLow, kTotal,
                [](const S& s) { return s.excursions; }},
    StudyColumn{"excursion_s", "time above power limit", "s", kLow, kTotal,
                [](const S& s) { return s.excursion_s; }},
    StudyColumn{"time_above_slowdown_s", "time above slowdown", "s", kLow, kTotal,
                [](const S& s) { return s.time_above_slowdown_s; }},
    StudyColumn{"headroom_c", "thermal headroom", "C", kHigh, kInt,
                [](const S& s) { return s.headroom_c; }},
    StudyColumn{"clock_deficit_mhz_s", "clock deficit", "MHz*s", kLow, kTotal,
                [](const S& s) { return s.clock_deficit_mhz_s; }},
    StudyColumn{"temp_spread_c", "GPU temperature spread", "C", kLow, kInt,
                [](const S& s) { return s.temp_spread_c; }},
    StudyColumn{"hottest_vs_coolest_pct", "hottest vs coolest slot", "%", kLow, kInt,
                [](const S& s) { return s.hottest_vs_coolest_pct; }},
    StudyColumn{"iteration_cv", "iteration time cv", "", kLow, kInt,
                [](const S& s) { return s.iteration_cv; }},
    StudyColumn{"rank_spread_s", "rank spread per step", "s", kLow, kInt,
                [](const S& s) { return s.rank_spread_s; }},
    StudyColumn{"straggler_skew_p99_s", "collective skew p99", "s", kLow, kInt,
                [](const S& s) { return s.straggler_skew_p99_ns * 1e-9; }},
    StudyColumn{
        "compute_s", "compute per rank", "s", kNone, kRank,
        [](const S&
               s) { return rankMean(s, [](const RankSummary& r) { return ns(r.compute_ns); }); }},
    StudyColumn{
        "exposed_comm_s", "exposed comm per rank", "s", kLow, kRank,
        [](const S&
               s) { return rankMean(s, [](const RankSummary& r) { return ns(r.exposed_comm_ns); }); }},
    StudyColumn{
        "idle_s", "idle per rank", "s", kLow, kRank,
        [](const S& s) { return rankMean(s, [](const RankSummary& r) { return ns(r.idle_ns); }); }},
    StudyColumn{
        "overlap_ratio", "comm/compute overlap", "", kHigh, kInt,
        [](const S&
               s) { return rankMean(s, [](const RankSummary& r) { return r.overlap_ratio; }); }},
    StudyColumn{"throttle_lost_s", "time lost to throttling per rank", "s", kLow, kRank,
                [](const S& s) {
                  return rankMean(s, [](const RankSummary& r) { return r.lost_ns * 1e-9; });
                }},
    StudyColumn{
        "compute_energy_j", "compute energy per rank", "J", kNone, kRank,
        [](const S& s) { return rankMean(s, [](const RankSummary& r) { return r.compute_j; }); }},
    StudyColumn{"exposed_comm_energy_j", "exposed comm energy per rank", "J", kLow, kRank,
                [](const S& s) {
                  return rankMean(s, [](const RankSummary& r) { return r.exposed_comm_j; });
                }},
    StudyColumn{
        "idle_energy_j", "idle energy per rank", "J", kLow, kRank,
        [](const S& s) { return rankMean(s, [](const RankSummary& r) { return r.idle_j; }); }},
    StudyColumn{"gap_s", "sampling gaps", "s", kLow, kTotal, [](const S& s) { return s.gap_s; }},
    StudyColumn{"duration_s", "duration", "s", kNone, kInt,
                [](const S& s) { return s.duration_s; }},
    StudyColumn{"package_temp_skew_c", "GCD temperature skew in a package", "C", kLow, kInt,
                [](const S& s) { return s.package_temp_skew_c; }},
};

constexpr std::array<std::string_view, 18> kConfigKeys = {
    "name", "label", "model", "platform", "gpus",    "nodes",     "tp",      "pp",    "dp",
    "ep",   "cp",    "mbs",   "gbs",      "seq_len", "recompute", "overlap", "valid", "simulated"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a])))
    ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])))
    --b;
  return std::string(s.substr(a, b - a));
}

bool isBoolKey(std::string_view k) {
  return k == "recompute" || k == "overlap" || k == "valid" || k == "simulated";
}

// "true"/"false" for a boolean filter value, or "" when it is not one.
std::string boolText(std::string_view v) {
  const std::string l = lower(v);
  if (l == "true" || l == "yes" || l == "on" || l == "1") return "true";
  if (l == "false" || l == "no" || l == "off" || l == "0") return "false";
  return "";
}

std::string optText(const std::optional<int>& v) {
  return v ? std::to_string(*v) : std::string();
}

std::string optText(const std::optional<bool>& v) {
  return v ? (*v ? "true" : "false") : std::string();
}

bool isNumeric(std::string_view s, double* out) {
  if (s.empty()) return false;
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  *out = v;
  return true;
}

}  // namespace

std::string_view normalizationId(Normalization n) {
  switch (n) {
    case Normalization::None:
      return "none";
    case Normalization::PerGpu:
      return "gpu";
    case Normalization::PerToken:
      return "token";
    case Normalization::PerIteration:
      return "iteration";
  }
  return "none";
}

Normalization parseNormalization(std::string_view text) {
  std::string t = lower(trim(text));
  if (t.rfind("per-", 0) == 0) t = t.substr(4);
  for (Normalization n : {Normalization::None, Normalization::PerGpu, Normalization::PerToken,
                          Normalization::PerIteration})
    if (t == normalizationId(n)) return n;
  throw Error(fmt::format("unknown normalization '{}' (expected none, gpu, token or iteration)",
                          std::string(text)));
}

std::string_view perUnitId(PerUnit p) {
  return p == PerUnit::Package ? "package" : "device";
}

PerUnit parsePerUnit(std::string_view text) {
  const std::string t = lower(trim(text));
  if (t == "device" || t == "gpu" || t == "gcd") return PerUnit::Device;
  if (t == "package" || t == "board" || t == "domain") return PerUnit::Package;
  throw Error(fmt::format("unknown --per '{}' (expected device or package)", std::string(text)));
}

std::string perUnitText(PerUnit p) {
  return p == PerUnit::Package ? "per package (MI250 package of 2 GCDs; board on H100/H200)"
                               : "per device (GPU; one GCD on MI250)";
}

std::span<const StudyColumn> studyColumns() {
  return kColumns;
}

const StudyColumn* findStudyColumn(std::string_view id) {
  for (const StudyColumn& c : kColumns)
    if (c.id == id) return &c;
  return nullptr;
}

double normalizationDivisor(const RunSummary& run, Scaling scaling, Normalization n, PerUnit per) {
  const bool byGpu = scaling == Scaling::Total || scaling == Scaling::GpuSum;
  const bool byWork = scaling == Scaling::Total || scaling == Scaling::PerRank;
  switch (n) {
    case Normalization::None:
      return 1.0;
    case Normalization::PerGpu:
      if (!byGpu) return 1.0;
      if (per == PerUnit::Package) return run.domainCount() > 0 ? run.domainCount() : kNaN;
      return run.gpu_count > 0 ? static_cast<double>(run.gpu_count) : kNaN;
    case Normalization::PerIteration:
      if (!byWork) return 1.0;
      return run.totals.iterations > 0 ? static_cast<double>(run.totals.iterations) : kNaN;
    case Normalization::PerToken:
      if (!byWork) return 1.0;
      return run.tokens();
  }
  return 1.0;
}

double normalizedValue(const RunSummary& run, const StudyColumn& column, Normalization n,
                       PerUnit per) {
  if (!run.readable) return kNaN;  // nothing is known of a file that could not be read
  const double v =
      per == PerUnit::Device && column.device_value ? column.device_value(run) : column.value(run);
  const double d = normalizationDivisor(run, column.scaling, n, per);
  return std::isfinite(v) && std::isfinite(d) && d > 0 ? v / d : kNaN;
}

std::string normalizedUnit(const StudyColumn& column, Normalization n, PerUnit per) {
  const std::string unit(column.unit);
  const bool byGpu = column.scaling == Scaling::Total || column.scaling == Scaling::GpuSum;
  const bool byWork = column.scaling == Scaling::Total || column.scaling == Scaling::PerRank;
  const std::string base = unit.empty() ? std::string("1") : unit;
  switch (n) {
    case Normalization::None:
      return unit;
    case Normalization::PerGpu:
      return byGpu ? base + (per == PerUnit::Package ? "/package" : "/GPU") : unit;
    case Normalization::PerIteration:
      return byWork ? base + "/iteration" : unit;
    case Normalization::PerToken:
      return byWork ? base + "/token" : unit;
  }
  return unit;
}

std::span<const std::string_view> studyConfigKeys() {
  return kConfigKeys;
}

std::string configValue(const StudyRun& run, std::string_view key) {
  const RunSummary& s = run.summary;
  const ParallelConfig& c = s.config;
  if (key == "name") return s.name;
  if (key == "label") return run.label;
  if (key == "model") return s.model;
  if (key == "platform") return s.platform;
  if (key == "gpus") return s.readable ? std::to_string(s.gpu_count) : std::string();
  if (key == "nodes") return optText(c.nodes);
  if (key == "tp") return optText(c.tp);
  if (key == "pp") return optText(c.pp);
  if (key == "dp") return optText(c.dp);
  if (key == "ep") return optText(c.ep);
  if (key == "cp") return optText(c.cp);
  if (key == "mbs") return optText(c.mbs);
  if (key == "gbs") return optText(c.gbs);
  if (key == "seq_len") return optText(c.seq_len);
  if (key == "recompute") return optText(c.recompute);
  if (key == "overlap") return optText(c.overlap);
  if (key == "valid") return s.valid ? "true" : "false";
  if (key == "simulated") return s.simulated ? "true" : "false";
  return "";
}

bool RunFilter::matches(const StudyRun& run) const {
  for (const auto& [key, values] : terms) {
    const std::string have = configValue(run, key);
    bool any = false;
    for (const std::string& want : values) {
      if (isBoolKey(key)) {
        any = boolText(want) == have;
      } else if (key == "name" || key == "label" || key == "model" || key == "platform") {
        any = lower(want) == lower(have);
      } else {
        any = want == have;
      }
      if (any) break;
    }
    if (!any) return false;
  }
  return true;
}

RunFilter parseRunFilter(std::string_view text) {
  RunFilter f;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string term = trim(
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (term.empty()) continue;
    const size_t eq = term.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("filter term '{}' is not key=value", term));
    const std::string key = lower(trim(term.substr(0, eq)));
    const std::string value = trim(term.substr(eq + 1));
    if (std::find(kConfigKeys.begin(), kConfigKeys.end(), key) == kConfigKeys.end()) {
      std::string keys;
      for (std::string_view k : kConfigKeys)
        keys += (keys.empty() ? "" : ", ") + std::string(k);
      throw Error(fmt::format("unknown filter key '{}' (known: {})", key, keys));
    }
    if (value.empty()) throw Error(fmt::format("filter term '{}' has no value", term));
    if (isBoolKey(key) && boolText(value).empty())
      throw Error(fmt::format("filter {}={}: expected true or false", key, value));
    auto it =
        std::find_if(f.terms.begin(), f.terms.end(), [&](const auto& t) { return t.first == key; });
    if (it == f.terms.end()) {
      f.terms.push_back({key, {value}});
    } else {
      it->second.push_back(value);
    }
  }
  return f;
}

Delta deltaOf(double value, double baseline) {
  Delta d;
  if (!std::isfinite(value) || !std::isfinite(baseline)) return d;
  d.absolute = value - baseline;
  if (baseline != 0) d.relative = d.absolute / std::fabs(baseline);
  return d;
}

std::vector<int> rankValues(const std::vector<double>& values, const std::vector<bool>& eligible,
                            Better better) {
  std::vector<int> ranks(values.size(), 0);
  if (better == Better::None) return ranks;
  auto ok = [&](size_t i) { return eligible[i] && std::isfinite(values[i]); };
  for (size_t i = 0; i < values.size(); ++i) {
    if (!ok(i)) continue;
    int beaten = 0;  // how many eligible values are strictly better
    for (size_t j = 0; j < values.size(); ++j)
      if (ok(j) && (better == Better::Lower ? values[j] < values[i] : values[j] > values[i]))
        ++beaten;
    ranks[i] = beaten + 1;
  }
  return ranks;
}

SortKey parseSortKey(std::string_view text) {
  SortKey k;
  k.key = trim(text);
  if (!k.key.empty() && k.key.front() == '-') k.descending = true, k.key.erase(0, 1);
  if (k.key.size() > 5 && k.key.substr(k.key.size() - 5) == ":desc")
    k.descending = true, k.key.resize(k.key.size() - 5);
  else if (k.key.size() > 4 && k.key.substr(k.key.size() - 4) == ":asc")
    k.key.resize(k.key.size() - 4);
  if (k.key.empty()) return k;
  for (size_t c = 0; c < kColumns.size(); ++c)
    if (kColumns[c].id == k.key) k.column = static_cast<int>(c);
  if (k.column < 0 && std::find(kConfigKeys.begin(), kConfigKeys.end(), k.key) == kConfigKeys.end())
    throw Error(
        fmt::format("unknown sort key '{}' (a column id such as energy_per_token_j, or a "
                    "configuration key such as mbs)",
                    k.key));
  return k;
}

StudyTable makeStudyTable(const Study& study, const StudyTableOptions& options) {
  StudyTable t;
  t.normalization = options.normalization;
  t.per = options.per;
  if (!options.baseline.empty()) t.baseline = static_cast<int>(study.find(options.baseline));
  const RunFilter filter = parseRunFilter(options.filter);

  const SortKey sort = parseSortKey(options.sort);
  const auto columns = studyColumns();

  for (size_t i = 0; i < study.runs.size(); ++i) {
    if (!filter.matches(study.runs[i])) continue;
    StudyRow row;
    row.run = i;
    for (const StudyColumn& c : columns)
      row.values.push_back(
          normalizedValue(study.runs[i].summary, c, options.normalization, options.per));
    t.rows.push_back(std::move(row));
  }

  // Deltas to the baseline (valid runs against a valid baseline only).
  const bool baseOk = t.baseline >= 0 && study.runs[static_cast<size_t>(t.baseline)].summary.valid;
  std::vector<double> baseValues;
  if (baseOk)
    for (const StudyColumn& c : columns)
      baseValues.push_back(normalizedValue(study.runs[static_cast<size_t>(t.baseline)].summary, c,
                                           options.normalization, options.per));
  for (StudyRow& row : t.rows) {
    row.deltas.assign(columns.size(), Delta{});
    if (!baseOk || !study.runs[row.run].summary.valid) continue;
    for (size_t c = 0; c < columns.size(); ++c)
      row.deltas[c] = deltaOf(row.values[c], baseValues[c]);
  }

  // Ranks among the valid rows shown.
  std::vector<bool> eligible;
  for (const StudyRow& row : t.rows)
    eligible.push_back(study.runs[row.run].summary.valid);
  for (StudyRow& row : t.rows)
    row.ranks.assign(columns.size(), 0);
  for (size_t c = 0; c < columns.size(); ++c) {
    std::vector<double> v;
    for (const StudyRow& row : t.rows)
      v.push_back(row.values[c]);
    const std::vector<int> r = rankValues(v, eligible, columns[c].better);
    for (size_t k = 0; k < t.rows.size(); ++k)
      t.rows[k].ranks[c] = r[k];
  }

  // Sort: valid runs before invalid ones, unknown values last, ties in study order.
  if (!sort.key.empty()) {
    const bool descending = sort.descending;
    auto key = [&](const StudyRow& row, double* num, std::string* text) {
      if (sort.column >= 0) {
        *num = row.values[static_cast<size_t>(sort.column)];
        return std::isfinite(*num);
      }
      *text = configValue(study.runs[row.run], sort.key);
      if (!isNumeric(*text, num)) *num = kNaN;
      return !text->empty();
    };
    std::stable_sort(t.rows.begin(), t.rows.end(), [&](const StudyRow& a, const StudyRow& b) {
      const bool va = study.runs[a.run].summary.valid, vb = study.runs[b.run].summary.valid;
      if (va != vb) return va;
      double na = 0, nb = 0;
      std::string ta, tb;
      const bool ka = key(a, &na, &ta), kb = key(b, &nb, &tb);
      if (ka != kb) return ka;
      if (!ka) return false;
      if (std::isfinite(na) && std::isfinite(nb)) return descending ? na > nb : na < nb;
      const std::string la = lower(ta), lb = lower(tb);
      return descending ? la > lb : la < lb;
    });
  }
  return t;
}

}  // namespace wl
