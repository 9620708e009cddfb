// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What differs between two runs (docs/compare.md, "Two runs"): their configuration (platform,
// model, TP / PP / DP / EP / CP / VPP, microbatch, global batch, sequence length, recompute,
// overlap, nodes, GPUs per node, power limit) and their data (GPUs, sampling rate, metrics
// present, throttle reasons recorded, traced ranks, simulated or measured, steps), with a warning
// where a difference makes a side of the comparison unfair, and a short label per run naming what
// differs (e.g. "mbs4" and "mbs1") for legends.

#include <string>
#include <vector>

#include "loaders/format/run_file.h"

namespace wl {

struct RunDifference {
  std::string key;    // "mbs", "sampling_hz", ...
  std::string label;  // "microbatch", "sampling rate", ...
  std::string a, b;   // as shown; "unknown" where a run does not record it
};

struct RunDifferences {
  std::vector<RunDifference> config;
  std::vector<RunDifference> data;
  std::vector<std::string> warnings;  // one sentence each
  std::string label_a, label_b;       // what differs, short ("tp2 pp4", "H100"); else the names
};

RunDifferences runDifferences(const RunFile& a, const RunFile& b);

}  // namespace wl
