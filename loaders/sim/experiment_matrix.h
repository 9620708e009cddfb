// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The seed paper's experiment matrix (CharLLM-PPT, experiment-matrix.csv): one row per
// configuration of its sweeps, with the model shape, the parallel layout, the batch and the
// optimization flags. `wattline simulate --from-matrix FILE --config NAME` takes a configuration
// from it. Names repeat across sweeps (the same layout on H100 and on H200); SWEEP/NAME, the
// platform or the model picks one.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/sim/model_shape.h"
#include "loaders/sim/sim_config.h"

namespace wl::sim {

struct MatrixEntry {
  int line = 0;  // 1-based line in the file
  std::string sweep, name, modelId;
  ModelShape model;  // the built-in shape with the row's dimensions
  int nodes = 0, gpusPerNode = 0, tp = 1, pp = 1, dp = 1, ep = 1, mbs = 1, gbs = 0, seq = 0;
  bool sequenceParallel = false, recompute = false, overlap = false, fsdp = false;
  bool distributedOptimizer = false;       // optim: distributed_fused_adam, mcore_distributed_optim
  Workload workload = Workload::Pretrain;  // the lora sweep (peft = lora), the inference sweep
  int recomputeLayers = -1;
  std::string platformId;  // "h100" / "h200" when the sweep name says, else empty
};

// Reads every row; throws wl::Error naming the file, line and column on malformed content.
std::vector<MatrixEntry> readExperimentMatrix(const std::filesystem::path& path);

// The row named `config` ("NAME" or "SWEEP/NAME"), disambiguated by platform and model id when
// given. Throws wl::Error when none or several rows match.
const MatrixEntry& findMatrixEntry(const std::vector<MatrixEntry>& rows, std::string_view config,
                                   std::string_view platformId, std::string_view modelName,
                                   const std::filesystem::path& path);

// Copies the entry's model and layout into a config.
void applyMatrixEntry(const MatrixEntry& e, SimConfig& c);

}  // namespace wl::sim
