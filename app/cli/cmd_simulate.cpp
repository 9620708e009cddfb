// SPDX-License-Identifier: GPL-3.0-or-later
// wattline simulate -o RUN.h5 --platform h100 --model NAME --nodes N ... (docs/simulator.md)
#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>

#include "app/cli/arg_parser.h"
#include "app/cli/cli_progress.h"
#include "app/cli/commands.h"
#include "app/cli/range_args.h"
#include "loaders/sim/experiment_matrix.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"

namespace wl::cli {
namespace {

int parseInt(std::string_view s, std::string_view option) {
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty())
    throw UsageError(fmt::format("option --{} expects whole numbers, got '{}'", option, s));
  return v;
}

sim::TraceSelection parseTrace(const ArgParser& p) {
  sim::TraceSelection t;
  using R = sim::TraceSelection::Ranks;
  using S = sim::TraceSelection::Steps;
  if (auto v = p.value("trace-ranks")) {
    if (*v == "all") {
      t.ranks = R::All;
    } else if (*v == "none") {
      t.ranks = R::None;
    } else if (*v == "auto") {
      t.ranks = R::Auto;
    } else if (*v == "first-per-stage") {
      t.ranks = R::FirstPerStage;
    } else {
      t.ranks = R::List;
      std::string_view rest = *v;
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (const size_t dash = item.find('-'); dash != std::string_view::npos && dash > 0) {
          const int a = parseInt(item.substr(0, dash), "trace-ranks");
          const int b = parseInt(item.substr(dash + 1), "trace-ranks");
          if (b < a || b - a > 1000000)
            throw UsageError(fmt::format("option --trace-ranks: bad range '{}'", item));
          for (int r = a; r <= b; ++r)
            t.rankList.push_back(r);
        } else {
          t.rankList.push_back(parseInt(item, "trace-ranks"));
        }
      }
    }
  }
  if (auto v = p.value("trace-steps")) {
    if (*v == "all") {
      t.steps = S::All;
    } else if (*v == "auto") {
      t.steps = S::Auto;
    } else if (v->rfind("every:", 0) == 0) {
      t.steps = S::Every;
      t.everyStep = parseInt(std::string_view(*v).substr(6), "trace-steps");
    } else if (const size_t dash = v->find('-'); dash != std::string::npos && dash > 0) {
      t.steps = S::Range;
      t.firstStep = parseInt(std::string_view(*v).substr(0, dash), "trace-steps");
      t.lastStep = parseInt(std::string_view(*v).substr(dash + 1), "trace-steps");
    } else {
      t.steps = S::Range;
      t.firstStep = t.lastStep = parseInt(*v, "trace-steps");
    }
  }
  return t;
}

// The options of `wattline simulate` (docs/simulator.md, "Command line").
// The values of --platform, --model, --workload and --thermal-scenario, from the simulator's
// tables.
void defineChoices(ArgParser& p) {
  std::vector<std::string> platforms, models, workloads, scenarios;
  for (const sim::PlatformProfile& profile : sim::builtinProfiles())
    platforms.push_back(profile.id);
  for (const sim::ModelShape& m : sim::builtinModels())
    models.push_back(m.name);
  for (sim::Workload w : {sim::Workload::Pretrain, sim::Workload::Lora, sim::Workload::Inference})
    workloads.emplace_back(sim::workloadName(w));
  const std::string_view names = sim::thermalScenarioNames();  // "nominal, hot-aisle, ..."
  for (size_t at = 0; at < names.size();) {
    const size_t comma = std::min(names.find(", ", at), names.size());
    scenarios.emplace_back(names.substr(at, comma - at));
    at = comma + 2;
  }
  p.choices("platform", std::move(platforms))
      .choices("model", std::move(models))
      .choices("workload", std::move(workloads))
      .choices("thermal-scenario", std::move(scenarios));
}

