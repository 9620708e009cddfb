// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What if (docs/whatif.md, "wattline whatif"): projects a measured run to another power limit,
// inlet temperature or set of unthrottled GPUs with the run's own calibration
// (analysis/calibration.h). The projection replays the run's own telemetry sample by sample:
// each busy sample's activity is the calibrated power model inverted at the measured power, clock
// and temperature; at the new setting the clock is what the cap (the power the cap holds, scaled
// to the new limit) and the SW thermal slowdown allow, the power follows from the power model,
// the temperature from the thermal model (die resistance, heatsink lag, the GPU upstream) and the
// kernels of each sample stretch by their classes' clock sensitivity. A step lasts the measured
// step plus the change of the slowest GPU's compute time (times (m + p - 1) / m for a 1F1B
// pipeline of m microbatches and p stages). It reads only the calibration, the run's telemetry,
// traces, iterations and configuration, never a simulated run's parameters or ground truth.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/calibration.h"

namespace wl {

class RunFile;

struct WhatifSetting {
  std::optional<double> power_limit_w;  // per GPU (per package where GPUs share a domain)
  std::optional<double> inlet_temp_c;   // cold-aisle air
  std::vector<int> unthrottled_gpus;    // never lowered by a power or thermal limit
};

// What one setting gives (measured, reproduced or projected), per training step.
struct WhatifOutcome {
  double step_s = kNaN;
  double tokens_per_s = kNaN;
  double energy_per_token_j = kNaN;
  double peak_temp_c = kNaN;
  double throttled_fraction = kNaN;  // busy samples whose clock a power or thermal limit lowered
};

struct WhatifRow {
  std::string kind;  // "measured", "model at the measured setting", "projected"
  double power_limit_w = kNaN;
  double inlet_temp_c = kNaN;
  std::vector<int> unthrottled_gpus;
  WhatifOutcome value;
  WhatifOutcome uncertainty;  // one standard error from the calibration's errors (NaN: none)
};

struct WhatifProjection {
  std::string run;
  int steps = 0;                  // whole iterations measured
  double tokens_per_step = kNaN;  // gbs x sequence length
  std::vector<WhatifRow> rows;    // the measured run, the model at it, then each setting
  std::vector<std::string> notes;
};

// The run's own step time, throughput, energy per token, peak temperature and throttled share
// over its whole iterations (the measured point; also what a direct simulation at a setting is
// compared with). Throws wl::Error naming the file when it has no whole iteration.
WhatifOutcome measureRun(const RunFile& run);

// One setting's replay sample by sample, what a projected run is written from
// (analysis/projected_run.h). Per GPU, one value per sample of its temp_c column (the samples
// readGpuSeries() reads, in order); NaN where the measured sample has none.
struct ProjectedGpuSamples {
  std::vector<double> power_w, sm_clock_mhz, temp_c;  // at the setting
  // throttle::kSwPowerCap or kSwThermal on a busy sample whose clock a limit lowered, else 0.
  std::vector<uint32_t> limit_bits;
  // Inside the whole iterations: the sample's share of them (s), its compute-class busy time
  // measured and at the setting (s), and the power of that stretch (J: power x the difference).
  std::vector<double> held_s, compute_s, compute_new_s, stretch_energy_j;
  double traced = 1.0;         // the per-sample times over this are the GPU's whole-run share
  double wait_power_w = kNaN;  // the power of the time spent waiting (the longer step's rest)
};

struct ProjectedSamples {
  WhatifOutcome value;            // projectRun's row for the setting, the same number
  double measured_step_s = kNaN;  // measureRun's
  double extra_s = 0;             // time the whole iterations gain: (step - measured) x steps
  std::vector<std::pair<double, double>> steps_s;  // the whole iterations, s since the run start
  std::vector<ProjectedGpuSamples> gpus;
  std::vector<std::string> notes;
};

ProjectedSamples projectSamples(const RunFile& run, const Calibration& cal,
                                const WhatifSetting& setting);

// Throws wl::Error with one line naming the file and what is missing.
WhatifProjection projectRun(const RunFile& run, const Calibration& cal,
                            const std::vector<WhatifSetting>& settings);

nlohmann::json toJson(const WhatifProjection& p);
// The five outcome fields as the JSON's setting rows have them (null where NaN).
nlohmann::json outcomeJson(const WhatifOutcome& o);
// The power limit projectRun calls the measured one: the largest the GPUs record.
double measuredPowerLimit(const Calibration& cal);

}  // namespace wl
