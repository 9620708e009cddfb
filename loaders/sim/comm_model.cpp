// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/comm_model.h"

#include <algorithm>

namespace wl::sim {

double groupBandwidth(const ProcessGroup& g, const PlatformProfile& p) {
  const double link =
      (g.withinPackage ? p.intra_package_gbs : p.intra_node_gbs) * 1e9 * p.link_efficiency;
  if (!g.crossesNodes) return link;
  const double nic = p.inter_node_gbps * 1e9 / 8.0 * p.network_efficiency /
                     static_cast<double>(std::max(1, g.nicSharers));
  return std::min(link, nic);
}

double collectiveSeconds(CollectiveKind kind, double bytes, const ProcessGroup& g,
                         const PlatformProfile& p) {
  const double n = static_cast<double>(std::max<size_t>(1, g.ranks.size()));
  if (n <= 1) return 0.0;
  const double bw = groupBandwidth(g, p);
  const double base = (g.crossesNodes ? p.inter_latency_us : p.intra_latency_us) * 1e-6;
  const double step = p.step_latency_us * 1e-6 * (g.crossesNodes ? 4.0 : 1.0);
  switch (kind) {
    case CollectiveKind::AllReduce:
      return base + 2.0 * (n - 1) * step + 2.0 * (n - 1) / n * bytes / bw;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
      return base + (n - 1) * step + (n - 1) / n * bytes / bw;
    case CollectiveKind::AllToAll:
      return base + (n - 1) * step + (n - 1) / n * bytes / bw;
    case CollectiveKind::SendRecv:
      return base + bytes / bw;
  }
  return base;
}

}  // namespace wl::sim
