// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Everything one simulated run is made from: platform, model, parallel layout, batch, the
// optimizations, how long to run, the seed, what the sensors and the profiler record. A SimConfig
// is a plain value; validateConfig() checks that it describes a run that can exist and says in one
// line what is wrong when it does not.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "loaders/core/error.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"

namespace wl::sim {

// A configuration that cannot be simulated (tp*pp*dp != GPUs, a batch that does not divide...).
// The CLI reports it as bad usage (exit code 2).
class InvalidConfig : public Error {
 public:
  using Error::Error;
};

// Which ranks get kernel traces, and in which iterations (like a profiler schedule).
struct TraceSelection {
  enum class Ranks { Auto, All, None, FirstPerStage, List };
  enum class Steps { Auto, All, Range, Every };
  Ranks ranks = Ranks::Auto;
  std::vector<int> rankList;  // Ranks::List
  Steps steps = Steps::Auto;
  int firstStep = 0, lastStep = 0;  // Steps::Range, inclusive
  int everyStep = 1;                // Steps::Every
};

// Where the nodes stand: cold-aisle air and fans (SimConfig's thermal scenario).
struct ThermalSite {
  double inletC = 25;                // cold-aisle air at the front of node 0
  double inletRisePerNodeC = 0;      // node n breathes inletC + n x this (recirculation up a rack)
  double fanMaxFrac = 1;             // fans cannot exceed this speed (a failed or capped fan)
  std::vector<int> fanLimitedNodes;  // the nodes fanMaxFrac applies to (empty: every node)
  std::vector<double> nodeOffsetC;   // per-node offsets (rack position, drawn from the seed)
};

// What the run does with the model (docs/simulator.md, "LoRA and inference").
enum class Workload : uint8_t {
  Pretrain,   // full training: every weight gets a gradient and optimizer state
  Lora,       // LoRA fine-tuning: base weights frozen (no weight gradients or optimizer state for
              // them), rank-r adapters on the QKV, projection and MLP matrices of every layer
  Inference,  // forward passes only (prefill of gbs sequences per step), no gradients
};
std::string_view workloadName(Workload w);  // "pretrain", "lora", "inference"

struct SimConfig {
  PlatformProfile platform;
  ModelShape model;
  std::string runName;  // empty: derived from model, platform and layout

  int nodes = 1;
  int gpusPerNode = 8;
  int tp = 1, pp = 1, dp = 1, ep = 1;
  int mbs = 1;
  int gbs = 0;     // 0: dp * mbs * pp microbatches' worth (see resolveDefaults)
  int seqLen = 0;  // 0: the model's default
  bool recompute = false;
  int recomputeLayers = -1;  // layers per stage recomputed when recompute (-1: all)
  bool overlap = false;      // DP gradient reduce with backward, TP comm with GEMMs, param sync
  bool sequenceParallel = false;
  bool fsdp = false;  // parameters sharded over DP (gathered per layer), no end-of-step allreduce
  // Distributed optimizer (Megatron's distributed_fused_adam / mcore_distributed_optim): fp32
  // master weights and Adam moments sharded over DP; gradients reduce-scattered and updated
  // parameters all-gathered instead of one all-reduce.
  bool distributedOptimizer = false;
  Workload workload = Workload::Pretrain;
  int loraRank = 32;  // adapter dimension (NeMo 2.0's LoRA default)
  // A configuration that does not fit in GPU memory is refused (InvalidConfig) unless this is set:
  // then it is simulated and marked invalid, as the seed paper's out-of-memory rows are.
  bool allowOom = false;
  // Network: NICs per node (0: the profile's nics_per_node; gpusPerNode: one per GPU, rail
  // optimized) and the speed of each (unset: the profile's inter_node_gbps).
  int nicsPerNode = 0;
  std::optional<double> nicGbpsOverride;
  // Record NVLink, PCIe and network byte counters per GPU (off: smaller files for scale runs).
  bool linkCounters = true;

  int iterations = 0;    // stop after this many (0: no limit)
  double durationS = 0;  // stop the training at this simulated time (0: no limit)
  uint64_t seed = 1;

