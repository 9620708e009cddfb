// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel traces of the traced ranks.
//
// The engine runs whole phases; for a traced unit the expander lays the phase's KernelSpecs out
// one by one for every member rank, as the GPU would have run them: compute and memory kernels
// back to back (with a launch gap) at the member's own clock, taken from the clock history of the
// phase; a collective inside the unit starts on each member when that member arrives and ends when
// the last one has arrived plus the transfer time, so a slow member shows as the late arrival of
// its group. The walk's end is mapped onto the phase end the engine computed (the two differ only
// by how a clock change inside a kernel is attributed). Communication ops between units (pipeline
// send/recv, gradient reduction, embedding and norm all-reduces) become kernels from the rank's
// arrival to the op's end.
//
// Every communication kernel gets a CollectiveInfo whose process group and sequence number are the
// same on every member of the group, so analyses can match collectives across ranks.
//
// Events are spilled per track (rank x stream) and handed to RunWriter at the end.

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"
#include "loaders/sim/rng.h"
#include "loaders/sim/scratch_store.h"
#include "loaders/sim/topology.h"
#include "loaders/sim/work_model.h"

namespace wl::sim {

class KernelSink {
 public:
  KernelSink(const Topology& topo, const std::vector<int>& tracedRanks, ScratchFile& scratch,
             StringTable& names);

  bool traced(int rank) const { return tracedIndex_[static_cast<size_t>(rank)] >= 0; }
  // Records one kernel; coll may be null. Times in seconds since the run start.
  void emit(int rank, double startS, double endS, const KernelSpec& k, float clockMhz, int64_t seq);
  void annotate(int rank, double startS, double endS, uint32_t name);

  uint64_t kernels() const { return kernels_; }
  // Tracks in a fixed order (traced rank, then stream); empty ones are skipped by the caller.
  size_t trackSlots() const { return tracedRanks_.size() * kStreams.size(); }
  KernelTrack takeTrack(size_t slot, int64_t startNs);
  std::vector<Annotation> takeAnnotations(int64_t startNs);

  static constexpr std::array<int64_t, 5> kStreams = {
      kComputeStream, kTensorParallelStream, kPipelineStream, kDataParallelStream, kExpertStream};

 private:
  struct Kernel {
    int64_t startNs;
    int64_t durNs;
    uint32_t name;
    float clockMhz;
    uint8_t cls, kind;
    uint8_t pad[6];
  };
  struct Collective {
    uint32_t event;
    uint32_t collective;
    int64_t inNelems, outNelems;
    int32_t groupSize;
    uint32_t dtype, pgName, pgDesc, pgRanks;
    uint32_t pad;
    int64_t seq;
  };
  static_assert(sizeof(Kernel) == 32);
  size_t slotOf(int rank, int64_t stream) const;
  int groupFor(CommScope scope, int rank) const;
  const std::array<uint32_t, 3>& groupStrings(int group);

  const Topology& topo_;
  StringTable& names_;
  std::vector<int> tracedRanks_;
  std::vector<int> tracedIndex_;
  RecordSpill<Kernel> kernelSpill_;
  RecordSpill<Collective> collectiveSpill_;
  std::vector<uint32_t> eventCount_;
  std::vector<std::array<uint32_t, 3>> groupStrings_;  // name, desc, ranks per group
  std::vector<Annotation> annotations_;                // start/dur relative until taken
  uint64_t kernels_ = 0;
};

// What the expander needs to know about one phase of a unit.
struct PhaseLayout {
  const OpCost* cost = nullptr;
  double startS = 0, endS = 0;
  // The simulation stopped here inside the phase: kernels that start later are not emitted,
  // those running end here (endS is where the phase would have ended).
  double cutS = std::numeric_limits<double>::infinity();
  const std::vector<int>* members = nullptr;
  const std::vector<double>* factor = nullptr;        // per member: compute time factor
  const std::vector<double>* expertFactor = nullptr;  // per member: expert load factor
  const std::vector<double>* historyS = nullptr;      // clock history times, ascending
  const std::vector<float>* historyMhz = nullptr;     // [point][member]
  double maxClockMhz = 0;
  int64_t iteration = 0;
  const std::array<int, kCommScopes>* seqBase = nullptr;
  const std::array<int, kCommScopes>* perIteration = nullptr;
  // Key of the per-kernel duration noise (seed, unit, op index).
  uint64_t seed = 0, unit = 0, op = 0;
};

// Relative standard deviation of a single kernel's duration around its model value (the phase's
// total is preserved by the mapping onto the phase end).
inline constexpr double kKernelNoise = 0.015;

class KernelExpander {
 public:
  explicit KernelExpander(KernelSink& sink) : sink_(sink) {}

  // Lays out the kernels of a compute phase on the traced members.
  void expandPhase(const PhaseLayout& p);
  // Kernels of a communication op on the traced members of a unit: the first starts at the
  // unit's arrival, the last ends at endS, the others run back to back before it.
  void expandComm(const OpCost& cost, const std::vector<int>& members, double arrivalS, double endS,
                  const std::vector<double>& clockMhz, int64_t iteration,
                  const std::array<int, kCommScopes>& seqBase,
                  const std::array<int, kCommScopes>& perIteration);

 private:
  struct Placed {
    uint32_t member;
    uint32_t kernel;
    double start, end;
    float clock;
  };
  KernelSink& sink_;
  std::vector<double> cursor_;
  std::vector<size_t> hist_;
  std::vector<Placed> placed_;
};

// Sequence number of kernel k of an op within its process group.
inline int64_t collectiveSeq(const KernelSpec& k, int64_t iteration,
                             const std::array<int, kCommScopes>& seqBase,
                             const std::array<int, kCommScopes>& perIteration) {
  const auto s = static_cast<size_t>(k.scope);
  return iteration * perIteration[s] + seqBase[s] + k.scopeIndex;
}

}  // namespace wl::sim
