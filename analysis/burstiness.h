// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Burstiness and power excursions (docs/analyses.md, "Burstiness"): peak-to-average power,
// percentiles of |dP/dt| between consecutive samples, and the number and time of excursions above
// the GPU's power limit. Peak-to-average and excursions come from the pyramid (exact); |dP/dt|
// needs every raw sample and runs only within the raw-sample budget.

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "analysis/telemetry_stats.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

// |dP/dt| over the non-gap segments with both samples in the range, in W/s. Percentiles
// interpolate linearly between order statistics (numpy's default).
struct RampStats {
  uint64_t segments = 0;
  double p50 = kNaN, p90 = kNaN, p99 = kNaN, max = kNaN;
};

// A histogram with fixed bins: bin i covers [edges[i], edges[i+1]).
struct Histogram {
  std::vector<double> edges;   // bins + 1 edges
  std::vector<double> values;  // per bin: seconds (time-weighted) or counts
  bool log10 = false;          // edges are lo * 10^(i / perUnit) instead of lo + i * step
  double lo = 0.0, step = 1.0;

  void add(double x, double w);
  Histogram& operator+=(const Histogram& o);
};
Histogram powerHistogram();  // 10 W bins from 0 to 1,500 W (the last bin takes everything above)
Histogram
rampHistogram();  // |dP/dt| in W/s: 10 log bins per decade from 1 to 10^6 (below 1 -> first)

struct Burstiness {
  double peak_to_average = kNaN;  // max power / time-weighted mean power
  double power_limit_w = kNaN;
  uint32_t excursions = 0;         // maximal runs of samples above the power limit
  double excursion_s = kNaN;       // time above the limit (NaN when the limit is unknown)
  double excursion_peak_w = kNaN;  // highest power in an excursion
  std::vector<Interval> excursion_runs;
  bool ramp_computed = false;  // false: skipped (raw budget) or no power
  RampStats ramp;
};

// From raw power samples of one GPU: ramp statistics, and adds to the power histogram (seconds,
// left Riemann) and the ramp histogram (segment counts).
RampStats rampStats(std::span<const int64_t> t, std::span<const double> p, int64_t gapThresholdNs,
                    TimeRange range, Histogram* powerHist = nullptr, Histogram* rampHist = nullptr);

struct BurstinessResult {
  std::vector<Burstiness> gpus;  // in the order of the GPUs asked for
  bool raw_computed = false;
  Histogram power_hist;  // over all GPUs, when raw_computed
  Histogram ramp_hist;
};

// `power` holds each GPU's power statistics over the range (from metricStats); rawBudgetOk says
// whether the raw-sample analyses may run.
BurstinessResult analyzeBurstiness(const RunFile& run, const std::vector<int>& gpus,
                                   const std::vector<MetricStats>& power, TimeRange range,
                                   bool rawBudgetOk);

}  // namespace wl