void defineOptions(ArgParser& p) {
  p.option("output", "RUN.h5", "the run file to write (also -o)")
      .option("platform", "ID", "h100, h200 or mi250 (default h100, or the matrix sweep's)")
      .option("platform-file", "F.json", "override platform profile fields from a JSON file")
      .option("model", "NAME",
              "GPT3-175B, Llama3-70B, Mixtral-8x7B, Mixtral-8x22B, Llama3-8B, "
              "TinyLlama-1.1B")
      .option("nodes", "N", "nodes (default 1)")
      .option("gpus-per-node", "G", "GPUs per node, GCDs on MI250 (default 8)")
      .option("tp", "N", "tensor-parallel size (default 1)")
      .option("pp", "N", "pipeline-parallel size (default 1)")
      .option("dp", "N", "data-parallel size (default: GPUs / (tp x pp))")
      .option("ep", "N", "expert-parallel size, MoE models (default 1)")
      .option("mbs", "N", "microbatch size (default 1)")
      .option("gbs", "N", "global batch size (default dp x mbs x 2 pp)")
      .option("seq-len", "N", "sequence length (default: the model's)")
      .flag("recompute", "full activation recomputation")
      .option("recompute-layers", "N", "recompute only the first N layers of each stage")
      .flag("overlap", "overlap gradient reduction, parameter sync and TP communication")
      .flag("sequence-parallel", "sequence parallelism (TP all-gather / reduce-scatter)")
      .flag("fsdp", "shard parameters over data-parallel ranks (gathered per layer)")
      .flag("distributed-optimizer",
            "shard the optimizer state over data-parallel ranks (reduce-scatter + all-gather)")
      .option("workload", "KIND",
              "pretrain (default), lora (frozen base, rank-r adapters) or "
              "inference (forward passes only)")
      .option("lora-rank", "R", "LoRA adapter dimension (default 32)")
      .flag("allow-oom", "simulate a configuration that does not fit in GPU memory, marked invalid")
      .flag("memory-only", "print the memory each pipeline stage needs (GiB) and exit")
      .flag("nic-per-gpu", "one network interface per GPU (rail optimized) instead of one per node")
      .option("nics-per-node", "N", "network interfaces per node (default 1)")
      .option("nic-gbps", "GBPS", "speed of each network interface, Gb/s (default 100)")
      .flag("no-link-counters", "do not record NVLink, PCIe and network byte counters")
      .option("iterations", "K", "training iterations (default 10 unless --duration)")
      .option("duration", "SECONDS", "stop training after this much simulated time")
      .option("seed", "S", "random seed; the same seed gives the same run (default 1)")
      .option("sample-hz", "HZ", "telemetry sampling rate (default 20)")
      .option("power-limit", "W", "power limit per GPU (per package on MI250)")
      .option("thermal-scenario", "NAME",
              "nominal (25 C inlet), hot-aisle (37 C, +0.5 C per node) or fan-failure (fans "
              "at most 60 %); docs/simulator.md")
      .option("inlet-temp", "C", "cold-aisle air temperature at the front of the nodes (25)")
      .option("inlet-rise-per-node", "C", "inlet rise per node up the rack (0)")
      .option("fan-max", "FRAC", "highest fan speed, fraction of full airflow (1)")
      .option("fan-failed-node", "LIST",
              "nodes whose fans are limited (to --fan-max, default 0.6); the others run at full "
              "speed")
      .option("power-window", "S", "power sensor averaging window (NVML power.draw: 1)")
      .option("jitter-ms", "MS", "sampler timestamp jitter, +- (default 2)")
      .option("telemetry-offset", "MS",
              "stamp telemetry this far ahead of the traces' clock (negative: behind; default 0)")
      .flag("ideal-sensors", "no sensor noise, bias or jitter; power over one physics step")
      .flag("no-throttle",
            "the unthrottled twin: no power or thermal limit lowers any GPU's clock (same seed, "
            "same work)")
      .option("unthrottle-gpu", "LIST", "the twin with only these GPUs unthrottled, e.g. 7 or 4-7")
      .option("physics-step-ms", "MS", "physics time step (default 5)")
      .option("idle-lead", "S", "idle seconds before the first and after the last iteration (2)")
      .option("trace-ranks", "SEL",
              "kernel traces of: all, none, first-per-stage, auto (all up to 16 GPUs, else "
              "first-per-stage) or a list such as 0,8,16-23")
      .option("trace-steps", "SEL",
              "in iterations: all, auto, A-B, N or every:K (auto keeps "
              "the total near 2e7 kernels)")
      .option("from-matrix", "CSV",
              "take the configuration from the seed paper's experiment "
              "matrix (experiment-matrix.csv)")
      .option("config", "NAME", "configuration name in the matrix (or SWEEP/NAME, NAME@LINE)")
      .option("name", "TEXT", "run name")
      .option("compression", "0-9", "gzip level of the run file (default 4)")
      .flag("json", "print a JSON summary on stdout")
      .flag("quiet", "no progress on stderr");
  defineChoices(p);
}

// The platform profile (--platform, the matrix sweep's, --platform-file); the matrix row when the
// run comes from the experiment matrix.
std::optional<sim::MatrixEntry> setPlatform(const ArgParser& p, sim::SimConfig& c) {
  std::optional<sim::MatrixEntry> entry;
  if (p.has("config") != p.has("from-matrix"))
    throw UsageError("--from-matrix and --config go together");
  if (auto m = p.value("from-matrix")) {
    const auto rows = sim::readExperimentMatrix(*m);
    entry = sim::findMatrixEntry(rows, *p.value("config"), p.value("platform").value_or(""),
                                 p.value("model").value_or(""), *m);
  }
  std::string platformId = p.value("platform").value_or(entry ? entry->platformId : "");
  if (platformId.empty() && entry)
    throw UsageError(
        fmt::format("the sweep '{}' does not name a platform; give --platform", entry->sweep));
  if (platformId.empty()) platformId = "h100";
  const sim::PlatformProfile* profile = sim::findProfile(platformId);
  if (!profile)
    throw UsageError(
        fmt::format("unknown --platform '{}' (expected h100, h200 or mi250)", platformId));
  c.platform = *profile;
  if (auto f = p.value("platform-file")) c.platform = sim::loadPlatformFile(*f, c.platform);

  return entry;
}

