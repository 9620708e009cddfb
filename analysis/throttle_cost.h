// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What heat and power limits cost the job (docs/analyses.md, "Cost of throttling"): for every
// iteration, the seconds power and thermal limits added to its duration, split by GPU and by
// reason, after propagation through the collectives and after what slack absorbed.
//
// - A GPU's clock loss at time t is 1 - clock / reference clock inside the throttled segments of
//   the throttle detector run with the threshold at the reference clock (every busy sample below
//   it, throttle_detection.h) whose cause is a power or thermal limit (recorded bit or inferred);
//   0 elsewhere. Compute kernels are taken as clock-bound (their time scales with 1 / clock),
//   memory copies and communication as clock-independent.
// - Traced iterations (every analysed rank's kernels span the iteration): a replay. Events are
//   taken in start order; a rank's lead grows by each compute kernel's saving (its duration x the
//   loss over it); a collective instance (process group, sequence number) completes at the
//   latest arrival, so after it every member leads by latest arrival - latest arrival with leads
//   (a late rank delays the group; an early rank's saving is absorbed by its wait). The
//   iteration's cost is its end - the latest rank end with leads. Who caused a lead travels with
//   it (proportionally), so the cost splits by GPU and reason.
// - Other iterations (untraced, or a telemetry-only run): each GPU's own lost time is the busy
//   time x loss over the iteration; the job waits for the slowest, so the cost is
//   k x max over GPUs, split by the Shapley value of that max. k (the share of lost busy time
//   that lands on the critical path; about compute kernels' share of busy time) comes from the
//   traced iterations of the same run when there are any; else from the slope of step time
//   against that max over the iterations, when the throttling varies enough over the run to fit
//   it; else a prior of 0.8, with a wider uncertainty.
// - Energy: the joules the analysed GPUs drew during the lost seconds (their mean power in the
//   iteration x the cost).
//
// It reads what a real run has (telemetry, iterations, kernels, collectives), never a simulated
// run's ground truth.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/throttle_detection.h"
#include "loaders/core/progress.h"
#include "loaders/format/run_file.h"

namespace wl {

enum class CostMethod : uint8_t { Traced, Telemetry };
std::string_view costMethodId(CostMethod m);  // "traced", "telemetry"

// The prior share of lost busy time on the critical path for runs without traced iterations.
inline constexpr double kCostTelemetryPrior = 0.8;
// Stated relative uncertainties of one iteration's cost by method (docs/analyses.md gives the
// measured errors behind them).
inline constexpr double kCostTracedUncertainty = 0.15;
inline constexpr double kCostCalibratedUncertainty = 0.25;
inline constexpr double kCostPriorUncertainty = 0.4;

struct IterationCost {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  double step_s = 0.0;
  CostMethod method = CostMethod::Telemetry;
  double cost_s = 0.0;     // seconds power and thermal limits added to the iteration
  double energy_j = kNaN;  // joules the analysed GPUs drew during them
  std::array<double, kThrottleCauseCount> by_cause_s{};
  std::vector<double> gpu_cost_s;   // per analysed GPU (ThrottleCost::gpus order): its share
  std::vector<double> gpu_own_s;    // per analysed GPU: busy time its own clock lost
  std::vector<double> rank_late_s;  // per analysed rank: its arrival at the iteration's last
                                    // collective - the earliest arrival (NaN: untraced)
};

struct GpuCost {
  int gpu = -1;
  int slot = -1;
  double step_s = 0.0;  // mean seconds per iteration its throttling cost the job
  double share = kNaN;  // of the job's cost
  double own_s = 0.0;   // mean seconds per iteration of busy time its own clock lost
  std::string cause;    // the cause id with most of its cost ("" when none)
  // Mean step time with this GPU alone unthrottled (NaN where not projected: beyond the
  // kCostProjectedGpus GPUs of most cost).
  double unthrottled_step_s = kNaN;
};
inline constexpr size_t kCostProjectedGpus = 16;

struct ThrottleCost {
  std::string unknown;  // why no cost could be estimated; "" when it was
  size_t iterations = 0;
  size_t traced_iterations = 0;
  std::string method;  // "traced", "telemetry" or "mixed"
  double mean_step_s = kNaN;
  double step_s = kNaN;         // mean seconds lost per iteration
  double fraction = kNaN;       // step_s / mean_step_s
  double uncertainty_s = kNaN;  // stated: +- on step_s
  double energy_j = kNaN;       // over the analysed iterations
  double telemetry_scale = kNaN;
  std::string telemetry_scale_source;  // "traced iterations", "step times" or "prior"
  std::array<double, kThrottleCauseCount> by_cause_s{};  // mean per iteration
  std::vector<int> gpus;
  std::vector<int> ranks;
  std::vector<GpuCost> by_gpu;  // by step_s, largest first
  std::vector<IterationCost> per_iteration;

  // The ids of the iterations whose cost was replayed from traces, as "19-20" ("" when none).
  std::string tracedSteps() const;
};

// How the verdict writes numbers and names: "0.213 s" ("12.4 s" from 10 s on); "310 J", "4.2 kJ",
// "1.25 kWh"; a cause id's label ("sw_thermal" -> "SW thermal"); a slot ("front slot", "slot 2,
// behind the front"; "" when unknown).
std::string costSecondsText(double s);
std::string costJoulesText(double j);
std::string throttleCauseText(const std::string& id);
std::string slotText(int slot);

// The verdict in a few sentences with the numbers (`wattline explain`, the Analysis dock).
std::vector<std::string> explainCost(const ThrottleCost& c);

// `gpus` and `ranks` as scopeGpus / scopeRanks give them; iterations wholly inside `range`.
ThrottleCost estimateThrottleCost(const RunFile& run, const std::vector<int>& gpus,
                                  const std::vector<int>& ranks, TimeRange range,
                                  const AnalysisOptions& options, const Progress& progress = {});

}  // namespace wl
