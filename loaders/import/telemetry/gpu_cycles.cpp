// SPDX-License-Identifier: GPL-3.0-or-later
// Finding the number of GPUs that take turns in a log without a GPU column (gpu_cycles.h).
// Cost: one sort of the row gaps, O(rows x 64) comparisons for the constants, and
// O(min(rows, 50,000) x 64 x columns) for the continuity steps.

#include "loaders/import/telemetry/gpu_cycles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "loaders/core/time_format.h"

namespace wl::import::tel {
namespace {

constexpr double kMinBurstRatio = 3.0;         // gap between cycles / gap inside a cycle, at least
constexpr int64_t kGapFloorNs = 1'000'000;     // 1 ms: nvidia-smi's timestamp resolution
constexpr double kContinuityTolerance = 1.15;  // multiples of N step almost as little as N
constexpr double kContinuitySeparation = 1.5;  // other N must step this much more to tell
constexpr size_t kContinuityRows = 50'000;

struct Timing {
  int gpus = 0;  // 0: no cycles
  double share = 0;
  size_t bursts = 0;
  int64_t insideMax = 0, betweenMin = 0;  // largest gap inside a cycle, smallest between cycles
  std::vector<size_t> starts;             // first row of each burst
};

Timing timing(std::span<const int64_t> t) {
  Timing out;
  const size_t n = t.size();
  if (n < 3) return out;
  std::vector<int64_t> gaps(n - 1);
  for (size_t i = 0; i + 1 < n; ++i) {
    const int64_t d = t[i + 1] - t[i];  // timestamps are far from int64 limits
    gaps[i] = d < 0 ? -d : d;
  }
  std::vector<int64_t> sorted = gaps;
  std::sort(sorted.begin(), sorted.end());
  double bestRatio = 0;
  size_t split = 0;
  for (size_t j = 1; j < sorted.size(); ++j) {
    const double r = static_cast<double>(sorted[j] + kGapFloorNs) /
                     static_cast<double>(sorted[j - 1] + kGapFloorNs);
    if (r > bestRatio) bestRatio = r, split = j;
  }
  if (bestRatio < kMinBurstRatio) return out;
  const int64_t between = sorted[split];
  out.insideMax = sorted[split - 1];
  out.betweenMin = between;
  out.starts.push_back(0);
  for (size_t i = 0; i + 1 < n; ++i)
    if (gaps[i] >= between) out.starts.push_back(i + 1);
  std::map<size_t, size_t> sizes;
  for (size_t k = 0; k < out.starts.size(); ++k) {
    const size_t end = k + 1 < out.starts.size() ? out.starts[k + 1] : n;
    ++sizes[end - out.starts[k]];
  }
  out.bursts = out.starts.size();
  size_t mode = 0, count = 0;
  for (const auto& [size, c] : sizes)
    if (c > count) mode = size, count = c;
  if (mode == 0 || mode > static_cast<size_t>(kMaxCycleGpus)) return {};
  out.gpus = static_cast<int>(mode);
  out.share = static_cast<double>(count) / static_cast<double>(out.bursts);
  return out;
}

size_t misaligned(const Timing& t, int gpus) {
  size_t m = 0;
  for (size_t s : t.starts)
    if (s % static_cast<size_t>(gpus) != 0) ++m;
  return m;
}

// The smallest P such that the constants repeat every P rows; 0 if they are all equal or repeat
// with no period up to the limit.
int constantsPeriod(std::span<const uint32_t> sig, bool& distinct) {
  distinct = false;
  const size_t n = sig.size();
  if (n < 2 || std::all_of(sig.begin(), sig.end(), [&](uint32_t s) { return s == sig[0]; }))
    return 0;
  const size_t maxP = std::min<size_t>(static_cast<size_t>(kMaxCycleGpus), n - 1);
  for (size_t p = 1; p <= maxP; ++p) {
    bool ok = true;
    for (size_t i = p; i < n && ok; ++i)
      ok = sig[i] == sig[i - p];
    if (!ok) continue;
    std::vector<uint32_t> first(sig.begin(), sig.begin() + static_cast<std::ptrdiff_t>(p));
    std::sort(first.begin(), first.end());
    distinct = std::adjacent_find(first.begin(), first.end()) == first.end();
    return static_cast<int>(p);
  }
  return 0;
}

// Mean step between samples `lag` rows apart, relative to the step between neighbouring rows,
// averaged over the columns that vary.
std::vector<double> continuityCosts(const std::vector<std::span<const double>>& metrics,
                                    size_t rows, int maxLag) {
  std::vector<double> cost(static_cast<size_t>(maxLag) + 1, 0.0);
  size_t used = 0;
  for (std::span<const double> col : metrics) {
    const size_t n = std::min({col.size(), rows, kContinuityRows});
    auto step = [&](int lag) {
      double sum = 0;
      size_t k = 0;
      for (size_t i = static_cast<size_t>(lag); i < n; ++i)
        if (std::isfinite(col[i]) && std::isfinite(col[i - static_cast<size_t>(lag)])) {
          sum += std::fabs(col[i] - col[i - static_cast<size_t>(lag)]);
          ++k;
        }
      return k == 0 ? -1.0 : sum / static_cast<double>(k);
    };
    const double base = step(1);
    if (base <= 0) continue;  // constant or empty column
    std::vector<double> c(cost.size(), 0.0);
    bool ok = true;
    for (int lag = 1; lag <= maxLag && ok; ++lag) {
      const double s = step(lag);
      ok = s >= 0;
      c[static_cast<size_t>(lag)] = s / base;
    }
    if (!ok) continue;
    for (size_t lag = 1; lag < cost.size(); ++lag)
      cost[lag] += c[lag];
    ++used;
  }
  if (used == 0) return {};
  for (double& c : cost)
    c /= static_cast<double>(used);
  return cost;
}

struct Continuity {
  int best = 0;           // 0: values do not tell
  double separation = 0;  // cost of the best other N (not a multiple) / cost of best
  double contrast = 0;    // cost(1) / cost(best)
  std::vector<double> cost;
  bool supports(int n) const {
    if (best == 0 || n <= 0 || static_cast<size_t>(n) >= cost.size()) return false;
    return cost[static_cast<size_t>(n)] <= kContinuityTolerance * cost[static_cast<size_t>(best)];
  }
};

Continuity continuity(const CycleEvidence& e) {
  Continuity c;
  const size_t rows = e.t_ns.size();
  const int maxLag = static_cast<int>(std::min<size_t>(kMaxCycleGpus, rows / 3));
  if (maxLag < 2) return c;
  c.cost = continuityCosts(e.metrics, rows, maxLag);
  if (c.cost.empty()) return c;
  double minCost = std::numeric_limits<double>::max();
  for (int lag = 1; lag <= maxLag; ++lag)
    minCost = std::min(minCost, c.cost[static_cast<size_t>(lag)]);
  int best = 1;
  while (c.cost[static_cast<size_t>(best)] > kContinuityTolerance * minCost)
    ++best;
  double other = std::numeric_limits<double>::max();
  for (int lag = 1; lag <= maxLag; ++lag)
    if (lag % best != 0) other = std::min(other, c.cost[static_cast<size_t>(lag)]);
  const double bestCost = std::max(c.cost[static_cast<size_t>(best)], 1e-12);
  c.separation = other == std::numeric_limits<double>::max() ? 0 : other / bestCost;
  c.contrast = c.cost[1] / bestCost;
  if (c.separation >= kContinuitySeparation) c.best = best;
  return c;
}

std::string timingText(const Timing& t, int gpus) {
  const size_t match = static_cast<size_t>(std::lround(t.share * static_cast<double>(t.bursts)));
  const std::string inside = t.insideMax == 0
                                 ? "the rows of a cycle share one timestamp"
                                 : "rows of a cycle lie within " + formatDuration(t.insideMax);
  return fmt::format("{} of {} query cycles hold {} rows ({}, cycles at least {} apart)",
                     t.gpus == gpus ? match : 0, t.bursts, gpus, inside,
                     formatDuration(t.betweenMin));
}

// The first data row (1-based) of the first cycle that does not start at a multiple of `gpus`.
size_t firstMisaligned(const Timing& t, int gpus) {
  for (size_t s : t.starts)
    if (s % static_cast<size_t>(gpus) != 0) return s + 1;
  return 0;
}

}  // namespace

std::string_view confidenceName(Confidence c) {
  switch (c) {
    case Confidence::Given:
      return "given";
    case Confidence::High:
      return "high";
    case Confidence::Medium:
      return "medium";
    case Confidence::Low:
      return "low";
  }
  return "low";
}

CycleResult inferGpuCount(const CycleEvidence& e) {
  CycleResult r;
  const Timing t = timing(e.t_ns);
  bool distinct = false;
  const int period = constantsPeriod(e.signature, distinct);
  const Continuity c = continuity(e);
  r.timingGpus = t.gpus;
  r.timingShare = t.share;
  r.bursts = t.bursts;
  r.constantsPeriod = period;
  r.constantsDistinct = distinct;
  r.continuityGpus = c.best;
  r.continuityContrast = c.contrast;

  const bool timingOk = t.gpus > 0 && t.share >= 0.5;
  auto constantsAgree = [&](int n) {
    return period == 0 || (n % period == 0 && (!distinct || n == period));
  };
  std::vector<std::string> why, against;
  int n = 1;
  if (e.given) {
    n = std::max(1, *e.given);
    r.confidence = Confidence::Given;
    why.push_back("given with --gpus");
  } else if (timingOk && constantsAgree(t.gpus)) {
    n = t.gpus;
    why.push_back("the most frequent number of rows per query cycle: " + timingText(t, n));
  } else if (period > 0 && distinct) {
    n = period;
    why.push_back(
        fmt::format("the per-GPU constants ({}) repeat every {} rows, each position with "
                    "its own",
                    e.constantFields, period));
  } else if (c.best > 0) {
    n = c.best;
    if (period > 0 && n % period != 0) n = period * std::max(1, (n + period - 1) / period);
    why.push_back(
        fmt::format("value continuity: samples {} rows apart differ {:.1f}x less than "
                    "neighbouring rows",
                    n, c.contrast));
  } else if (period > 0) {
    n = period;
    why.push_back(
        fmt::format("the per-GPU constants ({}) repeat every {} rows", e.constantFields, period));
  } else {
    n = 1;
    why.push_back(t.gpus == 0 ? "the rows show no query cycles (no bursts of rows close in time)"
                              : "no evidence of several GPUs");
  }
  r.gpus = n;

  // Cross-checks, whatever decided.
  const size_t bad = t.gpus > 0 ? misaligned(t, n) : 0;
  r.misalignedBursts = bad;
  int support = 0;
  if (timingOk && t.gpus == n && why.front().rfind("the most frequent", 0) != 0)
    why.push_back("timing agrees: " + timingText(t, n));
  if (timingOk && t.gpus != n) against.push_back("timing suggests " + timingText(t, t.gpus));
  if (period > 0 && constantsAgree(n)) {
    ++support;
    if (why.front().find("constants") == std::string::npos)
      why.push_back(
          fmt::format("confirmed by the per-GPU constants ({}), which repeat every {} rows",
                      e.constantFields, period));
  } else if (period > 0) {
    against.push_back(
        fmt::format("the per-GPU constants ({}) repeat every {} rows", e.constantFields, period));
  } else if (!e.constantFields.empty() && e.signature.size() > 1 &&
             !std::all_of(e.signature.begin(), e.signature.end(),
                          [&](uint32_t s) { return s == e.signature[0]; })) {
    against.push_back(
        fmt::format("the per-GPU constants ({}) do not repeat with any period up to "
                    "{} (rows missing?)",
                    e.constantFields, kMaxCycleGpus));
  }
  if (c.supports(n)) {
    ++support;
    if (why.front().rfind("value continuity", 0) != 0)
      why.push_back(
          fmt::format("confirmed by value continuity (samples {} rows apart differ {:.1f}x "
                      "less than neighbouring rows)",
                      n, c.cost[1] / std::max(c.cost[static_cast<size_t>(n)], 1e-12)));
  } else if (c.best > 0) {
    against.push_back(fmt::format("value continuity suggests {} GPUs", c.best));
  }
  if (bad > 0)
    against.push_back(
        fmt::format("{} of {} query cycles, the first at data row {}, do not start at a "
                    "multiple of {} rows (a row missing or a cycle split there)",
                    bad, t.bursts, firstMisaligned(t, n), n));

  if (!e.given) {
    const bool timingDecided = timingOk && t.gpus == n;
    if (!against.empty()) {
      r.confidence = Confidence::Low;
    } else if (timingDecided && t.share >= 0.9 && bad == 0) {
      r.confidence = Confidence::High;
    } else if (period > 0 && distinct && n == period && (c.best == 0 || c.supports(n))) {
      r.confidence = support >= 2 || timingDecided ? Confidence::High : Confidence::Medium;
    } else if (timingDecided || support >= 1 || n == 1) {
      r.confidence = Confidence::Medium;
    } else {
      r.confidence = Confidence::Low;
    }
    // One GPU when nothing repeats is the plain reading of such a file.
    if (n == 1 && t.gpus == 0 && period == 0 && against.empty()) r.confidence = Confidence::High;
  }
  r.severity = r.confidence == Confidence::High || r.confidence == Confidence::Given
                   ? Severity::Info
                   : Severity::Warning;

  std::string text = fmt::format(
      "no index, uuid or pci.bus_id column: row i was read as GPU i mod {} ({} GPU{}). N = {}: ", n,
      n, n == 1 ? "" : "s", n);
  for (size_t k = 0; k < why.size(); ++k)
    text += (k ? "; " : "") + why[k];
  if (!against.empty()) {
    text += ". But ";
    for (size_t k = 0; k < against.size(); ++k)
      text += (k ? "; " : "") + against[k];
  }
  text += fmt::format(". Confidence: {}", confidenceName(r.confidence));
  if (r.confidence != Confidence::High && r.confidence != Confidence::Given)
    text += "; give --gpus N if the host had another number of GPUs";
  r.message = std::move(text);
  return r;
}

}  // namespace wl::import::tel
