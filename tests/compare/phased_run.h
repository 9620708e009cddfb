// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Small simulated runs for the two-run comparison tests, with numbers a test can work out by hand.
//
// Model (labelled simulated): after an idle lead-in, steps of given lengths follow each other;
// each step is split into forward, backward and optimizer phases (shares of its length, rounded
// to whole sample intervals). Every GPU draws a constant power per phase (+ 10 W per GPU
// index) and idles outside the steps; temperature = 30 + power / 20 C; SM clock 1980 MHz
// except GPU 0 in the backward phase of step `throttleStep` (1500 MHz, SW power cap bit);
// utilization 100 % inside steps, 0 outside. Samples every `sampleNs`, starting at the run start,
// so phase boundaries fall on samples. Rank g drives GPU g and records every step (rank g's
// steps start `rankSkewNs` x g later and end as much later). With annotations, one
// forward / backward / optimizer annotation per phase and rank; with kernels, per rank one compute
// kernel over forward and one over backward, and one communication kernel over the first half of
// the optimizer phase (exposed: no compute under it).

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl::test {

inline constexpr int64_t kPhasedT0 = 1'735'689'600'000'000'000;  // 2025-01-01T00:00:00Z

struct PhasedRunSpec {
  std::string name = "run";
  int gpus = 2;
  int64_t start = kPhasedT0;
  int64_t leadNs = 1'000'000'000;                         // idle before the first step
  int64_t tailNs = 1'000'000'000;                         // idle after the last
  std::vector<int64_t> stepNs;                            // length of each step
  int64_t firstStep = 0;                                  // number of the first step
  std::array<double, 3> phaseShare{0.4, 0.5, 0.1};        // forward, backward, optimizer
  std::array<double, 4> phasePowerW{400, 600, 250, 100};  // forward, backward, optimizer, idle
  int64_t sampleNs = 10'000'000;
  int throttleStep = 1;  // -1: none
  bool annotations = true;
  bool kernels = true;
  int64_t rankSkewNs = 0;
  ParallelConfig config;
};

// Where each phase of step k begins (for rank 0): {forward, backward, optimizer, end}.
std::array<int64_t, 4> phasedStepBounds(const PhasedRunSpec& s, size_t k);
// The modelled power of GPU g at time t (ns since the epoch).
double phasedPower(const PhasedRunSpec& s, int gpu, int64_t t);

// Writes the run and opens it.
std::shared_ptr<const RunFile> writePhasedRun(const PhasedRunSpec& s,
                                              const std::filesystem::path& out);

}  // namespace wl::test
