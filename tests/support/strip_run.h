// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A simulated run reduced to what a real run has, so a test can show that an estimate reads
// nothing else: the simulator's ground truth (/ground_truth, the per-kernel truth clock), its
// parameters (platform profile, seed; replaced by "{}") and the simulated mark (set to 0); with
// StripSensors::Too also the sensor table (/sensors), which a pre-sensor file lacks.

#include <filesystem>

namespace wl::test {

enum class StripSensors { No, Too };

// Rewrites the file in place; failures are gtest failures.
void stripToWhatARealRunHas(const std::filesystem::path& path,
                            StripSensors sensors = StripSensors::No);

}  // namespace wl::test
