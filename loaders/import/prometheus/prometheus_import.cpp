// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/prometheus/prometheus_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/core/time_format.h"
#include "loaders/import/telemetry/dcgm_fields.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import::prom {
namespace {

constexpr std::string_view kMaskMetric = "#mask";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

const std::string* label(const Labels& labels, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    const auto it = labels.find(std::string(n));
    if (it != labels.end() && !it->second.empty()) return &it->second;
  }
  return nullptr;
}

// A selector split into its metric name (may be empty) and the matchers between its braces.
struct Selector {
  std::string name, inner;
};

Selector splitSelector(std::string_view text) {
  const std::string_view s = trim(text);
  Selector out;
  size_t i = 0;
  auto nameChar = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
  };
  while (i < s.size() && nameChar(s[i], i == 0))
    ++i;
  out.name = std::string(s.substr(0, i));
  std::string_view rest = trim(s.substr(i));
  if (rest.empty() && !out.name.empty()) return out;
  if (rest.size() < 2 || rest.front() != '{' || rest.back() != '}')
    throw Error(
        fmt::format("--match '{}': expected a series selector such as "
                    "{{job=\"dcgm\",Hostname=~\"node0[0-7]\"}} or NAME{{...}}",
                    text));
  std::string_view inner = trim(rest.substr(1, rest.size() - 2));
  while (!inner.empty() && (inner.back() == ',' || inner.back() == ' '))
    inner.remove_suffix(1);
  out.inner = std::string(inner);
  return out;
}

// The selector sent to /api/v1/series: the user's, limited to GPU exporter names when it names
// no metric.
std::string seriesSelector(const std::string& given) {
  const Selector s = splitSelector(given);
  if (!s.name.empty() || s.inner.find("__name__") != std::string::npos) return given;
  const std::string_view def = kDefaultSelector;
  const std::string_view nameMatcher = def.substr(1, def.size() - 2);
  return "{" + (s.inner.empty() ? "" : s.inner + ",") + std::string(nameMatcher) + "}";
}

// `{__name__="NAME",<the selector's matchers>}`: one metric of one selector.
std::string groupSelector(const std::string& given, const std::string& name) {
  const Selector s = splitSelector(given);
  return fmt::format("{{__name__=\"{}\"{}{}}}", name, s.inner.empty() ? "" : ",", s.inner);
}

std::string labelsKey(const Labels& labels) {
  std::string k;
  for (const auto& [n, v] : labels) {
    k += n;
    k += '\x1f';
    k += v;
    k += '\x1e';
  }
  return k;
}

struct AmdName {
  std::string_view name, metric;
  double scale;
  int priority;
};
// AMD device-metrics-exporter names (its docs: power in W, energy in microjoules, activity in %).
constexpr std::array kAmdNames = {
    AmdName{"gpu_power_usage", metric::kPower, 1.0, 0},
    AmdName{"gpu_package_power", metric::kPower, 1.0, 1},
    AmdName{"gpu_energy_consumed", metric::kEnergy, 1e-6, 0},
    AmdName{"gpu_edge_temperature", metric::kTemp, 1.0, 0},
    AmdName{"gpu_junction_temperature", metric::kHotspotTemp, 1.0, 0},
    AmdName{"gpu_memory_temperature", metric::kMemTemp, 1.0, 0},
    AmdName{"gpu_gfx_activity", metric::kUtil, 1.0, 0},
    AmdName{"gpu_umc_activity", metric::kMemUtil, 1.0, 0},
};

// A Mapping with its priority among series giving one metric (lower wins).
struct Ranked {
  Mapping m;
  int priority = 0;
  std::optional<dcgm::Type> blankType;  // DCGM fields: which blank sentinels apply
};

