// SPDX-License-Identifier: GPL-3.0-or-later
// Wild timestamps and physically impossible values in imported telemetry (telemetry_checks.h).
// Both run in O(n log n) per table (one sort of the timestamps), whatever the time span.

#include "loaders/import/telemetry_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "loaders/core/metrics.h"
#include "loaders/core/series_math.h"
#include "loaders/core/time_format.h"

namespace wl::import {
namespace {

constexpr uint64_t kMinGroupGapNs = 60'000'000'000;  // 1 min

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
    return std::numeric_limits<uint64_t>::max();
  return a * b;
}

// "55.7 years", "3.2 days", else formatDuration's text.
std::string longDuration(uint64_t ns) {
  constexpr double kDay = 86400e9;
  const double d = static_cast<double>(ns);
  if (d >= 365.25 * kDay) return fmt::format("{:.1f} years", d / (365.25 * kDay));
  if (d >= kDay) return fmt::format("{:.1f} days", d / kDay);
  return formatDuration(static_cast<int64_t>(ns));
}

// Keeps the rows of `table` where keep[i] is true.
void keepRows(TelemetryTable& table, const std::vector<bool>& keep) {
  auto filter = [&](auto& v) {
    size_t out = 0;
    for (size_t i = 0; i < v.size(); ++i)
      if (keep[i]) v[out++] = v[i];
    v.resize(out);
  };
  filter(table.t_ns);
  for (TelemetryColumn& c : table.columns)
    filter(c.values);
  if (!table.throttle_reasons.empty()) filter(table.throttle_reasons);
}

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

size_t dropWildTimestamps(TelemetryTable& table, const std::string& subject,
                          std::vector<QualityNote>& notes) {
  const size_t n = table.t_ns.size();
  if (n < 3) return 0;
  std::vector<int64_t> s = table.t_ns;
  std::sort(s.begin(), s.end());
  // Differences of sorted int64 values, taken unsigned so that no span overflows.
  auto gap = [&](size_t i) {
    return static_cast<uint64_t>(s[i]) - static_cast<uint64_t>(s[i - 1]);
  };
  std::vector<uint64_t> d;
  d.reserve(n - 1);
  for (size_t i = 1; i < n; ++i)
    if (s[i] > s[i - 1]) d.push_back(gap(i));
  uint64_t median = 0;
  if (!d.empty()) {
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    median = d[d.size() / 2];
  }
  const uint64_t split = std::max(saturatingMul(median, 100), kMinGroupGapNs);

  struct Group {
    size_t b, e;  // [b, e) in s
    size_t count() const { return e - b; }
  };
  std::vector<Group> groups;
  size_t begin = 0;
  for (size_t i = 1; i < n; ++i)
    if (gap(i) > split) {
      groups.push_back({begin, i});
      begin = i;
    }
  groups.push_back({begin, n});
  if (groups.size() == 1) return 0;

  const auto main =
      std::max_element(groups.begin(), groups.end(),
                       [](const Group& a, const Group& b) { return a.count() < b.count(); });
  if (main->count() < 2) return 0;
  const uint64_t mainSpan =
      static_cast<uint64_t>(s[main->e - 1]) - static_cast<uint64_t>(s[main->b]);
  const uint64_t minDistance =
      std::max(saturatingMul(mainSpan, 10), static_cast<uint64_t>(kWildMinDistanceNs));
  const size_t maxCount = std::max<size_t>(2, n / 100);

  std::vector<std::pair<int64_t, int64_t>> wild;  // [lo, hi] time ranges to drop
  uint64_t firstDistance = 0;
  bool firstBefore = false;
  for (const Group& g : groups) {
    if (&g == &*main || g.count() > maxCount || g.count() >= main->count()) continue;
    const bool before = g.e <= main->b;
    const uint64_t distance =
        before ? static_cast<uint64_t>(s[main->b]) - static_cast<uint64_t>(s[g.e - 1])
               : static_cast<uint64_t>(s[g.b]) - static_cast<uint64_t>(s[main->e - 1]);
    if (distance <= minDistance) continue;
    if (wild.empty()) firstDistance = distance, firstBefore = before;
    wild.emplace_back(s[g.b], s[g.e - 1]);
  }
  if (wild.empty()) return 0;

  std::vector<bool> keep(n, true);
  size_t dropped = 0;
  int64_t firstWild = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = table.t_ns[i];
    for (const auto& [lo, hi] : wild)
      if (t >= lo && t <= hi) {
        if (dropped++ == 0) firstWild = t;
        keep[i] = false;
        break;
      }
  }
  keepRows(table, keep);
  notes.push_back(
      {Severity::Warning, "wild_timestamps", subject,
       fmt::format("{} stamped far from the rest of the series ({} first, {} {} the other "
                   "samples, which run {} .. {}) {} dropped",
                   plural(dropped, "sample", "samples"), formatUtc(firstWild),
                   longDuration(firstDistance), firstBefore ? "before" : "after",
                   formatUtc(s[main->b]), formatUtc(s[main->e - 1]),
                   dropped == 1 ? "was" : "were")});
  return dropped;
}

