// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Cumulative counters (PCIe bytes, NVLink KiB, InfiniBand bytes, energy): per-interval deltas with
// the seed paper's 32-bit wrap rule (docs/analyses.md, "Counters"). A decrease from a previous
// value below 2^32 is a wrap, delta = (2^32 - 1 - prev) + cur; a decrease from a larger value
// cannot be a 32-bit wrap and is counted as a reset (its delta is unknown and left out).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

struct CounterSummary {
  int gpu = -1;
  std::string metric;
  double total = kNaN;     // sum of the deltas in the range (counter units)
  uint64_t intervals = 0;  // deltas summed
  uint32_t wraps = 0;
  uint32_t resets = 0;
  int64_t first_wrap_ns = -1;
};

// One delta: cur - prev, or the wrap rule; NaN for a reset.
double counterDelta(double prev, double cur);

// Deltas between consecutive valid samples that both lie in `range` (deltas span sampling gaps:
// a counter keeps counting while nobody reads it).
CounterSummary summarizeCounter(std::span<const int64_t> t, std::span<const double> v,
                                TimeRange range = {});

// Every counter metric (kind "counter") of the given GPUs, from raw samples.
std::vector<CounterSummary> counterSummaries(const RunFile& run, const std::vector<int>& gpus,
                                             TimeRange range);

}  // namespace wl