Ranked rankedMapping(const Labels& labels) {
  Ranked r;
  const std::string* namePtr = label(labels, {"__name__"});
  if (!namePtr) return r;
  std::string_view name = *namePtr;
  if (name.size() > 6 && name.substr(name.size() - 6) == "_total") name.remove_suffix(6);
  if (name.rfind("DCGM_FI_", 0) == 0) {
    const dcgm::Field* f = dcgm::byName(name);
    if (!f) {
      r.m.metric = dcgm::extraMetricId(name);
      return r;
    }
    r.m.known = true;
    r.priority = f->priority;
    r.blankType = f->type;
    switch (f->role) {
      case dcgm::Role::Metric:
      case dcgm::Role::Extra:
        r.m.metric = std::string(f->metric);
        r.m.scale = f->scale;
        break;
      case dcgm::Role::Throttle:
        r.m.metric = std::string(kMaskMetric);
        r.m.throttleMask = true;
        break;
      case dcgm::Role::GpuInfo:
      case dcgm::Role::Identity:
        break;  // constants: not time series of the run
    }
    if (r.priority > 0 && f->role == dcgm::Role::Metric) r.m.metric = dcgm::shadowedMetricId(*f);
    return r;
  }
  for (const AmdName& a : kAmdNames)
    if (a.name == name) {
      r.m = {std::string(a.metric), a.scale, false, true};
      r.priority = a.priority;
      if (a.priority > 0) r.m.metric = "amd_" + std::string(a.name);
      return r;
    }
  if (name == "gpu_clock") {
    const std::string* type = label(labels, {"clock_type"});
    r.m.known = true;
    if (type &&
        (type->find("SYSTEM") != std::string::npos || type->find("GFX") != std::string::npos))
      r.m.metric = std::string(metric::kSmClock);
    else if (type && type->find("MEM") != std::string::npos)
      r.m.metric = std::string(metric::kMemClock);
  }
  return r;
}

