// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers for the simulator tests: small configurations and readers of what a run file holds.

#include <filesystem>
#include <memory>
#include <vector>

#include "loaders/format/run_file.h"
#include "loaders/sim/simulator.h"

namespace wl::test {

// TinyLlama-1.1B on one 8-GPU H100 node, pure data parallelism, no kernel traces.
sim::SimConfig tinyConfig();

// Simulates and opens the result.
std::shared_ptr<const RunFile> simulateAndOpen(const sim::SimConfig& c,
                                               const std::filesystem::path& out,
                                               sim::SimObserver* observer = nullptr);

struct Series {
  std::vector<double> t;  // seconds since the run start
  std::vector<double> v;
};
Series series(const RunFile& run, size_t gpu, std::string_view metric);

// Time-weighted mean (left Riemann sum) of the samples with t in [t0, t1).
double timeWeightedMean(const Series& s, double t0, double t1);

}  // namespace wl::test
