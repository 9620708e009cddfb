// SPDX-License-Identifier: GPL-3.0-or-later
// End to end: the kernels of a tiny pipeline (2 stages, 4 microbatches) follow 1F1B and show its
// bubbles, read back from the run file.
//
// Hand derivation with forward time f, backward time b = 2f and negligible transfers, each stage
// the same cost:
//   stage 0: F0 [0,1] F1 [1,2] ... waits for B0's gradient ... B0 [4,6] F2 [6,7] B1 [7,9]
//            F3 [9,10] B2 [10,12] ... waits for B3's gradient ... B3 [13,15]
//   stage 1: ... waits for F0 ... F0 [1,2] B0 [2,4] F1 [4,5] B1 [5,7] F2 [7,8] B2 [8,10]
//            F3 [10,11] B3 [11,13] ... waits for stage 0 at the gradient-norm all-reduce ...
// So each stage has exactly two bubbles per iteration, together (p - 1)(f + b) = f + b long.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim_test_support.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

sim::SimConfig pipelineConfig() {
  sim::SimConfig c = test::tinyConfig();
  sim::ModelShape m = *sim::findModel("Llama3-8B");
  m.name = "pipeline-test";
  m.layers = 8;
  m.hidden = 2048;
  m.ffn = 8192;
  m.heads = 16;
  m.query_groups = 16;
  m.vocab = 64;  // negligible embedding and output layer: both stages cost the same
  c.model = m;
  c.gpusPerNode = 2;
  c.tp = 1, c.pp = 2, c.dp = 1;
  c.mbs = 1;
  c.gbs = 4;
  c.seqLen = 2048;
  c.durationS = 0;
  c.iterations = 3;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  return c;
}

struct Phase {
  bool forward;
  int64_t start, end;
};

TEST(SimulatedPipeline, KernelOrderAndBubblesAreThoseOf1F1B) {
  test::TempDir dir;
  const auto run = test::simulateAndOpen(pipelineConfig(), dir / "pipe.h5");
  const uint64_t compute = 7;
  for (int rank = 0; rank < 2; ++rank) {
    // The second iteration, away from the start-up.
    const Iteration* it = nullptr;
    for (const Iteration& i : run->iterations())
      if (i.rank == rank && i.step == 1) it = &i;
    ASSERT_NE(it, nullptr);
    std::vector<Phase> phases;
    for (const Annotation& a : run->annotations()) {
      const std::string& name = run->str(a.name);
      if (a.rank != rank || a.start_ns < it->start_ns || a.start_ns >= it->end_ns) continue;
      if (name == "forward" || name == "backward")
        phases.push_back({name == "forward", a.start_ns, a.start_ns + a.dur_ns});
    }
    std::sort(phases.begin(), phases.end(),
              [](const Phase& a, const Phase& b) { return a.start < b.start; });
    std::string order;
    for (const Phase& p : phases)
      order += p.forward ? 'F' : 'B';
    EXPECT_EQ(order, rank == 0 ? "FFBFBFBB" : "FBFBFBFB") << "rank " << rank;

    // Kernels of the compute stream inside the iteration.
    std::vector<KernelEvent> ks;
    for (size_t t = 0; t < run->tracks().size(); ++t) {
      const TrackInfo& ti = run->tracks()[t];
      if (ti.rank != rank || ti.stream != static_cast<int64_t>(compute)) continue;
      for (const KernelEvent& e : run->readAllKernels(t))
        if (e.start_ns >= it->start_ns && e.start_ns < it->end_ns) ks.push_back(e);
    }
    ASSERT_GT(ks.size(), 50u);
    // Forward phases run forward attention kernels only, backward ones backward kernels.
    for (const Phase& p : phases) {
      int fwd = 0, bwd = 0;
      for (const KernelEvent& e : ks) {
        if (e.start_ns < p.start || e.start_ns >= p.end) continue;
        const std::string& n = run->str(e.name);
        fwd += n.find("flash_fwd_kernel") != std::string::npos;
        bwd += n.find("flash_bwd_dq_dk_dv") != std::string::npos;
      }
      EXPECT_EQ(fwd, p.forward ? 4 : 0);  // 4 layers per stage
      EXPECT_EQ(bwd, p.forward ? 0 : 4);
    }
    double f = 0, b = 0;
    int nf = 0, nb = 0;
    for (const Phase& p : phases)
      (p.forward ? f : b) += static_cast<double>(p.end - p.start), (p.forward ? nf : nb) += 1;
    f /= nf;
    b /= nb;
    // Bubbles: idle gaps on the compute stream longer than a third of a forward pass.
    int bubbles = 0;
    double bubbleNs = 0;
    int64_t busyUntil = ks.front().start_ns + ks.front().dur_ns;
    for (size_t i = 1; i < ks.size(); ++i) {
      const double gap = static_cast<double>(ks[i].start_ns - busyUntil);
      if (gap > f / 3) {
        ++bubbles;
        bubbleNs += gap;
      }
      busyUntil = std::max(busyUntil, ks[i].start_ns + ks[i].dur_ns);
    }
    EXPECT_EQ(bubbles, 2) << "rank " << rank;
    EXPECT_NEAR(bubbleNs / (f + b), 1.0, 0.15) << "rank " << rank;
  }
}

}  // namespace
}  // namespace wl
