// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/kernel_breakdown.h"

#include "analysis/energy_integral.h"

#include <algorithm>
#include <array>

namespace wl {

ClassUnions classUnions(const std::vector<std::span<const KernelEvent>>& streams, TimeRange range) {
  // One pass per stream builds the union of each class (events are sorted by start); the
  // streams' unions are then merged.
  std::array<IntervalSet, kKernelClassCount> acc;
  for (const auto& events : streams) {
    std::array<size_t, kKernelClassCount> counts{};
    for (const KernelEvent& e : events)
      ++counts[static_cast<size_t>(e.cls) & 3];
    // Written through plain indices into vectors sized for the worst case, then trimmed.
    std::array<IntervalSet, kKernelClassCount> u;
    std::array<size_t, kKernelClassCount> used{};
    for (size_t c = 0; c < kKernelClassCount; ++c)
      u[c].resize(counts[c]);
    for (const KernelEvent& e : events) {
      const int64_t s = std::max(e.start_ns, range.t0);
      const int64_t f = std::min(e.start_ns + std::max<int64_t>(e.dur_ns, 0), range.t1);
      if (f <= s) continue;
      const size_t c = static_cast<size_t>(e.cls) & 3;
      Interval* set = u[c].data();
      size_t& n = used[c];
      if (n > 0 && s <= set[n - 1].end) {
        set[n - 1].end = std::max(set[n - 1].end, f);
      } else {
        set[n++] = {s, f};
      }
    }
    for (size_t c = 0; c < kKernelClassCount; ++c)
      u[c].resize(used[c]);
    for (size_t c = 0; c < kKernelClassCount; ++c)
      acc[c] = acc[c].empty() ? std::move(u[c]) : unite(acc[c], u[c]);
  }
  // All events: the union of the classes (a copy when only one class ran).
  IntervalSet all;
  const IntervalSet* first = nullptr;
  bool united = false;
  for (const IntervalSet& set : acc) {
    if (set.empty()) continue;
    if (!first) {
      first = &set;
    } else {
      all = unite(united ? all : *first, set);
      united = true;
    }
  }
  if (first && !united) all = *first;
  ClassUnions out;
  out.compute = std::move(acc[static_cast<size_t>(KernelClass::Compute)]);
  out.communication = std::move(acc[static_cast<size_t>(KernelClass::Communication)]);
  out.memory = std::move(acc[static_cast<size_t>(KernelClass::Memory)]);
  out.other = std::move(acc[static_cast<size_t>(KernelClass::Other)]);
  out.all = std::move(all);
  return out;
}

int64_t ClassStateTotals::nsWhere(unsigned all, unsigned none) const {
  int64_t n = 0;
  for (unsigned s = 1; s < 16; ++s)
    if ((s & all) == all && (s & none) == 0) n += ns[s];
  return n;
}

double ClassStateTotals::joulesWhere(unsigned all, unsigned none) const {
  double j = 0;
  for (unsigned s = 1; s < 16; ++s)
    if ((s & all) == all && (s & none) == 0) j += joules[s];
  return j;
}

namespace {

// One class's intervals during the sweep.
struct ClassWalk {
  const Interval* at;
  const Interval* end;
  unsigned bit;
  int64_t edge;  // its next boundary: the start of *at (outside) or its end (inside); MAX when done
};

// The sweep over M classes that ran (M known at compile time, so the walks stay in registers).
template <size_t M>
void sweepWalks(std::array<ClassWalk, 4>& walks, const EnergyIntegral* power,
                ClassStateTotals& out) {
  unsigned state = 0;
  int64_t at = 0;
  EnergyIntegral::Cursor cursor;
  for (;;) {
    int64_t next = walks[0].edge;
    for (size_t j = 1; j < M; ++j)
      next = std::min(next, walks[j].edge);
    if (next == INT64_MAX) break;
    if (state != 0 && next > at) {
      out.ns[state] += next - at;
      if (power) out.joules[state] += power->integrate(at, next, cursor);
    }
    at = next;
    // Each class crosses at most one boundary per step (an empty interval takes two steps).
    for (size_t j = 0; j < M; ++j) {
      ClassWalk& w = walks[j];
      if (w.edge != at) continue;
      if (state & w.bit) {
        state &= ~w.bit;
        ++w.at;
        w.edge = w.at == w.end ? INT64_MAX : w.at->start;
      } else {
        state |= w.bit;
        w.edge = w.at->end;
      }
    }
  }
}

}  // namespace

ClassStateTotals sweepClassStates(const ClassUnions& u, const EnergyIntegral* power) {
  ClassStateTotals out;
  out.has_energy = power != nullptr;
  const std::array<const IntervalSet*, 4> sets = {&u.compute, &u.communication, &u.memory,
                                                  &u.other};
  // At each boundary (the earliest start of a class outside, or end of a class inside) the time
  // since the previous one goes to the state of the classes running.
  std::array<ClassWalk, 4> walks{};
  size_t active = 0;
  for (size_t k = 0; k < 4; ++k) {
    const IntervalSet& set = *sets[k];
    if (!set.empty())
      walks[active++] = {set.data(), set.data() + set.size(), 1u << k, set.front().start};
  }
  switch (active) {
    case 1:
      sweepWalks<1>(walks, power, out);
      break;
    case 2:
      sweepWalks<2>(walks, power, out);
      break;
    case 3:
      sweepWalks<3>(walks, power, out);
      break;
    case 4:
      sweepWalks<4>(walks, power, out);
      break;
    default:
      break;
  }
  return out;
}

StreamIdle streamIdle(std::span<const KernelEvent> events, int64_t stream, TimeRange range,
                      int64_t kernelWaitNs) {
  // Accumulated in locals (stores to the result would alias the events for the compiler).
  uint64_t count = 0, gaps = 0;
  int64_t idle = 0, kernelWait = 0, otherWait = 0, busy = 0;
  int64_t prevEnd = 0;
  bool havePrev = false;
  int64_t openStart = 0, openEnd = 0;
  bool open = false;
  for (const KernelEvent& e : events) {
    const int64_t start = e.start_ns, end = e.start_ns + std::max<int64_t>(e.dur_ns, 0);
    if (!((end > range.t0 || start >= range.t0) && start < range.t1)) continue;
    ++count;
    if (havePrev) {
      const int64_t lo = std::max(prevEnd, range.t0), hi = std::min(start, range.t1);
      const int64_t gap = hi - lo;
      if (gap > 0) {
        ++gaps;
        idle += gap;
        if (start - prevEnd < kernelWaitNs) {
          kernelWait += gap;
        } else {
          otherWait += gap;
        }
      }
    }
    prevEnd = end;
    havePrev = true;
    // Busy time: the union of the stream's events, clipped.
    const int64_t a = std::max(start, range.t0), b = std::min(end, range.t1);
    if (b <= a) continue;
    if (open && a <= openEnd) {
      openEnd = std::max(openEnd, b);
    } else {
      if (open) busy += openEnd - openStart;
      openStart = a;
      openEnd = b;
      open = true;
    }
  }
  if (open) busy += openEnd - openStart;
  StreamIdle s;
  s.stream = stream;
  s.events = count;
  s.busy_ns = busy;
  s.idle_ns = idle;
  s.kernel_wait_ns = kernelWait;
  s.other_wait_ns = otherWait;
  s.gaps = gaps;
  return s;
}

RankBreakdown breakdownRank(int rank, const std::vector<std::span<const KernelEvent>>& streams,
                            const std::vector<int64_t>& streamIds, TimeRange range,
                            int64_t kernelWaitNs, const ClassUnions& u,
                            const ClassStateTotals& st) {
  RankBreakdown r;
  r.rank = rank;
  // Counted in locals (stores to r would alias the events for the compiler).
  std::array<uint64_t, kKernelClassCount + 1> byClass{};  // the last: out-of-range class values
  int64_t first = r.first_ns, last = r.last_ns;
  for (const auto& s : streams)
    for (const KernelEvent& e : s) {
      const int64_t end = e.start_ns + std::max<int64_t>(e.dur_ns, 0);
      const bool inRange = (end > range.t0 || e.start_ns >= range.t0) && e.start_ns < range.t1;
      if (!inRange) continue;
      ++byClass[std::min<size_t>(static_cast<size_t>(e.cls), kKernelClassCount)];
      const int64_t s0 = std::max(e.start_ns, range.t0), s1 = std::min(end, range.t1);
      first = first < 0 ? s0 : std::min(first, s0);
      last = std::max(last, s1);
    }
  r.first_ns = first;
  r.last_ns = last;
  r.kernels = byClass[0] + byClass[1] + byClass[2] + byClass[3] + byClass[4];
  r.comm_kernels = byClass[static_cast<size_t>(KernelClass::Communication)];
  r.compute_kernels = byClass[static_cast<size_t>(KernelClass::Compute)];
  r.memory_ops = byClass[static_cast<size_t>(KernelClass::Memory)];
  if (r.first_ns >= 0) r.span_ns = r.last_ns - r.first_ns;
  r.busy_ns = totalLength(u.all);
  r.idle_ns = r.span_ns - r.busy_ns;
  r.compute_ns = st.nsWhere(kStateCompute);
  r.non_compute_ns = r.span_ns - r.compute_ns - r.idle_ns;
  r.comm_ns = st.nsWhere(kStateComm);
  r.overlap_ns = st.nsWhere(kStateComm | kStateCompute);
  r.exposed_comm_ns = st.nsWhere(kStateComm, kStateCompute);
  r.memory_ns = st.nsWhere(kStateMemory);
  r.exposed_memory_ns = st.nsWhere(kStateMemory, kStateCompute | kStateComm);
  if (r.comm_ns > 0)
    r.overlap_ratio = static_cast<double>(r.overlap_ns) / static_cast<double>(r.comm_ns);
  for (size_t i = 0; i < streams.size(); ++i)
    r.streams.push_back(
        streamIdle(streams[i], i < streamIds.size() ? streamIds[i] : 0, range, kernelWaitNs));
  return r;
}

RankBreakdown breakdownRank(int rank, const std::vector<std::span<const KernelEvent>>& streams,
                            const std::vector<int64_t>& streamIds, TimeRange range,
                            int64_t kernelWaitNs) {
  const ClassUnions u = classUnions(streams, range);
  return breakdownRank(rank, streams, streamIds, range, kernelWaitNs, u, sweepClassStates(u));
}

}  // namespace wl
