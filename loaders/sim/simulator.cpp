// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/simulator.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/sim/kernel_expander.h"
#include "loaders/sim/memory_model.h"
#include "loaders/sim/schedule_1f1b.h"
#include "loaders/sim/scratch_store.h"
#include "loaders/sim/telemetry_recorder.h"
#include "loaders/sim/topology.h"
#include "loaders/sim/work_model.h"

namespace wl::sim {
namespace {

// Kernel budget of the automatic trace selection (total over all traced ranks).
constexpr double kAutoKernelBudget = 2e7;

int64_t toNs(double s) {
  return std::llround(s * 1e9);
}

// Kernels one rank of a stage runs per iteration.
double kernelsPerIteration(const SimConfig& c, const WorkModel& w, int stage) {
  const StageWork& sw = w.stage(stage);
  double n = static_cast<double>(sw.zeroGrad.kernels.size() + sw.gradNormLocal.kernels.size() +
                                 sw.optimizer.kernels.size() + sw.gradNorm.kernels.size() +
                                 sw.embeddingSync.kernels.size());
  if (c.workload == Workload::Inference)
    return c.microbatches() *
           static_cast<double>(sw.forward.kernels.size() + sw.p2pPrev.kernels.size() +
                               sw.p2pNext.kernels.size());
  n += c.microbatches() *
       static_cast<double>(sw.forward.kernels.size() + sw.backward.kernels.size() +
                           sw.p2pPrev.kernels.size() + sw.p2pNext.kernels.size());
  n += static_cast<double>(c.overlap ? sw.dpMain.kernels.size() + sw.dpTail.kernels.size()
                                     : sw.dpReduce.kernels.size());
  n += static_cast<double>(sw.paramGather.kernels.size());
  return n;
}

MemoryReport stageMemory(const SimConfig& c, const WorkModel& work) {
  std::vector<double> denseParams, expertParams;
  for (int s = 0; s < c.pp; ++s) {
    denseParams.push_back(work.stage(s).denseParams);
    expertParams.push_back(work.stage(s).expertParams);
  }
  return estimateMemory(c, denseParams, expertParams);
}

}  // namespace

MemoryReport memoryPlan(SimConfig c) {
  resolveDefaults(c);
  validateConfig(c);
  const Topology topo(c);
  StringTable names;
  const WorkModel work(c, topo, names);
  return stageMemory(c, work);
}

std::vector<int> tracedRanks(const SimConfig& c) {
  std::vector<int> out;
  Topology topo(c);
  auto firstPerStage = [&] {
    for (int s = 0; s < c.pp; ++s)
      out.push_back(topo.rankOf(0, 0, s));
  };
  switch (c.trace.ranks) {
    case TraceSelection::Ranks::All:
      for (int r = 0; r < c.world(); ++r)
        out.push_back(r);
      break;
    case TraceSelection::Ranks::None:
      break;
    case TraceSelection::Ranks::FirstPerStage:
      firstPerStage();
      break;
    case TraceSelection::Ranks::List:
      out = c.trace.rankList;
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      break;
    case TraceSelection::Ranks::Auto:
      if (c.world() <= 16) {
        for (int r = 0; r < c.world(); ++r)
          out.push_back(r);
      } else {
        firstPerStage();
      }
      break;
  }
  return out;
}

namespace {

// Which iterations get kernel traces (--trace-steps; auto: all of them while the kernels stay
// within kAutoKernelBudget, else every n-th), and how to name that choice.
std::pair<std::function<bool(int)>, std::string> chooseTracedSteps(const SimConfig& c,
                                                                   const WorkModel& work,
                                                                   const Topology& topo,
                                                                   const std::vector<int>& traced) {
  TraceSelection::Steps steps = c.trace.steps;
  int every = c.trace.everyStep;
  if (steps == TraceSelection::Steps::Auto) {
    double perIteration = 0;
    for (int r : traced)
      perIteration += kernelsPerIteration(c, work, topo.coord(r).pp);
    double nominal = 0;
    for (int s = 0; s < c.pp; ++s)
      nominal = std::max(nominal, work.nominalIterationS(s, c.microbatches()));
    double iterations = c.iterations > 0 ? c.iterations : 1e18;
    if (c.durationS > 0) iterations = std::min(iterations, std::ceil(c.durationS / nominal));
    const double total = perIteration * iterations;
    if (total <= kAutoKernelBudget) {
      steps = TraceSelection::Steps::All;
    } else {
      steps = TraceSelection::Steps::Every;
      every = static_cast<int>(std::ceil(total / kAutoKernelBudget));
    }
  }
  const int first = c.trace.firstStep, last = c.trace.lastStep;
  std::function<bool(int)> traceStep;
  std::string stepsText;
  switch (steps) {
    case TraceSelection::Steps::Range:
      traceStep = [first, last](int i) { return i >= first && i <= last; };
      stepsText = fmt::format("{}-{}", first, last);
      break;
    case TraceSelection::Steps::Every:
      traceStep = [every](int i) { return i % every == 0; };
      stepsText = every == 1 ? "all" : fmt::format("every {}th", every);
      break;
    default:
      traceStep = [](int) { return true; };
      stepsText = "all";
  }

  return {traceStep, stepsText};
}

// What the simulated samplers measure (docs/simulator.md, "Sensors"): power averaged over the
// sensor window (one physics step: instantaneous), utilization over its window, readings of the
// rest, counters; every sensor updates once per physics step.
std::vector<SensorInfo> simulatedSensors(const SimConfig& c) {
  std::vector<std::string> metrics = {std::string(metric::kPower),
                                      std::string(metric::kTemp),
                                      std::string(metric::kMemTemp),
                                      std::string(metric::kSmClock),
                                      std::string(metric::kMemClock),
                                      std::string(metric::kUtil),
                                      "mem_used_mib"};
  if (c.linkCounters)
    for (const char* m : {"nvlink_tx_kib", "nvlink_rx_kib", "pcie_tx_bytes", "pcie_rx_bytes",
                          "net_tx_bytes", "net_rx_bytes"})
      metrics.emplace_back(m);
  std::vector<SensorInfo> out;
  for (const std::string& m : metrics) {
    SensorInfo s = genericSensor(m, "simulator");
    s.source = 0;
    s.period_s = c.physicsStepS;
    if (m == metric::kPower) {
      const double w = c.powerWindow();
      s.kind = w > c.physicsStepS ? SensorKind::Average : SensorKind::Instant;
      s.window_s = w > c.physicsStepS ? w : 0.0;
      s.basis = w > c.physicsStepS
                    ? fmt::format("simulator: power averaged over {} s (--power-window)", w)
                    : "simulator: power over one physics step (instantaneous)";
    } else if (m == metric::kUtil) {
      s.window_s = c.platform.util_window_s > 0 ? c.platform.util_window_s : c.physicsStepS;
      s.basis = fmt::format("simulator: busy share over the last {} s", s.window_s);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The run file's metadata: configuration, span, source and every parameter of the simulation.
RunInfo simulatedRunInfo(const SimConfig& c, const EngineResult& er, const std::vector<int>& traced,
                         const std::string& stepsText, const MemoryReport& memory) {
  RunInfo info;
  info.name = c.runName;
  info.platform = c.platform.platform;
  info.model = c.model.name;
  ParallelConfig& pc = info.config;
  pc.tp = c.tp, pc.pp = c.pp, pc.dp = c.dp, pc.ep = c.ep, pc.cp = 1;
  pc.mbs = c.mbs, pc.gbs = c.gbs, pc.seq_len = c.seqLen;
  pc.nodes = c.nodes, pc.gpus_per_node = c.gpusPerNode;
  pc.recompute = c.recompute, pc.overlap = c.overlap;
  info.simulated = true;
  // Telemetry stamped on a clock ahead (or behind) of the traces' stays inside the span.
  info.start_ns = c.startNs + std::min<int64_t>(0, toNs(c.telemetryOffsetS));
  info.end_ns = c.startNs + toNs(er.endS) + std::max<int64_t>(0, toNs(c.telemetryOffsetS));
  info.sample_interval_s = 1.0 / c.sampleHz;
  info.created_by = c.createdBy;
  info.sources.push_back(
      {"(simulated)", "simulate", 0,
       fmt::format("seed {}; {} on {} x {} {}{}", c.seed, c.model.name, c.nodes, c.gpusPerNode,
                   c.platform.platform,
                   c.sourceDetail.empty() ? std::string() : "; " + c.sourceDetail)});
  info.sensors = simulatedSensors(c);
  nlohmann::json params = configToJson(c);
  params["trace"]["traced_ranks"] =
      traced.size() <= 64 ? nlohmann::json(traced) : nlohmann::json(traced.size());
  params["trace"]["traced_steps"] = stepsText;
  params["memory"] = memoryToJson(memory);
  info.parameters_json = params.dump();

  return info;
}

}  // namespace

SimulationSummary simulate(SimConfig c, const std::filesystem::path& output,
                           const Progress& progress, SimObserver* observer,
                           const WriteOptions& options) {
  resolveDefaults(c);
  validateConfig(c);
  const Topology topo(c);
  StringTable names;
  const WorkModel work(c, topo, names);
  const std::vector<int> traced = tracedRanks(c);

  // GPU memory: a configuration that does not fit is refused, or with --allow-oom simulated and
  // marked invalid (the seed paper's out-of-memory rows).
  const MemoryReport memory = stageMemory(c, work);
  if (!memory.fits() && !c.allowOom)
    throw InvalidConfig(describeShortfall(c, memory) +
                        "; --allow-oom simulates it, marked invalid");

  const auto tracing = chooseTracedSteps(c, work, topo, traced);
  const std::function<bool(int)>& traceStep = tracing.first;
  const std::string& stepsText = tracing.second;

  const std::filesystem::path dir =
      output.parent_path().empty() ? std::filesystem::path(".") : output.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(fmt::format("{}: the folder {} does not exist", output.string(), dir.string()));
  ScratchFile scratch(dir);
  TelemetryRecorder recorder(c, topo, scratch);
  constexpr double kMiB = 1024.0 * 1024.0;
  const double capacityMiB = memory.capacity / kMiB;
  for (int g = 0; g < topo.world(); ++g) {
    const RankMemory& m = memory.stages[static_cast<size_t>(topo.coord(g).pp)];
    recorder.setMemoryUsed(g, std::min(capacityMiB, m.persistent() / kMiB),
                           std::min(capacityMiB, m.total() / kMiB), c.leadInS);
  }
  KernelSink sink(topo, traced, scratch, names);

  EngineSetup setup;
  setup.config = &c;
  setup.topology = &topo;
  setup.work = &work;
  setup.names = &names;
  setup.recorder = &recorder;
  setup.kernels = &sink;
  setup.traceStep = traceStep;
  setup.observer = observer;
  EngineResult er = runEngine(setup, progress.sub(0.0, 0.6));

  const RunInfo info = simulatedRunInfo(c, er, traced, stepsText, memory);
  RunWriter writer(output, info, topo.gpuInfos(c), topo.rankInfos(), options);
  const Progress write = progress.sub(0.6, 1.0);
  SimulationSummary sum;
  sum.output = output;
  sum.gpus = topo.world();
  for (int g = 0; g < topo.world(); ++g) {
    sum.samples += recorder.samples(g);
    writer.addGpuTelemetry(g, recorder.take(g, c.startNs + toNs(c.telemetryOffsetS)));
    if (g % 16 == 15)
      write.report(0.6 * (g + 1) / topo.world(),
                   fmt::format("writing telemetry: GPU {} of {}", g + 1, topo.world()));
  }
  const size_t slots = sink.trackSlots();
  for (size_t s = 0; s < slots; ++s) {
    KernelTrack t = sink.takeTrack(s, c.startNs);
    if (!t.events.empty()) writer.addKernelTrack(std::move(t), names);
    write.report(0.6 + 0.3 * static_cast<double>(s + 1) / static_cast<double>(slots),
                 "writing kernel traces");
  }
  sum.kernels = sink.kernels();
  for (Iteration& it : er.iterations) {
    it.start_ns += c.startNs;
    it.end_ns += c.startNs;
  }
  writer.addIterations(er.iterations);
  writer.addAnnotations(sink.takeAnnotations(c.startNs), names);
  for (ThrottleTruth& t : er.throttle) {
    t.start_ns += c.startNs;
    t.end_ns += c.startNs;
  }
  std::sort(er.throttle.begin(), er.throttle.end(),
            [](const ThrottleTruth& a, const ThrottleTruth& b) {
              return std::tie(a.gpu, a.start_ns) < std::tie(b.gpu, b.start_ns);
            });
  writer.setGroundTruth(std::move(er.throttle), er.energyJ);
  if (!memory.fits())
    writer.addQualityNote({Severity::Warning, "out_of_memory",
                           fmt::format("rank {}", memory.worst().rank),
                           describeShortfall(c, memory) +
                               " (simulated with --allow-oom: a real run would have failed)"});
  if (traced.size() < static_cast<size_t>(topo.world()) || stepsText != "all")
    writer.addQualityNote(
        {Severity::Info, "partial_trace", "kernels",
         fmt::format("simulated kernel traces cover {} of {} ranks and {} iterations "
                     "(--trace-ranks, --trace-steps)",
                     traced.size(), topo.world(), stepsText)});
  writer.finish(write.sub(0.9, 1.0));

  sum.tracedRanks = static_cast<int>(traced.size());
  sum.traceSteps = stepsText;
  sum.iterations = er.completedIterations;
  sum.simulatedS = er.endS;
  sum.trainingS = er.trainingEndS - c.leadInS;
  sum.peakMemoryGiB = memory.worst().total() / (kMiB * 1024.0);
  sum.usableMemoryGiB = memory.capacity / (kMiB * 1024.0);
  sum.outOfMemory = !memory.fits();
  return sum;
}

}  // namespace wl::sim
