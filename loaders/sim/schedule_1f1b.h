// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One training iteration of one pipeline stage, in the order Megatron-LM's non-interleaved 1F1B
// schedule (forward_backward_pipelining_without_interleaving) runs it:
//
//   warmup = min(stages - stage - 1, microbatches) forward passes, each preceded by a receive from
//   the previous stage and followed by a send to the next; then one-forward-one-backward pairs,
//   where the forward's send and the backward's receive are one batched exchange with the next
//   stage and the backward's send and the next forward's receive one with the previous stage; then
//   `warmup` backward passes. Every exchange blocks until both sides have posted it, which is where
//   the pipeline bubbles come from.
//
// Inference (forwardOnly) runs every microbatch's receive, forward and send in order, nothing else
// but the host gap.
//
// Around it: a host gap and the gradient-buffer reset at the start; at the end the data-parallel
// gradient reduction (posted before the last backward pass and waited for after it when
// overlapped), the tied-embedding gradient all-reduce between the first and last stage, the
// gradient-norm all-reduce over the model-parallel group, the optimizer step and, with the
// distributed optimizer, the all-gather of the updated parameters.

#include <string_view>
#include <vector>

namespace wl::sim {

enum class OpKind : uint8_t {
  HostGap,        // CPU-side work between iterations: the GPU is idle
  ZeroGrad,       // reset gradient buffers (memset)
  Forward,        // forward pass of one microbatch through the stage's layers
  Backward,       // backward pass (with the recomputed forward when recompute is on)
  P2P,            // blocking exchange with a neighbouring stage
  DpReduce,       // data-parallel gradient all-reduce, not overlapped
  DpPost,         // overlapped: gradient reduction starts (does not block)
  DpWait,         // overlapped: wait until the reduction has finished
  EmbeddingSync,  // tied-embedding gradient all-reduce (first and last stage)
  GradNormLocal,  // local part of the gradient norm
  GradNorm,       // gradient-norm all-reduce over the model-parallel group
  Optimizer,      // Adam step
  ParamGather,    // distributed optimizer: all-gather the updated parameters over data parallel
};

struct P2PExchange {
  int link = 0;  // -1: with the previous stage, +1: with the next
  bool sendActivation = false, recvActivation = false;
  bool sendGrad = false, recvGrad = false;
};

struct ScheduleOp {
  OpKind kind = OpKind::HostGap;
  int microbatch = -1;  // Forward / Backward
  P2PExchange p2p;      // P2P
};

struct ScheduleOptions {
  int stage = 0;
  int stages = 1;
  int microbatches = 1;
  bool dpReduce = false;   // gradients are reduced over data-parallel ranks at the end
  bool overlapDp = false;  // ... overlapped with the last backward pass
  bool embeddingSync = false;
  bool gradNorm = false;
  bool forwardOnly = false;  // inference: every microbatch's forward, no backward, no optimizer
  bool paramGather = false;  // distributed optimizer: gather the updated parameters at the end
};

std::vector<ScheduleOp> oneF1BIteration(const ScheduleOptions& o);

std::string_view opKindName(OpKind k);

}  // namespace wl::sim
