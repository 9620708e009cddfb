// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The work model: which kernels one pipeline stage runs in each phase of an iteration, and what
// each costs.
//
// A phase (forward or backward of one microbatch through the stage, the optimizer step...) is an
// ordered list of KernelSpecs: per transformer layer the norms, the QKV / projection / MLP GEMMs,
// FlashAttention, the elementwise kernels, the tensor-parallel collectives (all-reduce, or
// all-gather / reduce-scatter with sequence parallelism), the expert all-to-all of MoE layers and
// the FSDP parameter gathers; the embedding on the first stage and the output layer and loss on
// the last; the recomputed forward inside the backward pass when recompute is on.
//
// Costs (docs/simulator.md has the formulas):
//   GEMM:       FLOPs / (peak x efficiency x f/fmax), efficiency = max x T / (T + T_half)
//   attention:  FLOPs / (peak x attention efficiency x f/fmax)
//   memory:     bytes / (HBM bandwidth x HBM efficiency), independent of the SM clock
//   collective: comm_model.h, independent of the SM clock
// so a KernelSpec splits its time into smS (seconds at the max clock, scaled by fmax/f), fixedS
// and commS. OpCost sums them for the engine, which runs whole phases; the kernel expander lays
// the same KernelSpecs out one by one for traced ranks.

#include <array>
#include <cstdint>
#include <vector>

#include "loaders/core/kernel_class.h"
#include "loaders/core/string_table.h"
#include "loaders/sim/comm_model.h"
#include "loaders/sim/kernel_names.h"
#include "loaders/sim/sim_config.h"
#include "loaders/sim/topology.h"

namespace wl::sim {

// Idle gap between consecutive kernels of one stream (launch latency), part of KernelSpec::fixedS.
inline constexpr double kLaunchGapS = 2e-6;

// Streams as the profiler numbers them.
inline constexpr int64_t kComputeStream = 7;
inline constexpr int64_t kTensorParallelStream = 13;
inline constexpr int64_t kPipelineStream = 17;
inline constexpr int64_t kDataParallelStream = 21;
inline constexpr int64_t kExpertStream = 25;

// The process group a communication kernel runs in, as seen from the rank that runs it.
enum class CommScope : uint8_t {
  None,
  Tp,
  Ep,
  Dp,  // data-parallel group: end-of-step gradient reduction, or FSDP gathers per layer
  ExpertDp,
  ModelParallel,
  Embedding,
  P2pPrev,  // the pair with the previous stage
  P2pNext,  // the pair with the next stage
};
inline constexpr int kCommScopes = 9;

struct KernelSpec {
  uint32_t name = 0;  // id in the simulator's string table
  KernelClass cls = KernelClass::Compute;
  GpuEventKind kind = GpuEventKind::Kernel;
  int64_t stream = kComputeStream;
  double smS = 0;      // seconds at the max SM clock, scaled by fmax / f
  double fixedS = 0;   // clock-independent seconds (memory-bound work, launch gap)
  double commS = 0;    // exposed communication seconds
  double hiddenS = 0;  // communication overlapped with the compute before it
  // Bytes this rank sends (and receives: collectives are symmetric; send/recv counts the message)
  // over NVLink / xGMI and over the network.
  double linkBytes = 0, netBytes = 0;
  float activity = 0;   // power activity while it runs (fraction of the dynamic maximum)
  bool expert = false;  // MoE expert GEMM: scaled by the rank's expert load
  bool sync = false;    // collective inside the lockstep unit: ends after the last member arrives
  // Collective metadata (scope != None).
  CommScope scope = CommScope::None;
  uint32_t collective = 0;  // string id: "allreduce", ...
  uint32_t dtype = 0;       // string id: "BFloat16", "Float"
  int64_t nelems = -1;
  int64_t outNelems = -1;
  int scopeIndex = -1;  // index among the kernels of the same scope in its OpCost
};

// A phase or a communication op: its kernels and their sums.
struct OpCost {
  std::vector<KernelSpec> kernels;
  double smS = 0;        // including expert work
  double expertSmS = 0;  // the part subject to expert load imbalance
  double fixedS = 0;
  double commS = 0;
  double hiddenS = 0;
  double smActivityS = 0;              // sum of activity x smS
  double fixedActivityS = 0;           // sum of activity x fixedS
  double linkBytes = 0, netBytes = 0;  // sums of the kernels' (per direction)
  double hostBytes = 0;                // host-to-device input (token ids, labels) over PCIe
  std::array<int, kCommScopes> scopeCount{};

  void add(KernelSpec k);
  double smActivity() const { return smS > 0 ? smActivityS / smS : 0.0; }
  double fixedActivity() const { return fixedS > 0 ? fixedActivityS / fixedS : 0.0; }
  bool empty() const { return kernels.empty(); }
};

struct StageWork {
  OpCost zeroGrad, forward, backward, gradNormLocal, optimizer;
  OpCost p2pPrev, p2pNext;  // one blocking exchange with the previous / next stage
  OpCost dpReduce;          // gradient all-reduce(s), not overlapped
  OpCost dpMain, dpTail;    // overlapped: all buckets but the last, and the last
  OpCost embeddingSync, gradNorm;
  OpCost paramGather;        // distributed optimizer: all-gather of the updated parameters
  double denseParams = 0;    // parameters held by one rank of this stage (not experts)
  double expertParams = 0;   // expert parameters held by one rank
  double trainedParams = 0;  // parameters with gradients (LoRA: the adapters; inference: none)
};

class WorkModel {
 public:
  WorkModel(const SimConfig& c, const Topology& topo, StringTable& names);

  const StageWork& stage(int s) const { return stages_[static_cast<size_t>(s)]; }
  const KernelNames& kernelNames() const { return kn_; }
  // Time of one iteration of a stage at the max clock without waiting (for estimates).
  double nominalIterationS(int s, int microbatches) const;

 private:
  StageWork buildStage(int s);

  const SimConfig& c_;
  const Topology& topo_;
  StringTable& names_;
  KernelNames kn_;
  std::vector<StageWork> stages_;
};

}  // namespace wl::sim
