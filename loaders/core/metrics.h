// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The telemetry metrics Wattline knows by name, with their units and physical ranges.
//
// Every importer maps its source's columns onto these ids (power.draw [W] -> "power_w"); a column
// it cannot map is kept under a sanitized id of its own with the unit the file gave. The ids double
// as HDF5 dataset names in the native format, so they are lower-case, ASCII and stable.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wl {

enum class MetricKind {
  Gauge,    // a level sampled at an instant or averaged over a short window (W, C, MHz, %)
  Counter,  // a cumulative counter (bytes, KiB, J): analyses look at deltas, handling 32-bit wraps
};

struct MetricDef {
  std::string_view id;     // "power_w"
  std::string_view label;  // "Power"
  std::string_view unit;   // "W"
  MetricKind kind = MetricKind::Gauge;
  double min_valid = 0.0;  // values outside [min_valid, max_valid] are flagged as out of range
  double max_valid = 0.0;
};

// Well-known metric ids used across importers, simulator and analyses.
namespace metric {
inline constexpr std::string_view kPower = "power_w";
inline constexpr std::string_view kMemPower = "mem_power_w";
inline constexpr std::string_view kTemp = "temp_c";
inline constexpr std::string_view kMemTemp = "mem_temp_c";
inline constexpr std::string_view kHotspotTemp = "hotspot_temp_c";
inline constexpr std::string_view kSmClock = "sm_clock_mhz";
inline constexpr std::string_view kMemClock = "mem_clock_mhz";
inline constexpr std::string_view kUtil = "util_pct";
inline constexpr std::string_view kMemUtil = "mem_util_pct";
inline constexpr std::string_view kMemUsedPct = "mem_used_pct";
inline constexpr std::string_view kSmActive = "sm_active_pct";
inline constexpr std::string_view kTensorActive = "tensor_active_pct";
inline constexpr std::string_view kEnergy = "energy_j";
}  // namespace metric

// All metrics with a definition, in the order the UI lists them.
std::span<const MetricDef> knownMetrics();
// The definition of a known metric id, or nullptr.
const MetricDef* findMetric(std::string_view id);
// The unit of a metric id: the known unit, or "" for unknown ids.
std::string_view metricUnit(std::string_view id);
// A human-readable label: the known label, or the id itself.
std::string metricLabel(std::string_view id);
// Turns an arbitrary column name into a valid metric id ("clocks.sm [MHz]" -> "clocks_sm_mhz").
std::string sanitizeMetricId(std::string_view name);

}  // namespace wl
