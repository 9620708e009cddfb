// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/topology.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "loaders/sim/rng.h"

namespace wl::sim {

Topology::Topology(const SimConfig& c)
    : world_(c.world()),
      gpn_(c.gpusPerNode),
      tp_(c.tp),
      pp_(c.pp),
      dp_(c.dp),
      ep_(c.ep),
      gcds_(c.platform.gcds_per_package),
      nics_(std::clamp(c.nics(), 1, c.gpusPerNode)),
      nicGbps_(c.nicGbps()) {
  // Placement: packages in rows from the front of the chassis to the back.
  const int packagesPerNode = gpn_ / gcds_;
  const int rows = std::clamp(c.platform.rows_per_node, 1, std::max(1, packagesPerNode));
  const int perRow = (packagesPerNode + rows - 1) / rows;
  packages_ = world_ / gcds_;
  placement_.resize(static_cast<size_t>(world_));
  packageGpus_.resize(static_cast<size_t>(packages_));
  for (int g = 0; g < world_; ++g) {
    GpuPlacement& p = placement_[static_cast<size_t>(g)];
    p.node = g / gpn_;
    p.local = g % gpn_;
    const int localPackage = p.local / gcds_;
    p.package = p.node * packagesPerNode + localPackage;
    const int row = localPackage / perRow;
    const int column = localPackage % perRow;
    p.slot = row;
    p.nic = p.local * nics_ / gpn_;
    p.upstreamPackage = row > 0 ? p.node * packagesPerNode + (row - 1) * perRow + column : -1;
    packageGpus_[static_cast<size_t>(p.package)].push_back(g);
  }

  groupOf_.assign(kGroupKinds, std::vector<int>(static_cast<size_t>(world_), -1));
  p2pPrev_.assign(static_cast<size_t>(world_), -1);

  // Groups in a fixed creation order so that names are stable.
  for (int p = 0; p < pp_; ++p)
    for (int d = 0; d < dp_; ++d) {
      std::vector<int> r;
      for (int t = 0; t < tp_; ++t)
        r.push_back(rankOf(t, d, p));
      addGroup(GroupKind::Tp, "TENSOR_MODEL_PARALLEL_GROUP", std::move(r));
    }
  for (int p = 0; p < pp_; ++p)
    for (int t = 0; t < tp_; ++t) {
      std::vector<int> r;
      for (int d = 0; d < dp_; ++d)
        r.push_back(rankOf(t, d, p));
      addGroup(GroupKind::Dp, "DATA_PARALLEL_GROUP", std::move(r));
    }
  for (int d = 0; d < dp_; ++d)
    for (int t = 0; t < tp_; ++t) {
      std::vector<int> r;
      for (int p = 0; p < pp_; ++p)
        r.push_back(rankOf(t, d, p));
      addGroup(GroupKind::Pp, "PIPELINE_MODEL_PARALLEL_GROUP", std::move(r));
    }
  if (c.model.moe()) {
    for (int p = 0; p < pp_; ++p)
      for (int b = 0; b < dp_ / ep_; ++b)
        for (int t = 0; t < tp_; ++t) {
          std::vector<int> r;
          for (int e = 0; e < ep_; ++e)
            r.push_back(rankOf(t, b * ep_ + e, p));
          addGroup(GroupKind::Ep, "EXPERT_MODEL_PARALLEL_GROUP", std::move(r));
        }
    for (int p = 0; p < pp_; ++p)
      for (int e = 0; e < ep_; ++e)
        for (int t = 0; t < tp_; ++t) {
          std::vector<int> r;
          for (int b = 0; b < dp_ / ep_; ++b)
            r.push_back(rankOf(t, b * ep_ + e, p));
          addGroup(GroupKind::ExpertDp, "EXPERT_DATA_PARALLEL_GROUP", std::move(r));
        }
  }
  for (int d = 0; d < dp_; ++d) {
    std::vector<int> r;
    for (int p = 0; p < pp_; ++p)
      for (int t = 0; t < tp_; ++t)
        r.push_back(rankOf(t, d, p));
    addGroup(GroupKind::ModelParallel, "MODEL_PARALLEL_GROUP", std::move(r));
  }
  if (c.model.tied_embeddings && pp_ > 1)
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t)
        addGroup(GroupKind::Embedding, "EMBEDDING_GROUP", {rankOf(t, d, 0), rankOf(t, d, pp_ - 1)});
  for (int p = 0; p + 1 < pp_; ++p)
    for (int d = 0; d < dp_; ++d)
      for (int t = 0; t < tp_; ++t) {
        const int a = rankOf(t, d, p), b = rankOf(t, d, p + 1);
        addGroup(GroupKind::P2pPair, "PIPELINE_P2P", {a, b});
        p2pPrev_[static_cast<size_t>(b)] = static_cast<int>(groups_.size()) - 1;
        groupOf_[static_cast<size_t>(GroupKind::P2pPair)][static_cast<size_t>(b)] = -1;
        groupOf_[static_cast<size_t>(GroupKind::P2pPair)][static_cast<size_t>(a)] =
            static_cast<int>(groups_.size()) - 1;
      }
  placeGroups();

  // Lockstep units.
  const int unitDp = c.fsdp ? dp_ : ep_;
  unitsPerStage_ = dp_ / unitDp;
  unitOf_.assign(static_cast<size_t>(world_), -1);
  for (int p = 0; p < pp_; ++p)
    for (int b = 0; b < unitsPerStage_; ++b) {
      Unit u;
      u.stage = p;
      u.block = b;
      for (int e = 0; e < unitDp; ++e)
        for (int t = 0; t < tp_; ++t)
          u.members.push_back(rankOf(t, b * unitDp + e, p));
      for (int r : u.members)
        unitOf_[static_cast<size_t>(r)] = static_cast<int>(units_.size());
      units_.push_back(std::move(u));
    }
}

