// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// `wattline simulate` as a library call: simulates one training run and writes it as a native run
// file through RunWriter. docs/simulator.md describes the model; the units of this folder are
//   platform_profile   GPU and node datasheet values and model constants (JSON overrides)
//   model_shape        transformer shapes; experiment_matrix reads the seed paper's 386 configs
//   sim_config         one run's parameters and their validation
//   topology           ranks, GPUs, chassis slots, process groups, lockstep units
//   schedule_1f1b      the per-stage iteration program (Megatron 1F1B)
//   work_model         kernels and their costs; comm_model the collectives; kernel_names
//   power_model, thermal_model, clock_governor    the physics of every GPU
//   telemetry_recorder what the sensors report; kernel_expander the kernel traces
//   engine             the event-driven simulation that ties them together
//   scratch_store      bounded memory for runs of any size

#include <cstdint>
#include <filesystem>
#include <string>

#include "loaders/core/progress.h"
#include "loaders/format/run_writer.h"
#include "loaders/sim/engine.h"
#include "loaders/sim/memory_model.h"
#include "loaders/sim/sim_config.h"

namespace wl::sim {

struct SimulationSummary {
  std::filesystem::path output;
  int gpus = 0;
  uint64_t samples = 0;
  uint64_t kernels = 0;
  int tracedRanks = 0;
  std::string traceSteps;    // "all", "every 10th", "0-2"
  int iterations = 0;        // completed on every rank
  double simulatedS = 0;     // run span
  double trainingS = 0;      // first iteration start to last iteration end
  double peakMemoryGiB = 0;  // the rank that needs the most
  double usableMemoryGiB = 0;
  bool outOfMemory = false;  // simulated with allowOom and marked invalid
};

// Ranks whose kernels are traced, as the selection resolves for this configuration.
std::vector<int> tracedRanks(const SimConfig& c);

// The memory every pipeline stage's ranks need, without simulating (InvalidConfig for a
// configuration that cannot exist).
MemoryReport memoryPlan(SimConfig c);

// Simulates the run and writes it to `output` (through a temporary file). Throws InvalidConfig for
// a configuration that cannot exist and wl::Error for anything else that goes wrong.
SimulationSummary simulate(SimConfig c, const std::filesystem::path& output,
                           const Progress& progress = {}, SimObserver* observer = nullptr,
                           const WriteOptions& options = {});

}  // namespace wl::sim
