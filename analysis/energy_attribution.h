// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Energy attribution (docs/analyses.md, "Energy attribution"): the GPU's power integrated
// (trapezoid, linear between samples, nothing across gaps) over sets of intervals: each iteration,
// each annotated phase (forward / backward / optimizer), and the rank's kernel classes (compute,
// exposed communication, exposed memory, other, idle inside the rank's span). Telemetry resolution
// bounds the precision: an interval shorter than the sampling interval gets the interpolated power,
// not what the GPU drew during it (NVML itself averages power over up to ~1 s on some GPUs).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/energy_integral.h"
#include "analysis/interval_set.h"
#include "analysis/iterations.h"
#include "analysis/kernel_breakdown.h"
#include "loaders/core/run_model.h"

namespace wl {

struct EnergyAttribution {
  int rank = -1;
  int gpu = -1;
  double total_j = kNaN;  // over the range
  double compute_j = kNaN;
  double exposed_comm_j = kNaN;
  double exposed_memory_j = kNaN;
  double other_events_j = kNaN;  // events of class "other" not covered by the above
  double idle_j = kNaN;          // inside the rank's span, no event running
  double outside_span_j = kNaN;  // in the range but before the first / after the last event
  SpreadStats iteration_j;       // over the rank's iterations inside the range
  std::vector<std::pair<std::string, double>> phases_j;  // "forward", "backward", "optimizer"
  double sample_interval_s = kNaN;  // the GPU's median sampling interval (precision bound)
};

// The phase a range annotation belongs to ("forward", "backward", "optimizer"), or "".
std::string phaseOf(std::string_view annotationName);

// A rank's annotations grouped by training phase (phaseOf: forward, backward, optimizer, ...), as
// interval sets, in phase-name order; annotations of no phase are left out.
class RunFile;
std::vector<std::pair<std::string, IntervalSet>> phasesOfRank(const RunFile& run, int rank);

// `states` must come from sweepClassStates(unions, &power).
EnergyAttribution attributeEnergy(const EnergyIntegral& power, TimeRange range,
                                  const RankBreakdown& breakdown, const ClassStateTotals& states,
                                  const std::vector<Iteration>& rankIterations,
                                  const std::vector<std::pair<std::string, IntervalSet>>& phases);

}  // namespace wl