// Model, layout, batch, workload and fabric: from the matrix row or the options, the options
// overriding the row.
void setModelAndLayout(const ArgParser& p, const std::optional<sim::MatrixEntry>& entry,
                       sim::SimConfig& c) {
  if (entry) {
    sim::applyMatrixEntry(*entry, c);
  } else {
    const auto name = p.value("model");
    if (!name) throw UsageError("missing --model (or --from-matrix CSV --config NAME)");
    const sim::ModelShape* m = sim::findModel(*name);
    if (!m)
      throw UsageError(fmt::format("unknown --model '{}' (known: {})", *name, sim::modelNames()));
    c.model = *m;
    c.gpusPerNode = c.platform.default_gpus_per_node;
  }
  auto setInt = [&](const char* opt, int& field) {
    if (auto v = p.intValue(opt)) field = *v;
  };
  setInt("nodes", c.nodes);
  setInt("gpus-per-node", c.gpusPerNode);
  setInt("tp", c.tp);
  setInt("pp", c.pp);
  setInt("ep", c.ep);
  setInt("mbs", c.mbs);
  setInt("gbs", c.gbs);
  setInt("seq-len", c.seqLen);
  if (auto v = p.intValue("dp")) {
    c.dp = *v;
  } else if (!entry) {
    if (c.tp < 1 || c.pp < 1 || c.world() % (c.tp * c.pp) != 0)
      throw UsageError(fmt::format("tp x pp = {} does not divide the {} GPUs; give --dp",
                                   c.tp * c.pp, c.world()));
    c.dp = c.world() / (c.tp * c.pp);
  }
  if (p.has("recompute")) c.recompute = true;
  if (auto v = p.intValue("recompute-layers")) {
    c.recompute = true;
    c.recomputeLayers = *v;
  }
  if (p.has("overlap")) c.overlap = true;
  if (p.has("sequence-parallel")) c.sequenceParallel = true;
  if (p.has("fsdp")) c.fsdp = true;
  if (p.has("distributed-optimizer")) c.distributedOptimizer = true;
  if (auto v = p.value("workload")) {
    if (*v == "pretrain")
      c.workload = sim::Workload::Pretrain;
    else if (*v == "lora")
      c.workload = sim::Workload::Lora;
    else if (*v == "inference")
      c.workload = sim::Workload::Inference;
    else
      throw UsageError(
          fmt::format("unknown --workload '{}' (expected pretrain, lora or inference)", *v));
  }
  if (auto v = p.intValue("lora-rank")) c.loraRank = *v;
  if (p.has("allow-oom")) c.allowOom = true;
  if (p.has("nic-per-gpu") && p.has("nics-per-node"))
    throw UsageError("--nic-per-gpu and --nics-per-node both set the NIC count; give one");
  if (p.has("nic-per-gpu")) c.nicsPerNode = c.gpusPerNode;
  if (auto v = p.intValue("nics-per-node")) {
    if (*v < 1) throw UsageError("--nics-per-node must be at least 1");
    c.nicsPerNode = *v;
  }
  if (auto v = p.doubleValue("nic-gbps")) c.nicGbpsOverride = *v;
  if (p.has("no-link-counters")) c.linkCounters = false;
}

