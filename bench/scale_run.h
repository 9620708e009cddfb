// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Large synthetic runs for benchmarks, written once into the temp folder and reused.
//
// Model (labelled simulated): every GPU samples 6 metrics at 20 Hz; power follows a 30 s training
// rhythm (300 W + 350 W x busy) with noise and rare one-sample spikes, temperature a slow
// first-order response, SM clock drops during 1% power-cap intervals (reason bit 0x4). Each rank
// has a compute stream (kernels of 0.2-8 ms back to back with short gaps) and a communication
// stream (NCCL kernels of 1-20 ms). Deterministic (fixed seed).

#include <filesystem>

namespace wl::bench {

struct ScaleSpec {
  int gpus = 64;
  double seconds = 3600;
  double hz = 20;
  int metrics = 6;                 // 1..6
  long kernelsTotal = 10'000'000;  // spread over gpus ranks x 2 streams
};

// Returns the path of the run for `spec`, writing it first if it is not in the temp folder.
std::filesystem::path scaleRun(const ScaleSpec& spec);

}  // namespace wl::bench