std::optional<int> wholeNumber(std::string_view s) {
  int v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "node01:9400" -> "node01", "[fe80::1]:9400" -> "fe80::1".
std::string hostOfInstance(std::string_view instance) {
  if (!instance.empty() && instance.front() == '[') {
    const size_t close = instance.find(']');
    if (close != std::string_view::npos) return std::string(instance.substr(1, close - 1));
  }
  const size_t colon = instance.rfind(':');
  if (colon != std::string_view::npos && instance.find(':') == colon)
    return std::string(instance.substr(0, colon));
  return std::string(instance);
}

void rethrowDiscovery(const std::exception& e) {
  throw Error(e.what());
}

// ---- fetching ------------------------------------------------------------------------------

struct Group {
  std::string selector;  // `{__name__="M",...}`
  std::string metricName;
  size_t series = 0;
};

struct Task {
  size_t group = 0;
  int64_t t0 = 0, t1 = 0;  // the window (t0, t1]; the first one also holds t0 itself
};

struct Missing {
  size_t group = 0;
  int64_t t0 = 0, t1 = 0;
  std::string why;
};

// Everything the workers share.
struct Shared {
  const Source* source = nullptr;
  const std::vector<Group>* groups = nullptr;
  std::vector<Task> tasks;
  std::vector<std::vector<SeriesSamples>> results;  // per task
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> cancel{false};
  std::mutex mutex;  // guards what follows
  std::exception_ptr error;
  std::vector<Missing> missing;
  std::vector<std::string> warnings;
  FetchStats stats;
};

void sleepUnlessCancelled(double seconds, const std::atomic<bool>& cancel) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!cancel && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Fetches the window (t0, t1] of one group, splitting it while the server says too many samples
// and retrying retryable failures; appends the series to `out`.
void fetchWindow(Api& api, Shared& sh, size_t group, int64_t t0, int64_t t1, bool first,
                 std::vector<SeriesSamples>& out, int depth) {
  const Source& src = *sh.source;
  const Group& g = (*sh.groups)[group];
  // Closed ranges in Prometheus 2 ([t-W, t]) and left-open ones in 3 ((t-W, t]): widen the
  // first window by 1 ms so that a sample at the start is in either; duplicates are dropped.
  const int64_t from = first ? t0 - 1'000'000 : t0;
  const int64_t windowMs = std::max<int64_t>((t1 - from) / 1'000'000, 1);
  const std::string query = fmt::format("{}[{}ms]", g.selector, windowMs);
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> warnings;
    try {
      std::vector<SeriesSamples> part = api.rangeQuery(query, t1, warnings, &sh.cancel);
      std::lock_guard lock(sh.mutex);
      ++sh.stats.queries;
      for (std::string& w : warnings)
        sh.warnings.push_back(std::move(w));
      for (SeriesSamples& s : part)
        out.push_back(std::move(s));
      return;
    } catch (const TooManySamples& e) {
      if (depth >= 24 || t1 - t0 <= 2'000'000'000) throw;
      {
        std::lock_guard lock(sh.mutex);
        ++sh.stats.queries;
        ++sh.stats.splits;
      }
      const int64_t mid = t0 + (t1 - t0) / 2;
      fetchWindow(api, sh, group, t0, mid, first, out, depth + 1);
      fetchWindow(api, sh, group, mid, t1, false, out, depth + 1);
      return;
    } catch (const Retryable& e) {
      {
        std::lock_guard lock(sh.mutex);
        ++sh.stats.queries;
        if (attempt >= src.retries) {
          // The server went away: stop, rather than note every remaining window as missing.
          if (e.connect()) throw Error(e.what());
          sh.missing.push_back({group, t0, t1, e.what()});
          return;
        }
        ++sh.stats.retries;
      }
      const double wait = e.retryAfterS() >= 0 ? std::min(e.retryAfterS(), 30.0)
                                               : src.backoffS * std::pow(2.0, attempt);
      sleepUnlessCancelled(wait, sh.cancel);
      if (sh.cancel) throw Cancelled();
    }
  }
}

void worker(Shared& sh) {
  try {
    Api api(sh.source->url, sh.source->access);
    while (!sh.cancel) {
      const size_t k = sh.next++;
      if (k >= sh.tasks.size()) break;
      const Task& t = sh.tasks[k];
      fetchWindow(api, sh, t.group, t.t0, t.t1, t.t0 == sh.source->start_ns, sh.results[k], 0);
      ++sh.done;
    }
  } catch (...) {
    std::lock_guard lock(sh.mutex);
    if (!sh.error) sh.error = std::current_exception();
    sh.cancel = true;
  }
}

// The windows of each group, sized so that one query holds about maxSamplesPerQuery samples.
std::vector<Task> planTasks(const Source& src, const std::vector<Group>& groups) {
  std::vector<Task> tasks;
  const int64_t span = src.end_ns - src.start_ns;
  for (size_t g = 0; g < groups.size(); ++g) {
    const double perSecond = static_cast<double>(std::max<size_t>(groups[g].series, 1)) *
                             std::max(src.assumedRateHz, 1e-6);
    const double seconds = static_cast<double>(src.maxSamplesPerQuery) / perSecond;
    int64_t w = static_cast<int64_t>(std::clamp(seconds, 1.0, 1e9) * 1e9);
    w = std::min(w, std::max<int64_t>(span, 1));
    for (int64_t t0 = src.start_ns, t1 = 0; t0 < src.end_ns; t0 = t1) {
      t1 = std::min(t0 + w, src.end_ns);
      tasks.push_back({g, t0, t1});
    }
  }
  return tasks;
}

// Runs the tasks on `concurrency` threads, reporting progress from this thread.
void runTasks(Shared& sh, int concurrency, const Progress& progress) {
  const size_t threads =
      std::clamp<size_t>(static_cast<size_t>(std::max(concurrency, 1)), 1, sh.tasks.size());
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t i = 0; i < threads; ++i)
    pool.emplace_back([&sh] { worker(sh); });
  auto joinAll = [&] {
    for (std::thread& t : pool)
      if (t.joinable()) t.join();
  };
  const std::string stage = fmt::format("fetching raw samples ({} windows)", sh.tasks.size());
  try {
    while (sh.done < sh.tasks.size() && !sh.cancel) {
      // One stage text for the whole fetch: the fraction says how far it is.
      progress.report(static_cast<double>(sh.done) / static_cast<double>(sh.tasks.size()), stage);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } catch (...) {
    sh.cancel = true;
    joinAll();
    throw;
  }
  joinAll();
  if (sh.error) std::rethrow_exception(sh.error);
}

// ---- building the GPUs ---------------------------------------------------------------------

struct SeriesAcc {
  Labels labels;
  std::vector<int64_t> t;
  std::vector<double> v;
};

// Sorts by time and drops samples repeated by overlapping windows.
size_t sortUnique(SeriesAcc& s) {
  std::vector<size_t> order(s.t.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!std::is_sorted(s.t.begin(), s.t.end()))
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return s.t[a] < s.t[b]; });
  std::vector<int64_t> t;
  std::vector<double> v;
  t.reserve(order.size());
  v.reserve(order.size());
  for (size_t i : order) {
    if (!t.empty() && t.back() == s.t[i]) continue;
    t.push_back(s.t[i]);
    v.push_back(s.v[i]);
  }
  const size_t dropped = s.t.size() - t.size();
  s.t = std::move(t);
  s.v = std::move(v);
  return dropped;
}

