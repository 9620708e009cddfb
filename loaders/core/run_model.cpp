// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/run_model.h"

namespace wl {
namespace {

bool sameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool sameDouble(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

}  // namespace

bool GpuInfo::operator==(const GpuInfo& o) const {
  return id == o.id && node == o.node && local_index == o.local_index && rank == o.rank &&
         hostname == o.hostname && device_name == o.device_name && uuid == o.uuid &&
         sameFloat(power_limit_w, o.power_limit_w) &&
         sameFloat(max_sm_clock_mhz, o.max_sm_clock_mhz) &&
         sameFloat(max_mem_clock_mhz, o.max_mem_clock_mhz) &&
         sameFloat(slowdown_temp_c, o.slowdown_temp_c) &&
         sameFloat(shutdown_temp_c, o.shutdown_temp_c) && slot == o.slot && package == o.package;
}

bool SensorInfo::operator==(const SensorInfo& o) const {
  return source == o.source && metric == o.metric && kind == o.kind &&
         sameDouble(window_s, o.window_s) && sameDouble(period_s, o.period_s) &&
         sameDouble(lag_s, o.lag_s) && assumed == o.assumed && basis == o.basis;
}

const TelemetryColumn* TelemetryTable::column(std::string_view metric) const {
  for (const TelemetryColumn& c : columns)
    if (c.metric == metric) return &c;
  return nullptr;
}

}  // namespace wl
