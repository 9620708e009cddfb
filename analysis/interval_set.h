// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Sorted, disjoint half-open intervals [start, end) in ns, and the set operations the kernel
// breakdowns are made of (HTA's "union of kernel intervals"). Every operation is linear in the
// sizes of its inputs, so a rank with millions of kernels costs a few passes over its events;
// clip is logarithmic in its input (plus its output).

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace wl {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;

  int64_t length() const { return end > start ? end - start : 0; }
  bool operator==(const Interval&) const = default;
};

using IntervalSet = std::vector<Interval>;  // sorted by start, disjoint, non-empty

// Builds a set from intervals sorted by start (overlapping or touching ones merge).
IntervalSet unionOfSorted(std::span<const Interval> sortedByStart);
// Builds a set from intervals in any order.
IntervalSet unionOf(std::vector<Interval> intervals);

IntervalSet unite(const IntervalSet& a, const IntervalSet& b);
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);  // a \ b
IntervalSet clip(const IntervalSet& a, int64_t lo, int64_t hi);
int64_t totalLength(const IntervalSet& a);
int64_t overlapLength(const IntervalSet& a, const IntervalSet& b);

}  // namespace wl