// Run length, thermal scenario, sensors, tracing and the run's name.
void setRunAndSensors(const ArgParser& p, sim::SimConfig& c) {
  auto setInt = [&](const char* opt, int& field) {
    if (auto v = p.intValue(opt)) field = *v;
  };
  setInt("iterations", c.iterations);
  if (auto v = p.doubleValue("duration")) c.durationS = *v;
  if (!p.has("iterations") && !p.has("duration")) c.iterations = 10;
  if (auto v = p.value("seed")) {
    uint64_t s = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), s);
    if (ec != std::errc() || ptr != v->data() + v->size())
      throw UsageError(fmt::format("option --seed expects a whole number, got '{}'", *v));
    c.seed = s;
  }
  if (auto v = p.doubleValue("sample-hz")) c.sampleHz = *v;
  if (auto v = p.doubleValue("power-limit")) c.powerLimitW = *v;
  if (auto v = p.value("thermal-scenario"))
    if (!sim::applyThermalScenario(*v, c))
      throw UsageError(fmt::format("unknown --thermal-scenario '{}' (expected {})", *v,
                                   sim::thermalScenarioNames()));
  if (auto v = p.doubleValue("inlet-temp")) c.inletTempC = *v;
  if (auto v = p.doubleValue("inlet-rise-per-node")) c.inletRisePerNodeC = *v;
  if (auto v = p.doubleValue("fan-max")) c.fanMaxFrac = *v;
  if (auto v = p.value("fan-failed-node")) {
    c.fanLimitedNodes = parseIndexList("fan-failed-node", std::string(*v));
    if (!p.has("fan-max")) c.fanMaxFrac = 0.6;
  }
  if (auto v = p.doubleValue("power-window")) c.powerWindowS = *v;
  if (auto v = p.doubleValue("telemetry-offset")) c.telemetryOffsetS = *v / 1e3;
  if (auto v = p.doubleValue("jitter-ms")) c.sampleJitterMs = *v;
  if (p.has("ideal-sensors")) c.idealSensors = true;
  if (p.has("no-throttle")) c.noThrottle = true;
  if (auto v = p.value("unthrottle-gpu"))
    c.unthrottledGpus = parseIndexList("unthrottle-gpu", std::string(*v));
  if (auto v = p.doubleValue("physics-step-ms")) c.physicsStepS = *v * 1e-3;
  if (auto v = p.doubleValue("idle-lead")) c.leadInS = c.leadOutS = *v;
  c.trace = parseTrace(p);
  if (auto v = p.value("name")) c.runName = *v;
  c.createdBy.clear();
}

void printSummary(const sim::SimulationSummary& s, bool json) {
  if (json) {
    nlohmann::json j;
    j["output"] = s.output.string();
    j["gpus"] = s.gpus;
    j["samples"] = s.samples;
    j["kernels"] = s.kernels;
    j["traced_ranks"] = s.tracedRanks;
    j["traced_steps"] = s.traceSteps;
    j["iterations"] = s.iterations;
    j["simulated_s"] = s.simulatedS;
    j["training_s"] = s.trainingS;
    j["peak_memory_gib"] = s.peakMemoryGiB;
    j["usable_memory_gib"] = s.usableMemoryGiB;
    j["out_of_memory"] = s.outOfMemory;
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else {
    std::printf(
        "wrote %s: %d GPUs, %llu samples, %llu kernels (%d ranks traced; iterations traced: %s), "
        "%d "
        "iterations in %.1f s of training, %.1f s simulated\n",
        s.output.string().c_str(), s.gpus, static_cast<unsigned long long>(s.samples),
        static_cast<unsigned long long>(s.kernels), s.tracedRanks, s.traceSteps.c_str(),
        s.iterations, s.trainingS, s.simulatedS);
    if (s.outOfMemory)
      std::printf("out of memory (%.1f GiB needed, %.1f GiB usable): written marked invalid\n",
                  s.peakMemoryGiB, s.usableMemoryGiB);
  }
}

}  // namespace

int cmdSimulate(const Args& rawArgs) {
  // -o is the one short option; the parser knows long ones.
  Args args;
  for (const std::string& a : rawArgs)
    args.push_back(a == "-o" ? "--output" : a);

  ArgParser p("simulate",
              "Simulate a distributed training run (power, temperature, clocks, utilization, "
              "throttle reasons and kernel traces of every GPU) and write it as a run file. "
              "The model and its sources are in docs/simulator.md; the run is marked simulated.");
  defineOptions(p);
  if (!p.parse(args)) return 0;

  const auto out = p.value("output");
  if (!out && !p.has("memory-only")) throw UsageError("missing -o RUN.h5");
  sim::SimConfig c;

  const std::optional<sim::MatrixEntry> entry = setPlatform(p, c);
  setModelAndLayout(p, entry, c);
  setRunAndSensors(p, c);
  WriteOptions wo;
  if (auto v = p.intValue("compression")) {
    if (*v < 0 || *v > 9) throw UsageError("--compression must be 0..9");
    wo.deflate = *v;
  }

  if (p.has("memory-only")) {
    sim::MemoryReport m;
    try {
      m = sim::memoryPlan(c);
    } catch (const sim::InvalidConfig& e) {
      throw UsageError(e.what());
    }
    std::fputs((sim::memoryToJson(m).dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  sim::SimulationSummary s;
  const Progress progress = stderrProgress("simulate", p.has("quiet"));
  try {
    s = sim::simulate(c, *out, progress, nullptr, wo);
  } catch (const sim::InvalidConfig& e) {
    if (progress.active() && ::isatty(STDERR_FILENO)) std::fputs("\n", stderr);
    throw UsageError(e.what());
  }
  if (progress.active() && ::isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);
  printSummary(s, p.has("json"));
  return 0;
}

}  // namespace wl::cli
