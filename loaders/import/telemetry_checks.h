// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Checks every telemetry table goes through at import, whatever its format (docs/import.md, "Data
// quality"), before the clocks of the inputs are aligned (and the energy cross-check of sources
// that measure an energy counter):
//
// - Wild timestamps: a sample stamped far from the rest of its series (a clock reset to 1970, a
//   zero, a row decades off) is dropped, with a note. Otherwise one such row would make the run
//   span decades.
// - Physically impossible values (power below 0 or above 3 kW, temperatures outside -40..150 C,
//   utilization outside 0..100 %, clocks above the GPU's maximum, any metric outside its range in
//   core/metrics.h) become missing samples, counted per GPU and metric in a note, so that no
//   analysis or view ever sees them.

#include <cstdint>
#include <string>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/import/importer.h"

namespace wl::import {

// A group of samples separated from the main body of its series by more than
// max(10 x the main body's span, 1 day) is wild when it holds at most max(2, n / 100) of the n
// samples; groups are split at gaps longer than max(100 x the median interval, 1 min).
inline constexpr int64_t kWildMinDistanceNs = 86'400'000'000'000;  // 1 day
// A clock reading above the GPU's maximum by more than this fraction is impossible (the reported
// current and maximum clocks may round differently).
inline constexpr double kClockAboveMaxTolerance = 0.01;

// Drops the wild samples of one table (rows in any order; their order is kept). Adds the note
// "wild_timestamps" naming `subject`; returns the number of rows dropped.
size_t dropWildTimestamps(TelemetryTable& table, const std::string& subject,
                          std::vector<QualityNote>& notes);

// Turns physically impossible values into NaN. `info` gives the GPU's maximum clocks (NaN:
// unknown); nullptr for node tables. Adds one note "impossible_values" per metric with the count;
// returns the number of values masked.
size_t maskImpossibleValues(TelemetryTable& table, const GpuInfo* info, const std::string& subject,
                            std::vector<QualityNote>& notes);

// A cumulative energy counter (energy_j, e.g. DCGM's total_energy_consumption) against the
// trapezoid integral of power_w: over consecutive rows that both have (and that lie less than
// max(5 x the median interval, 1 s) apart), the counter's increase and the integral of power are
// summed; decreases (a driver reload resets the counter) are left out and counted. Adds the note
// "energy_cross_check" (a warning when they differ by more than kEnergyCheckTolerance); nothing
// when the table lacks either metric or has fewer than two such rows.
inline constexpr double kEnergyCheckTolerance = 0.05;
void energyCrossCheck(const TelemetryTable& table, const std::string& subject,
                      std::vector<QualityNote>& notes);

// Both checks on every GPU and node table of every input, then the energy cross-check where the
// input measured its energy counter; notes name the file and the GPU.
void checkTelemetry(std::vector<ImportedData>& inputs, std::vector<QualityNote>& notes);
// The same for one input.
void checkTelemetry(ImportedData& input, std::vector<QualityNote>& notes);

}  // namespace wl::import
