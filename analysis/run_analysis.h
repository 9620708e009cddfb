// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The whole analysis report of one run (or of a time range, GPUs and ranks of it): every analysis
// of docs/analyses.md in one value. `wattline analyze` prints it (analysis_json.h for --json) and
// the GUI's analysis panel shows it; both call analyzeRun(), so they show the same numbers.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/burstiness.h"
#include "analysis/data_quality.h"
#include "analysis/domain_analysis.h"
#include "analysis/energy_attribution.h"
#include "analysis/energy_ledger.h"
#include "analysis/iterations.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/kernel_table.h"
#include "analysis/spatial_imbalance.h"
#include "analysis/stragglers.h"
#include "analysis/telemetry_stats.h"
#include "analysis/thermal_response.h"
#include "analysis/throttle_cost.h"
#include "analysis/throttle_detection.h"
#include "loaders/core/progress.h"
#include "loaders/format/run_file.h"

namespace wl {

struct GpuAnalysis {
  GpuInfo info;
  MetricStats power, temp, sm_clock, util;
  std::vector<std::pair<std::string, MetricStats>> metrics;  // every gauge metric of the run
  double energy_j = kNaN;                                    // = power.integral
  GpuThrottle throttle;
  Burstiness burstiness;
  ThermalResponse thermal;
  size_t gaps = 0;
  // Its power domain (RunAnalysis::domains), what its own power column holds, and its share of
  // the domain's energy (estimated where the domain's sensor covers several GPUs).
  int domain = -1;
  PowerRole power_role = PowerRole::Whole;
  EnergyShare energy_share;
  // Its mean temperature minus the mean of its package's other GPUs' (NaN on a board).
  double package_skew_c = kNaN;
};

struct RankAnalysis {
  RankBreakdown breakdown;
  CategoryTimes seed_categories{};
  CategoryTimes corrected_categories{};
  std::optional<ThrottleSlowdown> slowdown;  // when the rank's GPU telemetry was analysed
  std::optional<EnergyAttribution> energy;   // when the rank's GPU has power samples
  std::optional<EnergyLedger> ledger;        // likewise (analysis/energy_ledger.h)
  SpreadStats iteration_s;
};

// Power figures are per power domain (an H100 board, an MI250 package of two GCDs: each counted
// once); on runs of boards a domain is a GPU.
struct RunTotals {
  double energy_j = kNaN;      // sum over power domains of the trapezoid energy
  double mean_power_w = kNaN;  // mean over power domains of the time-weighted mean power
  double peak_power_w = kNaN;  // max over power domains
  double busy_s = 0.0;
  double throttled_s = 0.0;
  double throttled_fraction = kNaN;  // sum throttled / sum busy
  std::array<double, kThrottleCauseCount> by_cause_fraction{};
  size_t iterations = 0;  // steps wholly inside the range
  double iteration_time_s = kNaN;
  double iteration_window_s = kNaN;        // first step start to last step end
  double iteration_window_power_w = kNaN;  // sum over GPUs of the mean power in that window
  double throughput_samples_per_s = kNaN;
  double tokens_per_s = kNaN;
  double energy_per_iteration_j = kNaN;
  double energy_per_token_j = kNaN;
  double efficiency_samples_per_s_mj = kNaN;
  // The power domains analysed (those holding an analysed GPU), the GPUs they hold, their kind
  // ("board", "package", "mixed"; "" without GPUs) and the sum of their mean powers over those
  // GPUs: the mean power per device.
  size_t domains = 0;
  size_t domain_gpus = 0;
  std::string domain_kind;
  double mean_power_per_device_w = kNaN;
};

struct RunAnalysis {
  RunInfo info;
  AnalysisOptions options;
  TimeRange range;  // analysed, clamped to the run: [max(t0, start), min(t1, end))
  double duration_s = 0.0;
  std::vector<GpuAnalysis> gpus;
  std::vector<DomainAnalysis> domains;  // the power domains of the analysed GPUs, by id
  std::vector<RankAnalysis> ranks;
  RunTotals totals;
  std::vector<KernelStat> top_kernels;  // over the analysed ranks
  CategoryTimes seed_categories{};
  CategoryTimes corrected_categories{};
  IterationStats iterations;
  StragglerReport stragglers;
  ThrottleCost cost;  // what power and thermal limits cost the iterations
  SpatialImbalance spatial;
  DataQualityReport quality;
  bool raw_analyses = false;  // |dP/dt|, histograms and counters ran (raw budget)
  Histogram power_hist;       // seconds per 10 W bin, all analysed GPUs
  Histogram ramp_hist;        // segments per |dP/dt| bin
  double thermal_fit_resolution_s = kNaN;
  std::vector<std::string> notes;  // what was skipped and why

  const GpuAnalysis* gpu(int id) const;
  const DomainAnalysis* domain(int id) const;
  const RankAnalysis* rank(int rank) const;
};

// Analyses `scope` of the run. Unknown GPU ids or ranks in the scope throw wl::Error.
// The part of `want` inside the run [start, end]. Throws Error ("PATH: the range START to END is
// outside the run (LENGTH long)") when no part of it is: `wattline analyze` and `export` refuse
// such a range (exit 1) rather than analyse or draw nothing.
TimeRange rangeInsideRun(const RunFile& run, TimeRange want);

RunAnalysis analyzeRun(const RunFile& run, const AnalysisScope& scope = {},
                       const AnalysisOptions& options = {}, const Progress& progress = {});

// The GPUs and ranks a scope covers (all when empty), validated.
std::vector<int> scopeGpus(const RunFile& run, const AnalysisScope& scope);
std::vector<int> scopeRanks(const RunFile& run, const AnalysisScope& scope);

// The mean of a metric over the whole buckets inside `window`, per GPU, from the finest pyramid
// level that keeps the read under maxCells cells (GPUs x buckets). widthS receives that level's
// bucket width.
std::vector<double> windowMeans(const RunFile& run, std::string_view metric,
                                const std::vector<int>& gpus, TimeRange window,
                                size_t maxCells = size_t{1} << 20, double* widthS = nullptr);
// windowMeans of many windows at once (the level is chosen once, for the GPU count): [window][gpu].
// Windows that need raw samples are read GPU by GPU (each GPU's samples once), GPUs on up to
// analysisThreads(threads) threads; the result does not depend on the number of threads.
std::vector<std::vector<double>> windowMeansOfWindows(const RunFile& run, std::string_view metric,
                                                      const std::vector<int>& gpus,
                                                      const std::vector<TimeRange>& windows,
                                                      size_t maxCells = size_t{1} << 20,
                                                      double* widthS = nullptr, int threads = 0);

}  // namespace wl
