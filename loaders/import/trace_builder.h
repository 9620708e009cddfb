// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Collects the device events of one rank into kernel tracks (one per device and stream), the way
// every kernel-trace importer needs it: classifies each event (core/kernel_class.h), attaches
// NCCL/RCCL collective metadata (from the trace's arguments, or from the kernel name when the
// trace has none), and numbers the collectives of each process group so that the same collective
// can be matched across ranks (CollectiveInfo::seq).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

  void addEvent(int device, int64_t stream, int64_t start_ns, int64_t dur_ns, std::string_view name,
                GpuEventKind kind, int64_t correlation, const CollectiveArgs* collective = nullptr);

  size_t events() const { return events_; }
  // The device most events ran on, or -1.
  int mainDevice() const;

  // Shifts every event by offset_ns, numbers the collectives (per process group, in start order
  // across the rank's streams) and hands the tracks over, ordered by device and stream.
  std::vector<KernelTrack> finish(int64_t offset_ns = 0);

 private:
  KernelTrack& trackFor(int device, int64_t stream);

  StringTable& strings_;
  std::vector<KernelTrack> tracks_;
  size_t last_ = 0;
  size_t events_ = 0;
};

}  // namespace wl::import
