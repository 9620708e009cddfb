// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A projection written as a run (docs/whatif.md, "A projected run"): `wattline whatif RUN.h5
// --power-limit W -o OUT.h5` and the What-if panel's "Open as B". The measured run's replay at
// one setting (analysis/whatif.h, projectSamples(): the same numbers as projectRun's row) becomes
// a run file that opens, analyzes and compares like any other:
//
//   - time: one monotone map old -> new, piecewise linear with a knot at each whole iteration's
//     start and at the last one's end; each step gains its share of the projected step's change
//     (the slowest GPU's compute stretch in that step, the ranks wait on it), so the whole
//     iterations last the projected step on average. Before the first whole iteration the map is
//     the identity, after the last one a shift. Kernel starts and ends, telemetry timestamps,
//     iterations and annotations go through it;
//   - telemetry: power_w, sm_clock_mhz and temp_c are the projected series; the throttle masks'
//     limit bits are the projection's (SW power cap or SW thermal on the busy samples a limit
//     slowed); each sample's power is its projected power over its stretched span with the
//     GPU's wait power over the time the step added and its own kernels did not fill, so the file's
//     energy is the projection's. Metrics the projection does not model: energy_j,
//     hotspot_temp_c and mem_temp_c are dropped (they would contradict the projected power and
//     temperature), the others (utilization, memory clock and use, ...) are carried over unchanged
//     with a quality note; node telemetry is dropped;
//   - metadata: the measured run's configuration, GPUs, ranks, power domains, sensors, sources and
//     quality notes, never a simulated run's /ground_truth or per-kernel truth clock; the mark:
//     simulated 0, a /sources row of format "whatif" (its path the measured file's name) and
//     parameters_json {"projected": {source, setting, outcome, calibration, ...}}
//     (docs/format.md, "Projected runs").
//
// The file is written to a temporary name beside the output and renamed when complete (RunWriter);
// the measured run is only read.

#include <filesystem>
#include <string>

#include "analysis/calibration.h"
#include "analysis/whatif.h"
#include "loaders/core/progress.h"
#include "loaders/core/run_model.h"

namespace wl {

class RunFile;

// The /sources format that marks a projected run.
inline constexpr const char* kProjectedSourceFormat = "whatif";

// Whether a run is a projection (a /sources row of format "whatif").
bool isProjectedRun(const RunInfo& info);

// Writes `run` projected to `setting` with its calibration `cal` (calibrateRun(run)) to `out`.
// Throws wl::Error naming the file when the run cannot be projected (as projectRun) or `out` is
// the run's own file; wl::Cancelled from `progress`. An existing `out` is replaced whole, as
// `wattline import` and `simulate` replace theirs.
void writeProjectedRun(const RunFile& run, const Calibration& cal, const WhatifSetting& setting,
                       const std::filesystem::path& out, const Progress& progress = {});

// The run name a projected run gets: the measured run's name and the setting.
std::string projectedRunName(const RunInfo& measured, const WhatifSetting& setting);

}  // namespace wl
