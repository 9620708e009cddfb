// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/sensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "loaders/core/metrics.h"

namespace wl {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool counterMetric(std::string_view metric) {
  if (const MetricDef* d = findMetric(metric)) return d->kind == MetricKind::Counter;
  return metric.ends_with("_bytes") || metric.ends_with("_kib") || metric == metric::kEnergy;
}

bool utilizationMetric(std::string_view metric) {
  return metric == metric::kUtil || metric == metric::kMemUtil || metric == metric::kSmActive ||
         metric == metric::kTensorActive;
}

// The default of a source that does not say: see resolveSensors() in the header.
SensorInfo assumedSensor(const RunInfo& info, int source, const std::string& metric) {
  const std::string platform = upper(info.platform);
  const bool amd = platform.rfind("MI", 0) == 0;
  SensorInfo s;
  if (metric == metric::kPower && !info.simulated && !amd && nvidiaAveragesPower(info.platform)) {
    s = nvidiaSmiPowerSensor("power.draw", info.platform);
    s.basis = "assumed: NVML power usage (nvidia-smi power.draw, DCGM 155), 1 s average";
  } else if (metric == metric::kPower && amd) {
    s.metric = metric, s.kind = SensorKind::Average, s.window_s = 1.0;
    s.basis = "assumed: AMD socket power, 1 s average";
  } else if (metric == metric::kPower) {
    s.metric = metric, s.kind = SensorKind::Instant;
    s.basis = info.simulated ? "assumed: simulated power, instantaneous"
                             : "assumed: power read at the sample's time";
  } else {
    s = genericSensor(metric, "assumed", kNaN, true);
  }
  s.source = source;
  s.assumed = true;
  return s;
}

}  // namespace

std::string_view sensorKindName(SensorKind kind) {
  switch (kind) {
    case SensorKind::Instant:
      return "instant";
    case SensorKind::Average:
      return "average";
    case SensorKind::Counter:
      return "counter";
  }
  return "instant";
}

std::optional<SensorKind> parseSensorKind(std::string_view name) {
  if (name == "instant") return SensorKind::Instant;
  if (name == "average") return SensorKind::Average;
  if (name == "counter") return SensorKind::Counter;
  return std::nullopt;
}

bool nvidiaAveragesPower(std::string_view deviceName) {
  const std::string n = upper(deviceName);
  static constexpr std::array kOlder = {"V100", "T4",      "P100",    "P40",       "P4 ",
                                        "K80",  "K40",     "M60",     "M40",       "RTX 20",
                                        "GTX",  "TITAN V", "TITAN X", "QUADRO RTX"};
  return std::none_of(kOlder.begin(), kOlder.end(),
                      [&](const char* o) { return n.find(o) != std::string::npos; });
}

SensorInfo nvidiaSmiPowerSensor(std::string_view field, std::string_view deviceName) {
  SensorInfo s;
  s.metric = std::string(metric::kPower);
  s.period_s = kNvmlPowerPeriodS;
  if (field == "power.draw.instant") {
    s.kind = SensorKind::Instant;
    s.basis = "nvidia-smi power.draw.instant (NVML instantaneous power)";
  } else if (field == "power.draw.average") {
    s.kind = SensorKind::Average, s.window_s = kNvmlPowerWindowS;
    s.basis = "nvidia-smi power.draw.average (NVML 1 s average power)";
  } else if (nvidiaAveragesPower(deviceName)) {
    s.kind = SensorKind::Average, s.window_s = kNvmlPowerWindowS;
    s.basis = fmt::format("nvidia-smi {} on {} (Ampere and newer: 1 s average)", field,
                          deviceName.empty() ? std::string_view("an unnamed GPU") : deviceName);
  } else {
    s.kind = SensorKind::Instant;
    s.period_s = kNaN;
    s.basis =
        fmt::format("nvidia-smi {} on {} (before Ampere: the last reading)", field, deviceName);
  }
  return s;
}

SensorInfo genericSensor(std::string_view metric, std::string_view basis, double utilWindowS,
                         bool assumed) {
  SensorInfo s;
  s.metric = std::string(metric);
  s.assumed = assumed;
  if (counterMetric(metric)) {
    s.kind = SensorKind::Counter;
    s.basis = fmt::format("{}: cumulative counter", basis);
  } else if (utilizationMetric(metric)) {
    s.kind = SensorKind::Average, s.window_s = utilWindowS;
    s.basis = fmt::format("{}: share of time busy over the sampling window", basis);
  } else {
    s.kind = SensorKind::Instant;
    s.basis = fmt::format("{}: reading at the sample's time", basis);
  }
  return s;
}

bool telemetryFormat(std::string_view format) {
  static constexpr std::array kTraces = {"kineto", "nsys", "rocprof-csv", "rocprofv3"};
  return std::none_of(kTraces.begin(), kTraces.end(), [&](const char* t) { return format == t; });
}

std::vector<SensorInfo> resolveSensors(const RunInfo& info,
                                       const std::vector<std::string>& metrics) {
  std::vector<SensorInfo> out = info.sensors;
  std::vector<int> sources;
  for (size_t i = 0; i < info.sources.size(); ++i)
    if (telemetryFormat(info.sources[i].format)) sources.push_back(static_cast<int>(i));
  if (sources.empty() && !metrics.empty() && info.sources.empty()) sources.push_back(-1);
  for (int src : sources) {
    // A source with stated entries keeps them; one without any gets the defaults.
    const bool stated = std::any_of(info.sensors.begin(), info.sensors.end(),
                                    [&](const SensorInfo& s) { return s.source == src; });
    if (stated) continue;
    for (const std::string& m : metrics)
      out.push_back(assumedSensor(info, src, m));
  }
  return out;
}

const SensorInfo* findSensor(const std::vector<SensorInfo>& sensors, int source,
                             std::string_view metric) {
  for (const SensorInfo& s : sensors)
    if (s.source == source && s.metric == metric) return &s;
  return nullptr;
}

}  // namespace wl
