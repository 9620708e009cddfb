// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel-trace breakdown of one rank with HTA's definitions (docs/analyses.md, "Kernel-trace
// breakdown"), over all streams of the rank, every interval clipped to the range:
//   span        = last GPU event end - first GPU event start (kernels, memcpy, memset, other)
//   idle        = span - |union of all GPU event intervals|
//   compute     = |union of compute kernels|
//   non-compute = span - compute - idle (HTA's number: only exposed communication and memory)
// and, named separately because HTA's non-compute is often misread (HTA issue #241):
//   communication (total)   = |union of communication kernels|
//   exposed communication   = |communication union minus compute union|
//   overlap ratio           = |communication union ∩ compute union| / |communication union|
// The idle breakdown per stream follows HTA's get_idle_time_breakdown.
//
// Cost, for a rank of n events on s streams (stored sorted by start): classUnions() is one pass per
// stream, then the streams' unions merged one by one, O(n x s) at worst (s is a handful);
// sweepClassStates() walks the four class unions once, linear in their sizes (with an
// EnergyIntegral each boundary costs O(log m) in the m power samples); breakdownRank() and
// streamIdle() are linear in the events.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "loaders/core/run_model.h"

namespace wl {

class EnergyIntegral;

// Unions of one rank's event intervals by class, clipped to the range.
struct ClassUnions {
  IntervalSet all, compute, communication, memory, other;
};
ClassUnions classUnions(const std::vector<std::span<const KernelEvent>>& streams, TimeRange range);

// The rank's time split by which classes run: state bit 0 compute, 1 communication, 2 memory,
// 3 other (so state 0b0011 is compute overlapped with communication). One sweep over the class
// unions gives every HTA number at once, and with a power series the energy of each state.
struct ClassStateTotals {
  std::array<int64_t, 16> ns{};
  std::array<double, 16> joules{};
  bool has_energy = false;

  // Time (or energy) of the states that have every bit of `all` and none of `none`.
  int64_t nsWhere(unsigned all, unsigned none = 0) const;
  double joulesWhere(unsigned all, unsigned none = 0) const;
};
inline constexpr unsigned kStateCompute = 1, kStateComm = 2, kStateMemory = 4, kStateOther = 8;
ClassStateTotals sweepClassStates(const ClassUnions& u, const EnergyIntegral* power = nullptr);

// HTA's idle breakdown of one stream: the gap before each kernel (its start minus the previous
// kernel's end, by start order) is kernel-wait when under kernelWaitNs and "other" otherwise.
// HTA's third category, host-wait, needs the CPU launch time of each kernel, which the run
// format does not keep: host-wait time is inside "other". Negative gaps (overlaps) count 0.
struct StreamIdle {
  int64_t stream = 0;
  uint64_t events = 0;
  int64_t busy_ns = 0;  // union of the stream's events
  int64_t idle_ns = 0;  // sum of the gaps between consecutive events
  int64_t kernel_wait_ns = 0;
  int64_t other_wait_ns = 0;
  uint64_t gaps = 0;
};
StreamIdle streamIdle(std::span<const KernelEvent> events, int64_t stream, TimeRange range,
                      int64_t kernelWaitNs);

struct RankBreakdown {
  int rank = 0;
  int gpu = -1;
  uint64_t kernels = 0;  // every GPU event overlapping the range (kernels, memcpy, memset, other)
  uint64_t comm_kernels = 0;
  uint64_t compute_kernels = 0;
  uint64_t memory_ops = 0;
  int64_t first_ns = -1;  // first event start (clipped); -1 when the rank has no event in range
  int64_t last_ns = -1;
  int64_t span_ns = 0;
  int64_t busy_ns = 0;  // |union of all events|
  int64_t idle_ns = 0;
  int64_t compute_ns = 0;
  int64_t non_compute_ns = 0;
  int64_t comm_ns = 0;
  int64_t exposed_comm_ns = 0;
  int64_t memory_ns = 0;
  int64_t exposed_memory_ns = 0;  // memory union minus (compute + communication)
  int64_t overlap_ns = 0;         // |communication ∩ compute|
  double overlap_ratio = kNaN;    // NaN when the rank has no communication
  std::vector<StreamIdle> streams;
};

// The breakdown of one rank from its streams' events (each sorted by start), given their class
// unions and state totals.
RankBreakdown breakdownRank(int rank, const std::vector<std::span<const KernelEvent>>& streams,
                            const std::vector<int64_t>& streamIds, TimeRange range,
                            int64_t kernelWaitNs, const ClassUnions& unions,
                            const ClassStateTotals& states);
// The same, computing the unions and states.
RankBreakdown breakdownRank(int rank, const std::vector<std::span<const KernelEvent>>& streams,
                            const std::vector<int64_t>& streamIds, TimeRange range,
                            int64_t kernelWaitNs);

}  // namespace wl