size_t maskImpossibleValues(TelemetryTable& table, const GpuInfo* info, const std::string& subject,
                            std::vector<QualityNote>& notes) {
  size_t total = 0;
  for (TelemetryColumn& col : table.columns) {
    const MetricDef* def = findMetric(col.metric);
    if (!def) continue;
    double lo = def->min_valid, hi = def->max_valid;
    float deviceMax = kNaNf;
    if (info && col.metric == metric::kSmClock) deviceMax = info->max_sm_clock_mhz;
    if (info && col.metric == metric::kMemClock) deviceMax = info->max_mem_clock_mhz;
    const bool clockCap = std::isfinite(deviceMax) && deviceMax > 0;
    if (clockCap)
      hi = std::min(hi, static_cast<double>(deviceMax) * (1.0 + kClockAboveMaxTolerance));
    size_t bad = 0;
    double example = 0;
    int64_t exampleT = 0;
    for (size_t i = 0; i < col.values.size(); ++i) {
      double& v = col.values[i];
      if (!std::isfinite(v) || (v >= lo && v <= hi)) continue;
      if (bad == 0 || std::fabs(v) > std::fabs(example)) {
        example = v;
        exampleT = i < table.t_ns.size() ? table.t_ns[i] : 0;
      }
      ++bad;
      v = kNaN;
    }
    if (bad == 0) continue;
    total += bad;
    const std::string range =
        clockCap ? fmt::format("0 .. {:g} {} (the GPU's maximum clock)", deviceMax, def->unit)
                 : fmt::format("{:g} .. {:g} {}", def->min_valid, def->max_valid, def->unit);
    notes.push_back({Severity::Warning, "impossible_values", subject,
                     fmt::format("{} of {} outside what a GPU can report ({}), e.g. {:g} {} at "
                                 "{}: treated as missing samples",
                                 plural(bad, "value", "values"), col.metric, range, example,
                                 def->unit, formatUtc(exampleT))});
  }
  return total;
}

void energyCrossCheck(const TelemetryTable& table, const std::string& subject,
                      std::vector<QualityNote>& notes) {
  const TelemetryColumn* energy = table.column(metric::kEnergy);
  const TelemetryColumn* power = table.column(metric::kPower);
  if (!energy || !power) return;
  const std::vector<int64_t>& t = table.t_ns;
  std::vector<size_t> rows;  // rows with both values
  for (size_t i = 0; i < t.size(); ++i)
    if (std::isfinite(energy->values[i]) && std::isfinite(power->values[i])) rows.push_back(i);
  if (rows.size() < 2) return;
  std::vector<int64_t> dts;
  for (size_t k = 1; k < rows.size(); ++k)
    if (t[rows[k]] > t[rows[k - 1]]) dts.push_back(t[rows[k]] - t[rows[k - 1]]);
  if (dts.empty()) return;
  std::nth_element(dts.begin(), dts.begin() + static_cast<std::ptrdiff_t>(dts.size() / 2),
                   dts.end());
  const int64_t gap = gapThreshold(dts[dts.size() / 2]);
  double counter = 0, integral = 0, covered = 0;
  size_t resets = 0, pairs = 0;
  for (size_t k = 1; k < rows.size(); ++k) {
    const size_t a = rows[k - 1], b = rows[k];
    const int64_t dt = t[b] - t[a];
    if (dt <= 0 || dt > gap) continue;
    const double de = energy->values[b] - energy->values[a];
    if (de < 0) {
      ++resets;
      continue;
    }
    const double s = static_cast<double>(dt) * 1e-9;
    counter += de;
    integral += 0.5 * (power->values[a] + power->values[b]) * s;
    covered += s;
    ++pairs;
  }
  if (pairs == 0 || integral <= 0) return;
  const double diff = (counter - integral) / integral;
  auto kj = [](double j) {
    return std::fabs(j) >= 1e6   ? fmt::format("{:.4g} MJ", j * 1e-6)
           : std::fabs(j) >= 1e3 ? fmt::format("{:.4g} kJ", j * 1e-3)
                                 : fmt::format("{:.4g} J", j);
  };
  std::string text = fmt::format(
      "the energy counter rose by {} where power integrates to {} over the same {} ({} sample "
      "pairs): {:+.1f} %",
      kj(counter), kj(integral), formatDuration(static_cast<int64_t>(covered * 1e9)), pairs,
      100.0 * diff);
  if (resets > 0) text += fmt::format("; {} counter decreases (resets) left out", resets);
  const bool off = std::fabs(diff) > kEnergyCheckTolerance;
  if (off) text += "; analyses integrate power_w, the counter is kept as energy_j: compare the two";
  notes.push_back(
      {off ? Severity::Warning : Severity::Info, "energy_cross_check", subject, std::move(text)});
}

void checkTelemetry(std::vector<ImportedData>& inputs, std::vector<QualityNote>& notes) {
  for (ImportedData& d : inputs)
    checkTelemetry(d, notes);
}

void checkTelemetry(ImportedData& d, std::vector<QualityNote>& notes) {
  const std::string file = d.path.filename().string();
  for (ImportedGpu& g : d.gpus) {
    std::string subject = fmt::format("{} GPU {}", file, g.info.local_index);
    if (!g.info.hostname.empty()) subject += fmt::format(" ({})", g.info.hostname);
    dropWildTimestamps(g.table, subject, notes);
    maskImpossibleValues(g.table, &g.info, subject, notes);
    if (d.energyCounterMeasured) energyCrossCheck(g.table, subject, notes);
  }
  for (ImportedNode& node : d.nodes) {
    const std::string subject = fmt::format("{} node {}", file, node.node);
    dropWildTimestamps(node.table, subject, notes);
    maskImpossibleValues(node.table, nullptr, subject, notes);
  }
}

}  // namespace wl::import