// A cumulative counter made continuous across resets (Prometheus' rule: a decrease means the
// counter restarted from zero). Returns the number of resets and the time of the first.
std::pair<size_t, int64_t> continueAcrossResets(const std::vector<int64_t>& t,
                                                std::vector<double>& v) {
  double offset = 0, prev = kNaN;
  size_t resets = 0;
  int64_t first = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) continue;
    const double raw = v[i];
    if (std::isfinite(prev) && raw < prev) {
      offset += prev;
      if (resets++ == 0) first = t[i];
    }
    prev = raw;
    v[i] = raw + offset;
  }
  return {resets, first};
}

struct GpuAcc {
  GpuIdentity id;
  std::vector<tel::Series> series;
  std::map<std::string, int> priorityOf;  // metric -> priority of the series that gives it
};

struct Tallies {
  size_t duplicates = 0, noGpu = 0, resets = 0, resetGpus = 0, nonFinite = 0;
  int64_t firstReset = 0;
  std::string firstResetGpu;
  std::set<std::string> extras;
};

// Puts one fetched series into its GPU.
void addSeries(std::map<std::string, GpuAcc>& gpus, SeriesAcc& s, Tallies& tally) {
  const std::optional<GpuIdentity> id = identityOf(s.labels);
  if (!id) {
    ++tally.noGpu;
    return;
  }
  const Ranked r = rankedMapping(s.labels);
  if (r.m.metric.empty()) return;
  if (!r.m.known) tally.extras.insert(s.labels["__name__"]);
  GpuAcc& g = gpus[id->key()];
  if (g.series.empty()) g.id = *id;
  if (g.id.deviceName.empty()) g.id.deviceName = id->deviceName;
  if (g.id.uuid.empty()) g.id.uuid = id->uuid;
  if (g.priorityOf.count(r.m.metric)) {
    ++tally.duplicates;  // a second series for one GPU metric (another job scraping it)
    return;
  }
  g.priorityOf[r.m.metric] = r.priority;
  tel::Series out;
  out.metric = r.m.metric;
  out.t_ns = std::move(s.t);
  out.values = std::move(s.v);
  for (double& x : out.values) {
    if (!std::isfinite(x)) {
      ++tally.nonFinite;
      x = kNaN;
    } else if (r.blankType && dcgm::isBlank(x, r.blankType)) {
      x = kNaN;
    } else if (!r.m.throttleMask) {
      x *= r.m.scale;
    }
  }
  if (out.metric == metric::kEnergy) {
    const auto [resets, first] = continueAcrossResets(out.t_ns, out.values);
    if (resets > 0) {
      if (tally.resets == 0 || first < tally.firstReset) {
        tally.firstReset = first;
        tally.firstResetGpu = id->key();
      }
      tally.resets += resets;
      ++tally.resetGpus;
    }
  }
  g.series.push_back(std::move(out));
}

