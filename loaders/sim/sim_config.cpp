// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/sim_config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

namespace wl::sim {

#ifndef WATTLINE_SIM_VERSION
#define WATTLINE_SIM_VERSION "unknown"
#endif

void resolveDefaults(SimConfig& c) {
  if (c.createdBy.empty()) c.createdBy = "wattline " WATTLINE_SIM_VERSION " simulate";
  if (c.seqLen <= 0) c.seqLen = c.model.default_seq_len;
  if (c.gbs <= 0) c.gbs = c.dp * c.mbs * std::max(1, 2 * c.pp);
  if (c.runName.empty()) {
    c.runName =
        fmt::format("{} {} tp{} pp{} dp{}{} mbs{} (simulated)", c.model.name, c.platform.platform,
                    c.tp, c.pp, c.dp, c.ep > 1 ? fmt::format(" ep{}", c.ep) : std::string(), c.mbs);
  }
}

std::string_view workloadName(Workload w) {
  switch (w) {
    case Workload::Lora:
      return "lora";
    case Workload::Inference:
      return "inference";
    case Workload::Pretrain:
      break;
  }
  return "pretrain";
}

bool applyThermalScenario(std::string_view name, SimConfig& c) {
  if (name == "nominal") {
    c.inletTempC = 25, c.inletRisePerNodeC = 0, c.fanMaxFrac = 1;
  } else if (name == "hot-aisle") {
    // Hot exhaust recirculating into the cold aisle: 37 C at the first node (inside ASHRAE class
    // A3's allowable 5-40 C), 0.5 C more for each node up the rack.
    c.inletTempC = 37, c.inletRisePerNodeC = 0.5, c.fanMaxFrac = 1;
  } else if (name == "fan-failure") {
    // A failed fan module: the remaining fans reach 60 % of the full airflow.
    c.inletTempC = 25, c.inletRisePerNodeC = 0, c.fanMaxFrac = 0.6;
  } else {
    return false;
  }
  c.thermalScenario = std::string(name);
  return true;
}

std::string_view thermalScenarioNames() {
  return "nominal, hot-aisle, fan-failure";
}

void validateConfig(const SimConfig& c) {
  auto fail = [](std::string msg) { throw InvalidConfig(std::move(msg)); };
  if (c.nodes < 1 || c.nodes > 4096)
    fail(fmt::format("--nodes must be 1..4096, found {}", c.nodes));
  if (c.gpusPerNode < 1 || c.gpusPerNode > 64)
    fail(fmt::format("--gpus-per-node must be 1..64, found {}", c.gpusPerNode));
  if (c.world() > 65536) fail(fmt::format("{} GPUs is more than the 65,536 supported", c.world()));
  for (auto [name, v] :
       {std::pair{"--tp", c.tp}, {"--pp", c.pp}, {"--dp", c.dp}, {"--ep", c.ep}, {"--mbs", c.mbs}})
    if (v < 1) fail(fmt::format("{} must be at least 1, found {}", name, v));
  if (c.tp * c.pp * c.dp != c.world())
    fail(fmt::format("tp x pp x dp = {} x {} x {} = {} but nodes x gpus-per-node = {} x {} = {}",
                     c.tp, c.pp, c.dp, c.tp * c.pp * c.dp, c.nodes, c.gpusPerNode, c.world()));
  if (c.gbs < 1) fail(fmt::format("--gbs must be at least 1, found {}", c.gbs));
  if (c.gbs % (c.dp * c.mbs) != 0)
    fail(fmt::format("global batch {} is not a multiple of dp x mbs = {} x {} = {}", c.gbs, c.dp,
                     c.mbs, c.dp * c.mbs));
  if (c.seqLen < 1 || c.seqLen > (1 << 20))
    fail(fmt::format("--seq-len must be 1..1048576, found {}", c.seqLen));
  const ModelShape& m = c.model;
  if (m.layers < 1 || m.hidden < 1 || m.ffn < 1 || m.heads < 1 || m.vocab < 1)
    fail(fmt::format("model {} has a non-positive dimension", m.name));
  if (m.layers % c.pp != 0)
    fail(fmt::format("{} has {} layers, not divisible by pp = {}", m.name, m.layers, c.pp));
  if (m.heads % c.tp != 0)
    fail(fmt::format("{} has {} attention heads, not divisible by tp = {}", m.name, m.heads, c.tp));
  if (m.query_groups < 1 || m.heads % m.query_groups != 0)
    fail(
        fmt::format("{}: {} query groups do not divide {} heads", m.name, m.query_groups, m.heads));
  if (m.query_groups % c.tp != 0 && c.tp % m.query_groups != 0)
    fail(fmt::format("{} has {} query groups, incompatible with tp = {}", m.name, m.query_groups,
                     c.tp));
  if (m.hidden % m.heads != 0)
    fail(
        fmt::format("{}: hidden size {} is not a multiple of {} heads", m.name, m.hidden, m.heads));
  if (c.ep > 1) {
    if (!m.moe())
      fail(fmt::format("--ep {} needs a mixture-of-experts model; {} is dense", c.ep, m.name));
    if (c.dp % c.ep != 0) fail(fmt::format("ep = {} does not divide dp = {}", c.ep, c.dp));
    if (m.experts % c.ep != 0)
      fail(fmt::format("ep = {} does not divide the {} experts of {}", c.ep, m.experts, m.name));
  }
  if (m.moe() && (m.topk < 1 || m.topk > m.experts))
    fail(fmt::format("{}: top-k {} must be 1..{}", m.name, m.topk, m.experts));
  if (c.fsdp && c.ep > 1) fail("--fsdp with --ep > 1 is not supported");
  if (c.fsdp && c.distributedOptimizer)
    fail("--fsdp and --distributed-optimizer both shard the optimizer state; give one");
  if (c.workload == Workload::Lora && !(c.loraRank >= 1 && c.loraRank <= m.hidden))
    fail(fmt::format("--lora-rank must be 1..{}, found {}", m.hidden, c.loraRank));
  if (c.workload != Workload::Pretrain && c.fsdp)
    fail(fmt::format("{} with --fsdp is not simulated", workloadName(c.workload)));
  if (c.workload == Workload::Inference && c.recompute)
    fail("inference stores no activations for a backward pass: --recompute does not apply");
  if (c.platform.gcds_per_package == 2 && c.gpusPerNode % 2 != 0)
    fail(fmt::format("{} has two GCDs per package: --gpus-per-node must be even, found {}",
                     c.platform.platform, c.gpusPerNode));
  if (c.nicsPerNode < 0 || c.nicsPerNode > c.gpusPerNode)
    fail(fmt::format("NICs per node must be 1..{} (one per GPU at most), found {}", c.gpusPerNode,
                     c.nicsPerNode));
  if (c.nicGbpsOverride && !(*c.nicGbpsOverride > 0 && *c.nicGbpsOverride <= 100000))
    fail(fmt::format("--nic-gbps must be in (0, 100000], found {}", *c.nicGbpsOverride));
  if (c.iterations < 0) fail("--iterations must be >= 0");
  if (!(c.durationS >= 0) || c.durationS > 7 * 86400.0)
    fail("--duration must be between 0 and one week");
  if (c.iterations == 0 && c.durationS == 0)
    fail("give --iterations or --duration (or both: the run stops at the first)");
  if (!(c.sampleHz > 0 && c.sampleHz <= 1000))
    fail(fmt::format("--sample-hz must be in (0, 1000], found {}", c.sampleHz));
  if (!(c.physicsStepS >= 1e-4 && c.physicsStepS <= 0.1))
    fail("the physics step must be between 0.1 ms and 100 ms");
  if (1.0 / c.sampleHz < c.physicsStepS)
    fail(fmt::format("--sample-hz {} is faster than the physics step ({} ms)", c.sampleHz,
                     c.physicsStepS * 1e3));
  if (!(c.sampleJitterMs >= 0) || c.sampleJitterMs * 1e-3 >= 0.45 / c.sampleHz)
    fail("--jitter-ms must be >= 0 and below 45% of the sampling interval");
  const double limit = c.powerLimit();
  const double domainIdle = c.platform.gcds_per_package * c.platform.power_base_w;
  if (!(limit >= c.platform.min_power_limit_w) || !(limit > domainIdle) || limit > 5000)
    fail(fmt::format("--power-limit {} W is outside the {} range ({} W .. 5000 W)", limit,
                     c.platform.platform, c.platform.min_power_limit_w));
  if (!(c.inletTempC >= -10 && c.inletTempC <= 60))
    fail(fmt::format("--inlet-temp must be between -10 and 60 C, found {}", c.inletTempC));
  if (!(c.inletRisePerNodeC >= 0 && c.inletRisePerNodeC <= 10))
    fail(fmt::format("--inlet-rise-per-node must be between 0 and 10 C, found {}",
                     c.inletRisePerNodeC));
  if (!(c.fanMaxFrac >= c.platform.fan_min_frac && c.fanMaxFrac <= 1))
    fail(fmt::format("--fan-max must be between the fans' minimum speed {} and 1, found {}",
                     c.platform.fan_min_frac, c.fanMaxFrac));
  for (int n : c.fanLimitedNodes)
    if (n < 0 || n >= c.nodes)
      fail(fmt::format("--fan-failed-node {} is not a node of the run (0 to {})", n, c.nodes - 1));
  for (int g : c.unthrottledGpus)
    if (g < 0 || g >= c.world())
      fail(fmt::format("--unthrottle-gpu {} is not a GPU of the run (0 to {})", g, c.world() - 1));
  if (c.powerWindowS && !(*c.powerWindowS >= 0 && *c.powerWindowS <= 10))
    fail("--power-window must be between 0 and 10 s");
  if (!(std::abs(c.telemetryOffsetS) <= 60))
    fail("--telemetry-offset must be between -60000 and 60000 ms");
  if (!(c.leadInS >= 0 && c.leadInS <= 3600) || !(c.leadOutS >= 0 && c.leadOutS <= 3600))
    fail("the idle lead-in and lead-out must be between 0 and 3600 s");
  if (c.recompute && c.recomputeLayers == 0) fail("--recompute-layers must be at least 1");
  if (c.recomputeLayers > m.layers / c.pp)
    fail(fmt::format("--recompute-layers {} exceeds the {} layers per stage", c.recomputeLayers,
                     m.layers / c.pp));
  if (!(c.hostGapS >= 0 && c.phaseJitter >= 0 && c.phaseJitter < 0.2 && c.expertImbalance >= 0 &&
        c.expertImbalance < 0.5 && c.tpOverlapFraction >= 0 && c.tpOverlapFraction <= 1 &&
        c.dpBuckets >= 1 && c.gemmHalfTokens >= 0))
    fail("a workload parameter is out of range");
  for (int r : c.trace.rankList)
    if (r < 0 || r >= c.world())
      fail(fmt::format("--trace-ranks: rank {} does not exist (0..{})", r, c.world() - 1));
  if (c.trace.steps == TraceSelection::Steps::Range &&
      (c.trace.firstStep < 0 || c.trace.lastStep < c.trace.firstStep))
    fail("--trace-steps: the range must be A-B with 0 <= A <= B");
  if (c.trace.steps == TraceSelection::Steps::Every && c.trace.everyStep < 1)
    fail("--trace-steps: every:K needs K >= 1");
  validateProfile(c.platform, "platform profile " + c.platform.id);
}

nlohmann::json configToJson(const SimConfig& c) {
  nlohmann::json j;
  nlohmann::json model;
  const ModelShape& m = c.model;
  model["name"] = m.name;
  model["layers"] = m.layers;
  model["hidden"] = m.hidden;
  model["ffn"] = m.ffn;
  model["heads"] = m.heads;
  model["query_groups"] = m.query_groups;
  model["experts"] = m.experts;
  model["topk"] = m.topk;
  model["vocab"] = m.vocab;
  model["tied_embeddings"] = m.tied_embeddings;
  model["norm"] = m.norm == NormKind::LayerNorm ? "layernorm" : "rmsnorm";
  model["mlp"] = m.mlp == MlpKind::Gelu ? "gelu" : "swiglu";
  j["simulator"] = "wattline simulate (docs/simulator.md)";
  j["seed"] = c.seed;
  j["model"] = model;
  j["nodes"] = c.nodes;
  j["gpus_per_node"] = c.gpusPerNode;
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  j["dp"] = c.dp;
  j["ep"] = c.ep;
  j["mbs"] = c.mbs;
  j["gbs"] = c.gbs;
  j["seq_len"] = c.seqLen;
  j["microbatches"] = c.microbatches();
  j["recompute"] = c.recompute;
  j["recompute_layers"] = c.recomputeLayers;
  j["overlap"] = c.overlap;
  j["sequence_parallel"] = c.sequenceParallel;
  j["fsdp"] = c.fsdp;
  j["distributed_optimizer"] = c.distributedOptimizer;
  j["workload"] = workloadName(c.workload);
  if (c.workload == Workload::Lora) j["lora_rank"] = c.loraRank;
  j["allow_oom"] = c.allowOom;
  j["nics_per_node"] = c.nics();
  j["nic_gbps"] = c.nicGbps();
  j["link_counters"] = c.linkCounters;
  j["iterations"] = c.iterations;
  j["duration_s"] = c.durationS;
  j["sample_hz"] = c.sampleHz;
  j["power_limit_w"] = c.powerLimit();
  j["thermal_scenario"] = c.thermalScenario;
  j["inlet_temp_c"] = c.inletTempC;
  j["inlet_rise_per_node_c"] = c.inletRisePerNodeC;
  j["fan_max_frac"] = c.fanMaxFrac;
  j["sample_jitter_ms"] = c.idealSensors ? 0.0 : c.sampleJitterMs;
  j["power_window_s"] = c.powerWindow();
  j["telemetry_offset_s"] = c.telemetryOffsetS;
  j["ideal_sensors"] = c.idealSensors;
  if (c.noThrottle) j["no_throttle"] = true;
  if (!c.unthrottledGpus.empty()) j["unthrottled_gpus"] = c.unthrottledGpus;
  if (!c.fanLimitedNodes.empty()) j["fan_limited_nodes"] = c.fanLimitedNodes;
  j["physics_step_s"] = c.physicsStepS;
  j["lead_in_s"] = c.leadInS;
  j["lead_out_s"] = c.leadOutS;
  j["host_gap_s"] = c.hostGapS;
  j["phase_jitter"] = c.phaseJitter;
  j["expert_imbalance"] = c.expertImbalance;
  j["tp_overlap_fraction"] = c.tpOverlapFraction;
  j["dp_buckets"] = c.dpBuckets;
  j["gemm_half_tokens"] = c.gemmHalfTokens;
  if (!c.sourceDetail.empty()) j["source"] = c.sourceDetail;
  nlohmann::json trace;
  const TraceSelection& t = c.trace;
  trace["ranks"] = t.ranks == TraceSelection::Ranks::All             ? "all"
                   : t.ranks == TraceSelection::Ranks::None          ? "none"
                   : t.ranks == TraceSelection::Ranks::FirstPerStage ? "first-per-stage"
                   : t.ranks == TraceSelection::Ranks::List          ? "list"
                                                                     : "auto";
  if (t.ranks == TraceSelection::Ranks::List) trace["rank_list"] = t.rankList;
  trace["steps"] = t.steps == TraceSelection::Steps::All ? "all"
                   : t.steps == TraceSelection::Steps::Range
                       ? fmt::format("{}-{}", t.firstStep, t.lastStep)
                   : t.steps == TraceSelection::Steps::Every ? fmt::format("every:{}", t.everyStep)
                                                             : "auto";
  j["trace"] = trace;
  j["platform"] = profileToJson(c.platform);
  return j;
}

}  // namespace wl::sim
