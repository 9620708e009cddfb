// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Throttle detection and attribution (docs/analyses.md, "Throttle detection").
//
// A clock sample is throttled when the GPU is busy (utilization at or above a threshold) and its
// SM clock is below a threshold fraction of the reference clock. It owns the segment to the next
// valid clock sample (left Riemann, like the time-weighted mean; gap segments own nothing).
// Times are kernel time: a segment counts utilization / 100 of its length (NVML utilization is the
// share of the sample period with a kernel running), so busy time is the utilization's
// time-weighted integral / 100 and the throttled fraction is the share of kernel time spent
// throttled. Without utilization, a sample counts fully unless its reasons say "GPU idle".
// A throttled sample's cause comes from the recorded NVML reason bits where the sample has any
// slowdown bit, else it is inferred: temperature at or above
// the slowdown threshold -> thermal, power at or above 98 % of the power limit -> power cap, else
// unknown. Touching throttled segments form intervals. Power and its limit are the GPU's power
// domain's (core/power_domain.h): a GCD of an MI250 package without a power column of its own is
// compared with the package's power (on the other GCD) against the package's cap.
//
// detectThrottle() takes busy time from the utilization pyramid and skips every whole bucket whose
// lowest SM clock is at or above the threshold (it holds no throttled sample); only the other
// buckets and the range edges are read raw.
//
// Cost, for G GPUs and B whole pyramid buckets in the range: O(G x B) pyramid cells, plus the raw
// clock, utilization, power and reason samples of the buckets that may hold a throttled sample
// and of the range edges. A run that never throttles reads almost no raw sample; one throttled
// throughout reads every sample once (O(n)).

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/interval_set.h"
#include "analysis/telemetry_stats.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

enum class ThrottleCause : uint8_t {
  SwPowerCap,        // recorded bit 0x4
  HwSlowdown,        // 0x8
  SwThermal,         // 0x20
  HwThermal,         // 0x40
  HwPowerBrake,      // 0x80
  ThermalInferred,   // no bit recorded: temperature >= slowdown threshold
  PowerCapInferred,  // no bit recorded: power >= powerCapFraction x power limit
  Unknown,
};
inline constexpr size_t kThrottleCauseCount = 8;

std::string_view throttleCauseId(ThrottleCause c);     // "sw_power_cap", "thermal_inferred"...
std::string_view throttleCauseLabel(ThrottleCause c);  // "SW power cap", "thermal (inferred)"...
bool isThermalCause(ThrottleCause c);
bool isPowerCause(ThrottleCause c);

// How a GPU's busy samples are recognised.
enum class BusySource : uint8_t {
  Utilization,    // util_pct >= busy threshold (a row without utilization falls back below)
  IdleReasonBit,  // no utilization metric: the recorded reasons lack the GPU-idle bit
  AssumedBusy,    // neither: every sample counts as busy
};
std::string_view busySourceId(BusySource s);

// One throttled clock sample's segment, clipped to the range.
struct ThrottleSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  float clock_mhz = 0.0f;
  uint16_t causes = 0;            // bit (1 << ThrottleCause)
  uint32_t recorded_reasons = 0;  // slowdown bits recorded for the sample (or, while the clock
                                  // recovers from a limit, inherited from the sample before)
  float busy = 1.0f;              // share of the segment with a kernel running (utilization)
};

struct ThrottleInterval {
  int gpu = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t recorded_reasons = 0;                 // OR of the recorded slowdown bits
  ThrottleCause cause = ThrottleCause::Unknown;  // the cause with the most time in it
  double min_clock_mhz = kNaN;
  double mean_clock_mhz = kNaN;  // time-weighted
  double deficit_mhz_s = 0.0;
};

struct GpuThrottle {
  int gpu = -1;
  bool has_clock = false;  // false: no SM clock recorded, nothing can be said
  BusySource busy_source = BusySource::AssumedBusy;
  double reference_clock_mhz = kNaN;
  double threshold_mhz = kNaN;
  double busy_s = 0.0;       // kernel time, s
  double throttled_s = 0.0;  // kernel time while throttled, s
  // Throttled seconds per cause; a sample with several recorded bits counts toward each.
  std::array<double, kThrottleCauseCount> by_cause_s{};
  double clock_deficit_mhz_s = 0.0;  // sum of (reference - clock) x seconds over throttled time
  // Throttled kernel time with a power cause (sw_power_cap, hw_power_brake, power_cap_inferred);
  // a sample counts once however many of them it has.
  double power_throttled_s = 0.0;
  std::vector<ThrottleSegment> segments;
  std::vector<ThrottleInterval> intervals;

  double fraction() const { return has_clock && busy_s > 0 ? throttled_s / busy_s : kNaN; }
  double causeFraction(ThrottleCause c) const {
    return has_clock && busy_s > 0 ? by_cause_s[static_cast<size_t>(c)] / busy_s : kNaN;
  }
};

struct ThrottleParams {
  double reference_clock_mhz = kNaN;
  double threshold_mhz = kNaN;
  double busy_util_pct = 20.0;
  double power_limit_w = kNaN;  // the power domain's cap
  double power_cap_fraction = 0.98;
  // The GPU whose power_w column holds the domain's power when the GPU has none of its own (the
  // other GCD of an MI250 package); -1 when its own column is the one to read.
  int domain_power_gpu = -1;
  double slowdown_temp_c = kNaN;
  int64_t gap_threshold_ns = 1'000'000'000;
  BusySource busy_source = BusySource::AssumedBusy;
};

// Raw columns of one GPU on the same rows. clock is required; util, power, temp and masks may be
// empty when the run lacks them.
struct ThrottleColumns {
  std::span<const int64_t> t;
  std::span<const double> clock;
  std::span<const double> util;
  std::span<const double> power;
  std::span<const double> temp;
  std::span<const uint32_t> masks;
};

// Adds the throttled time of the clock segments whose first sample lies in `piece`, clipped to
// `range`, and their throttled segments (in time order); and their busy time, unless the busy
// source is Utilization (then busy time is the utilization integral, computed by the caller).
void detectThrottleInSamples(const ThrottleColumns& cols, const ThrottleParams& params,
                             const Interval& piece, const TimeRange& range, GpuThrottle& out);
// Builds the intervals from the segments (touching segments merge).
void finishThrottle(GpuThrottle& g);

// The highest SM clock recorded on any GPU of the run (from the top pyramid level), NaN if none.
double observedMaxClock(const RunFile& run);
ThrottleParams throttleParams(const RunFile& run, int gpu, const AnalysisOptions& options,
                              double observedMaxClockMhz);

// `utilStats`, when given, is metricStats(run, util_pct, gpus, range), already computed by the
// caller (the Selection dock's summary has it): it is not read again.
std::vector<GpuThrottle> detectThrottle(const RunFile& run, const std::vector<int>& gpus,
                                        TimeRange range, const AnalysisOptions& options,
                                        const std::vector<MetricStats>* utilStats = nullptr);

// Time compute kernels lost to throttling: over the throttled segments, the time the rank's
// compute union overlaps them x (1 - clock / reference clock), the seed paper's
// duration x (f_actual / f_max) estimate of the unthrottled duration.
struct ThrottleSlowdown {
  int64_t throttled_compute_ns = 0;
  double lost_ns = 0.0;
};
ThrottleSlowdown estimateSlowdown(const GpuThrottle& g, const IntervalSet& computeUnion);

}  // namespace wl
