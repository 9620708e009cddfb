// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Time a metric spends above a level (power above the power limit, temperature at or above the
// slowdown threshold), with the maximal runs of consecutive samples above it. A sample above the
// level owns the segment to the next valid sample (left Riemann; gap segments own nothing).
// Buckets whose maximum is below the level are skipped from the pyramid alone; only the others
// and the range edges are read raw.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

struct ThresholdTime {
  double time_s = 0.0;
  double peak = kNaN;          // highest value inside the runs
  std::vector<Interval> runs;  // maximal runs, clipped to the range

  size_t count() const { return runs.size(); }
};

// Adds the segments whose first sample lies in `piece`, clipped to `range`.
void accumulateAbove(ThresholdTime& acc, std::span<const int64_t> t, std::span<const double> v,
                     int64_t gapThresholdNs, double level, bool inclusive, const Interval& piece,
                     const TimeRange& range);
// Merges touching runs (call after the last accumulateAbove).
void finishAbove(ThresholdTime& acc);

// For each GPU, the time its metric is above levels[k] (>= when inclusive). A NaN level gives an
// empty result. Without runs (withRuns false) a bucket whose every sample is above the level is
// also taken from the pyramid, and `runs` and `peak` stay empty.
std::vector<ThresholdTime> timeAbove(const RunFile& run, std::string_view metric,
                                     const std::vector<int>& gpus,
                                     const std::vector<double>& levels, bool inclusive,
                                     TimeRange range, bool withRuns = true);

}  // namespace wl
