// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Clock throttle ("clock event") reason bits as NVML defines them (nvmlClocksEventReason*), used
// by nvidia-smi's clocks_throttle_reasons.active / clocks_event_reasons.active and DCGM field 112.
// Wattline stores these bits unchanged; AMD and inferred reasons map onto the same bits.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wl::throttle {

inline constexpr uint32_t kGpuIdle = 0x1;
inline constexpr uint32_t kApplicationsClocks = 0x2;
inline constexpr uint32_t kSwPowerCap = 0x4;
inline constexpr uint32_t kHwSlowdown = 0x8;
inline constexpr uint32_t kSyncBoost = 0x10;
inline constexpr uint32_t kSwThermal = 0x20;
inline constexpr uint32_t kHwThermal = 0x40;
inline constexpr uint32_t kHwPowerBrake = 0x80;
inline constexpr uint32_t kDisplayClock = 0x100;

// Stored for a sample whose reasons were not recorded (distinct from 0 = "no reason active").
inline constexpr uint32_t kUnknown = 0xFFFFFFFFu;

// The reasons that actually slow a busy GPU down (idle, sync boost and the display/app clock
// settings are not throttling in the sense of the analyses).
inline constexpr uint32_t kSlowdownMask =
    kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;

struct ReasonDef {
  uint32_t bit;
  std::string_view id;     // "sw_power_cap"
  std::string_view label;  // "SW power cap"
};

// Every bit in ascending order.
const std::vector<ReasonDef>& reasons();
// "sw_power_cap+hw_thermal", or "none".
std::string describe(uint32_t mask);

}  // namespace wl::throttle
