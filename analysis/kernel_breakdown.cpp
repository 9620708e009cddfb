// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernel_breakdown.h"

#include "energy_attribution.h"

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
    std::array<IntervalSet, kKernelClassCount> u;
    for (size_t c = 0; c < kKernelClassCount; ++c)
      u[c].reserve(counts[c]);
    for (const KernelEvent& e : events) {
      const int64_t s = std::max(e.start_ns, range.t0);
      const int64_t f = std::min(e.start_ns + std::max<int64_t>(e.dur_ns, 0), range.t1);
      if (f <= s) continue;
      IntervalSet& set = u[static_cast<size_t>(e.cls) & 3];
      if (!set.empty() && s <= set.back().end) {
        set.back().end = std::max(set.back().end, f);
      } else {
        set.push_back({s, f});
      }
    }
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

ClassStateTotals sweepClassStates(const ClassUnions& u, const EnergyIntegral* power) {
  ClassStateTotals out;
  out.has_energy = power != nullptr;
  const std::array<const IntervalSet*, 4> sets = {&u.compute, &u.communication, &u.memory,
                                                  &u.other};
  // One walk per class that ran (usually two of the four); a finished walk leaves the list.
  struct Walk {
    const Interval* at;
    const Interval* end;
    unsigned bit;
  };
  std::array<Walk, 4> walks{};
  size_t active = 0;
  for (size_t k = 0; k < 4; ++k)
    if (!sets[k]->empty())
      walks[active++] = {sets[k]->data(), sets[k]->data() + sets[k]->size(), 1u << k};
  unsigned state = 0;
  int64_t at = 0;
  EnergyIntegral::Cursor cursor;
  while (active > 0) {
    // The next boundary: the earliest start (if outside) or end (if inside) over the classes.
    int64_t next = INT64_MAX;
    for (size_t j = 0; j < active; ++j)
      next = std::min(next, state & walks[j].bit ? walks[j].at->end : walks[j].at->start);
    if (state != 0 && next > at) {
      out.ns[state] += next - at;
      if (power) out.joules[state] += power->integrate(at, next, cursor);
    }
    at = next;
    for (size_t j = 0; j < active;) {
      Walk& w = walks[j];
      if (state & w.bit) {
        if (w.at->end == at) {
          state &= ~w.bit;
          if (++w.at == w.end) {
            w = walks[--active];
            continue;
          }
        }
      } else if (w.at->start == at) {
        state |= w.bit;
      }
      ++j;
    }
  }
  return out;
}

StreamIdle streamIdle(std::span<const KernelEvent> events, int64_t stream, TimeRange range,
                      int64_t kernelWaitNs) {
  StreamIdle s;
  s.stream = stream;
  int64_t prevEnd = 0;
  bool havePrev = false;
  int64_t openStart = 0, openEnd = 0;
  bool open = false;
  for (const KernelEvent& e : events) {
    const int64_t start = e.start_ns, end = e.start_ns + std::max<int64_t>(e.dur_ns, 0);
    if (!((end > range.t0 || start >= range.t0) && start < range.t1)) continue;
    ++s.events;
    if (havePrev) {
      const int64_t lo = std::max(prevEnd, range.t0), hi = std::min(start, range.t1);
      const int64_t gap = hi - lo;
      if (gap > 0) {
        ++s.gaps;
        s.idle_ns += gap;
        if (start - prevEnd < kernelWaitNs) {
          s.kernel_wait_ns += gap;
        } else {
          s.other_wait_ns += gap;
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
      if (open) s.busy_ns += openEnd - openStart;
      openStart = a;
      openEnd = b;
      open = true;
    }
  }
  if (open) s.busy_ns += openEnd - openStart;
  return s;
}

RankBreakdown breakdownRank(int rank, const std::vector<std::span<const KernelEvent>>& streams,
                            const std::vector<int64_t>& streamIds, TimeRange range,
                            int64_t kernelWaitNs, const ClassUnions& u,
                            const ClassStateTotals& st) {
  RankBreakdown r;
  r.rank = rank;
  for (const auto& s : streams)
    for (const KernelEvent& e : s) {
      const int64_t end = e.start_ns + std::max<int64_t>(e.dur_ns, 0);
      const bool inRange = (end > range.t0 || e.start_ns >= range.t0) && e.start_ns < range.t1;
      if (!inRange) continue;
      ++r.kernels;
      if (e.cls == KernelClass::Communication) ++r.comm_kernels;
      if (e.cls == KernelClass::Compute) ++r.compute_kernels;
      if (e.cls == KernelClass::Memory) ++r.memory_ops;
      const int64_t s0 = std::max(e.start_ns, range.t0), s1 = std::min(end, range.t1);
      r.first_ns = r.first_ns < 0 ? s0 : std::min(r.first_ns, s0);
      r.last_ns = std::max(r.last_ns, s1);
    }
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
