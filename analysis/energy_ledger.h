// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The energy ledger (docs/analyses.md, "Energy ledger"; issue 29, item 3): per GPU (traced rank)
// and iteration, the joules of compute, communication, idle and optimizer time, each with an
// uncertainty that follows from the power sensor's model (the run's /sensors entry for power_w:
// an instantaneous reading or a trailing average over a window, and how often it updates).
//
// Iterations without any kernel were not traced and are left out. The iteration's time is split by
// what the trace shows: optimizer (inside an annotation of the
// optimizer phase), compute (a kernel of any class but communication runs), communication (only
// communication kernels run) and idle (nothing runs). A sample of power is modelled as the sensor
// sees the GPU: the mean over its window of the class powers, weighted by each part's share of
// the window (a point for an instantaneous reading). The class powers are fitted by least squares
// over the samples whose window lies inside the analysed iterations, then scaled per iteration by
// the samples that see it (the GPU's power drifts with temperature and clocks). A part's energy is
// its class power times its duration. A part whose time in the iteration is at least what the
// sensor resolves (its window, the spacing of its samples, its update period) is resolved: its
// uncertainty (about 95 %) is twice the quadrature sum of the class power's standard error, the
// samples' residual scatter about the model and the class power times the spread of the
// per-iteration scale (how much a class's power varies between iterations), times the duration. A
// shorter part is not resolved: no sample saw it apart from the rest, so its uncertainty is the
// GPU's whole power range (the samples' and class powers' span, widened by twice the residual)
// times its duration, and it is flagged so.
//
// Only what a real run has is read: power samples, the sensor table, kernels, iterations and
// annotations; never the simulator's ground truth.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/interval_set.h"
#include "loaders/core/run_model.h"
#include "loaders/core/time_range.h"

namespace wl {

enum class LedgerPart { Compute = 0, Communication = 1, Idle = 2, Optimizer = 3 };
inline constexpr size_t kLedgerParts = 4;
const char* ledgerPartId(LedgerPart p);  // "compute", "communication", "idle", "optimizer"

struct LedgerValue {
  double s = 0;       // duration of the part in the iteration
  double j = kNaN;    // energy
  double u_j = kNaN;  // uncertainty (about 95 %: twice the standard error)
  bool resolved = false;
};

// The training phases of an iteration, from the rank's annotations (energy_attribution.h's
// phaseOf()): the same class powers give each phase's joules (the phase's time in each part times
// that part's power), with an uncertainty of the same kind.
enum class LedgerPhase { Forward = 0, Backward = 1, Optimizer = 2 };
inline constexpr size_t kLedgerPhases = 3;
const char* ledgerPhaseId(LedgerPhase p);  // "forward", "backward", "optimizer"

struct LedgerIteration {
  int64_t step = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::array<LedgerValue, kLedgerParts> parts;
  // Per phase; s = 0 and j unknown (NaN) where the iteration has no annotation of the phase.
  std::array<LedgerValue, kLedgerPhases> phases;
  // Seconds of each phase in each part (what the phases' joules are built from).
  std::array<std::array<double, kLedgerParts>, kLedgerPhases> phase_part_s{};
  double total_j = kNaN, total_u_j = kNaN;
  size_t samples = 0;  // samples whose sensor window overlaps the iteration
};

// The power sensor as the ledger models it.
struct LedgerSensor {
  bool average = false;    // a trailing mean over window_s, else an instantaneous reading
  double window_s = 0;     // 0 for an instantaneous reading
  double period_s = kNaN;  // how often the reading changes (NaN: unknown)
  double lag_s = 0;
  bool assumed = true;  // the run does not state it (a default of core/sensors.h)
  std::string basis;
};

struct EnergyLedger {
  int rank = -1, gpu = -1;
  LedgerSensor sensor;
  double sample_interval_s = kNaN;  // median spacing of the samples
  // The shortest stretch the sensor resolves: max(window, sample spacing, update period).
  double resolution_s = kNaN;
  std::array<double, kLedgerParts> power_w{};     // fitted class power (NaN: the part never ran)
  std::array<double, kLedgerParts> power_se_w{};  // its standard error
  double residual_w = kNaN;                       // RMS of the samples about the model
  // How far the samples may be off the traces' clock (ledgerTimingS()); a resolved part's
  // uncertainty includes how much its energy moves when the samples move that far.
  double timing_s = kNaN;
  // The power the GPU may have drawn: the samples' and class powers' span +- twice the residual.
  std::array<double, 2> power_range_w{kNaN, kNaN};
  size_t samples = 0;  // samples in the fit
  std::vector<LedgerIteration> iterations;
  std::string missing;  // why there is no ledger (empty when there is one)
};

struct LedgerInput {
  std::vector<int64_t> t_ns;  // power samples (telemetry clock), increasing
  std::vector<double> power_w;
  LedgerSensor sensor;
  double sample_interval_s = kNaN;
  // The rank's kernels by class and its optimizer annotations.
  IntervalSet nonCommunication, communication, optimizer;
  IntervalSet forward, backward;      // the rank's forward and backward annotations
  std::vector<Iteration> iterations;  // of this rank
  TimeRange range;
  // Added to the sample times before matching them with the kernels (an alignment not applied in
  // the file; 0 normally).
  int64_t telemetry_shift_ns = 0;
};

EnergyLedger energyLedger(const LedgerInput& in);

// The timing uncertainty of samples against the traces: a quarter of their median spacing, at
// least 5 ms. The automatic alignment's errors at 10 and 20 Hz (docs/import.md) are within it.
double ledgerTimingS(double sampleIntervalS);

// The parts of one iteration as the ledger splits it (compute, communication, idle, optimizer).
std::array<IntervalSet, kLedgerParts> ledgerParts(const LedgerInput& in, const Iteration& it);

// The ledger's input from what a rank's analysis holds: its GPU's power samples and their median
// spacing, the run's sensors, the rank's kernel class unions, its phases (phasesOfRank: the
// optimizer, forward and backward sets) and its iterations. analyzeRun() and ledgerInputOf() both
// build it here.
struct Samples;
struct ClassUnions;
LedgerInput ledgerInputFrom(const Samples& power, double sampleIntervalS,
                            const std::vector<SensorInfo>& sensors, const ClassUnions& unions,
                            const std::vector<std::pair<std::string, IntervalSet>>& phases,
                            std::vector<Iteration> iterations, TimeRange range);

// The ledger of one rank of a run read from the file (what analyzeRun() computes for it), with the
// telemetry shifted by `telemetryShiftNs` (an alignment estimate not applied in the file).
class RunFile;
LedgerInput ledgerInputOf(const RunFile& run, int rank, TimeRange range,
                          int64_t telemetryShiftNs = 0);

// The power sensor of a run's power_w (its /sensors entry or the default core/sensors.h assumes).
LedgerSensor ledgerSensorOf(const std::vector<SensorInfo>& sensors);

}  // namespace wl
