// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Where every rank sits and which process groups it belongs to.
//
// Ranks follow Megatron-LM's default order (tensor parallel fastest, then data parallel, then
// pipeline): rank = tp + TP * (dp + DP * pp); expert-parallel groups are runs of EP consecutive
// data-parallel ranks. Rank r drives GPU r; GPU r is local GPU r % G of node r / G. Packages (MI250
// OAMs, two GCDs each) sit in rows from the front of the chassis to the back: the slot of a GPU is
// its row, and a package breathes the air its upstream neighbour in the same column has heated.
//
// Process groups get numeric names in creation order, as PyTorch names them, and Megatron's
// descriptions. A lockstep unit is the set of ranks that synchronize inside a compute phase: the
// tensor-parallel group, times the expert-parallel group for MoE, times the data-parallel group
// for FSDP. Units are what the engine schedules.

#include <string>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/sim/sim_config.h"

namespace wl::sim {

enum class GroupKind : uint8_t {
  Tp,             // tensor parallel
  Dp,             // data parallel (dense gradients, FSDP shards)
  Pp,             // the whole pipeline (for descriptions)
  Ep,             // expert parallel (all-to-all)
  ExpertDp,       // expert data parallel (expert gradients)
  ModelParallel,  // tp x pp with the same dp rank (gradient norm)
  Embedding,      // first and last stage (tied embeddings)
  P2pPair,        // stage s and s+1 with the same tp and dp rank
};
inline constexpr int kGroupKinds = 8;

struct ProcessGroup {
  GroupKind kind = GroupKind::Tp;
  std::string name;  // "12"
  std::string desc;  // "TENSOR_MODEL_PARALLEL_GROUP"
  std::vector<int> ranks;
  std::string ranksText;  // "[0, 1, 2, 3]"
  // Placement, for the communication model.
  bool crossesNodes = false;
  bool withinPackage = false;  // all members on one package (MI250 GCD pair)
  int nodes = 1;               // nodes its members sit on
  // Across nodes: the network bandwidth the group gets at the node where it gets least: the sum
  // over the NICs its members there use of the NIC's speed / the groups of the same kind that
  // cross nodes through that NIC. 0 inside a node.
  double networkGbps = 0;
};

struct RankCoord {
  int tp = 0, dp = 0, pp = 0;
  int ep = 0;       // index inside its expert-parallel group
  int epBlock = 0;  // which expert-parallel group along dp
};

struct Unit {
  int stage = 0;
  int block = 0;             // index of the unit within its stage
  std::vector<int> members;  // ranks, tp fastest
};

struct GpuPlacement {
  int node = 0, local = 0, package = 0, slot = 0;
  int nic = 0;               // the node's NIC this GPU's inter-node traffic leaves through
  int upstreamPackage = -1;  // global package whose exhaust this one breathes, -1 at the front
};

class Topology {
 public:
  explicit Topology(const SimConfig& c);

  int world() const { return world_; }
  int tp() const { return tp_; }
  int pp() const { return pp_; }
  int dp() const { return dp_; }
  int ep() const { return ep_; }
  RankCoord coord(int rank) const;
  int rankOf(int tpRank, int dpRank, int ppRank) const;

  const GpuPlacement& placement(int gpu) const { return placement_[static_cast<size_t>(gpu)]; }
  int packages() const { return packages_; }
  // GPUs of a package, ascending.
  const std::vector<int>& packageGpus(int package) const {
    return packageGpus_[static_cast<size_t>(package)];
  }
  std::vector<GpuInfo> gpuInfos(const SimConfig& c) const;
  std::vector<RankInfo> rankInfos() const;

  const std::vector<ProcessGroup>& groups() const { return groups_; }
  // The group of a kind that holds a rank, -1 if none (P2pPair: the pair with the next stage).
  int groupOf(GroupKind kind, int rank) const {
    return groupOf_[static_cast<size_t>(kind)][static_cast<size_t>(rank)];
  }
  // The pair group with the previous stage, -1 on the first stage.
  int p2pPrevOf(int rank) const { return p2pPrev_[static_cast<size_t>(rank)]; }
  // The placement-wise worst group of a kind on a stage (the one communication is timed by).
  const ProcessGroup* worstGroup(GroupKind kind, int stage) const;

  const std::vector<Unit>& units() const { return units_; }
  int unitsPerStage() const { return unitsPerStage_; }
  int unitOf(int rank) const { return unitOf_[static_cast<size_t>(rank)]; }
  int unitAt(int stage, int block) const { return stage * unitsPerStage_ + block; }

 private:
  void addGroup(GroupKind kind, std::string desc, std::vector<int> ranks);
  void placeGroups();

  int world_, gpn_, tp_, pp_, dp_, ep_, gcds_;
  int nics_;
  double nicGbps_;
  int packages_ = 0;
  std::vector<GpuPlacement> placement_;
  std::vector<std::vector<int>> packageGpus_;
  std::vector<ProcessGroup> groups_;
  std::vector<std::vector<int>> groupOf_;
  std::vector<int> p2pPrev_;
  std::vector<Unit> units_;
  std::vector<int> unitOf_;
  int unitsPerStage_ = 1;
};

}  // namespace wl::sim
