// SPDX-License-Identifier: GPL-3.0-or-later
// The fabric (loaders/sim/comm_model.h, docs/simulator.md "Communication"): byte counters against
// the collectives in the trace, NICs per node or per GPU, NCCL-like algorithm choice, chunk
// efficiency and SM contention.
#include <gtest/gtest.h>

#include <cmath>

#include "loaders/sim/comm_model.h"
#include "loaders/sim/topology.h"
#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

// The last value of a cumulative counter minus the first, undoing 32-bit wraps.
double counterDelta(const test::Series& s) {
  double total = 0;
  for (size_t i = 1; i < s.v.size(); ++i) {
    double d = s.v[i] - s.v[i - 1];
    if (d < 0) d += 4294967296.0;
    total += d;
  }
  return total;
}

TEST(Fabric, NvlinkCountersAddUpTheCollectivesOfTheTrace) {
  // Tensor parallel 2 x data parallel 4 on one node: every collective stays on NVLink. A ring
  // collective over n ranks sends 2 (n-1)/n of an all-reduce's buffer (reduce-scatter, all-gather:
  // (n-1)/n of the full buffer) from every member: summed over rank 0's communication kernels
  // (element counts and types from their NCCL metadata) that is its NVLink TX counter.
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 1, c.dp = 4;
  c.mbs = 1, c.gbs = 8;
  c.durationS = 0, c.iterations = 2;
  c.trace.ranks = sim::TraceSelection::Ranks::List;
  c.trace.rankList = {0};
  const auto run = test::simulateAndOpen(c, dir / "tp2dp4.h5");
  double expected = 0;
  for (const CollectiveRecord& r : run->collectives()) {
    const CollectiveInfo& ci = r.info;
    const double n = ci.group_size;
    const double elem = run->str(ci.dtype) == "Float" ? 4 : 2;
    const std::string kind = run->str(ci.collective);
    if (kind == "allreduce") expected += 2 * (n - 1) / n * ci.in_nelems * elem;
    if (kind == "allgather") expected += (n - 1) / n * ci.out_nelems * elem;
    if (kind == "reducescatter") expected += (n - 1) / n * ci.in_nelems * elem;
  }
  ASSERT_GT(expected, 1e9);
  const double tx = counterDelta(test::series(*run, 0, "nvlink_tx_kib")) * 1024;
  const double rx = counterDelta(test::series(*run, 0, "nvlink_rx_kib")) * 1024;
  EXPECT_NEAR(tx, expected, 1024.0 * 64);  // KiB counters: one KiB per collective at most
  EXPECT_NEAR(rx, expected, 1024.0 * 64);
  EXPECT_EQ(counterDelta(test::series(*run, 0, "net_tx_bytes")), 0.0);
  // PCIe carries the token ids of the first stage (and the labels of the last): 2 x 8 bytes per
  // token of every microbatch (one stage: both).
  const double tokens = 2.0 * c.mbs * c.seqLen * (c.gbs / (c.dp * c.mbs));
  EXPECT_NEAR(counterDelta(test::series(*run, 0, "pcie_rx_bytes")), tokens * 16, 1.0);
}

TEST(Fabric, OneNicPerGpuGivesDataParallelismAcrossNodesItsOwnLink) {
  // Data parallel 8 over 2 nodes of 4 GPUs with tensor parallel 4: the 4 data-parallel pairs
  // (one rank per node each) all-reduce the same bytes, through the node's one NIC (each pair
  // gets a quarter of it) or through their own.
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.nodes = 2, c.gpusPerNode = 4;
  c.tp = 4, c.pp = 1, c.dp = 2;
  c.mbs = 1, c.gbs = 2;
  c.durationS = 0, c.iterations = 2;
  const sim::Topology shared(c);
  c.nicsPerNode = 4;
  const sim::Topology railed(c);
  for (const auto* t : {&shared, &railed}) {
    const sim::ProcessGroup* dp = t->worstGroup(sim::GroupKind::Dp, 0);
    ASSERT_TRUE(dp->crossesNodes);
    EXPECT_DOUBLE_EQ(dp->networkGbps, t == &shared ? 25.0 : 100.0);
  }
  const auto fast = test::simulateAndOpen(c, dir / "railed.h5");
  c.nicsPerNode = 0;
  const auto slow = test::simulateAndOpen(c, dir / "shared.h5");
  auto iteration = [](const RunFile& run) {
    return static_cast<double>(run.iterations().back().end_ns - run.iterations().back().start_ns) *
           1e-9;
  };
  EXPECT_LT(iteration(*fast), iteration(*slow));
  // The same bytes leave every GPU either way: its data-parallel all-reduce (a pair: the whole
  // buffer once, 2 (n-1)/n = 1) of the 1.1 B / 4 local parameters in bf16, per iteration.
  const double netFast = counterDelta(test::series(*fast, 0, "net_tx_bytes"));
  const double netSlow = counterDelta(test::series(*slow, 0, "net_tx_bytes"));
  EXPECT_DOUBLE_EQ(netFast, netSlow);
  EXPECT_GT(netFast, 2 * 0.25 * 1.0e9 * 2);
  EXPECT_DOUBLE_EQ(counterDelta(test::series(*fast, 0, "pcie_tx_bytes")), netFast);
}

