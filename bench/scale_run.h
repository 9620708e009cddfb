// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Large synthetic runs for benchmarks, written once into the temp folder and reused.
//
// Model (labelled simulated): every GPU samples 6 metrics at 20 Hz; power follows a 30 s training
// rhythm (300 W + 350 W x busy) with noise and rare one-sample spikes, temperature a slow
// first-order response, SM clock drops during 1% power-cap intervals (reason bit 0x4). Each rank
// has a compute stream (kernels of 0.2-8 ms back to back with short gaps) and a communication
// stream (NCCL kernels of 1-20 ms). Deterministic (fixed seed).
//
// Runs are written into $WATTLINE_BENCH_DIR (default: the system temp folder). The writer holds one
// GPU's telemetry or one kernel track at a time, so even the 10^8-kernel run (kScale1e8) is written
// within a few hundred MB.

#include <filesystem>

namespace wl::bench {

struct ScaleSpec {
  int gpus = 64;
  double seconds = 3600;
  double hz = 20;
  int metrics = 6;                 // 1..6
  long kernelsTotal = 10'000'000;  // spread over the traced ranks x 2 streams
  int tracedRanks = 0;             // ranks 0..tracedRanks-1 (on GPUs 0..) have kernels; 0: all
};

// The issue-17 scale: 1,024 GPUs x 1 h x 20 Hz x 6 metrics and 10^8 kernels over 64 traced ranks
// x 2 streams (781,250 kernels per stream, ~4.6 ms apart).
inline constexpr ScaleSpec kScale1e8{1024, 3600, 20, 6, 100'000'000, 64};

// The folder benchmark runs are written into and read from.
std::filesystem::path benchDir();

// Returns the path of the run for `spec`, writing it first if it is not in the temp folder.
std::filesystem::path scaleRun(const ScaleSpec& spec);

}  // namespace wl::bench
