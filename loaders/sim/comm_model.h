// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Communication time of one collective from its message size and where its members sit, the way
// NCCL (and RCCL) plan it (docs/simulator.md, "Communication").
//
// Bandwidth: the group's slowest link: NVLink / xGMI inside a node (the package link between the
// GCDs of one MI250), or for a group that spans nodes the network bandwidth its members' NICs give
// it at the node where it has least (each NIC shared by every group of the same kind that crosses
// nodes through it at the same time).
//
// Algorithms: a ring (all-reduce moves 2 (n-1)/n of the message over the bottleneck, all-gather and
// reduce-scatter (n-1)/n of the full buffer, all-to-all (n-1)/n of what each rank sends) with
// 2 (n-1) or (n-1) latency steps; for an all-reduce across nodes also a tree (NCCL's double binary
// tree between nodes, a chain inside each: 2 S over the bottleneck at a lower efficiency, but only
// 2 (log2 N + g - 1) latency steps); send/recv moves the message once over fewer channels. The
// protocol is LL (lowest latency, half the bandwidth), LL128 or Simple (full bandwidth, highest
// latency). Like NCCL's tuner, the plan takes the (algorithm, protocol) pair with the lowest
// predicted time.
//
// Chunking: a transfer proceeds in pipelined chunks per channel; a step that carries c bytes per
// rank reaches c / (c + c_half) of the bandwidth (c_half: chunk_half_*_kib, inside a node or
// across nodes), so small messages, or large ones split over many ranks, use the links poorly. The
// chunk overhead is the same for every protocol.

#include "loaders/sim/platform_profile.h"
#include "loaders/sim/topology.h"

namespace wl::sim {

enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
enum class Algorithm : uint8_t { Ring, Tree };
enum class Protocol : uint8_t { LL, LL128, Simple };

struct CollectivePlan {
  double seconds = 0;
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  double bytesPerRank = 0;  // what each member sends (and receives), bytes
  double netFraction = 0;   // the share of those bytes that crosses nodes
};

// Bytes per second the bottleneck link of this group offers one collective, before the protocol
// and chunking factors.
double groupBandwidth(const ProcessGroup& g, const PlatformProfile& p);

// The plan of one collective of `bytes` (all-reduce: the buffer; all-gather / reduce-scatter: the
// full gathered buffer; all-to-all: what each rank sends; send/recv: the message).
CollectivePlan planCollective(CollectiveKind kind, double bytes, const ProcessGroup& g,
                              const PlatformProfile& p);

inline double collectiveSeconds(CollectiveKind kind, double bytes, const ProcessGroup& g,
                                const PlatformProfile& p) {
  return planCollective(kind, bytes, g, p).seconds;
}

const char* algorithmName(Algorithm a);  // "RING", "TREE"
const char* protocolName(Protocol p);    // "LL", "LL128", "SIMPLE"

}  // namespace wl::sim
