// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Thermal response per GPU (docs/analyses.md, "Thermal response"): time at or above the slowdown
// temperature, headroom, time to first throttle, a first-order thermal time constant fitted to
// temperature and power, and the lag of temperature behind power (cross-correlation peak).
//
// The fit and the lag use bucket means of the finest pyramid level whose buckets are at least
// AnalysisOptions::thermalFitMinBucketS wide and that keeps GPUs x buckets within
// thermalFitMaxCells (the resolution is reported): the time constants of GPU packages are tens of
// seconds, and bucket means keep the cost independent of the sampling rate. The resolution, and
// so the estimate, can differ between a run-wide analysis and one of a few GPUs.

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

// T[n+1] = a T[n] + b0 P[n+1] + b1 P[n] + c by least squares over consecutive valid pairs (bucket
// means of a first-order system depend on the input of both buckets); the time constant is
// -dt / ln(a) when 0 < a < 1, and b = b0 + b1 (steady-state gain b / (1 - a) in C per W).
struct FirstOrderFit {
  double a = kNaN, b = kNaN, c = kNaN;
  double tau_s = kNaN;
  double r2 = kNaN;
  size_t pairs = 0;
};
FirstOrderFit fitFirstOrder(std::span<const double> temp, std::span<const double> power,
                            double dtS);

// The lag L >= 0 (in steps of dtS, up to maxLagS) maximising the Pearson correlation of P[n] with
// T[n + L]; NaN when fewer than 10 pairs or no variance.
struct LagEstimate {
  double lag_s = kNaN;
  double correlation = kNaN;
};
LagEstimate powerTemperatureLag(std::span<const double> temp, std::span<const double> power,
                                double dtS, double maxLagS);

struct ThermalResponse {
  double slowdown_c = kNaN;             // from the GPU's metadata
  double headroom_c = kNaN;             // slowdown - max temperature
  double time_above_slowdown_s = kNaN;  // NaN when the slowdown temperature is unknown
  double time_to_first_throttle_s = kNaN;
  double time_constant_s = kNaN;
  double fit_r2 = kNaN;
  double lag_s = kNaN;
  double lag_correlation = kNaN;
  double fit_resolution_s = kNaN;  // bucket width the fit used
};

// Fit and lag for each GPU from bucket means over the whole buckets inside `range`.
struct ThermalFitResult {
  FirstOrderFit fit;
  LagEstimate lag;
};
std::vector<ThermalFitResult> thermalFits(const RunFile& run, const std::vector<int>& gpus,
                                          TimeRange range, const AnalysisOptions& options,
                                          double* resolutionS = nullptr);

}  // namespace wl
