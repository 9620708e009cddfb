// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/run_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "analysis/counters.h"
#include "analysis/gaps.h"
#include "analysis/parallel.h"
#include "analysis/range_plan.h"
#include "analysis/threshold_time.h"
#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/time_format.h"

namespace wl {
namespace {

constexpr int64_t kLagBinMinNs = 250'000'000;  // activity/power lag: bins of at least 250 ms
constexpr int64_t kLagMaxNs = 5'000'000'000;   // searched up to +-5 s
constexpr double kSkewWarnS = 2.0;             // a lag beyond this is reported as clock skew
constexpr double kLagMinCorrelation = 0.7;

std::string causeOf(const GpuThrottle& t) {
  if (t.throttled_s <= 0) return "";
  const auto it = std::max_element(t.by_cause_s.begin(), t.by_cause_s.end());
  return std::string(throttleCauseId(static_cast<ThrottleCause>(it - t.by_cause_s.begin())));
}

}  // namespace

const GpuAnalysis* RunAnalysis::gpu(int id) const {
  for (const GpuAnalysis& g : gpus)
    if (g.info.id == id) return &g;
  return nullptr;
}

const DomainAnalysis* RunAnalysis::domain(int id) const {
  for (const DomainAnalysis& d : domains)
    if (d.domain.id == id) return &d;
  return nullptr;
}

const RankAnalysis* RunAnalysis::rank(int r) const {
  for (const RankAnalysis& a : ranks)
    if (a.breakdown.rank == r) return &a;
  return nullptr;
}

std::vector<int> scopeGpus(const RunFile& run, const AnalysisScope& scope) {
  const int n = static_cast<int>(run.gpus().size());
  std::vector<int> out;
  if (scope.gpus.empty()) {
    for (int g = 0; g < n; ++g)
      out.push_back(g);
    return out;
  }
  for (int g : scope.gpus) {
    if (g < 0 || g >= n)
      throw Error(fmt::format("{}: no GPU {} in the run (it has GPUs 0-{})", run.path().string(), g,
                              n - 1));
    out.push_back(g);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> scopeRanks(const RunFile& run, const AnalysisScope& scope) {
  std::set<int> known;
  for (const RankInfo& r : run.ranks())
    known.insert(r.rank);
  for (const TrackInfo& t : run.tracks())
    known.insert(t.rank);
  if (scope.ranks.empty()) return {known.begin(), known.end()};
  std::vector<int> out;
  for (int r : scope.ranks) {
    if (!known.count(r))
      throw Error(fmt::format("{}: no rank {} in the run", run.path().string(), r));
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::vector<double>> windowMeansOfWindows(const RunFile& run, std::string_view metric,
                                                      const std::vector<int>& gpus,
                                                      const std::vector<TimeRange>& windows,
                                                      size_t maxCells, double* widthS,
                                                      int threads) {
  std::vector<std::vector<double>> out(windows.size(), std::vector<double>(gpus.size(), kNaN));
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  const LodGrid& grid = meta.grid;
  if (!meta.metric(metric) || grid.levels() == 0) return out;
  size_t level = grid.levels() - 1;
  for (size_t k = 0; k < grid.levels(); ++k)
    if (grid.buckets[k] * std::max<size_t>(gpus.size(), 1) <= maxCells) {
      level = k;
      break;
    }
  if (widthS) *widthS = static_cast<double>(grid.widths_ns[level]) * 1e-9;
  const int64_t w = grid.widths_ns[level];
  const auto nb = static_cast<int64_t>(grid.buckets[level]);
  std::vector<size_t> inOneBucket;
  for (size_t i = 0; i < windows.size(); ++i) {
    const TimeRange window = windows[i];
    if (window.empty()) continue;
    const int64_t lo = std::max(window.t0, grid.origin_ns);
    const int64_t first = std::clamp<int64_t>((lo - grid.origin_ns + w - 1) / w, 0, nb);
    const int64_t last = std::clamp<int64_t>((window.t1 - grid.origin_ns) / w, 0, nb);
    if (last <= first) {
      inOneBucket.push_back(i);
      continue;
    }
    const PyramidRows rows(run, SeriesKind::Gpu, metric, level, gpus, static_cast<size_t>(first),
                           static_cast<size_t>(last));
    for (size_t k = 0; k < gpus.size(); ++k) {
      if (!rows.has(gpus[k])) continue;
      double ws = 0, dt = 0;
      for (auto b = static_cast<size_t>(first); b < static_cast<size_t>(last); ++b) {
        const auto c = rows.at(gpus[k], b);
        ws += c.wsum;
        dt += c.dt;
      }
      if (dt > 0) out[i][k] = ws / dt;
    }
  }
  // A window inside one bucket (a few short iterations of a small model, or every iteration of a
  // many-GPU run, whose coarse level is chosen for the GPU count): no whole bucket to read, so the
  // exact time-weighted mean from the raw samples. GPU by GPU, each GPU's samples read once for
  // all its windows (window by window over 1,024 GPUs, every window decompressed every GPU's
  // chunks again: minutes for a 1-hour run; a read per window and GPU still took 30 s of the
  // 2,950 iterations of the bench run in docs/performance.md).
  std::vector<TimeRange> shortWindows;
  for (size_t i : inOneBucket)
    shortWindows.push_back(windows[i]);
  // GPUs side by side: each thread decodes its GPU's samples outside HDF5's lock
  // (RunFile::readAllSamples) and writes only its GPU's column.
  if (shortWindows.empty()) return out;
  parallelFor(gpus.size(), analysisThreads(threads), [&](size_t k) {
    const std::vector<MetricStats> st = metricStatsOfWindows(run, metric, gpus[k], shortWindows);
    for (size_t j = 0; j < inOneBucket.size(); ++j)
      out[inOneBucket[j]][k] = st[j].mean;
  });
  return out;
}

std::vector<double> windowMeans(const RunFile& run, std::string_view metric,
                                const std::vector<int>& gpus, TimeRange window, size_t maxCells,
                                double* widthS) {
  return windowMeansOfWindows(run, metric, gpus, {window}, maxCells, widthS)[0];
}

namespace {

// What the telemetry steps (1-5) computed, one entry per analysed GPU (in scope order).
struct TelemetryResults {
  std::map<std::string, std::vector<MetricStats>> stats;  // every gauge metric
  std::vector<MetricStats> power;
  bool rawOk = true;
  std::vector<GpuThrottle> throttle;
  BurstinessResult burst;
  std::vector<double> slowdown;  // slowdown temperature, NaN where unknown
  std::vector<ThresholdTime> hot;
  std::vector<ThermalFitResult> fits;
  std::vector<Gap> gaps;
  std::vector<CounterSummary> counters;

  MetricStats statOf(std::string_view m, size_t k) const {
    auto it = stats.find(std::string(m));
    return it == stats.end() ? MetricStats{} : it->second[k];
  }
};

// Step 1: statistics of every gauge metric (pyramid + range edges), and whether the raw-sample
// analyses fit the budget (a note when they do not).
void gaugeStatistics(const RunFile& run, const std::vector<int>& gpus, TimeRange planned,
                     const AnalysisOptions& options, TelemetryResults& tr, RunAnalysis& a) {
  std::vector<std::vector<MetricStats>*> slots;
  std::vector<std::string> ids;
  for (const MetricInfo& m : run.series(SeriesKind::Gpu).metrics)
    if (m.kind == MetricKind::Gauge) {
      ids.push_back(m.id);
      slots.push_back(&tr.stats[m.id]);
    }
  // GPU by GPU, each through every metric before the next: the metrics share a GPU's timestamps,
  // whose chunk (256 KiB) HDF5's 1 MiB cache then decodes once per GPU rather than once per
  // metric (a short range of a 1,024-GPU run spent most of its time decoding them again; blocks
  // of 32 GPUs already overflow the cache). Each GPU writes its own element of every (already
  // sized) entry and depends on its own samples only.
  for (std::vector<MetricStats>* slot : slots)
    slot->assign(gpus.size(), MetricStats{});
  parallelFor(gpus.size(), analysisThreads(options.threads), [&](size_t k) {
    for (size_t i = 0; i < ids.size(); ++i)
      (*slots[i])[k] = metricStats(run, ids[i], {gpus[k]}, planned)[0];
  });
  tr.power.resize(gpus.size());
  for (size_t k = 0; k < gpus.size(); ++k)
    tr.power[k] = tr.statOf(metric::kPower, k);
  uint64_t powerSamples = 0;
  for (const MetricStats& p : tr.power)
    powerSamples += p.samples;
  tr.rawOk = options.rawSampleBudget == 0 || powerSamples <= options.rawSampleBudget;
  a.raw_analyses = tr.rawOk;
  if (!tr.rawOk)
    a.notes.push_back(fmt::format(
        "|dP/dt| percentiles, histograms and counter deltas were skipped: the range holds {} "
        "power samples, more than the raw-sample budget of {} (select fewer GPUs or a shorter "
        "range, or raise the budget)",
        powerSamples, options.rawSampleBudget));
}

// Step 4: thermal response: time above each GPU's slowdown temperature and the thermal fits.
void thermalResponse(const RunFile& run, const std::vector<int>& gpus, TimeRange planned,
                     const AnalysisOptions& options, TelemetryResults& tr, RunAnalysis& a) {
  tr.slowdown.assign(gpus.size(), kNaN);
  for (size_t k = 0; k < gpus.size(); ++k) {
    const float s = run.gpus()[static_cast<size_t>(gpus[k])].slowdown_temp_c;
    if (std::isfinite(s)) tr.slowdown[k] = s;
  }
  tr.hot = timeAbove(run, metric::kTemp, gpus, tr.slowdown, true, planned, false);
  tr.fits = thermalFits(run, gpus, planned, options, &a.thermal_fit_resolution_s);
}

// Steps 2-5: throttling, burstiness, thermal response, gaps and counters. They only read step 1's
// results, so they run side by side on the analysis threads; throttle detection, the longest,
// is also split into runs of GPUs (each GPU's result depends only on its own data and the run's
// observed clock) and the parts concatenated in GPU order.
void telemetrySteps(const RunFile& run, const std::vector<int>& gpus, TimeRange planned,
                    TimeRange range, const AnalysisOptions& options, const Progress& progress,
                    TelemetryResults& tr, RunAnalysis& a) {
  const unsigned threads = analysisThreads(options.threads);
  const size_t chunks = threads > 1 ? std::clamp<size_t>(gpus.size(), 1, 2 * threads) : 1;
  std::vector<std::vector<GpuThrottle>> throttle(chunks);
  std::vector<std::function<void()>> tasks;
  for (size_t c = 0; c < chunks; ++c)
    tasks.emplace_back([&, c] {
      const std::vector<int> part(
          gpus.begin() + static_cast<ptrdiff_t>(gpus.size() * c / chunks),
          gpus.begin() + static_cast<ptrdiff_t>(gpus.size() * (c + 1) / chunks));
      throttle[c] = detectThrottle(run, part, planned, options);
    });
  tasks.emplace_back([&] {
    tr.burst = analyzeBurstiness(run, gpus, tr.power, planned, tr.rawOk);
    if (tr.rawOk) {
      a.power_hist = tr.burst.power_hist;
      a.ramp_hist = tr.burst.ramp_hist;
    }
  });
  tasks.emplace_back([&] { thermalResponse(run, gpus, planned, options, tr, a); });
  tasks.emplace_back([&] {
    tr.gaps = findGaps(run, metric::kPower, gpus, planned);
    if (tr.rawOk) tr.counters = counterSummaries(run, gpus, range);
  });
  parallelFor(
      tasks.size(), threads, [&](size_t i) { tasks[i](); },
      [&](size_t done) {
        progress.report(0.15 + 0.3 * static_cast<double>(done) / static_cast<double>(tasks.size()),
                        "throttling, burstiness, thermal response");
      });
  tr.throttle.clear();
  for (std::vector<GpuThrottle>& part : throttle)
    tr.throttle.insert(tr.throttle.end(), std::make_move_iterator(part.begin()),
                       std::make_move_iterator(part.end()));
}

// Step 6 input: the power domains' inputs: the analysed GPUs, then the other members of their
// domains (power, utilization and burstiness read here for GPUs outside the scope).
DomainInputs domainInputs(const RunFile& run, const std::vector<int>& gpus,
                          const std::vector<int>& domainIds, const std::vector<int>& powerGpus,
                          TimeRange planned, const TelemetryResults& tr) {
  DomainInputs din;
  const std::vector<int> members = membersOf(run, domainIds);
  std::vector<int> extra, extraPowerGpus;
  std::set_difference(members.begin(), members.end(), gpus.begin(), gpus.end(),
                      std::back_inserter(extra));
  for (int g : extra)
    if (std::binary_search(powerGpus.begin(), powerGpus.end(), g)) extraPowerGpus.push_back(g);
  const std::vector<MetricStats> extraPower = metricStats(run, metric::kPower, extra, planned);
  const std::vector<MetricStats> extraUtil = metricStats(run, metric::kUtil, extra, planned);
  std::vector<MetricStats> extraPowerOfPowerGpus;
  for (int g : extraPowerGpus)
    extraPowerOfPowerGpus.push_back(*findFor(extra, extraPower, g));
  const BurstinessResult extraBurst =
      analyzeBurstiness(run, extraPowerGpus, extraPowerOfPowerGpus, planned, tr.rawOk);
  for (size_t k = 0; k < gpus.size(); ++k) {
    din.gpus.push_back(gpus[k]);
    din.power.push_back(tr.power[k]);
    din.util.push_back(tr.statOf(metric::kUtil, k));
    din.burstiness.push_back(tr.burst.gpus[k]);
  }
  for (size_t k = 0; k < extra.size(); ++k) {
    din.gpus.push_back(extra[k]);
    din.power.push_back(extraPower[k]);
    din.util.push_back(extraUtil[k]);
    const Burstiness* b = findFor(extraPowerGpus, extraBurst.gpus, extra[k]);
    din.burstiness.push_back(b ? *b : Burstiness{});
  }
  din.analysed = gpus;
  for (const GpuThrottle& t : tr.throttle) {
    din.busy_s.push_back(t.busy_s);
    din.power_throttled_s.push_back(t.power_throttled_s);
    din.has_clock.push_back(t.has_clock);
  }
  return din;
}

// A note for each domain the selection holds only part of while its power is reported on a GPU
// outside the selection.
void notePartialDomains(const std::vector<int>& gpus, RunAnalysis& a) {
  for (const DomainAnalysis& d : a.domains)
    if (d.analysed_gpus.size() < d.domain.gpus.size() && d.domain.power_gpu >= 0 &&
        !std::binary_search(gpus.begin(), gpus.end(), d.domain.power_gpu))
      a.notes.push_back(fmt::format(
          "the analysed GPUs hold part of {}: its power and energy are the whole package's, "
          "reported on GPU {}, which is outside the selection",
          d.domain.name, d.domain.power_gpu));
}

// One GPU's results from the telemetry steps; takes its throttle result.
GpuAnalysis gpuAnalysis(const RunFile& run, const RunAnalysis& a, size_t k, int gpuId,
                        TelemetryResults& tr, const DomainInputs& din) {
  GpuAnalysis g;
  g.info = run.gpus()[static_cast<size_t>(gpuId)];
  const PowerDomain& dom = run.domainOf(gpuId);
  g.domain = dom.id;
  g.power_role = powerRole(dom, gpuId);
  if (const DomainAnalysis* da = a.domain(dom.id)) g.energy_share = energyShare(*da, gpuId, din);
  g.power = tr.power[k];
  g.temp = tr.statOf(metric::kTemp, k);
  g.sm_clock = tr.statOf(metric::kSmClock, k);
  g.util = tr.statOf(metric::kUtil, k);
  for (const auto& [id, v] : tr.stats)
    g.metrics.emplace_back(id, v[k]);
  g.energy_j = g.power.integral;
  g.throttle = std::move(tr.throttle[k]);
  // A GCD whose package power is on the other GCD has no power series: its burstiness is
  // unknown (null), not zero excursions; the package's is in a.domains.
  if (g.power_role != PowerRole::None) g.burstiness = tr.burst.gpus[k];
  ThermalResponse& th = g.thermal;
  th.slowdown_c = tr.slowdown[k];
  if (std::isfinite(tr.slowdown[k])) {
    th.time_above_slowdown_s = tr.hot[k].time_s;
    if (std::isfinite(g.temp.max)) th.headroom_c = tr.slowdown[k] - g.temp.max;
  }
  if (!g.throttle.intervals.empty())
    th.time_to_first_throttle_s =
        static_cast<double>(g.throttle.intervals.front().start_ns - a.range.t0) * 1e-9;
  th.time_constant_s = tr.fits[k].fit.tau_s;
  th.fit_r2 = tr.fits[k].fit.r2;
  th.lag_s = tr.fits[k].lag.lag_s;
  th.lag_correlation = tr.fits[k].lag.correlation;
  th.fit_resolution_s = a.thermal_fit_resolution_s;
  for (const Gap& gp : tr.gaps)
    if (gp.gpu == g.info.id) ++g.gaps;
  return g;
}

// Step 7 state shared by the ranks: collectives to match, kernel table, findings. Filled from
// the ranks' results in rank order.
struct KernelPass {
  explicit KernelPass(const RunFile& run) : matcher(run) {}
  CollectiveMatcher matcher;
  KernelTableBuilder allKernels;
  std::vector<int> ranksWithKernels;
  std::vector<QualityNote> findings;
};

// One rank's kernels in the range, one list per track (and its stream). Their collectives are
// filed with the matcher as each track is read; `order` is the rank's place in the rank order.
struct RankKernels {
  std::vector<std::vector<KernelEvent>> events;
  std::vector<int64_t> streamIds;
};

RankKernels readRankKernels(const RunFile& run, int rank, size_t order, TimeRange range,
                            bool wholeRange, CollectiveMatcher& matcher) {
  RankKernels k;
  for (size_t t = 0; t < run.tracks().size(); ++t) {
    if (run.tracks()[t].rank != rank) continue;
    // No analysis here reads the correlation ids: their column is not decoded.
    constexpr unsigned columns =
        RunFile::kKernelName | RunFile::kKernelClass | RunFile::kKernelKind;
    KernelSlice slice;
    if (wholeRange) {
      slice.events = run.readAllKernels(t, columns);
    } else {
      slice = run.readKernels(t, range.t0, range.t1, columns);
    }
    matcher.addTrack(order, t, slice.first, slice.events, range);
    k.events.push_back(std::move(slice.events));
    k.streamIds.push_back(run.tracks()[t].stream);
  }
  return k;
}

// The spread of the rank's iteration times that lie wholly inside the range.
SpreadStats iterationSpread(const std::vector<Iteration>& its, TimeRange range) {
  std::vector<double> itd;
  for (const Iteration& it : its)
    if (it.start_ns >= range.t0 && it.end_ns <= range.t1 && it.end_ns > it.start_ns)
      itd.push_back(static_cast<double>(it.end_ns - it.start_ns) * 1e-9);
  return spreadOf(itd);
}

// Findings of one rank against its GPU's power: kernels outside the telemetry, and the lag of
// power behind kernel activity (clock skew when large).
void checkTraceAgainstPower(int rank, int gpu, const Samples& s, int64_t thr,
                            const RankBreakdown& breakdown, const ClassUnions& unions,
                            TimeRange range, int64_t medianIntervalNs,
                            std::vector<QualityNote>& findings) {
  int64_t tFirst = INT64_MAX, tLast = INT64_MIN;
  for (size_t i = 0; i < s.t_ns.size(); ++i)
    if (std::isfinite(s.v[i])) {
      tFirst = std::min(tFirst, s.t_ns[i]);
      tLast = std::max(tLast, s.t_ns[i]);
    }
  const std::string subject = fmt::format("rank {}", rank);
  if (tFirst != INT64_MAX && (breakdown.first_ns < tFirst - thr || breakdown.last_ns > tLast + thr))
    findings.push_back(
        {Severity::Warning, "trace_outside_telemetry", subject,
         fmt::format("kernels run from {} to {} but GPU {} has power samples only from {} "
                     "to {}",
                     formatUtc(breakdown.first_ns), formatUtc(breakdown.last_ns), gpu,
                     formatUtc(tFirst), formatUtc(tLast))});
  const int64_t bin = std::max(kLagBinMinNs, medianIntervalNs);
  const ActivityLag lag = estimateActivityLag(s.t_ns, s.v, unions.all, range, bin, kLagMaxNs);
  // Only a clear peak inside the searched window says something.
  if (std::isfinite(lag.lag_s) && lag.correlation >= kLagMinCorrelation &&
      std::fabs(lag.lag_s) < 0.999 * static_cast<double>(kLagMaxNs) * 1e-9) {
    const bool skewed = std::fabs(lag.lag_s) > kSkewWarnS;
    findings.push_back(
        {skewed ? Severity::Warning : Severity::Info, skewed ? "clock_skew" : "activity_lag",
         subject,
         fmt::format("GPU {} power follows kernel activity by {:+.1f} s (correlation {:.2f}){}",
                     gpu, lag.lag_s, lag.correlation,
                     skewed ? ": trace and telemetry clocks probably disagree" : "")});
  }
}

// Step 7, one rank: what it adds to the run's results, kept apart until the ranks are merged in
// rank order (so that sums come out in the same order whatever the threads).
struct RankResult {
  RankAnalysis ra;
  KernelTableBuilder table;
  std::vector<QualityNote> findings;
};

// Step 7, one rank: breakdown, kernel categories, slowdown, iterations, and with its GPU's raw
// power, energy attribution and the trace/telemetry checks. Reads `a` (its GPUs) and files its
// collectives with `matcher` (safe to share between threads; `order` is the rank's place in the
// rank order), so ranks can run on several threads.
RankResult analyzeRank(const RunFile& run, int rank, TimeRange range, bool wholeRange,
                       const AnalysisOptions& options, const RunAnalysis& a, size_t order,
                       CollectiveMatcher& matcher) {
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  RankKernels kernels = readRankKernels(run, rank, order, range, wholeRange, matcher);
  std::vector<std::span<const KernelEvent>> spans(kernels.events.begin(), kernels.events.end());
  RankResult out;
  RankAnalysis& ra = out.ra;
  const ClassUnions unions = classUnions(spans, range);
  int gpu = -1;
  for (const RankInfo& r : run.ranks())
    if (r.rank == rank) gpu = r.gpu;
  // The GPU's raw power over the range, for energy attribution and the trace/telemetry checks.
  Samples power;
  const bool hasPower = gpu >= 0 && static_cast<size_t>(gpu) < meta.entities &&
                        meta.metric(metric::kPower) && meta.samples(static_cast<size_t>(gpu)) > 0 &&
                        !unions.all.empty();
  const int64_t thr = hasPower ? meta.gapThresholdNs[static_cast<size_t>(gpu)] : 0;
  if (hasPower)
    power = run.readSamples(SeriesKind::Gpu, static_cast<size_t>(gpu), metric::kPower,
                            range.t0 - thr, range.t1 + thr, false);
  const std::optional<EnergyIntegral> integral =
      hasPower ? std::optional<EnergyIntegral>(std::in_place, power.t_ns, power.v, thr)
               : std::nullopt;
  const ClassStateTotals states = sweepClassStates(unions, integral ? &*integral : nullptr);
  ra.breakdown =
      breakdownRank(rank, spans, kernels.streamIds, range, options.kernelWaitNs, unions, states);
  ra.breakdown.gpu = gpu;
  if (wholeRange && options.kernelSummaries && run.hasKernelSummary()) {
    // The stored partials of the rank's tracks, combined in track order as the events would be.
    for (size_t t = 0; t < run.tracks().size(); ++t)
      if (run.tracks()[t].rank == rank) out.table.addSummary(run.kernelSummary(t));
  } else {
    for (const auto& s : spans)
      out.table.add(s, range);
  }
  ra.seed_categories = out.table.seedCategories(run);
  ra.corrected_categories = out.table.correctedCategories(run);

  if (const GpuAnalysis* ga = a.gpu(gpu))
    ra.slowdown = estimateSlowdown(ga->throttle, unions.compute);
  std::vector<Iteration> its;
  for (const Iteration& it : run.iterations())
    if (it.rank == rank) its.push_back(it);
  ra.iteration_s = iterationSpread(its, range);

  if (integral) {
    const auto gi = static_cast<size_t>(gpu);
    const std::vector<std::pair<std::string, IntervalSet>> phases = phasesOfRank(run, rank);
    EnergyAttribution e = attributeEnergy(*integral, range, ra.breakdown, states, its, phases);
    const double interval = static_cast<double>(meta.medianIntervalNs[gi]) * 1e-9;
    e.sample_interval_s = interval;
    ra.energy = std::move(e);
    if (options.energyLedger) {
      ra.ledger =
          energyLedger(ledgerInputFrom(power, interval, run.sensors(), unions, phases, its, range));
      ra.ledger->rank = rank, ra.ledger->gpu = gpu;
    }
    checkTraceAgainstPower(rank, gpu, power, thr, ra.breakdown, unions, range,
                           meta.medianIntervalNs[gi], out.findings);
  }
  return out;
}

// Memory a rank's analysis holds per kernel event while it runs (the events, their class unions
// and spans): measured ~117 B on the 10^8-kernel benchmark run (docs/performance.md).
constexpr uint64_t kRankBytesPerEvent = 128;
// What the ranks in flight beyond the first may hold together (with the first rank, the telemetry
// steps and the HDF5 caches, ~600 MB on that run, this keeps it under 1 GB).
constexpr uint64_t kRankMemoryBudget = uint64_t{256} << 20;

// The threads of the rank step: as many as asked, but no more ranks in flight than the memory
// budget holds for the largest rank (a 1.56 M-event rank holds ~190 MB, so 16 threads would
// otherwise hold 3 GB).
unsigned rankThreads(const RunFile& run, const std::vector<int>& ranks, unsigned threads) {
  uint64_t largest = 0;
  for (int r : ranks) {
    uint64_t events = 0;
    for (const TrackInfo& t : run.tracks())
      if (t.rank == r) events += t.count;
    largest = std::max(largest, events);
  }
  const uint64_t perRank = std::max<uint64_t>(largest * kRankBytesPerEvent, 1);
  const uint64_t fits = 1 + kRankMemoryBudget / perRank;
  return static_cast<unsigned>(std::min<uint64_t>(threads, fits));
}

// Step 7, every rank: the ranks analysed on the analysis threads, in batches merged in rank
// order (a batch bounds the per-rank kernel tables held before their merge).
void analyzeRanks(const RunFile& run, const std::vector<int>& ranks, TimeRange range,
                  bool wholeRange, const AnalysisOptions& options, const Progress& progress,
                  RunAnalysis& a, KernelPass& pass) {
  const unsigned threads = rankThreads(run, ranks, analysisThreads(options.threads));
  const size_t batch = 8 * static_cast<size_t>(threads);
  std::vector<RankResult> results;
  for (size_t first = 0; first < ranks.size(); first += batch) {
    const size_t n = std::min(batch, ranks.size() - first);
    results.assign(n, {});
    parallelFor(
        n, threads,
        [&](size_t i) {
          results[i] = analyzeRank(run, ranks[first + i], range, wholeRange, options, a, first + i,
                                   pass.matcher);
        },
        [&](size_t done) {
          progress.report(
              0.5 + 0.35 * static_cast<double>(first + done) / static_cast<double>(ranks.size()),
              "kernel breakdown");
        });
    for (size_t i = 0; i < n; ++i) {
      RankResult& r = results[i];
      if (r.ra.breakdown.kernels > 0) pass.ranksWithKernels.push_back(ranks[first + i]);
      for (size_t c = 0; c < kKernelCategoryCount; ++c) {
        a.seed_categories[c] += r.ra.seed_categories[c];
        a.corrected_categories[c] += r.ra.corrected_categories[c];
      }
      pass.allKernels.merge(r.table);
      pass.findings.insert(pass.findings.end(), std::make_move_iterator(r.findings.begin()),
                           std::make_move_iterator(r.findings.end()));
      a.ranks.push_back(std::move(r.ra));
    }
  }
}

// Step 9a: energy, power and peak per power domain (each package counted once).
void addDomainTotals(const std::vector<DomainAnalysis>& domains, RunTotals& t) {
  double energy = 0, meanSum = 0;
  size_t energyN = 0, meanN = 0, meanGpus = 0;
  std::set<std::string> kinds;
  for (const DomainAnalysis& d : domains) {
    kinds.insert(d.domain.kind);
    t.domain_gpus += d.domain.gpus.size();
    if (std::isfinite(d.energy_j)) energy += d.energy_j, ++energyN;
    if (std::isfinite(d.power.mean))
      meanSum += d.power.mean, ++meanN, meanGpus += d.domain.gpus.size();
    if (std::isfinite(d.power.max))
      t.peak_power_w =
          std::isnan(t.peak_power_w) ? d.power.max : std::max(t.peak_power_w, d.power.max);
  }
  t.domains = domains.size();
  t.domain_kind = kinds.size() == 1 ? *kinds.begin() : (kinds.empty() ? "" : "mixed");
  if (energyN) t.energy_j = energy;
  if (meanN) t.mean_power_w = meanSum / static_cast<double>(meanN);
  if (meanGpus) t.mean_power_per_device_w = meanSum / static_cast<double>(meanGpus);
}

// Step 9b: throttled time and its causes, over the busy time of the GPUs with a clock.
void addThrottleTotals(const std::vector<GpuAnalysis>& gpus, RunTotals& t) {
  for (const GpuAnalysis& g : gpus) {
    if (g.throttle.has_clock) {
      t.busy_s += g.throttle.busy_s;
      t.throttled_s += g.throttle.throttled_s;
      for (size_t c = 0; c < kThrottleCauseCount; ++c)
        t.by_cause_fraction[c] += g.throttle.by_cause_s[c];
    }
  }
  if (t.busy_s > 0) {
    t.throttled_fraction = t.throttled_s / t.busy_s;
    for (double& f : t.by_cause_fraction)
      f /= t.busy_s;
  } else {
    t.by_cause_fraction.fill(kNaN);
  }
}

// Step 9c: iteration time, throughput and energy per iteration / token over the iterations'
// window, from the power columns of the analysed domains.
void addIterationTotals(const RunFile& run, const RunAnalysis& a, const std::vector<int>& powerGpus,
                        RunTotals& t) {
  t.iterations = a.iterations.steps.size();
  if (a.iterations.steps.empty()) return;
  t.iteration_time_s = a.iterations.step_s.mean;
  int64_t wEnd = 0;
  int64_t wStart = INT64_MAX;
  for (const StepTime& s : a.iterations.steps) {
    wStart = std::min(wStart, s.start_ns);
    wEnd = std::max(wEnd, s.end_ns);
  }
  t.iteration_window_s = static_cast<double>(wEnd - wStart) * 1e-9;
  // Over the columns that make the analysed domains' power: each package counted once.
  const std::vector<double> wm = windowMeans(run, metric::kPower, powerGpus, {wStart, wEnd});
  double sum = 0;
  size_t n = 0;
  for (double m : wm)
    if (std::isfinite(m)) sum += m, ++n;
  if (n) t.iteration_window_power_w = sum;
  const auto& cfg = a.info.config;
  if (cfg.gbs && *cfg.gbs > 0 && t.iteration_time_s > 0) {
    t.throughput_samples_per_s = *cfg.gbs / t.iteration_time_s;
    if (cfg.seq_len && *cfg.seq_len > 0) t.tokens_per_s = t.throughput_samples_per_s * *cfg.seq_len;
  }
  if (n && t.iteration_time_s > 0) {
    t.energy_per_iteration_j = t.iteration_window_power_w * t.iteration_time_s;
    if (cfg.gbs && cfg.seq_len && *cfg.gbs > 0 && *cfg.seq_len > 0)
      t.energy_per_token_j =
          t.energy_per_iteration_j / (static_cast<double>(*cfg.gbs) * *cfg.seq_len);
    const double windowMj = t.iteration_window_power_w * t.iteration_window_s * 1e-6;
    if (std::isfinite(t.throughput_samples_per_s) && windowMj > 0)
      t.efficiency_samples_per_s_mj = t.throughput_samples_per_s / windowMj;
  }
}

// Step 10a: spatial imbalance by slot, the temperature skew inside each package, and each GPU's
// mean temperature above the other GPUs of its package.
std::vector<SlotCondition> spatialImbalance(RunAnalysis& a) {
  std::vector<SlotCondition> slots;
  for (const GpuAnalysis& g : a.gpus)
    slots.push_back({g.info.id, g.info.node, g.info.slot >= 0 ? g.info.slot : g.info.local_index,
                     g.info.hostname, g.temp.mean, g.temp.max, g.sm_clock.mean, g.power.mean});
  a.spatial = analyzeSpatial(slots);
  std::vector<PowerDomain> doms;
  for (const DomainAnalysis& d : a.domains)
    doms.push_back(d.domain);
  addPackageSkews(a.spatial, slots, doms);
  for (const PackageSkew& pk : a.spatial.packages)
    for (size_t i = 0; i < pk.gpus.size(); ++i) {
      double others = 0;
      size_t n = 0;
      for (size_t j = 0; j < pk.gpus.size(); ++j)
        if (j != i && std::isfinite(pk.temp_mean_c[j])) others += pk.temp_mean_c[j], ++n;
      GpuAnalysis* g = nullptr;
      for (GpuAnalysis& x : a.gpus)
        if (x.info.id == pk.gpus[i]) g = &x;
      if (g && n && std::isfinite(pk.temp_mean_c[i]))
        g->package_skew_c = pk.temp_mean_c[i] - others / static_cast<double>(n);
    }
  return slots;
}

// `want` cut to the run [start, end] (empty when they do not meet).
TimeRange clampToRun(const RunInfo& info, TimeRange want) {
  const int64_t runEnd = std::max(info.end_ns, info.start_ns) + 1;
  return {std::max(want.t0, info.start_ns), std::min(want.t1, runEnd)};
}

}  // namespace

TimeRange rangeInsideRun(const RunFile& run, TimeRange want) {
  const RunInfo& info = run.info();
  const TimeRange out = clampToRun(info, want);
  if (out.t1 <= out.t0) {
    auto at = [&](int64_t t) {
      if (t == INT64_MIN || t == INT64_MAX) return std::string(t == INT64_MIN ? "start" : "end");
      return formatDuration(t - info.start_ns);
    };
    throw Error(fmt::format("{}: the range {} to {} is outside the run ({} long)",
                            run.path().string(), at(want.t0), at(want.t1),
                            formatDuration(info.end_ns - info.start_ns)));
  }
  return out;
}

// The pipeline: telemetry statistics -> throttling -> burstiness -> thermal response -> gaps
// and counters -> power domains -> GPUs -> kernels per rank -> stragglers -> iterations and
// totals -> spatial imbalance and data quality.
RunAnalysis analyzeRun(const RunFile& run, const AnalysisScope& scope,
                       const AnalysisOptions& options, const Progress& progress) {
  RunAnalysis a;
  a.info = run.info();
  a.options = options;
  const int64_t runEnd = std::max(a.info.end_ns, a.info.start_ns) + 1;
  a.range = clampToRun(a.info, scope.range);
  if (a.range.t1 < a.range.t0) a.range.t1 = a.range.t0;
  a.duration_s = static_cast<double>(std::min(a.range.t1, a.info.end_ns) - a.range.t0) * 1e-9;
  const TimeRange range = a.range;
  // Functions that plan on the pyramid treat a range reaching past the run end as "to the end".
  const TimeRange planned{range.t0, range.t1 >= runEnd ? INT64_MAX : range.t1};
  const std::vector<int> gpus = scopeGpus(run, scope);
  const std::vector<int> ranks = scopeRanks(run, scope);
  progress.report(0.0, "telemetry statistics");

  // 1. Statistics of every gauge metric.
  TelemetryResults tr;
  gaugeStatistics(run, gpus, planned, options, tr, a);

  // 2-5. Throttling, burstiness, thermal response, gaps and counters.
  telemetrySteps(run, gpus, planned, range, options, progress, tr, a);

  // 6. Power domains: the domains of the analysed GPUs, from the columns that make their power and
  // the utilization of all their GPUs; then each GPU's results.
  const std::vector<int> domainIds = domainsOfGpus(run, gpus);
  const std::vector<int> powerGpus = powerGpusOf(run, domainIds);
  const DomainInputs din = domainInputs(run, gpus, domainIds, powerGpus, planned, tr);
  a.domains = analyzeDomains(run, domainIds, din);
  notePartialDomains(gpus, a);
  for (size_t k = 0; k < gpus.size(); ++k)
    a.gpus.push_back(gpuAnalysis(run, a, k, gpus[k], tr, din));

  // 7. Kernels, rank by rank.
  progress.report(0.5, "kernel breakdown");
  KernelPass pass(run);
  const bool wholeRange = range.t0 <= a.info.start_ns && range.t1 >= runEnd;
  analyzeRanks(run, ranks, range, wholeRange, options, progress, a, pass);
  a.top_kernels = pass.allKernels.top(run, options.topKernels);

  // 8. Stragglers.
  progress.report(0.85, "stragglers");
  std::vector<GpuCondition> conditions;
  for (const GpuAnalysis& g : a.gpus)
    conditions.push_back({g.info.id, g.sm_clock.mean, g.temp.mean, g.power.mean,
                          g.throttle.fraction(), causeOf(g.throttle)});
  a.stragglers =
      analyzeStragglers(run, pass.matcher.result(), conditions, options.stragglerInstances);

  // 9. Iterations and totals (power per domain).
  a.iterations = analyzeIterations(run.iterations(), ranks, range);
  progress.report(0.9, "cost of throttling");
  if (options.throttleCost)
    a.cost = estimateThrottleCost(run, gpus, ranks, range, options, progress.sub(0.9, 0.95));
  else
    a.cost.unknown = "not estimated";
  addDomainTotals(a.domains, a.totals);
  addThrottleTotals(a.gpus, a.totals);
  addIterationTotals(run, a, powerGpus, a.totals);

  // 10. Spatial imbalance and data quality.
  progress.report(0.95, "data quality");
  spatialImbalance(a);
  QualityInputs qi;
  qi.gpus = gpus;
  qi.power = tr.power;
  for (const DomainAnalysis& d : a.domains) {
    DomainPowerInput di{d.domain, d.analysed_gpus, {}};
    for (int pg : powerGpusOf(run, {d.domain.id}))
      if (const MetricStats* ps = findFor(din.gpus, din.power, pg)) di.power.emplace_back(pg, *ps);
    qi.domains.push_back(std::move(di));
  }
  qi.duration_s = a.duration_s;
  qi.gaps = tr.gaps;
  qi.counters = tr.counters;
  qi.ranks = ranks;
  qi.ranksWithKernels = pass.ranksWithKernels;
  qi.findings = std::move(pass.findings);
  a.quality = assessDataQuality(run, qi);
  progress.report(1.0, "done");
  return a;
}

}  // namespace wl