ImportedGpu buildGpu(GpuAcc& g) {
  const int64_t tol = tel::mergeTolerance(g.series);
  tel::MergedTable merged = tel::mergeSeries(std::move(g.series), tol);
  TelemetryTable& table = merged.table;
  const auto mask = std::find_if(table.columns.begin(), table.columns.end(),
                                 [](const TelemetryColumn& c) { return c.metric == kMaskMetric; });
  if (mask != table.columns.end()) {
    table.throttle_reasons.assign(table.t_ns.size(), throttle::kUnknown);
    for (size_t i = 0; i < table.t_ns.size(); ++i)
      if (std::isfinite(mask->values[i]))
        table.throttle_reasons[i] =
            static_cast<uint32_t>(static_cast<uint64_t>(mask->values[i]) & 0xFFFFFFFFull);
    table.columns.erase(mask);
  }
  ImportedGpu gpu;
  gpu.info.hostname = g.id.host;
  gpu.info.local_index = std::max(g.id.index, 0);
  gpu.info.uuid = g.id.uuid;
  gpu.info.device_name = g.id.deviceName;
  gpu.table = std::move(table);
  return gpu;
}

// Spans without samples longer than 3 scrape intervals (and 2 s). GPUs are scraped at slightly
// different times, so gaps whose ends lie within a scrape interval of each other are one span.
void gapNotes(const ImportedData& d, std::vector<QualityNote>& notes) {
  struct Gap {
    int64_t from, to, tol;
  };
  std::vector<Gap> gaps;
  for (const ImportedGpu& g : d.gpus) {
    const std::vector<int64_t>& t = g.table.t_ns;
    const double median = tel::medianIntervalSeconds(t);
    // Held below int64's maximum (9.2e18 ns) so that a median of centuries cannot overflow it.
    const double median_ns = std::min(median * 1e9, 3e18);
    const int64_t limit = std::max<int64_t>(static_cast<int64_t>(3 * median_ns), 2'000'000'000);
    const int64_t tol = std::max<int64_t>(static_cast<int64_t>(median_ns), 1'000'000'000);
    for (size_t i = 1; i < t.size(); ++i)
      if (t[i] - t[i - 1] > limit) gaps.push_back({t[i - 1], t[i], tol});
  }
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.from < b.from; });
  struct Span {
    int64_t from, to, lastFrom;
    size_t gpus;
  };
  std::vector<Span> spans;
  for (const Gap& g : gaps) {
    if (!spans.empty() && g.from - spans.back().lastFrom <= g.tol &&
        std::llabs(g.to - spans.back().to) <= g.tol) {
      Span& s = spans.back();
      s.to = std::max(s.to, g.to);
      s.lastFrom = g.from;
      ++s.gpus;
      continue;
    }
    spans.push_back({g.from, g.to, g.from, 1});
  }
  for (size_t k = 0; k < spans.size(); ++k) {
    if (k == 20) {
      notes.push_back(
          {Severity::Warning, "prometheus_gap", "prometheus",
           fmt::format("{} more spans without samples are not listed", spans.size() - 20)});
      break;
    }
    const Span& s = spans[k];
    notes.push_back({Severity::Warning, "prometheus_gap", "prometheus",
                     fmt::format("{} GPU{} have no samples from {} to {} ({}): the exporter was "
                                 "not scraped then",
                                 s.gpus, s.gpus == 1 ? "" : "s", formatUtc(s.from), formatUtc(s.to),
                                 formatDuration(s.to - s.from))});
  }
}

