// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// GPU memory of every rank of a simulated run, and whether it fits (docs/simulator.md, "Memory").
//
// Per rank, in bytes (Megatron-LM's mixed-precision accounting, Korthikanti et al. 2022 for the
// activations):
//   weights       2 bytes per local parameter (bf16); FSDP: the rank's shard plus two gathered
//                 layers (the one computing and the prefetched one)
//   gradients     4 bytes per trained local parameter (fp32 main_grad buffer); FSDP: the shard
//   optimizer     12 bytes per trained local parameter (fp32 master weight, Adam m and v), divided
//                 over the data-parallel group with the distributed optimizer or FSDP
//   activations   per layer and microbatch s b [10 h + (2 (h + 2 g d) + 2 h + 4 f or 6 f) / t]
//                 bytes (with sequence parallelism the 10 h term is divided by t too;
//                 FlashAttention stores no s^2 term); MoE layers keep top-k x the MLP part; a
//                 recomputed layer keeps only its 2 s b h (/t with SP) input; stage s of a 1F1B
//                 pipeline holds min(P - s, m) microbatches in flight; the layer being recomputed
//                 or back-propagated needs its full activations once more
//   logits        6 s b V / t bytes on the last stage (bf16 logits and the fp32 softmax of the
//                 vocabulary-parallel cross entropy, one microbatch)
//   communication pipeline send/receive buffers (two of s b h / t x 2 bytes each way), the
//                 FSDP gather buffer, and the platform's fixed reserve (CUDA context, NCCL
//                 buffers, cuBLAS workspaces, allocator fragmentation)
// LoRA trains only the adapters (rank r on QKV, projection, FC1 and FC2 of every layer): frozen
// weights have no gradient or optimizer state. Inference keeps the weights, one layer's working
// activations and the last stage's logits.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "loaders/sim/sim_config.h"

namespace wl::sim {

struct RankMemory {
  int rank = 0;
  int stage = 0;
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, logits = 0, comm = 0,
         reserve = 0;  // bytes
  double total() const {
    return weights + gradients + optimizer + activations + logits + comm + reserve;
  }
  // The part allocated before the first microbatch (weights, gradients, optimizer, reserve).
  double persistent() const { return weights + gradients + optimizer + reserve; }
};

struct MemoryReport {
  double capacity = 0;             // usable bytes per GPU (GCD)
  std::vector<RankMemory> stages;  // per pipeline stage, its first rank (every rank of a stage
                                   // holds the same)
  // The stage with the highest total.
  const RankMemory& worst() const;
  bool fits() const { return worst().total() <= capacity; }
};

// Trained (LoRA: adapter) and stored parameters of one rank of a stage. `dense` and `expert` are
// the stage's local parameters (WorkModel::stage(s).denseParams, expertParams).
double loraAdapterParams(const SimConfig& c, int stage);

MemoryReport estimateMemory(const SimConfig& c, const std::vector<double>& denseParamsPerStage,
                            const std::vector<double>& expertParamsPerStage);

// {"usable_gib", "fits", "stages": [{"stage", "rank", "weights_gib", ..., "total_gib"}]}
nlohmann::json memoryToJson(const MemoryReport& m);

// "out of memory: rank 8 (pipeline stage 1) needs 92.4 GiB but an H100 has 79.2 GiB (weights
// 12.1, gradients 24.3, ...)"
std::string describeShortfall(const SimConfig& c, const MemoryReport& m);

}  // namespace wl::sim
