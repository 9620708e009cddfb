// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The numbers of a timeline selection: for a time range and a set of GPUs and ranks, each GPU's
// mean / min / max of every metric, its energy, its throttled fraction by reason, and each rank's
// kernel time by class. Built to run on every selection change: whole pyramid buckets for the
// bulk, raw samples and events only at the two edges of the range (and inside buckets whose SM
// clock dips below the throttle threshold).
//
// Kernel time by class here is, per rank and class, the sum over the rank's streams of the time
// each stream runs kernels of that class (what the kernel pyramid stores); streams that overlap
// each other count twice. The per-rank union over streams (HTA's breakdown) is in
// kernel_breakdown.h and in the full report (run_analysis.h).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/telemetry_stats.h"
#include "analysis/throttle_detection.h"
#include "loaders/format/run_file.h"

namespace wl {

struct GpuRangeSummary {
  int gpu = -1;
  std::vector<std::pair<std::string, MetricStats>> metrics;  // every gauge metric of the run
  double energy_j = kNaN;                                    // trapezoid of power_w
  bool has_clock = false;
  double busy_s = 0.0;
  double throttled_s = 0.0;
  double throttled_fraction = kNaN;  // throttled / busy
  std::array<double, kThrottleCauseCount> by_cause_s{};
  std::array<double, kThrottleCauseCount> by_cause_fraction{};  // of busy time
  std::vector<ThrottleInterval> throttle_intervals;

  const MetricStats* metric(std::string_view id) const;
};

struct RankRangeSummary {
  int rank = 0;
  int gpu = -1;
  uint64_t events = 0;  // events that start in the range, all streams
  std::array<int64_t, kKernelClassCount> stream_busy_ns{};  // per KernelClass
  size_t streams = 0;
};

struct RangeSummary {
  TimeRange range;  // as analysed (clamped to the run)
  std::vector<GpuRangeSummary> gpus;
  std::vector<RankRangeSummary> ranks;
};

// t0 < t1 in ns on the run clock; gpus and ranks list ids (unknown ones are skipped).
RangeSummary summarizeRange(const RunFile& run, int64_t t0, int64_t t1,
                            const std::vector<int>& gpus, const std::vector<int>& ranks,
                            const AnalysisOptions& options = {});

// Per class, the busy time of one track over [t0, t1) and the events that start in it, from the
// kernel pyramid plus raw events at the edges.
struct TrackBusy {
  std::array<int64_t, kKernelClassCount> busy_ns{};
  uint64_t events = 0;
};
TrackBusy trackBusy(const RunFile& run, size_t track, TimeRange range);

}  // namespace wl
