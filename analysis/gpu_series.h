// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One GPU's telemetry on one time base, as the model fits read it (calibration.h) and the
// projections replay it (whatif.h): power, temperature, SM clock, utilization and throttle
// reasons at the temperature samples' times.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wl {

class RunFile;

struct GpuSeries {
  std::vector<double> t;                         // s since the run start
  std::vector<double> power, temp, clock, util;  // NaN where a metric has no sample at t
  std::vector<uint32_t> reasons;                 // empty when the run has none
};

// The GPU's whole series on its temperature samples' timestamps.
GpuSeries readGpuSeries(const RunFile& run, size_t gpu);

}  // namespace wl
