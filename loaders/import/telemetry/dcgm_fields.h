// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The DCGM field table: every DCGM field Wattline has a use for, in one declarative list
// (dcgm_fields.cpp), with its numeric id, its DCGM_FI_* name, its field tag (the name DCGM's
// DcgmFieldGetByTag() and DCGM JSON/CSV exports use), its dcgmi dmon column name, its unit, and
// what it becomes in a run: a Wattline metric with a unit conversion, the throttle-reason mask, a
// constant of the GPU (power limit, maximum clocks), the GPU's identity, or an extra metric kept
// under a "dcgm_..." id.
//
// Every reader of DCGM output uses it: the dcgmi dmon and long-CSV importers, and the Prometheus
// dcgm-exporter importer (metric names such as DCGM_FI_DEV_POWER_USAGE). Lookups accept any of the
// spellings, case-insensitively: 155, "power_usage", "DCGM_FI_DEV_POWER_USAGE", "POWER_USAGE",
// "POWER", and the older names of renamed fields (current_clock_throttle_reasons,
// DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
//
// Ids, names, tags and dmon names are those of NVIDIA DCGM's dcgm_fields.h and dcgm_fields.cpp;
// docs/import-telemetry.md lists the table for users.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "loaders/core/run_model.h"

namespace wl::import::dcgm {

// What a field becomes in a run.
enum class Role : uint8_t {
  Metric,    // a Wattline metric: Field::metric, value x Field::scale
  Throttle,  // the clock event (throttle) reason bitmask, kept per sample
  GpuInfo,   // a constant of the GPU (Field::info); not a time series
  Identity,  // text naming the GPU (Field::info: name, UUID, PCI bus id); not a time series
  Extra,  // no Wattline metric: kept as an extra metric under Field::metric, value as DCGM gives it
};

// The GpuInfo / Identity field a value fills.
enum class Info : uint8_t {
  None,
  PowerLimit,          // DCGM_FI_DEV_POWER_MGMT_LIMIT (used when there is no enforced limit)
  EnforcedPowerLimit,  // DCGM_FI_DEV_ENFORCED_POWER_LIMIT
  MaxSmClock,
  MaxMemClock,
  SlowdownTemp,
  ShutdownTemp,
  MemTotal,  // MiB, turns fb_used into mem_used_pct
  Name,
  Uuid,
  BusId,
  Serial,
};

// How DCGM stores the value: decides which blank sentinels apply.
enum class Type : uint8_t { Int64, Double, String };

struct Field {
  int id;                    // DCGM field id
  std::string_view name;     // "DCGM_FI_DEV_POWER_USAGE"
  std::string_view tag;      // "power_usage"
  std::string_view dmon;     // dcgmi dmon column: "POWER"
  std::string_view unit;     // unit of the raw value: "W", "mJ", "MHz", "ratio", ""
  Type type;                 //
  Role role;                 //
  std::string_view metric;   // Role::Metric / Extra: the metric id it becomes
  double scale;              // metric value = raw value x scale
  int priority;              // several fields may give one metric: the lowest present wins
  Info info;                 // Role::GpuInfo / Identity
  std::string_view aliases;  // other spellings, space-separated (renamed fields)
};

// The whole table, ordered by id.
std::span<const Field> fields();

// A field by numeric id; nullptr if the table does not have it.
const Field* byId(int id);
// A field by any of its names (case-insensitive): tag, DCGM_FI_* name, that name without its
// "DCGM_FI_DEV_" / "DCGM_FI_PROF_" / "DCGM_FI_" prefix, dmon column name, or an alias. nullptr if
// unknown.
const Field* byName(std::string_view name);
// byId for a whole-number text ("155"), else byName.
const Field* lookup(std::string_view idOrName);

// The metric a field that the table does not know is kept under: "dcgm_field_1234" for an id,
// "dcgm_" + the sanitized name otherwise ("DCGM_FI_DEV_XID_ERRORS" -> "dcgm_xid_errors").
std::string extraMetricId(std::string_view idOrName);
// The metric id a known field is kept under when another field of higher priority already gives
// its metric (power_usage_instant beside power_usage): "dcgm_" + tag.
std::string shadowedMetricId(const Field& f);

// What a metric field's samples mean (docs/import-telemetry.md, "Sensor semantics"): 155
// POWER_USAGE is NVML's 1 s average on Ampere and newer, 157 POWER_USAGE_INSTANT the instantaneous
// reading, 156 TOTAL_ENERGY_CONSUMPTION a counter; other fields as core/sensors.h genericSensor().
SensorInfo sensorOf(const Field& f, std::string_view deviceName);

// DCGM marks missing values with sentinels: DCGM_INT32_BLANK (0x7ffffff0) and the three codes
// above it, DCGM_INT64_BLANK (0x7ffffffffffffff0) and above, DCGM_FP64_BLANK (2^47) and the codes
// above it. True if `v` is one for a field of this type; `type` empty (a field the table does not
// know) tests all of them exactly.
bool isBlank(double v, std::optional<Type> type);

// A per-reason throttle flag field ("throttle_reason_sw_power_cap",
// "clocks_event_reason_hw_thermal", "DCGM_CLOCKS_EVENT_REASON_SW_THERMAL", ...): its bit in the
// NVML / DCGM reason mask; nullopt if the name is not one. Durations such as
// DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS are not flags.
std::optional<uint32_t> throttleFlagBit(std::string_view name);

// The GpuInfo and Identity values read for one GPU, applied to its GpuInfo at the end (the
// enforced power limit wins over the management limit whatever the order they came in).
struct GpuConstants {
  std::map<Info, double> numbers;  // the last value of each, in the metric's unit
  std::string name, uuid;

  void set(Info what, double value) { numbers[what] = value; }
  void setText(Info what, std::string_view text);
  double get(Info what) const;
  void applyTo(GpuInfo& info) const;
};

}  // namespace wl::import::dcgm
