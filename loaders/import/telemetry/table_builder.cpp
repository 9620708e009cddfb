// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/telemetry/table_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "loaders/core/metrics.h"
#include "loaders/core/series_math.h"
#include "loaders/core/throttle_reasons.h"

namespace wl::import::tel {

size_t TableBuilder::column(std::string_view metric) {
  for (size_t i = 0; i < table_.columns.size(); ++i)
    if (table_.columns[i].metric == metric) return i;
  TelemetryColumn c;
  c.metric = std::string(metric);
  c.values.assign(table_.t_ns.size(), kNaN);
  table_.columns.push_back(std::move(c));
  return table_.columns.size() - 1;
}

void TableBuilder::addRow(int64_t t_ns) {
  table_.t_ns.push_back(t_ns);
  for (TelemetryColumn& c : table_.columns)
    c.values.push_back(kNaN);
  if (!table_.throttle_reasons.empty()) table_.throttle_reasons.push_back(throttle::kUnknown);
}

void TableBuilder::reserve(size_t rows) {
  table_.t_ns.reserve(rows);
  for (TelemetryColumn& c : table_.columns)
    c.values.reserve(rows);
  if (!table_.throttle_reasons.empty()) table_.throttle_reasons.reserve(rows);
}

void TableBuilder::setThrottle(uint32_t mask) {
  if (table_.throttle_reasons.empty()) {
    table_.throttle_reasons.reserve(table_.t_ns.capacity());
    table_.throttle_reasons.assign(rows(), throttle::kUnknown);
  }
  table_.throttle_reasons.back() = mask;
}

TelemetryTable TableBuilder::finish() {
  TelemetryTable out = std::move(table_);
  std::erase_if(out.columns, [](const TelemetryColumn& c) {
    return std::none_of(c.values.begin(), c.values.end(),
                        [](double v) { return std::isfinite(v); });
  });
  table_ = {};
  return out;
}

int64_t mergeTolerance(const std::vector<Series>& series) {
  constexpr int64_t kMax = 5'000'000;  // 5 ms
  int64_t smallest = 0;
  for (const Series& s : series) {
    std::vector<int64_t> t = s.t_ns;
    std::sort(t.begin(), t.end());
    const int64_t med = medianInterval(t);
    if (med > 0 && (smallest == 0 || med < smallest)) smallest = med;
  }
  if (smallest == 0) return kMax;
  return std::min(kMax, smallest / 4);
}

MergedTable mergeSeries(std::vector<Series> series, int64_t toleranceNs) {
  MergedTable out;
  struct Sample {
    int64_t t;
    uint32_t series;
    uint32_t index;
  };
  std::vector<Sample> all;
  size_t total = 0;
  for (const Series& s : series)
    total += s.t_ns.size();
  all.reserve(total);
  for (size_t si = 0; si < series.size(); ++si) {
    Series& s = series[si];
    if (!std::is_sorted(s.t_ns.begin(), s.t_ns.end())) {
      ++out.unsortedSeries;
      std::vector<size_t> order(s.t_ns.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return s.t_ns[a] < s.t_ns[b]; });
      std::vector<int64_t> t(order.size());
      std::vector<double> v(order.size());
      for (size_t k = 0; k < order.size(); ++k) {
        t[k] = s.t_ns[order[k]];
        v[k] = s.values[order[k]];
      }
      s.t_ns = std::move(t);
      s.values = std::move(v);
    }
    for (size_t i = 0; i < s.t_ns.size(); ++i)
      all.push_back({s.t_ns[i], static_cast<uint32_t>(si), static_cast<uint32_t>(i)});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Sample& a, const Sample& b) { return a.t < b.t; });

  TelemetryTable& table = out.table;
  table.columns.resize(series.size());
  for (size_t si = 0; si < series.size(); ++si)
    table.columns[si].metric = series[si].metric;
  std::vector<char> filled(series.size(), 0);
  int64_t rowStart = 0;
  bool haveRow = false;
  for (const Sample& s : all) {
    if (!haveRow || s.t - rowStart > toleranceNs || filled[s.series]) {
      rowStart = s.t;
      haveRow = true;
      table.t_ns.push_back(s.t);
      for (TelemetryColumn& c : table.columns)
        c.values.push_back(kNaN);
      std::fill(filled.begin(), filled.end(), 0);
    }
    table.columns[s.series].values.back() = series[s.series].values[s.index];
    filled[s.series] = 1;
  }
  return out;
}

