// SPDX-License-Identifier: GPL-3.0-or-later
// The DCGM field table (dcgm_fields.h) and its lookups.
//
// Sources, checked field by field: ids and DCGM_FI_* names from NVIDIA DCGM's dcgmlib/dcgm_fields.h
// and testing/python3/dcgm_fields.py; tags, dmon column names and units from
// dcgmlib/src/dcgm_fields.cpp (DcgmFieldsPopulateOneFieldWithFormatting). Field 112 was renamed
// (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS / current_clock_throttle_reasons before DCGM 3.2,
// DCGM_FI_DEV_CLOCKS_EVENT_REASONS / current_clocks_event_reasons since): both spellings are kept.

#include "loaders/import/telemetry/dcgm_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/throttle_reasons.h"

namespace wl::import::dcgm {
namespace {

using enum Role;
using enum Type;
constexpr Info kNone = Info::None;

// clang-format off
constexpr std::array kFields = {
//  id    DCGM_FI_* name                          tag                             dmon      unit    type    role      metric                 scale  prio info                      aliases
Field{50,   "DCGM_FI_DEV_NAME",                    "name",                         "DVNAM",  "",     String, Identity, "",                    1,     0, Info::Name,               ""},
Field{53,   "DCGM_FI_DEV_SERIAL",                  "serial_number",                "SRNUM",  "",     String, Identity, "",                    1,     0, Info::Serial,             ""},
Field{54,   "DCGM_FI_DEV_UUID",                    "uuid",                         "UUID#",  "",     String, Identity, "",                    1,     0, Info::Uuid,               ""},
Field{57,   "DCGM_FI_DEV_PCI_BUSID",               "pci_busid",                    "PCBID",  "",     String, Identity, "",                    1,     0, Info::BusId,              ""},
Field{100,  "DCGM_FI_DEV_SM_CLOCK",                "sm_clock",                     "SMCLK",  "MHz",  Int64,  Metric,   metric::kSmClock,      1,     0, kNone,                    ""},
Field{101,  "DCGM_FI_DEV_MEM_CLOCK",               "memory_clock",                 "MMCLK",  "MHz",  Int64,  Metric,   metric::kMemClock,     1,     0, kNone,                    ""},
Field{112,  "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",    "current_clocks_event_reasons", "DVCCTR", "",     Int64,  Throttle, "",                    1,     0, kNone,
      "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS current_clock_throttle_reasons clocks_event_reasons clock_throttle_reasons clocks_throttle_reasons"},
Field{113,  "DCGM_FI_DEV_MAX_SM_CLOCK",            "sm_max_clock",                 "SMMAX",  "MHz",  Int64,  GpuInfo,  "",                    1,     0, Info::MaxSmClock,         ""},
Field{114,  "DCGM_FI_DEV_MAX_MEM_CLOCK",           "memory_max_clock",             "MMMAX",  "MHz",  Int64,  GpuInfo,  "",                    1,     0, Info::MaxMemClock,        ""},
Field{140,  "DCGM_FI_DEV_MEMORY_TEMP",             "memory_temp",                  "MMTMP",  "C",    Int64,  Metric,   metric::kMemTemp,      1,     0, kNone,                    ""},
Field{150,  "DCGM_FI_DEV_GPU_TEMP",                "gpu_temp",                     "TMPTR",  "C",    Int64,  Metric,   metric::kTemp,         1,     0, kNone,                    ""},
Field{155,  "DCGM_FI_DEV_POWER_USAGE",             "power_usage",                  "POWER",  "W",    Double, Metric,   metric::kPower,        1,     0, kNone,                    ""},
Field{156,  "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "total_energy_consumption",    "TOTEC",  "mJ",   Int64,  Metric,   metric::kEnergy,       1e-3,  0, kNone,                    ""},
Field{157,  "DCGM_FI_DEV_POWER_USAGE_INSTANT",     "power_usage_instant",          "POWINST", "W",   Double, Metric,   metric::kPower,        1,     1, kNone,                    ""},
Field{158,  "DCGM_FI_DEV_SLOWDOWN_TEMP",           "slowdown_temp",                "SDTMP",  "C",    Int64,  GpuInfo,  "",                    1,     0, Info::SlowdownTemp,       ""},
Field{159,  "DCGM_FI_DEV_SHUTDOWN_TEMP",           "shutdown_temp",                "SHTMP",  "C",    Int64,  GpuInfo,  "",                    1,     0, Info::ShutdownTemp,       ""},
Field{160,  "DCGM_FI_DEV_POWER_MGMT_LIMIT",        "power_management_limit",       "PMLMT",  "W",    Double, GpuInfo,  "",                    1,     0, Info::PowerLimit,         ""},
Field{164,  "DCGM_FI_DEV_ENFORCED_POWER_LIMIT",    "enforced_power_limit",         "EPLMT",  "W",    Double, GpuInfo,  "",                    1,     0, Info::EnforcedPowerLimit, ""},
Field{191,  "DCGM_FI_DEV_FAN_SPEED",               "fan_speed",                    "FANSP",  "%",    Int64,  Metric,   "fan_pct",             1,     0, kNone,                    ""},
Field{200,  "DCGM_FI_DEV_PCIE_TX_THROUGHPUT",      "pcie_tx_throughput",           "TXTPT",  "KB/s", Int64,  Metric,   "pcie_tx_kbs",         1,     0, kNone,                    ""},
Field{201,  "DCGM_FI_DEV_PCIE_RX_THROUGHPUT",      "pcie_rx_throughput",           "RXTPT",  "KB/s", Int64,  Metric,   "pcie_rx_kbs",         1,     0, kNone,                    ""},
Field{203,  "DCGM_FI_DEV_GPU_UTIL",                "gpu_utilization",              "GPUTL",  "%",    Int64,  Metric,   metric::kUtil,         1,     0, kNone,                    ""},
Field{204,  "DCGM_FI_DEV_MEM_COPY_UTIL",           "mem_copy_utilization",         "MCUTL",  "%",    Int64,  Metric,   metric::kMemUtil,      1,     0, kNone,                    ""},
Field{206,  "DCGM_FI_DEV_ENC_UTIL",                "enc_utilization",              "ECUTL",  "%",    Int64,  Extra,    "dcgm_enc_utilization", 1,    0, kNone,                    ""},
Field{207,  "DCGM_FI_DEV_DEC_UTIL",                "dec_utilization",              "DCUTL",  "%",    Int64,  Extra,    "dcgm_dec_utilization", 1,    0, kNone,                    ""},
Field{240,  "DCGM_FI_DEV_POWER_VIOLATION",         "power_violation",              "PVIOL",  "",     Int64,  Extra,    "dcgm_power_violation", 1,    0, kNone,                    ""},
Field{241,  "DCGM_FI_DEV_THERMAL_VIOLATION",       "thermal_violation",            "TVIOL",  "",     Int64,  Extra,    "dcgm_thermal_violation", 1,  0, kNone,                    ""},
Field{250,  "DCGM_FI_DEV_FB_TOTAL",                "fb_total",                     "FBTTL",  "MiB",  Int64,  GpuInfo,  "",                    1,     0, Info::MemTotal,           ""},
Field{251,  "DCGM_FI_DEV_FB_FREE",                 "fb_free",                      "FBFRE",  "MiB",  Int64,  Extra,    "dcgm_fb_free",        1,     0, kNone,                    ""},
Field{252,  "DCGM_FI_DEV_FB_USED",                 "fb_used",                      "FBUSD",  "MiB",  Int64,  Metric,   "mem_used_mib",        1,     0, kNone,                    ""},
Field{253,  "DCGM_FI_DEV_FB_RESERVED",             "fb_resv",                      "FBRSV",  "MiB",  Int64,  Extra,    "dcgm_fb_resv",        1,     0, kNone,                    ""},
Field{254,  "DCGM_FI_DEV_FB_USED_PERCENT",         "fb_USDP",                      "FBUSP",  "ratio", Double, Metric,  metric::kMemUsedPct,   100,   0, kNone,                    ""},
Field{1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE",       "gr_engine_active",             "GRACT",  "ratio", Double, Extra,   "dcgm_gr_engine_active", 1,   0, kNone,                    ""},
Field{1002, "DCGM_FI_PROF_SM_ACTIVE",              "sm_active",                    "SMACT",  "ratio", Double, Metric,  metric::kSmActive,     100,   0, kNone,                    ""},
Field{1003, "DCGM_FI_PROF_SM_OCCUPANCY",           "sm_occupancy",                 "SMOCC",  "ratio", Double, Extra,   "dcgm_sm_occupancy",   1,     0, kNone,                    ""},
Field{1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",     "tensor_active",                "TENSO",  "ratio", Double, Metric,  metric::kTensorActive, 100,   0, kNone,                    ""},
Field{1005, "DCGM_FI_PROF_DRAM_ACTIVE",            "dram_active",                  "DRAMA",  "ratio", Double, Extra,   "dcgm_dram_active",    1,     0, kNone,                    ""},
Field{1006, "DCGM_FI_PROF_PIPE_FP64_ACTIVE",       "fp64_active",                  "FP64A",  "ratio", Double, Extra,   "dcgm_fp64_active",    1,     0, kNone,                    ""},
Field{1007, "DCGM_FI_PROF_PIPE_FP32_ACTIVE",       "fp32_active",                  "FP32A",  "ratio", Double, Extra,   "dcgm_fp32_active",    1,     0, kNone,                    ""},
Field{1008, "DCGM_FI_PROF_PIPE_FP16_ACTIVE",       "fp16_active",                  "FP16A",  "ratio", Double, Extra,   "dcgm_fp16_active",    1,     0, kNone,                    ""},
Field{1009, "DCGM_FI_PROF_PCIE_TX_BYTES",          "pcie_tx_bytes",                "PCITX",  "B/s",  Int64,  Extra,    "dcgm_pcie_tx_bytes",  1,     0, kNone,                    ""},
Field{1010, "DCGM_FI_PROF_PCIE_RX_BYTES",          "pcie_rx_bytes",                "PCIRX",  "B/s",  Int64,  Extra,    "dcgm_pcie_rx_bytes",  1,     0, kNone,                    ""},
Field{1011, "DCGM_FI_PROF_NVLINK_TX_BYTES",        "nvlink_tx_bytes",              "NVLTX",  "B/s",  Int64,  Extra,    "dcgm_nvlink_tx_bytes", 1,    0, kNone,                    ""},
Field{1012, "DCGM_FI_PROF_NVLINK_RX_BYTES",        "nvlink_rx_bytes",              "NVLRX",  "B/s",  Int64,  Extra,    "dcgm_nvlink_rx_bytes", 1,    0, kNone,                    ""},
};
// clang-format on

static_assert(std::is_sorted(kFields.begin(), kFields.end(),
                             [](const Field& a, const Field& b) { return a.id < b.id; }));

char upper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (upper(a[i]) != upper(b[i])) return false;
  return true;
}

bool startsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equalsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

// The DCGM_FI_* name without its family prefix: "POWER_USAGE", "SM_ACTIVE".
std::string_view shortMacro(std::string_view name) {
  for (std::string_view p : {"DCGM_FI_DEV_", "DCGM_FI_PROF_", "DCGM_FI_"})
    if (startsWithIgnoreCase(name, p)) return name.substr(p.size());
  return name;
}

bool hasAlias(const Field& f, std::string_view name) {
  std::string_view a = f.aliases;
  while (!a.empty()) {
    const size_t sp = a.find(' ');
    const std::string_view one = a.substr(0, sp);
    if (equalsIgnoreCase(one, name) || equalsIgnoreCase(shortMacro(one), name)) return true;
    a = sp == std::string_view::npos ? std::string_view{} : a.substr(sp + 1);
  }
  return false;
}

std::optional<int64_t> wholeNumber(std::string_view s) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::span<const Field> fields() {
  return kFields;
}

const Field* byId(int id) {
  const auto it = std::lower_bound(kFields.begin(), kFields.end(), id,
                                   [](const Field& f, int v) { return f.id < v; });
  return it != kFields.end() && it->id == id ? &*it : nullptr;
}

const Field* byName(std::string_view name) {
  if (name.empty()) return nullptr;
  // Exact spellings first: a dmon name never equals another field's tag, but be deterministic.
  for (const Field& f : kFields)
    if (equalsIgnoreCase(f.tag, name) || equalsIgnoreCase(f.name, name)) return &f;
  const std::string_view shortName = shortMacro(name);
  for (const Field& f : kFields)
    if (equalsIgnoreCase(shortMacro(f.name), shortName) || equalsIgnoreCase(f.dmon, name) ||
        hasAlias(f, name) || hasAlias(f, shortName))
      return &f;
  return nullptr;
}

const Field* lookup(std::string_view idOrName) {
  if (const auto id = wholeNumber(idOrName))
    return *id >= 0 && *id < 65536 ? byId(static_cast<int>(*id)) : nullptr;
  return byName(idOrName);
}

std::string extraMetricId(std::string_view idOrName) {
  if (const auto id = wholeNumber(idOrName)) return "dcgm_field_" + std::to_string(*id);
  const std::string_view s = shortMacro(idOrName);
  std::string id = sanitizeMetricId(s);
  return id.rfind("dcgm_", 0) == 0 ? id : "dcgm_" + id;
}

std::string shadowedMetricId(const Field& f) {
  return "dcgm_" + sanitizeMetricId(f.tag);
}

bool isBlank(double v, std::optional<Type> type) {
  // DCGM_INT32_BLANK 0x7ffffff0 .. DCGM_INT32_NOT_PERMISSIONED 0x7ffffff3 (and the largest int32
  // values, which nothing real reaches); DCGM_INT64_BLANK 0x7ffffffffffffff0 and above;
  // DCGM_FP64_BLANK 140737488355328.0 (2^47) .. DCGM_FP64_NOT_PERMISSIONED (+3).
  constexpr double kInt32Blank = 2147483632.0;
  constexpr double kInt32Max = 2147483647.0;
  constexpr double kInt64Blank = 9223372036854775792.0;  // rounds to 2^63 as a double
  constexpr double kFp64Blank = 140737488355328.0;
  const bool int32Sentinel = v >= kInt32Blank && v <= kInt32Max;
  const bool int64Sentinel = v >= kInt64Blank;
  const bool fp64Sentinel = v >= kFp64Blank && v <= kFp64Blank + 3.0;
  if (!type) return int32Sentinel || int64Sentinel || fp64Sentinel;
  switch (*type) {
    case Type::Int64:
      return int32Sentinel || int64Sentinel;
    case Type::Double:
      return v >= kFp64Blank;
    case Type::String:
      return false;
  }
  return false;
}

std::optional<uint32_t> throttleFlagBit(std::string_view name) {
  std::string_view rest;
  bool prefixed = false;
  for (std::string_view p :
       {"DCGM_CLOCKS_EVENT_REASON_", "DCGM_CLOCKS_THROTTLE_REASON_", "throttle_reason_",
        "throttle_reasons_", "clocks_event_reason_", "clocks_event_reasons_",
        "clock_throttle_reason_", "clocks_throttle_reason_", "clocks_throttle_reasons_"})
    if (startsWithIgnoreCase(name, p)) {
      rest = name.substr(p.size());
      prefixed = true;
      break;
    }
  if (!prefixed) return std::nullopt;
  struct Reason {
    std::string_view name;
    uint32_t bit;
  };
  // DCGM's DCGM_CLOCKS_EVENT_REASON_* names and nvidia-smi's clocks_event_reasons.* spellings.
  static constexpr std::array kReasons = {
      Reason{"gpu_idle", throttle::kGpuIdle},
      Reason{"clocks_setting", throttle::kApplicationsClocks},
      Reason{"applications_clocks_setting", throttle::kApplicationsClocks},
      Reason{"sw_power_cap", throttle::kSwPowerCap},
      Reason{"hw_slowdown", throttle::kHwSlowdown},
      Reason{"sync_boost", throttle::kSyncBoost},
      Reason{"sw_thermal", throttle::kSwThermal},
      Reason{"sw_thermal_slowdown", throttle::kSwThermal},
      Reason{"hw_thermal", throttle::kHwThermal},
      Reason{"hw_thermal_slowdown", throttle::kHwThermal},
      Reason{"hw_power_brake", throttle::kHwPowerBrake},
      Reason{"hw_power_brake_slowdown", throttle::kHwPowerBrake},
      Reason{"display_clocks", throttle::kDisplayClock},
      Reason{"display_clock_setting", throttle::kDisplayClock},
  };
  for (const Reason& r : kReasons)
    if (equalsIgnoreCase(r.name, rest)) return r.bit;
  return std::nullopt;
}

void GpuConstants::setText(Info what, std::string_view text) {
  std::string* dst = what == Info::Name ? &name : what == Info::Uuid ? &uuid : nullptr;
  if (dst && dst->empty()) *dst = std::string(text);
}

double GpuConstants::get(Info what) const {
  const auto it = numbers.find(what);
  return it == numbers.end() ? kNaN : it->second;
}

void GpuConstants::applyTo(wl::GpuInfo& info) const {
  const double enforced = get(Info::EnforcedPowerLimit);
  info.power_limit_w =
      static_cast<float>(std::isfinite(enforced) ? enforced : get(Info::PowerLimit));
  info.max_sm_clock_mhz = static_cast<float>(get(Info::MaxSmClock));
  info.max_mem_clock_mhz = static_cast<float>(get(Info::MaxMemClock));
  info.slowdown_temp_c = static_cast<float>(get(Info::SlowdownTemp));
  info.shutdown_temp_c = static_cast<float>(get(Info::ShutdownTemp));
  if (!name.empty()) info.device_name = name;
  if (!uuid.empty()) info.uuid = uuid;
}

SensorInfo sensorOf(const Field& f, std::string_view deviceName) {
  const std::string basis = fmt::format("DCGM field {} {}", f.id, f.name);
  SensorInfo s;
  if (f.id == 155) {
    s = nvidiaSmiPowerSensor("power.draw", deviceName);
  } else if (f.id == 157) {
    s = nvidiaSmiPowerSensor("power.draw.instant", deviceName);
  } else {
    return genericSensor(f.metric, basis);
  }
  s.basis = fmt::format("{} ({}{})", basis, sensorKindName(s.kind),
                        s.kind == SensorKind::Average ? ", 1 s on Ampere and newer" : "");
  return s;
}

}  // namespace wl::import::dcgm
