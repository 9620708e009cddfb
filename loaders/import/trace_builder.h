// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Collects the device events of one rank into kernel tracks (one per device and stream), the way
// every kernel-trace importer needs it: classifies each event (core/kernel_class.h), attaches
// NCCL/RCCL collective metadata (from the trace's arguments, or from the kernel name when the
// trace has none), and numbers the collectives of each process group so that the same collective
// can be matched across ranks (CollectiveInfo::seq).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/kernel_spool.h"
#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"

namespace wl::import {

// Collective arguments as a trace gives them (Kineto "Collective name", "In msg nelems", ...).
struct CollectiveArgs {
  bool present = false;  // the trace attached collective metadata to the kernel
  std::string_view collective, dtype, pgName, pgDesc, pgRanks;
  int64_t inNelems = -1, outNelems = -1;
  int32_t groupSize = -1;
};

// "ncclKernel_AllReduce_RING_LL_Sum_float" -> "allreduce"; "ncclDevKernel_Generic" -> "".
std::string collectiveFromKernelName(std::string_view name);
// The data type named by an NCCL <= 2.18 kernel name ("..._Sum_int8" -> "int8"), or "".
std::string dtypeFromKernelName(std::string_view name);

class TraceBuilder {
 public:
  explicit TraceBuilder(StringTable& strings) : strings_(strings) {}

  // Keeps the events within the import's memory budget (core/kernel_spool.h): a track's events
  // are buffered until the buffers of the whole import pass half the budget, then every buffer of
  // this builder is sorted and spilled as a run. finish() hands over tracks whose events are in
  // KernelTrack::spilled (their tails stay in memory while the import holds less than a quarter
  // of the budget). Call before the first event; null: every event stays in memory.
  void setSpool(std::shared_ptr<KernelSpool> spool) { spool_ = std::move(spool); }

  void addEvent(int device, int64_t stream, int64_t start_ns, int64_t dur_ns, std::string_view name,
                GpuEventKind kind, int64_t correlation, const CollectiveArgs* collective = nullptr);

  size_t events() const { return events_; }
  // The device most events ran on, or -1.
  int mainDevice() const;

  // Shifts every event by offset_ns, numbers the collectives (per process group, in start order
  // across the rank's streams) and hands the tracks over, ordered by device and stream.
  std::vector<KernelTrack> finish(int64_t offset_ns = 0);
  // With a spool, after finish(): the events of each track finish() returned, in its order
  // (ImportedRank::spilled). Empty without a spool.
  std::vector<std::shared_ptr<SpilledKernels>> takeSpilled() { return std::move(spilled_); }

 private:
  // Per track with a spool: the events not yet spilled and the start of each collective.
  struct Pending {
    std::shared_ptr<SpilledKernels> spilled = std::make_shared<SpilledKernels>();
    std::vector<SpillRecord> buffer;
    std::vector<int64_t> collectiveStart;
  };

  size_t trackFor(int device, int64_t stream);
  uint64_t eventsIn(size_t track) const;
  void spill(Pending& p);
  void spillAll();
  void finishSpilled(int64_t offset_ns);

  StringTable& strings_;
  std::shared_ptr<KernelSpool> spool_;
  std::vector<KernelTrack> tracks_;
  std::vector<Pending> pending_;  // parallel to tracks_ when spool_ is set
  int64_t buffered_ = 0;          // bytes of this builder's buffers (counted in spool_->held())
  std::vector<std::shared_ptr<SpilledKernels>> spilled_;  // what finish() handed over
  size_t last_ = 0;
  size_t events_ = 0;
};

}  // namespace wl::import
