// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Data-quality report (docs/analyses.md, "Data quality"): missing GPUs and ranks, sampling gaps,
// counter wraps and resets, kernel traces outside their GPU's telemetry, the lag between kernel
// activity and power, plus every note the file carries (non-monotonic or duplicate timestamps,
// out-of-range values, repairs the writer made). And the seed paper's invalid-run rule: a run is
// invalid (out of memory, crashed, misconfigured) when GPUs are missing, a power series has fewer
// than 10 samples, or its duration or energy is not positive; its numbers are then not plotted as
// if they were real.

#include <span>
#include <string>
#include <vector>

#include "core/run_model.h"
#include "counters.h"
#include "gaps.h"
#include "interval_set.h"
#include "telemetry_stats.h"

namespace wl {

class RunFile;

struct DataQualityReport {
  bool valid = true;
  std::vector<std::string> invalid_reasons;
  int expected_gpus = -1;                  // nodes x gpus_per_node from the configuration
  std::vector<int> gpus_without_power;     // analysed GPUs with no valid power sample
  std::vector<int> ranks_without_kernels;  // ranks of the run table without kernel events
  std::vector<Gap> gaps;
  double gap_s = 0.0;                            // total gap time overlapping the range
  std::vector<CounterSummary> counter_problems;  // counters with wraps or resets
  std::vector<QualityNote> notes;                // the file's notes, then the analysis's findings
};

struct QualityInputs {
  std::vector<int> gpus;           // analysed GPUs
  std::vector<MetricStats> power;  // their power statistics over the range
  double duration_s = 0.0;         // analysed range
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
