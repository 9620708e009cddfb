// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Communication time of one collective from its message size and where its members sit.
//
// Ring algorithms (as NCCL and RCCL use for large messages): an all-reduce moves 2 (n-1)/n of the
// message over the slowest link of the ring, all-gather and reduce-scatter (n-1)/n of the full
// buffer, all-to-all (n-1)/n of what each rank sends, send/recv the whole message. The slowest
// link is NVLink / xGMI inside a node (the package link between the GCDs of one MI250), or the
// node's InfiniBand interface, shared by every group of the same kind that leaves the node at the
// same time. A fixed latency per collective and per ring step is added.

#include "sim/platform_profile.h"
#include "sim/topology.h"

namespace wl::sim {

enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };

// Bytes per second the bottleneck link of this group offers one collective.
double groupBandwidth(const ProcessGroup& g, const PlatformProfile& p);

// Seconds for one collective of `bytes` (all-reduce: the buffer; all-gather / reduce-scatter: the
// full gathered buffer; all-to-all: what each rank sends; send/recv: the message).
double collectiveSeconds(CollectiveKind kind, double bytes, const ProcessGroup& g,
                         const PlatformProfile& p);

}  // namespace wl::sim
