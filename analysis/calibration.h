// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Calibration of a run's own power, thermal and clock model from what a real run records
// (docs/whatif.md): per-GPU telemetry (power, temperature, SM clock, utilization, throttle
// reasons), the GPUs' metadata (power limit, max clock, chassis slot, package) and the kernel
// traces. Nothing a simulated run alone carries is read: not its platform profile or seed
// (parameters_json), not its ground truth.
//
// Fits, each with its error:
//   idle power       median of the power samples whose whole sensor window was idle, before the
//                    first busy sample (the GPU at its idle temperature);
//   power            P = c0 + cT (T - Tm) + sum_k w_k s_k x^g over every sample, s_k the busy share
//                    of power group k (compute: matmul and attention; memory: norm and
//                    elementwise; communication) in the power sensor's window, x the mean SM
//                    clock / max clock, g from a grid;
//   thermal          T_die = T_in + R_die P + R_sink lag_tau(P) [+ r_up lag_tau(P_upstream)] with
//                    tau from a grid and the upstream GPU (the one whose exhaust a rear GPU
//                    breathes) chosen by the residual;
//   governor         the power the cap holds (median power of samples whose whole sensor window
//                    had the SW power cap bit),
//                    the clock's fall per degree while capped and under SW thermal slowdown;
//   clock response   per kernel name, duration = a + b fmax / f over its instances; the share
//                    b fmax / (f d) of its duration that follows the clock, per class.

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "loaders/core/run_model.h"

namespace wl {

class RunFile;

// Activity classes of the power and clock fits (from analysis/kernel_categories.h's corrected
// order): tensor-core GEMMs, attention, normalization, other elementwise / memory kernels and
// communication.
enum class ActivityClass { Matmul, Attention, Norm, Elementwise, Communication };
inline constexpr size_t kActivityClassCount = 5;
const char* activityClassId(ActivityClass c);

// Groups of the power fit: within a sensor window the busy shares of the five classes move
// together too closely to tell all five apart.
enum class PowerGroup { Compute, Memory, Communication };
inline constexpr size_t kPowerGroupCount = 3;
const char* powerGroupId(PowerGroup g);
PowerGroup powerGroupOf(ActivityClass c);

struct FitQuality {
  size_t samples = 0;
  double rmse = kNaN;  // root mean square residual, in the fitted quantity's unit
  double r2 = kNaN;    // coefficient of determination
};

struct PowerFit {
  double idle_w = kNaN;     // median idle power
  double idle_sd_w = kNaN;  // spread of the idle samples
  size_t idle_samples = 0;
  double idle_temp_c = kNaN;  // median temperature of the idle samples before the first busy one
  double intercept_w = kNaN;  // c0: power with no kernel running at the mean temperature
  double temp_ref_c = kNaN;   // Tm
  double temp_coef_w_per_c = kNaN;
  double clock_exponent = kNaN;                    // g
  std::array<double, kPowerGroupCount> group_w{};  // w_k: W per unit busy share at max clock
  FitQuality quality;
};

struct ThermalFit {
  double inlet_c = kNaN;  // T_in (a rear GPU's: its node's, before preheating)
  double die_resistance_c_per_w = kNaN;
  double sink_resistance_c_per_w = kNaN;
  double resistance_c_per_w = kNaN;     // R_die + R_sink: the rise per watt at equilibrium
  double tau_s = kNaN;                  // heatsink time constant
  double heat_capacity_j_per_c = kNaN;  // tau / R_sink
  int upstream_gpu = -1;                // the GPU whose exhaust it breathes, -1 none
  double upstream_c_per_w = kNaN;       // inlet rise per watt of the upstream GPU
  FitQuality quality;
};

struct GovernorFit {
  double power_limit_w = kNaN;  // the GPU's recorded limit (its domain's on MI250)
  double max_clock_mhz = kNaN;
  size_t busy_samples = 0;
  size_t capped_samples = 0;
  double capped_fraction = kNaN;     // of busy samples, SW power cap bit set
  size_t steady_capped_samples = 0;  // capped over the whole sensor window
  double cap_power_w = kNaN;         // median power of those: what the cap holds
  double cap_power_frac = kNaN;      // ... over the limit
  double cap_clock_mhz = kNaN;       // median clock while capped
  double cap_clock_per_c = kNaN;     // clock change per degree while capped (MHz/C)
  size_t thermal_samples = 0;        // SW thermal slowdown
  double thermal_clock_per_c = kNaN;
};

struct GpuCalibration {
  int gpu = 0, node = 0, slot = -1, package = -1, rank = -1;
  PowerFit power;
  ThermalFit thermal;
  GovernorFit governor;
};

struct ClassResponse {
  ActivityClass cls = ActivityClass::Matmul;
  double clock_sensitivity = kNaN;  // 1: duration ~ 1/f (compute-bound), 0: independent
  double spread = kNaN;             // duration-weighted sd over the kernel names
  size_t names = 0;                 // kernel names with enough clock variation
  size_t instances = 0;
  double time_share = kNaN;  // of the traced kernel time
};

struct CalibrationOptions {
  // Power sensor averaging window (s); < 0: what the run's sensor semantics say of power_w
  // (RunFile::sensors()), else 1 s, NVML's power.draw average.
  double power_window_s = -1;
};

struct Calibration {
  std::string run;
  double power_window_s = 1.0;
  std::string power_window_source;
  ParallelConfig config;
  std::string platform;
  std::vector<GpuCalibration> gpus;
  std::vector<ClassResponse> classes;
};

// Throws wl::Error with one line naming the file and what is missing when the run lacks what the
// fits need (power, temperature or SM clock telemetry, kernel traces).
Calibration calibrateRun(const RunFile& run, const CalibrationOptions& options = {});

// The fitted power at a clock ratio x = f / fmax, a temperature and busy shares per power group.
double predictPower(const PowerFit& p, double clockRatio, double tempC,
                    const std::array<double, kPowerGroupCount>& share);

nlohmann::json toJson(const Calibration& c);

}  // namespace wl
