// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/range_plan.h"

#include <algorithm>
#include <limits>

#include "loaders/format/run_file.h"

namespace wl {
namespace {

constexpr size_t kMaxPlanLevel = 4;

}  // namespace

RangePlan planRange(const LodGrid& grid, int64_t runStart, int64_t runEnd, TimeRange range) {
  RangePlan p;
  if (grid.levels() == 0) {
    p.range = range;
    return p;
  }
  p.level = std::min(grid.levels() - 1, kMaxPlanLevel);
  const int64_t levelEnd = grid.bucketStart(p.level, grid.buckets[p.level]);
  range.t0 = std::max(range.t0, runStart);
  // Every sample lies in [runStart, runEnd]: a range past the run end reaches the grid's end.
  if (range.t1 > runEnd) range.t1 = std::max(levelEnd, runEnd + 1);
  p.range = range;
  if (range.empty()) return p;
  const int64_t w = grid.widths_ns[p.level];
  const int64_t nb = static_cast<int64_t>(grid.buckets[p.level]);
  auto ceilDiv = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  auto floorDiv = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t first = std::clamp<int64_t>(ceilDiv(range.t0 - grid.origin_ns, w), 0, nb);
  int64_t last = std::clamp<int64_t>(floorDiv(range.t1 - grid.origin_ns, w), 0, nb);
  // A range that ends inside the grid hands its last whole bucket to the raw right edge.
  if (range.t1 < levelEnd && last > first) --last;
  if (last <= first) {
    p.b0 = p.b1 = static_cast<size_t>(first);
  } else {
    p.b0 = static_cast<size_t>(first);
    p.b1 = static_cast<size_t>(last);
  }
  p.wholeStart = grid.bucketStart(p.level, p.b0);
  p.wholeEnd = grid.bucketStart(p.level, p.b1);
  return p;
}

RangePlan planRange(const RunFile& run, TimeRange range) {
  return planRange(run.series(SeriesKind::Gpu).grid, run.info().start_ns, run.info().end_ns, range);
}

std::vector<Interval> rawPieces(const RangePlan& plan, const LodGrid& grid,
                                const std::vector<bool>& rawBucket) {
  std::vector<Interval> out;
  const TimeRange& r = plan.range;
  if (r.empty()) return out;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  auto add = [&](int64_t lo, int64_t hi) {
    if (hi <= lo) return;
    if (!out.empty() && out.back().end >= lo) {
      out.back().end = std::max(out.back().end, hi);
    } else {
      out.push_back({lo, hi});
    }
  };
  if (!plan.hasWhole()) {
    add(kMin, r.t1);
    return out;
  }
  // Segments that start before the first whole bucket: those inside the range before it, and the
  // one that starts before the range and runs into it (none when the range starts the grid).
  if (r.t0 < plan.wholeStart || r.t0 > grid.origin_ns) add(kMin, plan.wholeStart);
  for (size_t b = plan.b0; b < plan.b1; ++b)
    if (b - plan.b0 < rawBucket.size() && rawBucket[b - plan.b0])
      add(grid.bucketStart(plan.level, b), grid.bucketStart(plan.level, b + 1));
  if (plan.wholeEnd < r.t1) add(plan.wholeEnd, r.t1);
  return out;
}

Interval rawWindow(const Interval& piece, const TimeRange& range, int64_t gapThresholdNs) {
  const int64_t lo =
      piece.start == std::numeric_limits<int64_t>::min() ? range.t0 - gapThresholdNs : piece.start;
  return {lo, piece.end + gapThresholdNs};
}

}  // namespace wl

namespace wl {

std::vector<std::pair<int, int>> contiguousRuns(const std::vector<int>& ids) {
  std::vector<std::pair<int, int>> runs;
  for (int id : ids) {
    if (!runs.empty() && runs.back().first + runs.back().second == id) {
      ++runs.back().second;
    } else {
      runs.emplace_back(id, 1);
    }
  }
  return runs;
}

PyramidRows::PyramidRows(const RunFile& run, SeriesKind kind, std::string_view metric, size_t level,
                         const std::vector<int>& entities, size_t b0, size_t b1)
    : b0_(b0), b1_(b1) {
  const SeriesGroupMeta& meta = run.series(kind);
  place_.assign(meta.entities, Place{SIZE_MAX, 0});
  if (b1 <= b0 || !meta.metric(metric)) return;
  std::vector<int> ids;
  for (int e : entities)
    if (e >= 0 && static_cast<size_t>(e) < meta.entities) ids.push_back(e);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (const auto& [first, count] : contiguousRuns(ids)) {
    blocks_.push_back(run.readLod(kind, metric, level, static_cast<size_t>(first),
                                  static_cast<size_t>(count), b0, b1 - b0));
    for (int i = 0; i < count; ++i)
      place_[static_cast<size_t>(first + i)] = {blocks_.size() - 1, static_cast<size_t>(i)};
  }
}

bool PyramidRows::has(int e) const {
  return e >= 0 && static_cast<size_t>(e) < place_.size() &&
         place_[static_cast<size_t>(e)].block != SIZE_MAX;
}

PyramidRows::Cell PyramidRows::at(int e, size_t b) const {
  const Place& p = place_[static_cast<size_t>(e)];
  const LodBlock& blk = blocks_[p.block];
  const size_t i = blk.at(p.row, b - b0_);
  return {blk.min[i], blk.max[i], blk.count[i], blk.wsum[i], blk.tsum[i], blk.dt[i]};
}

}  // namespace wl
