// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What an analysis covers (a time range, GPUs, ranks) and the thresholds it uses. The defaults are
// the ones docs/analyses.md documents; the CLI and the GUI pass the same values, so both print the
// same numbers.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "loaders/core/time_range.h"

namespace wl {

// The part of a run an analysis looks at. Empty gpus / ranks mean every GPU / rank of the run.
struct AnalysisScope {
  TimeRange range;
  std::vector<int> gpus;
  std::vector<int> ranks;
};

// Which clock a throttle threshold is a fraction of.
enum class ClockReference {
  Observed,  // the highest SM clock observed on any GPU of the run (docs/analyses.md)
  Nominal,   // each GPU's max_sm_clock_mhz from the metadata (falls back to Observed if unknown)
};

struct AnalysisOptions {
  // Throttle detection: a busy sample is throttled when its SM clock is below
  // clockThresholdFraction x the reference clock.
  double clockThresholdFraction = 0.95;
  ClockReference clockReference = ClockReference::Observed;
  // A sample is busy when its utilization is at least this (percent).
  double busyUtilPct = 20.0;
  // Inferred power-cap throttling: power at or above this fraction of the GPU's power limit.
  double powerCapFraction = 0.98;

  // Idle breakdown per stream (HTA's consecutive_kernel_delay): a gap shorter than this before a
  // kernel is kernel-wait.
  int64_t kernelWaitNs = 30;
  // Kernel tables list this many kernels by total time; the rest are folded into "others".
  size_t topKernels = 20;
  // Stragglers: how many of the most skewed collective instances are joined with telemetry.
  size_t stragglerInstances = 10;

  // Analyses that need every raw sample of every GPU (|dP/dt| percentiles, power histogram,
  // counter deltas) run only when the GPUs and range analysed hold at most this many samples;
  // otherwise their values are null and a note says why. 0 means no limit.
  uint64_t rawSampleBudget = 20'000'000;

  // Thermal fit: bucket means of the finest pyramid level whose buckets are at least this wide and
  // that keeps GPUs x buckets within thermalFitMaxCells (the resolution is reported).
  double thermalFitMinBucketS = 2.0;
  size_t thermalFitMaxCells = size_t{1} << 20;
  // Longest temperature-power lag searched, in seconds.
  double thermalMaxLagS = 120.0;

  // Whether analyzeRun() estimates the cost of throttling (RunAnalysis::cost). The per-step
  // comparison turns it off: it takes each step's cost from one estimate over the whole run.
  bool throttleCost = true;
  // Whether analyzeRank() builds the energy ledger of each traced rank with power
  // (RankAnalysis::ledger, analysis/energy_ledger.h).
  bool energyLedger = true;
  // Whether a whole-run analysis takes the kernel table from the file's stored per-track
  // summaries (format version 3, loaders/format/kernel_summary.h) instead of the events. The
  // numbers are the same either way (tests compare the JSON); off is for those tests.
  bool kernelSummaries = true;

  // Threads for the per-GPU and per-rank steps (analysis/parallel.h): 0 means $WATTLINE_THREADS
  // or the machine's cores. The results do not depend on it.
  int threads = 0;
};

}  // namespace wl
