// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/comm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace wl::sim {
namespace {

// NCCL's protocols: LL moves 8 bytes of data per 16 (flags), LL128 120 of 128, Simple all of it;
// each step of LL128 and Simple costs more latency (docs/simulator.md).
struct ProtocolCost {
  Protocol protocol;
  double bandwidth;  // fraction of the link bandwidth
  double latency;    // multiplier of the per-step latency
};
constexpr ProtocolCost kProtocols[] = {
    {Protocol::LL, 0.5, 1.0}, {Protocol::LL128, 0.9375, 1.5}, {Protocol::Simple, 1.0, 3.0}};

double chunkEfficiency(double chunkBytes, double halfBytes) {
  return chunkBytes <= 0 ? 0.0 : chunkBytes / (chunkBytes + halfBytes);
}

}  // namespace

const char* algorithmName(Algorithm a) {
  return a == Algorithm::Tree ? "TREE" : "RING";
}

const char* protocolName(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return "LL";
    case Protocol::LL128:
      return "LL128";
    case Protocol::Simple:
      break;
  }
  return "SIMPLE";
}

double groupBandwidth(const ProcessGroup& g, const PlatformProfile& p) {
  const double link =
      (g.withinPackage ? p.intra_package_gbs : p.intra_node_gbs) * 1e9 * p.link_efficiency;
  if (!g.crossesNodes) return link;
  return std::min(link, g.networkGbps * 1e9 / 8.0 * p.network_efficiency);
}

CollectivePlan planCollective(CollectiveKind kind, double bytes, const ProcessGroup& g,
                              const PlatformProfile& p) {
  CollectivePlan best;
  const double n = static_cast<double>(std::max<size_t>(1, g.ranks.size()));
  if (n <= 1 || bytes <= 0) return best;
  const double bw = groupBandwidth(g, p);
  const double base = (g.crossesNodes ? p.inter_latency_us : p.intra_latency_us) * 1e-6;
  const double stepIntra = p.step_latency_us * 1e-6;
  const double stepInter = stepIntra * 4.0;
  const double step = g.crossesNodes ? stepInter : stepIntra;
  const double halfBytes =
      (g.crossesNodes ? p.chunk_half_inter_kib : p.chunk_half_intra_kib) * 1024;
  const double nodes = std::max(1, g.nodes);
  const double perNode = n / nodes;  // members per node
  best.seconds = std::numeric_limits<double>::infinity();

  // (latency steps, bytes over the bottleneck, bytes per step per rank, bandwidth factor)
  struct Shape {
    Algorithm algorithm;
    double steps, volume, chunk, factor;
  };
  Shape shapes[2];
  int count = 1;
  switch (kind) {
    case CollectiveKind::AllReduce:
      shapes[0] = {Algorithm::Ring, 2.0 * (n - 1) * step, 2.0 * (n - 1) / n * bytes, bytes / n,
                   1.0};
      if (g.crossesNodes && nodes >= 2)
        shapes[count++] = {
            Algorithm::Tree,
            2.0 * (std::ceil(std::log2(nodes)) * stepInter + (perNode - 1) * stepIntra),
            2.0 * bytes, bytes / 2.0, p.tree_efficiency};
      best.bytesPerRank = 2.0 * (n - 1) / n * bytes;
      break;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
      shapes[0] = {Algorithm::Ring, (n - 1) * step, (n - 1) / n * bytes, bytes / n, 1.0};
      best.bytesPerRank = (n - 1) / n * bytes;
      break;
    case CollectiveKind::SendRecv:
      // Point-to-point: fewer channels than a collective gets (p2p_bandwidth_frac).
      shapes[0] = {Algorithm::Ring, 0.0, bytes, bytes, p.p2p_bandwidth_frac};
      best.bytesPerRank = bytes;
      break;
  }
  for (int i = 0; i < count; ++i) {
    const Shape& sh = shapes[i];
    for (const ProtocolCost& pc : kProtocols) {
      // The chunk overhead (a step's fixed cost, c_half / bandwidth per step) does not depend on
      // the protocol: at full protocol bandwidth the two terms give chunk efficiency c/(c+c_half).
      const double wire = sh.volume / (bw * sh.factor);
      const double t = base + sh.steps * pc.latency + wire / pc.bandwidth +
                       wire * (1.0 / chunkEfficiency(sh.chunk, halfBytes) - 1.0);
      if (t < best.seconds) {
        best.seconds = t;
        best.algorithm = sh.algorithm;
        best.protocol = pc.protocol;
      }
    }
  }
  // Inside a node the ring leaves it never; across nodes one edge per node and ring (of the
  // members there) carries the traffic out, so each member sends 1 / members-per-node of its
  // bytes over the network (all of them when it is alone on its node).
  best.netFraction = g.crossesNodes ? 1.0 / perNode : 0.0;
  return best;
}

}  // namespace wl::sim
