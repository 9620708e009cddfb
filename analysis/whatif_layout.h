// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What if, layout changes (docs/whatif.md, "Layout changes"): a measured run projected to another
// tensor, pipeline or data parallel size or microbatch. The replay of analysis/whatif.h cannot
// change which kernels run, so this runs the simulator (loaders/sim) twice with the calibration
// applied: at the measured layout (A) and at the new one (B), both from the built-in platform
// profile of the run's GPU type (a public prior, like a datasheet) with the calibration's inlet,
// power limit and power sensor window. The projection is the measured run times the simulator's
// ratio B / A (step time, throughput, energy per token) and the measured peak temperature plus
// the simulator's difference B - A: the prior's bias at the measured layout cancels. It reads the
// run's configuration (model, layout, batch, sequence length), its GPU type and the calibration,
// never a simulated run's parameters (platform profile, seed) or ground truth.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/calibration.h"
#include "analysis/whatif.h"
#include "loaders/core/error.h"
#include "loaders/core/progress.h"

namespace wl {

class RunFile;

// The layout asked for; unset fields keep the measured run's.
struct WhatifLayout {
  std::optional<int> tp, pp, dp, mbs;
  bool empty() const { return !tp && !pp && !dp && !mbs; }
};

// A layout the simulator cannot run (sizes that do not multiply to the run's GPUs, a batch that
// does not divide): bad usage, exit code 2 in the CLI.
class LayoutUnsupported : public Error {
 public:
  using Error::Error;
};

struct LayoutProjection {
  int tp = 0, pp = 0, dp = 0, mbs = 0;
  WhatifRow row;                // kind "projected layout": measured x simulated B / simulated A
  WhatifOutcome sim_measured;   // the simulator at the measured layout (A), calibration applied
  WhatifOutcome sim_projected;  // ... at the new layout (B): the absolute estimate
  double simulated_s = 0;       // seconds of training simulated at each layout
  std::vector<std::string> notes;
};

struct LayoutOptions {
  double max_simulated_s = 60;  // simulate at most this much training time per layout
  uint64_t seed = 1;            // the simulator's seed (a simulation parameter, not the run's)
  bool apply_fits = false;      // experimental: write the calibration's power and thermal fits
                                // into the profile (docs/whatif.md, "Layout changes")
};

// Throws LayoutUnsupported for a layout the simulator cannot run, wl::Error naming the file for a
// run whose model or GPU type the simulator does not know or that lacks its configuration.
LayoutProjection projectLayout(const RunFile& run, const Calibration& cal,
                               const WhatifSetting& setting, const WhatifLayout& layout,
                               const LayoutOptions& options = {}, const Progress& progress = {});

// The layout row as projectRun's JSON rows are, with "tp", "pp", "dp", "mbs", "method" and the two
// simulations.
nlohmann::json toJson(const LayoutProjection& p);

}  // namespace wl
