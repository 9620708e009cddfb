// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The simulation engine: every lockstep unit runs its stage's iteration program, every GPU's
// power, temperature and clock evolve, and each feeds back into the other.
//
// Time advances in physics steps (5 ms by default). Within a step every GPU's clock is fixed, so
// the end of a running phase is known exactly: a phase of a unit lasts
//   D = max over members m of (S_m x fmax / f_m) + fixed + exposed communication
// (S_m: the member's clock-scaled work, with its jitter and expert load), and progresses by
// elapsed / D. Phase ends, pipeline exchanges (a rendezvous of two units: done at the later post
// plus the transfer time) and group collectives (done when the last unit arrives plus the
// transfer time) are events ordered by time; a unit that waits spins in a communication kernel.
// So a slow GPU delays its unit, a slow unit its pipeline neighbours and its data-parallel group:
// stragglers and bubbles emerge from the schedule.
//
// Each GPU integrates the activity of what it runs over the step; at the step's end the power
// model turns activity, clock and temperature into power, the thermal model advances the
// temperature, the governor picks the next clock, and the recorder samples the sensors.

#include <functional>
#include <span>
#include <vector>

#include "loaders/core/progress.h"
#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"
#include "loaders/sim/kernel_expander.h"
#include "loaders/sim/sim_config.h"
#include "loaders/sim/telemetry_recorder.h"
#include "loaders/sim/topology.h"
#include "loaders/sim/work_model.h"

namespace wl::sim {

// Sees the simulator's true (noise-free) power of every GPU after each physics step.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void onStep(double startS, double dtS, std::span<const double> powerW) = 0;
};

struct EngineResult {
  double endS = 0;          // run span, seconds after the start
  double trainingEndS = 0;  // when the last unit finished (or the duration cut)
  int completedIterations = 0;
  std::vector<Iteration> iterations;    // start/end relative to the run start
  std::vector<ThrottleTruth> throttle;  // relative
  std::vector<double> energyJ;
};

struct EngineSetup {
  const SimConfig* config = nullptr;
  const Topology* topology = nullptr;
  const WorkModel* work = nullptr;
  StringTable* names = nullptr;
  TelemetryRecorder* recorder = nullptr;
  KernelSink* kernels = nullptr;
  std::function<bool(int)> traceStep;  // is this iteration traced?
  SimObserver* observer = nullptr;
};

EngineResult runEngine(const EngineSetup& setup, const Progress& progress);

}  // namespace wl::sim
