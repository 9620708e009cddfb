// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernel_breakdown.h"

#include <algorithm>

namespace wl {
namespace {

// Union of one stream's events of the classes selected by `mask` (bit per KernelClass), clipped.
IntervalSet streamUnion(std::span<const KernelEvent> events, unsigned mask, TimeRange r) {
  IntervalSet out;
  for (const KernelEvent& e : events) {
    if (!(mask & (1u << static_cast<unsigned>(e.cls)))) continue;
    const int64_t s = std::max(e.start_ns, r.t0);
    const int64_t f = std::min(e.start_ns + std::max<int64_t>(e.dur_ns, 0), r.t1);
    if (f <= s) continue;
    if (!out.empty() && s <= out.back().end) {
      out.back().end = std::max(out.back().end, f);
    } else {
      out.push_back({s, f});
    }
  }
  return out;
}

IntervalSet rankUnion(const std::vector<std::span<const KernelEvent>>& streams, unsigned mask,
                      TimeRange r) {
  IntervalSet acc;
  for (const auto& s : streams)
    acc = acc.empty() ? streamUnion(s, mask, r) : unite(acc, streamUnion(s, mask, r));
  return acc;
}

constexpr unsigned bit(KernelClass c) {
  return 1u << static_cast<unsigned>(c);
}

}  // namespace

ClassUnions classUnions(const std::vector<std::span<const KernelEvent>>& streams, TimeRange range) {
  ClassUnions u;
  u.compute = rankUnion(streams, bit(KernelClass::Compute), range);
  u.communication = rankUnion(streams, bit(KernelClass::Communication), range);
  u.memory = rankUnion(streams, bit(KernelClass::Memory), range);
  u.other = rankUnion(streams, bit(KernelClass::Other), range);
  u.all = unite(unite(u.compute, u.communication), unite(u.memory, u.other));
  return u;
}

StreamIdle streamIdle(std::span<const KernelEvent> events, int64_t stream, TimeRange range,
                      int64_t kernelWaitNs) {
  StreamIdle s;
  s.stream = stream;
  int64_t prevEnd = 0;
  bool havePrev = false;
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
  }
  s.busy_ns = totalLength(streamUnion(events, 0xF, range));
  return s;
}

RankBreakdown breakdownRank(int rank, const std::vector<std::span<const KernelEvent>>& streams,
                            const std::vector<int64_t>& streamIds, TimeRange range,
                            int64_t kernelWaitNs, ClassUnions* unionsOut) {
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
  ClassUnions u = classUnions(streams, range);
  if (r.first_ns >= 0) r.span_ns = r.last_ns - r.first_ns;
  r.busy_ns = totalLength(u.all);
  r.idle_ns = r.span_ns - r.busy_ns;
  r.compute_ns = totalLength(u.compute);
  r.non_compute_ns = r.span_ns - r.compute_ns - r.idle_ns;
  r.comm_ns = totalLength(u.communication);
  r.overlap_ns = overlapLength(u.communication, u.compute);
  r.exposed_comm_ns = r.comm_ns - r.overlap_ns;
  r.memory_ns = totalLength(u.memory);
  r.exposed_memory_ns = totalLength(subtract(u.memory, unite(u.compute, u.communication)));
  if (r.comm_ns > 0)
    r.overlap_ratio = static_cast<double>(r.overlap_ns) / static_cast<double>(r.comm_ns);
  for (size_t i = 0; i < streams.size(); ++i)
    r.streams.push_back(
        streamIdle(streams[i], i < streamIds.size() ? streamIds[i] : 0, range, kernelWaitNs));
  if (unionsOut) *unionsOut = std::move(u);
  return r;
}

}  // namespace wl