  double sampleHz = 20;
  std::optional<double> powerLimitW;  // per GPU, per package on MI250; default: the profile's
  // Thermal scenario (docs/simulator.md, "Thermal scenarios"): cold-aisle air at the front of node
  // 0, its rise per node up the rack, and the highest fan speed the nodes' fans reach.
  std::string thermalScenario = "nominal";
  double inletTempC = 25;
  double inletRisePerNodeC = 0;
  double fanMaxFrac = 1;
  std::vector<int> fanLimitedNodes;    // --fan-failed-node: fanMaxFrac on these nodes only
  double sampleJitterMs = 2;           // sampler timestamps jitter uniformly by +- this
  std::optional<double> powerWindowS;  // override of the profile's sensor averaging window
  // The telemetry's clock runs this far ahead of the traces' (--telemetry-offset): every sample is
  // stamped at its true time + this. The truth of the automatic alignment (issue 29).
  double telemetryOffsetS = 0;
  bool idealSensors = false;  // no noise, bias or jitter; power averaged over one physics step
  // The counterfactual twin of a run (docs/simulator.md, "Unthrottled twins"): the clock of these
  // GPUs is never lowered by a power or thermal limit (the idle rule and slew still apply); the
  // work, schedule and random draws stay those of the same seed. noThrottle: every GPU.
  bool noThrottle = false;
  std::vector<int> unthrottledGpus;
  double physicsStepS = 0.005;
  double leadInS = 2;                     // idle before the first iteration
  double leadOutS = 2;                    // idle after the last
  int64_t startNs = 1735689600000000000;  // 2025-01-01T00:00:00Z

  // Workload details (documented in docs/simulator.md).
  double hostGapS = 0.003;         // CPU-side gap at the start of every iteration
  double phaseJitter = 0.003;      // relative sd of a rank's compute time per phase
  double expertImbalance = 0.08;   // relative sd of a rank's expert load per phase (MoE)
  double tpOverlapFraction = 0.7;  // share of TP communication hidden behind GEMMs (overlap)
  int dpBuckets = 4;               // gradient buckets; the last one is exposed (overlap)
  double gemmHalfTokens = 1024;    // GEMM efficiency = max * T / (T + this), T tokens per GEMM

  TraceSelection trace;
  std::string sourceDetail;  // what the config came from, e.g. "matrix SWEEP/NAME"
  std::string createdBy;     // empty: "wattline VERSION simulate"

  int world() const { return nodes * gpusPerNode; }
  // Microbatches per iteration on each data-parallel replica.
  int microbatches() const { return gbs / (dp * mbs); }
  double powerLimit() const { return powerLimitW.value_or(platform.power_limit_w); }
  int nics() const { return nicsPerNode > 0 ? nicsPerNode : platform.nics_per_node; }
  double nicGbps() const { return nicGbpsOverride.value_or(platform.inter_node_gbps); }
  ThermalSite thermalSite() const {
    ThermalSite s;
    s.inletC = inletTempC;
    s.inletRisePerNodeC = inletRisePerNodeC;
    s.fanMaxFrac = fanMaxFrac;
    s.fanLimitedNodes = fanLimitedNodes;
    return s;
  }
  double powerWindow() const {
    return idealSensors ? 0.0 : powerWindowS.value_or(platform.power_window_s);
  }
};

// Fills the defaults that depend on other fields (gbs, sequence length, run name).
void resolveDefaults(SimConfig& c);
// Sets the inlet, rack gradient and fan limit of a named thermal scenario ("nominal",
// "hot-aisle", "fan-failure"); false for an unknown name.
bool applyThermalScenario(std::string_view name, SimConfig& c);
// The scenario names, for messages.
std::string_view thermalScenarioNames();
// Throws InvalidConfig with one line naming the inconsistency.
void validateConfig(const SimConfig& c);
// Every parameter of the run, for RunInfo::parameters_json.
nlohmann::json configToJson(const SimConfig& c);

}  // namespace wl::sim
