// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Telemetry statistics of one metric of one GPU (or node) over a time range, with the seed paper's
// definitions (docs/analyses.md, "Telemetry statistics"): time-weighted mean as a left Riemann
// sum, min and max of the valid samples, and the trapezoidal integral (energy for power), with
// gaps longer than the GPU's gap threshold neither integrated across nor weighted.
//
// statsOfSamples() is the reference on raw samples; metricStats() computes the same numbers for
// many GPUs from the pyramids plus raw samples at the range edges only.
//
// Cost: statsOfSamples() is O(n) in the samples given. metricStats() reads O(G x B) pyramid cells
// for G GPUs and the B whole buckets of its RangePlan (buckets of up to 4^4 level-0 widths, so B
// is the range over 256 level-0 buckets) and the raw samples of the two edge pieces, at most two
// planned buckets each per GPU; a whole-run statistic reads no raw sample in the middle.

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

struct MetricStats {
  double mean = kNaN;  // time-weighted, left Riemann (value)
  double min = kNaN;   // of the valid samples in the range
  double max = kNaN;
  uint64_t samples = 0;    // valid samples in the range
  double covered_s = 0.0;  // time covered by segments (gaps excluded), seconds
  double integral = kNaN;  // trapezoid, value x seconds (joules for power); NaN if nothing covered
};

// Sums over segments and samples; the pyramid and the raw path both feed one.
struct SeriesAccumulator {
  double wsum = 0.0;  // sum v_i * dt_i (value x s)
  double tsum = 0.0;  // trapezoid (value x s)
  double dt = 0.0;    // covered seconds
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  uint64_t count = 0;

  void addSample(double v);
  void addBucket(float bmin, float bmax, uint32_t bcount, double bwsum, double btsum, double bdt);
  MetricStats stats() const;
};

// Adds, from raw samples (t sorted, NaN = missing), the segments whose first sample lies in
// `piece`, clipped to `range` (linear interpolation at the clip points for the trapezoid, the left
// value held for the mean), and the samples that lie in both piece and range.
void accumulateRaw(SeriesAccumulator& acc, std::span<const int64_t> t, std::span<const double> v,
                   int64_t gapThresholdNs, const Interval& piece, const TimeRange& range);

// Reference: the statistics of raw samples over a range (default: all of them).
MetricStats statsOfSamples(std::span<const int64_t> t, std::span<const double> v,
                           int64_t gapThresholdNs, TimeRange range = {});

// The statistics of one metric for each entity in `entities` (result in the same order), over
// whole pyramid buckets plus raw samples at the edges. An absent metric gives empty stats.
std::vector<MetricStats> metricStats(const RunFile& run, std::string_view metric,
                                     const std::vector<int>& entities, TimeRange range,
                                     SeriesKind kind = SeriesKind::Gpu);

// metricStats of several metrics over the same range, [metric][entity], bit for bit: entity by
// entity, so that an entity's time stamps are decoded once for all its metrics' edges rather than
// once per metric (the Selection dock's summary of every GPU).
std::vector<std::vector<MetricStats>> metricStatsOfMetrics(const RunFile& run,
                                                           const std::vector<std::string>& metrics,
                                                           const std::vector<int>& entities,
                                                           TimeRange range,
                                                           SeriesKind kind = SeriesKind::Gpu);

// metricStats(run, metric, {entity}, w)[0] for each window w, bit for bit, with the entity's raw
// samples and pyramid rows read once rather than once per window: for many short windows (every
// iteration of a run), where reads per window decode the same chunks again and again.
std::vector<MetricStats> metricStatsOfWindows(const RunFile& run, std::string_view metric,
                                              int entity, const std::vector<TimeRange>& windows,
                                              SeriesKind kind = SeriesKind::Gpu);

}  // namespace wl