TEST(Fabric, SmallAllReducesAcrossManyNodesTakeTheTreeLargeOnesTheRing) {
  sim::SimConfig c = test::tinyConfig();
  c.nodes = 16, c.gpusPerNode = 8;
  c.tp = 8, c.pp = 1, c.dp = 16;
  c.gbs = 32;
  const sim::Topology topo(c);
  const sim::ProcessGroup* dp = topo.worstGroup(sim::GroupKind::Dp, 0);
  ASSERT_EQ(dp->nodes, 16);
  const sim::CollectivePlan small =
      sim::planCollective(sim::CollectiveKind::AllReduce, 4096, *dp, c.platform);
  const sim::CollectivePlan large =
      sim::planCollective(sim::CollectiveKind::AllReduce, 1e9, *dp, c.platform);
  EXPECT_EQ(small.algorithm, sim::Algorithm::Tree);
  EXPECT_EQ(small.protocol, sim::Protocol::LL);
  EXPECT_EQ(large.algorithm, sim::Algorithm::Ring);
  EXPECT_EQ(large.protocol, sim::Protocol::Simple);
  // Alone on its node, every member sends its whole share over the network.
  EXPECT_DOUBLE_EQ(large.netFraction, 1.0);
  EXPECT_DOUBLE_EQ(large.bytesPerRank, 2.0 * 15 / 16 * 1e9);
}

TEST(Fabric, SmallStepsUseTheLinksPoorly) {
  // Achieved bandwidth = bytes over the bottleneck / time, for a ring all-reduce of 8 ranks on
  // NVLink: it rises with the message (and so the per-step chunk) towards the link's.
  sim::SimConfig c = test::tinyConfig();
  const sim::Topology topo(c);
  const sim::ProcessGroup* g = topo.worstGroup(sim::GroupKind::Dp, 0);
  auto achieved = [&](double bytes) {
    const sim::CollectivePlan p =
        sim::planCollective(sim::CollectiveKind::AllReduce, bytes, *g, c.platform);
    return 2.0 * 7 / 8 * bytes / p.seconds;
  };
  const double link = sim::groupBandwidth(*g, c.platform);
  EXPECT_LT(achieved(1 << 20), 0.3 * link);
  EXPECT_LT(achieved(1 << 22), achieved(1 << 24));
  EXPECT_GT(achieved(1 << 30), 0.95 * link);
  // A send/recv of one tensor-parallel piece (a quarter) is slower per byte than the whole.
  auto p2p = [&](double bytes) {
    return bytes /
           sim::planCollective(sim::CollectiveKind::SendRecv, bytes, *g, c.platform).seconds;
  };
  EXPECT_LT(p2p(8e6 / 4), 0.85 * p2p(8e6));
}

TEST(Fabric, OverlappedCommunicationSlowsTheComputeItHidesBehind) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.tp = 2, c.pp = 1, c.dp = 4;
  c.mbs = 2, c.gbs = 32;
  c.overlap = true;
  c.durationS = 0, c.iterations = 3;
  auto iterationS = [&](double slowdown, const char* name) {
    c.platform.overlap_sm_slowdown = slowdown;
    const auto run = test::simulateAndOpen(c, dir / name);
    const Iteration& it = run->iterations().back();
    return static_cast<double>(it.end_ns - it.start_ns) * 1e-9;
  };
  const double free = iterationS(0.0, "free.h5");
  const double contended = iterationS(0.3, "contended.h5");
  EXPECT_GT(contended, free * 1.01);
}

}  // namespace
}  // namespace wl
