// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Alignment inputs read from a run file the way the import reads them (tests/sensors).

#include <string_view>

#include "loaders/format/run_file.h"
#include "loaders/import/telemetry_alignment.h"
#include "loaders/sim/sim_config.h"

namespace wl::test {

// The run's samples of `metric` and its traced ranks' kernels as alignment inputs.
import::AlignmentEstimate estimateFromRun(const RunFile& run, std::string_view metric);

// What the import applies: the utilization estimate when it is confident, else the better fit of
// utilization and power (loaders/import/assemble.cpp, estimateInput).
import::AlignmentEstimate appliedEstimate(const RunFile& run);

// TinyLlama-1.1B on 2 GPUs for 12 s, every rank traced, telemetry `offsetS` ahead of the traces,
// power averaged over `windowS` (0: instantaneous).
sim::SimConfig alignmentConfig(double offsetS, double windowS);

}  // namespace wl::test
