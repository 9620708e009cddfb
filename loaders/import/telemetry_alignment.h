// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Automatic alignment of a telemetry source to the kernel traces (docs/import.md, "Aligning
// telemetry to the traces"; issue 29). The traced GPU activity (the share of traced ranks running
// a kernel) is passed through a sensor model, a trailing mean over a window W (0: the reading at
// the instant), and matched against the source's samples of power or utilization: for every
// candidate clock offset X and window W, the Pearson correlation of the samples with the model at
// (sample time - X). The best pair is the estimate; its confidence comes from how much better it
// fits than the best offset more than kSeparationS away (periodic training makes look-alike
// offsets one iteration apart). Only what a real run has is read: sample times and values, kernel
// start and end times.

#include <cstdint>
#include <string>
#include <vector>

namespace wl::import {

// One traced rank's GPU activity: its kernels' [start, end) intervals (any order, may overlap) and
// the span the trace covers (activity outside it is unknown).
struct TracedActivity {
  std::vector<std::pair<int64_t, int64_t>> kernels;
  int64_t lo = 0, hi = 0;
};

// Samples of one GPU's metric (times strictly increasing; NaN values are skipped).
struct MetricSamples {
  std::vector<int64_t> t_ns;
  std::vector<double> v;
};

struct AlignmentOptions {
  double searchS = 2.5;  // offsets searched: -searchS .. +searchS
  // Sensor windows tried (s); 0 is an instantaneous reading.
  std::vector<double> windowsS = {0.0, 0.1, 1.0 / 6.0, 0.25, 0.5, 1.0};
  size_t minSamples = 20;           // fewer matched samples: no estimate
  size_t minConfidentSamples = 60;  // fewer: an estimate, never confident
  double minCorrelation = 0.5;      // below: not confident
  // Unexplained variance (1 - R^2) of the best offset more than kSeparationS away, as a multiple
  // of the estimate's: below, not confident.
  double minSeparation = 2.0;
  // ... and at least this share of the samples' variance more than the estimate's: a fit that is
  // (nearly) perfect at offsets far apart, as a step matched by the free levels at either edge of
  // a trace shorter than a sample spacing is, identifies no offset.
  double minSeparationGap = 0.005;
};

struct AlignmentEstimate {
  bool estimated = false;  // false: "no estimate" (see reason)
  std::string reason;      // why there is no estimate
  // The telemetry's clock minus the traces' clock: add -telemetry_ahead_ns to the telemetry.
  int64_t telemetry_ahead_ns = 0;
  double window_s = 0;       // the sensor window that fitted best
  double correlation = 0;    // at the estimate
  double runner_up = 0;      // best correlation more than kSeparationS from the estimate
  double uncertainty_s = 0;  // half-width of the offsets whose correlation is within 0.005
  size_t samples = 0;        // samples matched at the estimate
  // R^2 at the estimate minus the R^2 of the levels before, inside and after the traced span
  // alone: what the traced kernels explain beyond the trace's edges (0: the fit is an edge).
  double activity_gain = 0;
  bool confident = false;
};

inline constexpr double kSeparationS = 0.15;

// The estimate for one source: `series` are its GPUs' samples of one metric, `ranks` the traced
// activity of the ranks it is matched against.
AlignmentEstimate estimateAlignment(const std::vector<MetricSamples>& series,
                                    const std::vector<TracedActivity>& ranks,
                                    const AlignmentOptions& options = {});

// One line for notes and reports: "+302 ms (window 0 s, r 0.93 vs 0.71, +-4 ms, 812 samples)".
std::string describe(const AlignmentEstimate& e);

}  // namespace wl::import
