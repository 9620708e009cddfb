// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How an analysis reads a time range: whole pyramid buckets for the bulk, raw samples for the rest.
//
// Every telemetry pyramid bucket holds exact sums over the segments that start in it
// (docs/format.md, "Telemetry pyramids"), so over whole buckets min, max, time-weighted mean and
// trapezoid energy come from the pyramid alone. A RangePlan picks a level and the whole buckets
// inside the range; rawPieces() lists the stretches (range edges, and buckets an analysis cannot
// decide from the pyramid) whose segments must be computed from raw samples. A segment belongs to
// the piece its first sample falls in, and is clipped to the range, so pyramid and raw parts add up
// exactly.

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "loaders/format/lod.h"
#include "loaders/format/run_file.h"

namespace wl {

struct RangePlan {
  TimeRange range;   // the requested range clamped to the run (t1 past the run end -> grid end)
  size_t level = 0;  // pyramid level used
  size_t b0 = 0;     // whole buckets [b0, b1) are read from the pyramid
  size_t b1 = 0;
  int64_t wholeStart = 0;  // bucket start of b0
  int64_t wholeEnd = 0;    // bucket start of b1

  bool hasWhole() const { return b1 > b0; }
  size_t buckets() const { return b1 - b0; }
};

// Plans [range) on a telemetry grid. The level is the coarsest one whose buckets are at most 4^4
// level-0 buckets wide (raw reads cost a chunk either way, so coarse levels are cheapest).
// When the range ends inside the grid, the last whole bucket is handed to the raw right edge so
// that no pyramid segment can run past the range end.
RangePlan planRange(const LodGrid& grid, int64_t runStart, int64_t runEnd, TimeRange range);
RangePlan planRange(const RunFile& run, TimeRange range);

// Stretches of segment start times that need raw samples: the left edge (segments that start
// before the first whole bucket, including those that start before the range and run into it),
// the right edge, and every whole bucket b with rawBucket[b - b0] set. Adjacent stretches merge.
// The left edge starts at INT64_MIN.
std::vector<Interval> rawPieces(const RangePlan& plan, const LodGrid& grid,
                                const std::vector<bool>& rawBucket = {});

// The window of raw samples a piece needs: from the piece start (or range start - gap threshold
// for the left edge) to the piece end + gap threshold, so every segment starting in the piece has
// its end sample, and no segment that reaches into the range is missed.
Interval rawWindow(const Interval& piece, const TimeRange& range, int64_t gapThresholdNs);

}  // namespace wl

namespace wl {

// One metric's pyramid cells for a set of entities and whole buckets [b0, b1) of one level, read
// with one block per contiguous run of entity ids.
class PyramidRows {
 public:
  struct Cell {
    float min, max;
    uint32_t count;
    double wsum, tsum, dt;
  };

  PyramidRows() = default;
  PyramidRows(const RunFile& run, SeriesKind kind, std::string_view metric, size_t level,
              const std::vector<int>& entities, size_t b0, size_t b1);

  bool has(int entity) const;
  Cell at(int entity, size_t bucket) const;  // bucket: absolute index in [b0, b1)
  size_t b0() const { return b0_; }
  size_t b1() const { return b1_; }

 private:
  struct Place {
    size_t block = 0, row = 0;
  };
  std::vector<LodBlock> blocks_;
  std::vector<Place> place_;  // by entity id; block = SIZE_MAX when absent
  size_t b0_ = 0, b1_ = 0;
};

// Splits sorted, unique ids into runs of consecutive ids: (first, count).
std::vector<std::pair<int, int>> contiguousRuns(const std::vector<int>& sortedIds);

}  // namespace wl
