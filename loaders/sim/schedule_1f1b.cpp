// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/schedule_1f1b.h"

#include <algorithm>

namespace wl::sim {

std::vector<ScheduleOp> oneF1BIteration(const ScheduleOptions& o) {
  std::vector<ScheduleOp> ops;
  const bool first = o.stage == 0;
  const bool last = o.stage == o.stages - 1;
  const int m = o.microbatches;
  const int warmup = std::min(o.stages - o.stage - 1, m);
  const int remaining = m - warmup;

  auto p2p = [&](int link, bool sendAct, bool recvAct, bool sendGrad, bool recvGrad) {
    ScheduleOp op;
    op.kind = OpKind::P2P;
    op.p2p = {link, sendAct, recvAct, sendGrad, recvGrad};
    ops.push_back(op);
  };
  auto compute = [&](OpKind k, int mb) {
    ScheduleOp op;
    op.kind = k;
    op.microbatch = mb;
    ops.push_back(op);
  };

  compute(OpKind::HostGap, -1);
  if (o.forwardOnly) {
    for (int i = 0; i < m; ++i) {
      if (!first) p2p(-1, false, true, false, false);  // recv_forward
      compute(OpKind::Forward, i);
      if (!last) p2p(+1, true, false, false, false);  // send_forward
    }
    return ops;
  }
  compute(OpKind::ZeroGrad, -1);
  int forward = 0, backward = 0;
  for (int i = 0; i < warmup; ++i) {
    if (!first) p2p(-1, false, true, false, false);  // recv_forward
    compute(OpKind::Forward, forward++);
    if (!last) p2p(+1, true, false, false, false);  // send_forward
  }
  if (remaining > 0 && !first) p2p(-1, false, true, false, false);  // recv_forward
  for (int i = 0; i < remaining; ++i) {
    compute(OpKind::Forward, forward++);
    if (!last) p2p(+1, true, false, false, true);  // send_forward_recv_backward
    compute(OpKind::Backward, backward++);
    if (!first) {
      if (i == remaining - 1)
        p2p(-1, false, false, true, false);  // send_backward
      else
        p2p(-1, false, true, true, false);  // send_backward_recv_forward
    }
  }
  for (int i = 0; i < warmup; ++i) {
    if (!last) p2p(+1, false, false, false, true);  // recv_backward
    compute(OpKind::Backward, backward++);
    if (!first) p2p(-1, false, false, true, false);  // send_backward
  }

  if (o.dpReduce) {
    if (o.overlapDp) {
      // Post the reduction just before the last backward pass; its buckets fill while it runs.
      auto lastBackward = std::find_if(ops.rbegin(), ops.rend(), [](const ScheduleOp& op) {
        return op.kind == OpKind::Backward;
      });
      ScheduleOp post;
      post.kind = OpKind::DpPost;
      ops.insert(lastBackward.base() - 1, post);
      compute(OpKind::DpWait, -1);
    } else {
      compute(OpKind::DpReduce, -1);
    }
  }
  if (o.embeddingSync && (first || last)) compute(OpKind::EmbeddingSync, -1);
  compute(OpKind::GradNormLocal, -1);
  if (o.gradNorm) compute(OpKind::GradNorm, -1);
  compute(OpKind::Optimizer, -1);
  if (o.paramGather) compute(OpKind::ParamGather, -1);
  return ops;
}

std::string_view opKindName(OpKind k) {
  switch (k) {
    case OpKind::HostGap:
      return "host-gap";
    case OpKind::ZeroGrad:
      return "zero-grad";
    case OpKind::Forward:
      return "forward";
    case OpKind::Backward:
      return "backward";
    case OpKind::P2P:
      return "p2p";
    case OpKind::DpReduce:
      return "dp-reduce";
    case OpKind::DpPost:
      return "dp-post";
    case OpKind::DpWait:
      return "dp-wait";
    case OpKind::EmbeddingSync:
      return "embedding-sync";
    case OpKind::GradNormLocal:
      return "grad-norm-local";
    case OpKind::GradNorm:
      return "grad-norm";
    case OpKind::Optimizer:
      return "optimizer";
    case OpKind::ParamGather:
      return "param-gather";
  }
  return "?";
}

}  // namespace wl::sim
