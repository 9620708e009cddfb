// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Level-of-detail pyramids (docs/format.md, "Pyramids").
//
// Every pyramid lives on a fixed time grid: level k splits [origin, origin + buckets_k * width_k)
// into buckets of width_k = width_0 * factor^k ns. Because the grid is global to the run, the
// bucket of a timestamp is arithmetic, every GPU's row of a level has the same length, and a
// level's buckets are exact unions of factor buckets of the level below.
//
// Telemetry buckets hold min, max and count of the valid samples that fall in them, plus the
// left-Riemann weighted sum, the trapezoid integral and the covered time of the segments that
// start in them (segments longer than the gap threshold contribute nothing). That makes min, max,
// time-weighted mean and energy over bucket-aligned ranges exact from the pyramid alone.
//
// Kernel buckets hold, per kernel class, the busy time (union of that class's intervals on the
// track) as a fraction of the bucket width, and the number of events that start in them.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "loaders/core/kernel_class.h"
#include "loaders/core/run_model.h"

namespace wl {

struct LodGrid {
  int64_t origin_ns = 0;
  int factor = 4;
  std::vector<int64_t> widths_ns;  // per level, ascending
  std::vector<size_t> buckets;     // per level

  size_t levels() const { return widths_ns.size(); }
  // Bucket index of t at a level, clamped to the valid range.
  size_t bucketOf(size_t level, int64_t t) const;
  int64_t bucketStart(size_t level, size_t b) const {
    return origin_ns + static_cast<int64_t>(b) * widths_ns[level];
  }

  // Telemetry: width_0 is the smallest power of two >= 8 x the median interval (and large
  // enough that level 0 has at most 2^22 buckets, and at most max(4096, 4 x maxSamples) when the
  // largest number of samples of one series is given, so that the pyramid's size follows the
  // samples, not the span); levels go up by 4 until one has <= 256.
  static LodGrid forTelemetry(int64_t start_ns, int64_t end_ns, int64_t medianIntervalNs,
                              size_t maxSamples = 0);
  // Kernels: width_0 is the smallest power of two >= span / 65536 (and >= 256 ns).
  static LodGrid forKernels(int64_t start_ns, int64_t end_ns);
};

struct TelemetryLodLevel {
  std::vector<float> min, max;
  std::vector<uint32_t> count;
  std::vector<double> wsum;  // sum of v_i * dt_i, value x seconds
  std::vector<double> tsum;  // sum of (v_i + v_j) / 2 * dt_i, value x seconds (J for power)
  std::vector<double> dt;    // covered seconds

  void resize(size_t n);
};

// Builds every level for one series. t must be sorted; NaN values are missing samples.
std::vector<TelemetryLodLevel> buildTelemetryLod(const LodGrid& grid, std::span<const int64_t> t,
                                                 std::span<const double> v, int64_t gapThresholdNs);

// Throttle-reason pyramid: per bucket, the OR of the recorded masks (samples with kUnknown left
// out) and the number of samples with any slowdown reason (throttle::kSlowdownMask).
struct ThrottleLodLevel {
  std::vector<uint32_t> any;
  std::vector<uint32_t> throttled;
};

std::vector<ThrottleLodLevel> buildThrottleLod(const LodGrid& grid, std::span<const int64_t> t,
                                               std::span<const uint32_t> masks);

struct KernelLodLevel {
  std::array<std::vector<float>, kKernelClassCount> busy;  // fraction of the bucket width
  std::vector<uint32_t> count;

  void resize(size_t n);
};

// Builds every level for one track. events must be sorted by start.
std::vector<KernelLodLevel> buildKernelLod(const LodGrid& grid,
                                           std::span<const KernelEvent> events);

}  // namespace wl
