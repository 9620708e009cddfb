// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Data-quality report (docs/analyses.md, "Data quality"): missing GPUs and ranks, sampling gaps,
// counter wraps and resets, kernel traces outside their GPU's telemetry, the lag between kernel
// activity and power, plus every note the file carries (non-monotonic or duplicate timestamps,
// out-of-range values, repairs the writer made). And the seed paper's invalid-run rule: a run is
// invalid (out of memory, crashed, misconfigured) when GPUs are missing, a power series has fewer
// than 10 samples, or its duration or energy is not positive; its numbers are then not plotted as
// if they were real. Power is checked per power domain (core/power_domain.h): a GCD of an MI250
// package whose package power is reported on the other GCD has no power of its own, as expected;
// the package is missing only when the GPU that reports its power has none. A run without any GPU
// telemetry (a kernel trace alone) is not invalid for lacking power: a note says so.

#include <span>
#include <string>
#include <vector>

#include "analysis/counters.h"
#include "analysis/gaps.h"
#include "analysis/interval_set.h"
#include "analysis/telemetry_stats.h"
#include "loaders/core/power_domain.h"
#include "loaders/core/run_model.h"

namespace wl {

class RunFile;

struct DataQualityReport {
  bool valid = true;
  std::vector<std::string> invalid_reasons;
  int expected_gpus = -1;                   // nodes x gpus_per_node from the configuration
  std::vector<int> gpus_without_power;      // analysed GPUs with no valid power sample that
                                            // should have some (not a GCD whose package power
                                            // another GCD reports)
  std::vector<int> gpus_without_own_power;  // analysed GPUs whose domain's power is on another
                                            // GPU (expected: the second GCD of an MI250 package)
  std::vector<int> domains_without_power;   // analysed power domains without power samples
  bool has_telemetry = true;                // false: the run has no GPU sample at all
  std::vector<int> ranks_without_kernels;   // ranks of the run table without kernel events
  std::vector<Gap> gaps;
  double gap_s = 0.0;                            // total gap time overlapping the range
  std::vector<CounterSummary> counter_problems;  // counters with wraps or resets
  std::vector<QualityNote> notes;                // the file's notes, then the analysis's findings
};

// One analysed power domain: the statistics of the power columns that make its power.
struct DomainPowerInput {
  PowerDomain domain;
  std::vector<int> analysed;                       // its GPUs in the scope
  std::vector<std::pair<int, MetricStats>> power;  // per GPU whose column makes its power
};

struct QualityInputs {
  std::vector<int> gpus;                  // analysed GPUs
  std::vector<MetricStats> power;         // their power statistics over the range
  std::vector<DomainPowerInput> domains;  // the power domains of the analysed GPUs
  double duration_s = 0.0;                // analysed range
  std::vector<Gap> gaps;
  std::vector<CounterSummary> counters;
  std::vector<int> ranks;  // analysed ranks
  std::vector<int> ranksWithKernels;
  std::vector<QualityNote> findings;  // from other analyses (trace/telemetry checks)
};

DataQualityReport assessDataQuality(const RunFile& run, const QualityInputs& in);

// Reasons recorded in a run's own quality notes that make it invalid: an `out_of_memory` note
// (a simulated configuration that does not fit in GPU memory, written with --allow-oom).
std::vector<std::string> invalidatingNotes(const std::vector<QualityNote>& notes);

// Offset between a rank's kernel activity and its GPU's power: the range is cut into bins of binNs,
// the busy fraction of `busy` and the mean power are taken per bin, and the lag in
// [-maxLagNs, maxLagNs] that maximises their Pearson correlation is returned (positive: power
// follows activity). Power sensors average over up to ~1 s, so small positive lags are normal; a
// lag of seconds means the trace and telemetry clocks disagree.
struct ActivityLag {
  double lag_s = kNaN;
  double correlation = kNaN;
};
ActivityLag estimateActivityLag(std::span<const int64_t> t, std::span<const double> p,
                                const IntervalSet& busy, TimeRange range, int64_t binNs,
                                int64_t maxLagNs);

}  // namespace wl