void tallyNotes(const Tallies& t, std::vector<QualityNote>& notes) {
  const std::string subject = "prometheus";
  if (t.resets > 0)
    notes.push_back({Severity::Info, "energy_counter_reset", subject,
                     fmt::format("the energy counter restarted {} times on {} GPUs (first on {} at "
                                 "{}); read as Prometheus reads a counter reset (restarted from "
                                 "zero), energy_j continues across it",
                                 t.resets, t.resetGpus, t.firstResetGpu, formatUtc(t.firstReset))});
  if (t.duplicates > 0)
    notes.push_back({Severity::Info, "prometheus_duplicate_series", subject,
                     fmt::format("{} series repeat a metric of a GPU already read (e.g. scraped by "
                                 "two jobs); the first was kept, narrow --match to choose",
                                 t.duplicates)});
  if (t.noGpu > 0)
    notes.push_back({Severity::Info, "prometheus_no_gpu_label", subject,
                     fmt::format("{} series have no gpu, gpu_id, UUID or pci_bus_id label and "
                                 "were skipped",
                                 t.noGpu)});
  if (t.nonFinite > 0)
    notes.push_back(
        {Severity::Warning, "non_finite_values", subject,
         fmt::format("{} NaN or infinite sample values were read as missing values", t.nonFinite)});
  if (!t.extras.empty()) {
    std::string names;
    for (const std::string& n : t.extras)
      names += (names.empty() ? "" : ", ") + n;
    notes.push_back(
        {Severity::Info, "prometheus_extra_metrics", subject,
         fmt::format("metrics without a Wattline meaning were kept as extra metrics: {}", names)});
  }
}

}  // namespace

std::optional<std::string> urlOfInput(std::string_view input) {
  constexpr std::string_view kPrefix = "prometheus:";
  if (input.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return std::string(input.substr(kPrefix.size()));
}

int64_t parseTime(std::string_view text, std::string_view what) {
  const std::string_view s = trim(text);
  double seconds = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), seconds);
  if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size()) {
    if (!(seconds > -4e9 && seconds < 4e9))
      throw Error(fmt::format("{} '{}': Unix seconds out of range", what, text));
    return std::llround(seconds * 1e6) * 1000;
  }
  const auto dt = text::parseDateTime(s);
  if (!dt || s.find('T') == std::string_view::npos)
    throw Error(
        fmt::format("{} '{}': expected an RFC 3339 time such as 2026-11-26T08:00:00Z or "
                    "Unix seconds",
                    what, text));
  if (!dt->zone_offset_s)
    throw Error(
        fmt::format("{} '{}': the time has no zone; add Z (UTC) or an offset such as "
                    "+02:00",
                    what, text));
  return dt->wall_ns - *dt->zone_offset_s * text::kNsPerSecond;
}

Mapping mapSeries(const Labels& labels) {
  return rankedMapping(labels).m;
}

std::string GpuIdentity::key() const {
  if (index >= 0) return fmt::format("{}/{}", host, index);
  return fmt::format("{}/{}", host, uuid.empty() ? busId : uuid);
}

std::optional<GpuIdentity> identityOf(const Labels& labels) {
  GpuIdentity id;
  if (const std::string* h = label(labels, {"Hostname", "hostname", "host", "node"}))
    id.host = *h;
  else if (const std::string* i = label(labels, {"instance"}))
    id.host = hostOfInstance(*i);
  if (const std::string* g = label(labels, {"gpu", "gpu_id", "gpu_index"}))
    if (const auto n = wholeNumber(*g)) id.index = *n;
  if (const std::string* u = label(labels, {"UUID", "gpu_uuid", "uuid"})) id.uuid = *u;
  if (const std::string* b = label(labels, {"pci_bus_id", "PCI_BUS_ID"})) id.busId = *b;
  if (const std::string* m = label(labels, {"modelName", "card_model", "card_series"}))
    id.deviceName = *m;
  if (id.index < 0 && id.uuid.empty() && id.busId.empty()) return std::nullopt;
  return id;
}

