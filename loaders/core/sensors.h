// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Sensor semantics of telemetry metrics (docs/format.md, "/sensors"): what an importer knows from
// its source's field names (nvidia-smi power.draw vs power.draw.instant, DCGM field 155 vs 157,
// ...), and the defaults assumed for runs and sources that do not say.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/run_model.h"

namespace wl {

// "instant", "average", "counter".
std::string_view sensorKindName(SensorKind kind);
std::optional<SensorKind> parseSensorKind(std::string_view name);

// NVML's power readings update about every 100 ms on Hopper (tests/data/h100-sensors: median
// 99 ms between changes of both the instantaneous and the averaged reading).
inline constexpr double kNvmlPowerPeriodS = 0.1;
// NVML's averaged power (power.draw, DCGM 155) is a trailing 1 s mean on Ampere and newer.
inline constexpr double kNvmlPowerWindowS = 1.0;

// True for NVIDIA device names of Ampere or newer (A100, A10, H100, H200, B200, L40, RTX 30xx+) and
// for names that say nothing of the generation ("" included); false for Volta, Turing, Pascal and
// older (V100, T4, P100, K80, RTX 20xx, GTX).
bool nvidiaAveragesPower(std::string_view deviceName);

// NVML power as nvidia-smi names it: "power.draw" (1 s average on Ampere+, else the last reading),
// "power.draw.average", "power.draw.instant".
SensorInfo nvidiaSmiPowerSensor(std::string_view field, std::string_view deviceName);

// A sensor of a metric other than power: counters (energy, bytes) count, utilization averages over
// `utilWindowS` (NaN: unknown), temperatures, clocks and memory read at an instant.
SensorInfo genericSensor(std::string_view metric, std::string_view basis, double utilWindowS = kNaN,
                         bool assumed = false);

// Whether a source of this format brings telemetry (the trace importers do not).
bool telemetryFormat(std::string_view format);

// What each telemetry source's metrics mean: the stored entries of `info.sensors`, completed with
// assumed defaults for every (telemetry source, metric of `metrics`) pair they leave out. The
// defaults: power averaged over 1 s (NVML power.draw on Ampere+) for measured NVIDIA runs, instant
// for simulated runs and others; counters count; utilization averages over the sampling interval.
std::vector<SensorInfo> resolveSensors(const RunInfo& info,
                                       const std::vector<std::string>& metrics);

// The entry of one source and metric, or nullptr.
const SensorInfo* findSensor(const std::vector<SensorInfo>& sensors, int source,
                             std::string_view metric);

}  // namespace wl