void ZonePolicy::addNote(std::vector<QualityNote>& notes, const std::string& subject) const {
  if (assumedUtc_ == 0) return;
  notes.push_back({Severity::Warning, "local_time_assumed_utc", subject,
                   fmt::format("{} timestamps are local time without a time zone; they were read "
                               "as UTC: give the machine's UTC offset (--utc-offset +HH:MM, or the "
                               "import dialog's local time zone) to correct them",
                               assumedUtc_)});
}

std::string Tally::describe(const std::filesystem::path& path, std::string_view what) const {
  return fmt::format("{} {} (first at {}: '{}')", count, what, text::where(path, firstLine),
                     firstText);
}

void addTallyNote(std::vector<QualityNote>& notes, const Tally& tally, std::string_view code,
                  const std::filesystem::path& path, std::string_view what,
                  std::string_view consequence, Severity severity) {
  if (tally.count == 0) return;
  notes.push_back({severity, std::string(code), fmt::format("file {}", path.filename().string()),
                   fmt::format("{}; {}", tally.describe(path, what), consequence)});
}

size_t countDecreases(const std::vector<double>& values) {
  size_t n = 0;
  double prev = kNaN;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (std::isfinite(prev) && v < prev) ++n;
    prev = v;
  }
  return n;
}

std::string platformFromDeviceName(std::string_view deviceName) {
  std::vector<std::string_view> words;
  text::splitWhitespace(deviceName, words);
  for (std::string_view w : words) {
    w = w.substr(0, w.find('-'));  // "V100-SXM2-16GB" -> "V100"
    const std::string l = text::lower(w);
    if (l == "nvidia" || l == "amd" || l == "instinct" || l == "tesla" || l == "geforce" ||
        l == "radeon" || l == "quadro" || l == "rtx")
      continue;
    const bool hasDigit =
        std::any_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    const bool hasLetter =
        std::any_of(w.begin(), w.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    // "80GB" and "HBM3" are sizes and memory kinds, not the product.
    if (hasDigit && hasLetter && l.find("gb") == std::string::npos && l.rfind("hbm", 0) != 0)
      return std::string(w);
  }
  return {};
}

namespace {

const TelemetryColumn* powerColumn(const ImportedGpu& g) {
  return g.table.column(metric::kPower);
}

size_t positiveCount(const TelemetryColumn* c) {
  if (!c) return 0;
  return static_cast<size_t>(std::count_if(c->values.begin(), c->values.end(),
                                           [](double v) { return std::isfinite(v) && v > 0; }));
}

// Fraction of b's valid samples equal to a's nearest sample within 100 ms; -1 if < 3 compared.
double duplicateFraction(const ImportedGpu& a, const ImportedGpu& b) {
  const TelemetryColumn* pa = powerColumn(a);
  const TelemetryColumn* pb = powerColumn(b);
  if (!pa || !pb) return -1;
  size_t compared = 0, equal = 0;
  for (size_t i = 0; i < b.table.t_ns.size(); ++i) {
    const double vb = pb->values[i];
    if (!std::isfinite(vb) || vb <= 0) continue;
    const auto it = std::lower_bound(a.table.t_ns.begin(), a.table.t_ns.end(), b.table.t_ns[i]);
    size_t best = a.table.t_ns.size();
    int64_t bestDist = 100'000'000;
    for (auto cand : {it, it == a.table.t_ns.begin() ? it : it - 1}) {
      if (cand == a.table.t_ns.end()) continue;
      const int64_t d = std::llabs(*cand - b.table.t_ns[i]);
      if (d <= bestDist) {
        bestDist = d;
        best = static_cast<size_t>(cand - a.table.t_ns.begin());
      }
    }
    if (best >= a.table.t_ns.size()) continue;
    const double va = pa->values[best];
    if (!std::isfinite(va)) continue;
    ++compared;
    if (std::fabs(va - vb) <= 1e-6 * std::max(1.0, std::fabs(va))) ++equal;
  }
  if (compared < 3) return -1;
  return static_cast<double>(equal) / static_cast<double>(compared);
}

}  // namespace

void applyGcdPairs(std::vector<ImportedGpu>& gpus, bool knownPairs,
                   std::vector<QualityNote>& notes) {
  // (node, local index) -> position in gpus.
  std::map<std::pair<int, int>, size_t> where;
  for (size_t i = 0; i < gpus.size(); ++i)
    where[{gpus[i].info.node, gpus[i].info.local_index}] = i;
  enum class Kind { Single, Duplicate, Separate };
  struct Pair {
    size_t a, b;
    Kind kind;
  };
  std::vector<Pair> pairs;
  bool allEvidence = true;
  for (const auto& [key, ia] : where) {
    if (key.second % 2 != 0) continue;
    const auto itb = where.find({key.first, key.second + 1});
    if (itb == where.end()) {
      allEvidence = false;
      continue;
    }
    const size_t ib = itb->second;
    const size_t va = positiveCount(powerColumn(gpus[ia]));
    const size_t vb = positiveCount(powerColumn(gpus[ib]));
    Kind kind = Kind::Separate;
    if (va > 0 && vb == 0)
      kind = Kind::Single;
    else if (va > 0 && vb > 0 && duplicateFraction(gpus[ia], gpus[ib]) >= 0.9)
      kind = Kind::Duplicate;
    if (kind == Kind::Separate) allEvidence = false;
    pairs.push_back({ia, ib, kind});
  }
  if (pairs.empty() || (!knownPairs && !allEvidence)) return;

  // Package ids numbered by (node, pair) in order.
  int package = 0;
  size_t single = 0, duplicate = 0, separate = 0, zeroed = 0;
  for (const Pair& p : pairs) {
    gpus[p.a].info.package = package;
    gpus[p.b].info.package = package;
    ++package;
    TelemetryTable& tb = gpus[p.b].table;
    auto it = std::find_if(tb.columns.begin(), tb.columns.end(),
                           [](const TelemetryColumn& c) { return c.metric == metric::kPower; });
    switch (p.kind) {
      case Kind::Single:
        ++single;
        if (it != tb.columns.end())
          for (double& v : it->values)
            if (v == 0.0) {
              v = kNaN;
              ++zeroed;
            }
        break;
      case Kind::Duplicate:
        ++duplicate;
        if (it != tb.columns.end()) tb.columns.erase(it);
        break;
      case Kind::Separate:
        ++separate;
        break;
    }
  }
  std::string what = fmt::format(
      "{} GPUs were paired into {} dual-GCD packages (GpuInfo::package; GCDs 2k and 2k+1 of a "
      "node share a package)",
      pairs.size() * 2, pairs.size());
  if (single > 0)
    what += fmt::format("; on {} packages only the first GCD reports board power", single);
  if (zeroed > 0)
    what += fmt::format(" ({} zero readings of the second GCD were made missing)", zeroed);
  if (duplicate > 0)
    what += fmt::format(
        "; on {} packages both GCDs reported the same board power, which is kept on the first "
        "GCD only",
        duplicate);
  if (separate > 0)
    what += fmt::format("; on {} packages each GCD reports its own power, kept as is", separate);
  what += ", so sums over GPUs count each package once";
  notes.push_back({Severity::Info, "gcd_pairs", "gpus", what});
}

double medianIntervalSeconds(const std::vector<int64_t>& t_ns) {
  std::vector<int64_t> t = t_ns;
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return static_cast<double>(medianInterval(t)) / 1e9;
}

void addMemoryUsedPercent(TelemetryTable& table, double totalMib) {
  if (!(totalMib > 0) || table.column(metric::kMemUsedPct)) return;
  const TelemetryColumn* used = table.column("mem_used_mib");
  if (!used) return;
  TelemetryColumn pct{std::string(metric::kMemUsedPct), used->values};
  for (double& v : pct.values)
    v = v / totalMib * 100.0;
  table.columns.push_back(std::move(pct));
}

}  // namespace wl::import::tel
