// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/throttle_reasons.h"

namespace wl::throttle {

const std::vector<ReasonDef>& reasons() {
  static const std::vector<ReasonDef> kReasons = {
      {kGpuIdle, "gpu_idle", "GPU idle"},
      {kApplicationsClocks, "app_clocks", "Applications clocks setting"},
      {kSwPowerCap, "sw_power_cap", "SW power cap"},
      {kHwSlowdown, "hw_slowdown", "HW slowdown"},
      {kSyncBoost, "sync_boost", "Sync boost"},
      {kSwThermal, "sw_thermal", "SW thermal slowdown"},
      {kHwThermal, "hw_thermal", "HW thermal slowdown"},
      {kHwPowerBrake, "hw_power_brake", "HW power brake"},
      {kDisplayClock, "display_clock", "Display clock setting"},
  };
  return kReasons;
}

std::string describe(uint32_t mask) {
  if (mask == kUnknown) return "unknown";
  std::string out;
  for (const ReasonDef& r : reasons()) {
    if (mask & r.bit) {
      if (!out.empty()) out += '+';
      out += r.id;
    }
  }
  return out.empty() ? "none" : out;
}

}  // namespace wl::throttle
