// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/interval_set.h"

#include <algorithm>

namespace wl {

IntervalSet unionOfSorted(std::span<const Interval> sorted) {
  IntervalSet out;
  out.reserve(sorted.size());
  for (const Interval& iv : sorted) {
    if (iv.end <= iv.start) continue;
    if (!out.empty() && iv.start <= out.back().end) {
      out.back().end = std::max(out.back().end, iv.end);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

IntervalSet unionOf(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  return unionOfSorted(intervals);
}

IntervalSet unite(const IntervalSet& a, const IntervalSet& b) {
  // The union of the two merged by start (ties: a first), built in one pass into a vector sized
  // for the worst case, then trimmed.
  IntervalSet out(a.size() + b.size());
  Interval* o = out.data();
  size_t n = 0;
  auto add = [o, &n](const Interval& iv) {
    if (iv.end <= iv.start) return;
    if (n > 0 && iv.start <= o[n - 1].end) {
      o[n - 1].end = std::max(o[n - 1].end, iv.end);
    } else {
      o[n++] = iv;
    }
  };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size())
    add(b[j].start < a[i].start ? b[j++] : a[i++]);
  for (; i < a.size(); ++i)
    add(a[i]);
  for (; j < b.size(); ++j)
    add(b[j]);
  out.resize(n);
  return out;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  out.reserve(std::min(a.size(), b.size()));
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].start, b[j].start);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  out.reserve(a.size() + b.size());
  size_t j = 0;
  for (const Interval& iv : a) {
    int64_t cur = iv.start;
    while (j < b.size() && b[j].end <= cur)
      ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < iv.end) {
      if (b[k].start > cur) out.push_back({cur, b[k].start});
      cur = std::max(cur, b[k].end);
      if (b[k].end >= iv.end) break;
      ++k;
    }
    if (cur < iv.end) out.push_back({cur, iv.end});
  }
  return out;
}

IntervalSet clip(const IntervalSet& a, int64_t lo, int64_t hi) {
  // The set is sorted and disjoint, so its ends are sorted too: a binary search finds the first
  // interval reaching past lo (the energy ledger clips a rank's whole-run unions to each of
  // thousands of iterations; a scan of the whole set each time took minutes on 10^7 kernels).
  IntervalSet out;
  auto it =
      std::partition_point(a.begin(), a.end(), [lo](const Interval& iv) { return iv.end <= lo; });
  for (; it != a.end() && it->start < hi; ++it) {
    const int64_t s = std::max(it->start, lo), e = std::min(it->end, hi);
    if (e > s) out.push_back({s, e});
  }
  return out;
}

int64_t totalLength(const IntervalSet& a) {
  int64_t n = 0;
  for (const Interval& iv : a)
    n += iv.length();
  return n;
}

int64_t overlapLength(const IntervalSet& a, const IntervalSet& b) {
  int64_t n = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].start, b[j].start);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) n += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return n;
}

}  // namespace wl
