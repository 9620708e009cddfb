// SPDX-License-Identifier: GPL-3.0-or-later
// The per-stage iteration program against Megatron's 1F1B schedule, derived by hand.
#include <gtest/gtest.h>

#include <string>

#include "loaders/sim/schedule_1f1b.h"

namespace wl::sim {
namespace {

// "F0 F1 B0 ..." of the compute ops.
std::string phases(const std::vector<ScheduleOp>& ops) {
  std::string s;
  for (const ScheduleOp& op : ops)
    if (op.kind == OpKind::Forward || op.kind == OpKind::Backward)
      s += (s.empty() ? "" : " ") + std::string(op.kind == OpKind::Forward ? "F" : "B") +
           std::to_string(op.microbatch);
  return s;
}

// "s" send activation, "r" receive activation, "S" send gradient, "R" receive gradient, per
// exchange on one link.
std::vector<std::string> exchanges(const std::vector<ScheduleOp>& ops, int link) {
  std::vector<std::string> out;
  for (const ScheduleOp& op : ops) {
    if (op.kind != OpKind::P2P || op.p2p.link != link) continue;
    std::string e;
    if (op.p2p.sendActivation) e += "s";
    if (op.p2p.recvActivation) e += "r";
    if (op.p2p.sendGrad) e += "S";
    if (op.p2p.recvGrad) e += "R";
    out.push_back(e);
  }
  return out;
}

ScheduleOptions twoStages(int stage) {
  ScheduleOptions o;
  o.stage = stage;
  o.stages = 2;
  o.microbatches = 4;
  return o;
}

TEST(OneF1B, TwoStagesFourMicrobatchesRunInTheOrderDerivedByHand) {
  // Stage 0: warmup = min(2 - 0 - 1, 4) = 1 forward, then 3 one-forward-one-backward pairs, then
  // 1 cooldown backward. Stage 1 (last): no warmup, 4 pairs.
  EXPECT_EQ(phases(oneF1BIteration(twoStages(0))), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(phases(oneF1BIteration(twoStages(1))), "F0 B0 F1 B1 F2 B2 F3 B3");
}

TEST(OneF1B, ExchangesOfNeighbouringStagesPairUpOneToOne) {
  // Stage 0 towards stage 1: send F0; send F1 + receive grad B0; ... ; receive grad B3.
  const std::vector<std::string> s0 = exchanges(oneF1BIteration(twoStages(0)), +1);
  EXPECT_EQ(s0, (std::vector<std::string>{"s", "sR", "sR", "sR", "R"}));
  // Stage 1 towards stage 0: receive F0; receive F1 with sending grad B0 ... ; send grad B3.
  const std::vector<std::string> s1 = exchanges(oneF1BIteration(twoStages(1)), -1);
  EXPECT_EQ(s1, (std::vector<std::string>{"r", "rS", "rS", "rS", "S"}));
  // The k-th exchange on each side moves the same tensors in opposite directions.
  for (size_t k = 0; k < s0.size(); ++k) {
    const bool sendsAct = s0[k].find('s') != std::string::npos;
    const bool recvsAct = s1[k].find('r') != std::string::npos;
    EXPECT_EQ(sendsAct, recvsAct) << k;
    const bool recvsGrad = s0[k].find('R') != std::string::npos;
    const bool sendsGrad = s1[k].find('S') != std::string::npos;
    EXPECT_EQ(recvsGrad, sendsGrad) << k;
  }
}

TEST(OneF1B, EveryLinkHasAsManyExchangesOnBothSides) {
  for (int stages : {2, 3, 4, 8})
    for (int m : {1, 2, 3, 4, 8, 16}) {
      for (int s = 0; s + 1 < stages; ++s) {
        ScheduleOptions a, b;
        a.stage = s, b.stage = s + 1;
        a.stages = b.stages = stages;
        a.microbatches = b.microbatches = m;
        const auto lo = oneF1BIteration(a);
        const auto hi = oneF1BIteration(b);
        EXPECT_EQ(exchanges(lo, +1).size(), exchanges(hi, -1).size())
            << stages << " stages, " << m << " microbatches, link " << s;
      }
      // Every stage runs every microbatch forward and backward once.
      for (int s = 0; s < stages; ++s) {
        ScheduleOptions o;
        o.stage = s, o.stages = stages, o.microbatches = m;
        int f = 0, b = 0;
        for (const ScheduleOp& op : oneF1BIteration(o)) {
          f += op.kind == OpKind::Forward;
          b += op.kind == OpKind::Backward;
        }
        EXPECT_EQ(f, m);
        EXPECT_EQ(b, m);
      }
    }
}

TEST(OneF1B, OverlappedReductionIsPostedBeforeTheLastBackwardAndAwaitedAfterIt) {
  ScheduleOptions o = twoStages(0);
  o.dpReduce = true;
  o.overlapDp = true;
  const auto ops = oneF1BIteration(o);
  size_t post = ops.size(), lastB = 0, wait = ops.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::DpPost) post = i;
    if (ops[i].kind == OpKind::Backward) lastB = i;
    if (ops[i].kind == OpKind::DpWait) wait = i;
  }
  EXPECT_EQ(post + 1, lastB);
  EXPECT_GT(wait, lastB);
  EXPECT_EQ(ops.back().kind, OpKind::Optimizer);
}

}  // namespace
}  // namespace wl::sim
