// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Difference tracks of a side-by-side comparison: run A's metric minus run B's, for a pair of
// GPUs, on the display clock (each run shifted by its alignment offset, or drawn through its warp).
//
// Zoomed in (run A's samples sparser than its pyramid's first level), the difference is taken at
// A's sample points: A(t) - B(t), with B's value the sample it holds at t (sample-and-hold, not
// across gaps). Zoomed out, per pixel column: the mean of A's buckets under it minus the mean of
// B's, from the pyramids' time-weighted means.

#include <optional>
#include <vector>

#include "analysis/compare/time_warp.h"
#include "loaders/format/run_file.h"
#include "widgets/timeline/render/geometry.h"

namespace wl {

struct DifferenceSource {
  int runA = 0, runB = 1;
  int gpuA = 0, gpuB = 0;
  int metricA = 0, metricB = 0;      // indices into each run's telemetry metrics
  int64_t offsetA = 0, offsetB = 0;  // display time = run time + offset
  // A warp replaces the offset: display time = warp.toA(run time). With the iteration warp on B
  // the difference compares the same phase of the same iteration (compare/warped_difference.h).
  std::optional<TimeWarp> warpA, warpB;
};

struct DifferenceGeometry {
  bool samples = false;  // true: points at A's samples; false: one value per column
  bool complete = true;
  std::vector<CounterGeometry::Point> points;  // (x px, A - B)
  std::vector<size_t> segmentStarts;
  std::vector<float> column;  // per column A - B, NaN where either has no data
  float minV = kNaNf, maxV = kNaNf;
};

DifferenceGeometry buildDifferenceGeometry(const RunFile& a, const RunFile& b,
                                           const DifferenceSource& src, const TimeMapping& display,
                                           const TileFetch& fetch);

}  // namespace wl