Discovery discover(const Source& source, const std::atomic<bool>* cancel) {
  if (!(source.end_ns > source.start_ns))
    throw Error(fmt::format("the time range is empty: --end ({}) must be after --start ({})",
                            formatUtc(source.end_ns), formatUtc(source.start_ns)));
  const std::string url = urlOfInput(source.url).value_or(source.url);
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    throw Error(fmt::format("'{}': expected a server URL such as prometheus:http://host:9090",
                            http::displayUrl(url)));
  std::vector<std::string> selectors = source.selectors;
  if (selectors.empty()) selectors.emplace_back(kDefaultSelector);
  Api api(url, source.access);
  Discovery d;
  std::set<std::string> seen, gpus, skipped;
  for (size_t k = 0; k < selectors.size(); ++k) {
    const std::string& sel = selectors[k];
    std::vector<Labels> found;
    try {
      found = api.series(seriesSelector(sel), source.start_ns, source.end_ns, d.warnings, cancel);
    } catch (const Retryable& e) {
      rethrowDiscovery(e);
    } catch (const http::HttpError& e) {
      rethrowDiscovery(e);
    }
    size_t kept = 0;
    for (Labels& l : found) {
      const std::optional<GpuIdentity> id = identityOf(l);
      if (!id || rankedMapping(l).m.metric.empty()) {
        if (const std::string* n = label(l, {"__name__"})) skipped.insert(*n);
        continue;
      }
      ++kept;
      if (!seen.insert(labelsKey(l)).second) continue;
      gpus.insert(id->key());
      d.series.push_back(std::move(l));
      d.selectorOf.push_back(k);
    }
    if (kept == 0) d.unmatched.push_back(sel);
  }
  d.gpus = gpus.size();
  d.skipped.assign(skipped.begin(), skipped.end());
  if (d.series.empty()) {
    std::string list;
    for (const std::string& s : d.unmatched)
      list += (list.empty() ? "" : ", ") + s;
    throw Error(fmt::format("{}: no GPU series between {} and {} match {}{}", api.shownUrl(),
                            formatUtc(source.start_ns), formatUtc(source.end_ns), list,
                            skipped.empty() ? ""
                                            : fmt::format(" (series found, but no GPU telemetry: "
                                                          "{})",
                                                          *skipped.begin())));
  }
  return d;
}

