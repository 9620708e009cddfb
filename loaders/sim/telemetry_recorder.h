// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a telemetry tool (nvidia-smi, NVML through Zeus, amd-smi) would have recorded.
//
// Every GPU is sampled at the requested rate by its own sampler, whose timestamps jitter. A sample
// reads the sensors as of the end of the physics step it falls in:
//   power      averaged over the sensor window (one physics step for NVIDIA's instant power, 1 s
//              for NVML's power.draw average or AMD's average socket power), plus a per-GPU bias
//              and per-sample noise; on MI250 the package power is reported on the first GCD of the
//              package and the second reports none (NaN), as amd-smi does;
//   temp_c, mem_temp_c   rounded to whole degrees after a little noise;
//   sm_clock_mhz         the applied clock; mem_clock_mhz the memory clock;
//   util_pct   the share of the utilization window in which a kernel ran, in whole percent;
//   throttle_reasons     the governor's NVML reason bits.
// Samples are spilled to scratch storage and handed back per GPU as TelemetryTables.

#include <cstdint>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/sim/rng.h"
#include "loaders/sim/scratch_store.h"
#include "loaders/sim/sim_config.h"
#include "loaders/sim/topology.h"

namespace wl::sim {

// The state of every GPU at the end of one physics step.
struct GpuStepView {
  const std::vector<double>& powerW;  // true power over the step
  const std::vector<double>& busy;    // fraction of the step with a kernel running
  const std::vector<double>& tempC;
  const std::vector<double>& memTempC;
  const std::vector<double>& clockMhz;  // clock of the next step
  const std::vector<uint32_t>& reasons;
  // Cumulative bytes (unused without SimConfig::linkCounters).
  const std::vector<double>& linkTx;
  const std::vector<double>& linkRx;
  const std::vector<double>& netTx;
  const std::vector<double>& netRx;
  const std::vector<double>& pcieTx;
  const std::vector<double>& pcieRx;
};

class TelemetryRecorder {
 public:
  TelemetryRecorder(const SimConfig& c, const Topology& topo, ScratchFile& scratch);

  // Records the samples that fall in the step (t1 - dt, t1] (seconds since the run start).
  void afterStep(double t1, const GpuStepView& s);
  // Memory a GPU's process holds (nvidia-smi memory.used, MiB): `before` until the training
  // starts, `during` from then on (the caching allocator keeps the first iteration's peak).
  void setMemoryUsed(int gpu, double beforeMiB, double duringMiB, double trainingStartS);
  // A GPU's samples as a table (absolute timestamps); releases them.
  TelemetryTable take(int gpu, int64_t startNs);
  size_t samples(int gpu) const { return spill_.count(static_cast<size_t>(gpu)); }

 private:
  struct Sample {
    int64_t tNs;  // relative to the run start
    float powerW;
    uint32_t reasons;
    uint16_t smClock, memClock;
    int8_t temp, memTemp;
    uint8_t util;
    uint8_t hasPower;
    uint32_t linkTxKiB, linkRxKiB;        // NVLink counters: KiB, 32 bits (they wrap, as NVML's do)
    double netTx, netRx, pcieTx, pcieRx;  // bytes
  };
  static_assert(sizeof(Sample) == 64);

  double nextSampleTime(int gpu);

  const SimConfig& c_;
  const Topology& topo_;
  RecordSpill<Sample> spill_;
  int n_;
  double dt_, period_, jitterS_;
  size_t powerSteps_, utilSteps_;
  bool reportPackagePower_;
  // Per GPU.
  std::vector<std::vector<float>> powerRing_, busyRing_;
  std::vector<double> powerSum_, busySum_;
  std::vector<size_t> ringPos_;
  std::vector<uint64_t> stepsSeen_;
  std::vector<int64_t> sampleIndex_;
  std::vector<double> nextT_;
  std::vector<double> bias_;
  std::vector<Rng> noise_, jitter_;
  struct MemoryUsed {
    double before = kNaN, during = kNaN, fromS = 0;
  };
  std::vector<MemoryUsed> memory_;
};

}  // namespace wl::sim