RankCoord Topology::coord(int rank) const {
  RankCoord rc;
  rc.tp = rank % tp_;
  rc.dp = (rank / tp_) % dp_;
  rc.pp = rank / (tp_ * dp_);
  rc.ep = rc.dp % ep_;
  rc.epBlock = rc.dp / ep_;
  return rc;
}

int Topology::rankOf(int tpRank, int dpRank, int ppRank) const {
  return tpRank + tp_ * (dpRank + dp_ * ppRank);
}

void Topology::addGroup(GroupKind kind, std::string desc, std::vector<int> ranks) {
  ProcessGroup g;
  g.kind = kind;
  // Name 0 is the default (world) group; the others count up in creation order.
  g.name = fmt::format("{}", groups_.size() + 1);
  g.desc = std::move(desc);
  g.ranksText = fmt::format("[{}]", fmt::join(ranks, ", "));
  g.ranks = std::move(ranks);
  const int id = static_cast<int>(groups_.size());
  if (kind != GroupKind::P2pPair)
    for (int r : g.ranks)
      groupOf_[static_cast<size_t>(kind)][static_cast<size_t>(r)] = id;
  groups_.push_back(std::move(g));
}

void Topology::placeGroups() {
  // Groups of one kind run their collectives at the same time; those that leave a node share the
  // NICs their members use.
  std::map<std::tuple<int, int, int>, int> crossingPerNic;  // (kind, node, nic) -> groups
  for (ProcessGroup& g : groups_) {
    std::set<int> nodes, packages;
    std::set<std::pair<int, int>> nics;
    for (int r : g.ranks) {
      nodes.insert(placement(r).node);
      packages.insert(placement(r).package);
      nics.insert({placement(r).node, placement(r).nic});
    }
    g.nodes = static_cast<int>(nodes.size());
    g.crossesNodes = nodes.size() > 1;
    g.withinPackage = packages.size() == 1 && g.ranks.size() > 1;
    if (g.crossesNodes)
      for (const auto& [node, nic] : nics)
        ++crossingPerNic[{static_cast<int>(g.kind), node, nic}];
  }
  for (ProcessGroup& g : groups_) {
    if (!g.crossesNodes) continue;
    std::map<int, double> perNode;  // node -> Gb/s the group gets there
    std::set<std::pair<int, int>> nics;
    for (int r : g.ranks)
      nics.insert({placement(r).node, placement(r).nic});
    for (const auto& [node, nic] : nics)
      perNode[node] += nicGbps_ / crossingPerNic[{static_cast<int>(g.kind), node, nic}];
    g.networkGbps = std::numeric_limits<double>::infinity();
    for (const auto& [node, gbps] : perNode)
      g.networkGbps = std::min(g.networkGbps, gbps);
  }
}

const ProcessGroup* Topology::worstGroup(GroupKind kind, int stage) const {
  const ProcessGroup* worst = nullptr;
  for (const ProcessGroup& g : groups_) {
    if (g.kind != kind) continue;
    bool onStage = false;
    for (int r : g.ranks)
      onStage = onStage || coord(r).pp == stage;
    if (!onStage) continue;
    // Worse: across nodes, then less network bandwidth, then outside one package.
    auto worse = [](const ProcessGroup& a, const ProcessGroup& b) {
      if (a.crossesNodes != b.crossesNodes) return a.crossesNodes;
      if (a.crossesNodes && a.networkGbps != b.networkGbps) return a.networkGbps < b.networkGbps;
      return !a.withinPackage && b.withinPackage;
    };
    if (!worst || worse(g, *worst)) worst = &g;
  }
  return worst;
}

std::vector<GpuInfo> Topology::gpuInfos(const SimConfig& c) const {
  std::vector<GpuInfo> out;
  out.reserve(static_cast<size_t>(world_));
  const PlatformProfile& p = c.platform;
  for (int g = 0; g < world_; ++g) {
    const GpuPlacement& pl = placement(g);
    GpuInfo gi;
    gi.id = g;
    gi.node = pl.node;
    gi.local_index = pl.local;
    gi.rank = g;
    gi.hostname = fmt::format("sim-node-{:03}", pl.node);
    gi.device_name = p.device_name;
    Rng rng = Rng::keyed(c.seed, RandomPurpose::GpuVariation, static_cast<uint64_t>(g), 99);
    const uint64_t a = rng.next(), b = rng.next();
    gi.uuid = fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                          a & 0xffff, b >> 48, b & 0xffffffffffffull);
    gi.power_limit_w = static_cast<float>(c.powerLimit());
    gi.max_sm_clock_mhz = static_cast<float>(p.max_sm_clock_mhz);
    gi.max_mem_clock_mhz = static_cast<float>(p.max_mem_clock_mhz);
    gi.slowdown_temp_c = static_cast<float>(p.slowdown_temp_c);
    gi.shutdown_temp_c = static_cast<float>(p.shutdown_temp_c);
    gi.slot = pl.slot;
    gi.package = pl.package;
    out.push_back(std::move(gi));
  }
  return out;
}

std::vector<RankInfo> Topology::rankInfos() const {
  std::vector<RankInfo> out;
  for (int r = 0; r < world_; ++r) {
    RankInfo ri;
    ri.rank = r;
    ri.gpu = r;
    ri.hostname = fmt::format("sim-node-{:03}", placement(r).node);
    ri.pid = 10000 + r;
    ri.source = "(simulated)";
    out.push_back(std::move(ri));
  }
  return out;
}

}  // namespace wl::sim