ImportedData fetch(const Source& source, const Progress& progress, FetchStats* statsOut) {
  progress.report(0.0, "finding GPU series");
  Discovery d = discover(source);
  Source src = source;
  src.url = urlOfInput(source.url).value_or(source.url);
  std::vector<std::string> selectors = src.selectors;
  if (selectors.empty()) selectors.emplace_back(kDefaultSelector);

  // One group per selector and metric name; a series matched by two selectors is fetched twice
  // and kept once.
  std::vector<Group> groups;
  std::map<std::pair<size_t, std::string>, size_t> groupOf;
  for (size_t i = 0; i < d.series.size(); ++i) {
    const std::string& name = d.series[i].at("__name__");
    const size_t sel = d.selectorOf[i];
    auto [it, added] = groupOf.emplace(std::make_pair(sel, name), groups.size());
    if (added) groups.push_back({groupSelector(selectors[sel], name), name, 0});
    ++groups[it->second].series;
  }

  Shared sh;
  sh.source = &src;
  sh.groups = &groups;
  sh.tasks = planTasks(src, groups);
  sh.results.resize(sh.tasks.size());
  sh.warnings = d.warnings;
  runTasks(sh, src.concurrency, progress.sub(0.02, 0.9));
  if (sh.missing.size() == sh.tasks.size())
    throw Error(fmt::format("{}: no window could be fetched: {}", http::displayUrl(src.url),
                            sh.missing.front().why));

  progress.report(0.9, "building GPU tables");
  std::map<std::string, SeriesAcc> bySeries;
  for (std::vector<SeriesSamples>& part : sh.results)
    for (SeriesSamples& s : part) {
      SeriesAcc& acc = bySeries[labelsKey(s.labels)];
      if (acc.labels.empty()) acc.labels = std::move(s.labels);
      acc.t.insert(acc.t.end(), s.t_ns.begin(), s.t_ns.end());
      acc.v.insert(acc.v.end(), s.values.begin(), s.values.end());
    }
  sh.results.clear();
  FetchStats& stats = sh.stats;
  std::map<std::string, GpuAcc> gpus;
  Tallies tally;
  for (auto& [key, s] : bySeries) {
    sortUnique(s);
    // Samples the window queries returned outside the range (the 1 ms widening) are not kept.
    size_t from = 0, to = s.t.size();
    while (from < to && s.t[from] < src.start_ns)
      ++from;
    while (to > from && s.t[to - 1] > src.end_ns)
      --to;
    s.t = std::vector<int64_t>(s.t.begin() + static_cast<std::ptrdiff_t>(from),
                               s.t.begin() + static_cast<std::ptrdiff_t>(to));
    s.v = std::vector<double>(s.v.begin() + static_cast<std::ptrdiff_t>(from),
                              s.v.begin() + static_cast<std::ptrdiff_t>(to));
    if (s.t.empty()) continue;
    ++stats.series;
    stats.samples += s.t.size();
    addSeries(gpus, s, tally);
  }
  bySeries.clear();

  ImportedData data;
  data.format = "prometheus";
  data.path = http::displayUrl(src.url);
  data.energyCounterMeasured = true;
  std::vector<GpuAcc*> order;
  for (auto& [key, g] : gpus)
    if (!g.series.empty()) order.push_back(&g);
  std::sort(order.begin(), order.end(), [](const GpuAcc* a, const GpuAcc* b) {
    if (a->id.host != b->id.host) return a->id.host < b->id.host;
    if (a->id.index != b->id.index) return a->id.index < b->id.index;
    return a->id.uuid < b->id.uuid;
  });
  for (GpuAcc* g : order) {
    data.gpus.push_back(buildGpu(*g));
    progress.report(
        0.9 + 0.1 * static_cast<double>(data.gpus.size()) / static_cast<double>(order.size()),
        "building GPU tables");
  }
  if (data.gpus.empty())
    throw Error(fmt::format("{}: the GPU series found have no samples between {} and {}",
                            http::displayUrl(src.url), formatUtc(src.start_ns),
                            formatUtc(src.end_ns)));
  data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
  data.platform = tel::platformFromDeviceName(data.gpus.front().info.device_name);
  {
    // dcgm-exporter's DCGM_FI_DEV_POWER_USAGE is field 155 (NVML's 1 s average on Ampere+); the
    // value changes once per collection, seen at the Prometheus scrape interval.
    SensorInfo s = nvidiaSmiPowerSensor("power.draw", data.gpus.front().info.device_name);
    s.basis =
        "dcgm-exporter DCGM_FI_DEV_POWER_USAGE (DCGM field 155: 1 s average on Ampere+), "
        "sampled at the scrape interval";
    s.period_s = std::max(s.period_s, data.sample_interval_s);
    data.sensors.push_back(std::move(s));
  }

  for (const Missing& m : sh.missing)
    data.notes.push_back(
        {Severity::Warning, "prometheus_missing_window", groups[m.group].metricName,
         fmt::format("no samples of {} from {} to {}: the window could not be fetched after {} "
                     "retries ({}); its samples are missing",
                     groups[m.group].metricName, formatUtc(m.t0), formatUtc(m.t1), src.retries,
                     m.why)});
  for (const std::string& sel : d.unmatched)
    data.notes.push_back({Severity::Warning, "prometheus_selector_unmatched", sel,
                          fmt::format("the selector {} matched no GPU series", sel)});
  std::set<std::string> warned(sh.warnings.begin(), sh.warnings.end());
  for (const std::string& w : warned)
    data.notes.push_back({Severity::Warning, "prometheus_server_warning", "prometheus",
                          fmt::format("the server warned: {}", w)});
  gapNotes(data, data.notes);
  tallyNotes(tally, data.notes);
  stats.missingWindows = sh.missing.size();
  data.notes.push_back(
      {Severity::Info, "prometheus_fetch", "prometheus",
       fmt::format("{} raw samples of {} series ({} GPUs) from {} in {} queries ({} retried, {} "
                   "split)",
                   stats.samples, stats.series, data.gpus.size(), http::displayUrl(src.url),
                   stats.queries, stats.retries, stats.splits)});
  if (statsOut) *statsOut = stats;
  progress.report(1.0, "building GPU tables");
  return data;
}

RemoteInput remoteInput(Source source) {
  source.url = urlOfInput(source.url).value_or(source.url);
  std::string label = "prometheus:" + http::displayUrl(source.url);
  return {std::move(label), "prometheus",
          [source](const Progress& progress) { return fetch(source, progress); }};
}

}  // namespace wl::import::prom
