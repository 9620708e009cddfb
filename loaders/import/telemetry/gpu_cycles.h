// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How many GPUs take turns in a log without a GPU column (nvidia-smi --query-gpu without index,
// uuid or pci.bus_id): the rows of one query cycle come in device order, so row i is GPU i mod N,
// and N has to be found from the rows themselves (docs/import-telemetry.md, "GPUs without an
// index column").
//
// Three independent kinds of evidence:
// - timing: nvidia-smi stamps each GPU's row when it reads it, so the rows of one cycle lie close
//   together (the same millisecond, or a few ms apart on a loaded host) and cycles are one sampling
//   interval apart. Consecutive rows are split into bursts at the gaps that stand clearly above the
//   rest (the largest ratio between consecutive sorted gaps, at least 3x); N is the most frequent
//   burst length, and the bursts that do not start at a multiple of N are counted.
// - per-GPU constants (name, serial, memory.total, maximum clocks, VBIOS ...): the sequence of
//   their values repeats every N rows; when every position has its own values, they fix N.
// - value continuity: a GPU's metrics change little from one of its samples to the next, so the
//   mean step |v[i] - v[i - N]| is smallest at the right N (and its multiples).
//
// The result says which evidence decided, how confident the decision is, and a note text.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loaders/core/run_model.h"

namespace wl::import::tel {

struct CycleEvidence {
  std::span<const int64_t> t_ns;        // per row, in file order
  std::span<const uint32_t> signature;  // per row: id of its per-GPU constants; empty or all
                                        // equal when there are none
  std::vector<std::span<const double>> metrics;  // numeric columns, per row (NaN: missing)
  std::optional<int> given;                      // the user's --gpus
  std::string constantFields;  // their names, for the message ("name, memory.total")
};

enum class Confidence : uint8_t { Given, High, Medium, Low };

struct CycleResult {
  int gpus = 1;
  Confidence confidence = Confidence::Low;
  Severity severity = Severity::Warning;
  std::string message;  // how N was found and how sure that is, for the note "gpu_by_position"
  // The evidence, for tests and the message.
  int timingGpus = 0;      // 0: the timestamps show no cycles
  double timingShare = 0;  // fraction of bursts of timingGpus rows
  size_t bursts = 0;
  size_t misalignedBursts = 0;     // bursts that start at a row not a multiple of gpus
  int constantsPeriod = 0;         // 0: no per-GPU constants that differ between GPUs
  bool constantsDistinct = false;  // every position of the period has its own constants
  int continuityGpus = 0;          // 0: values do not tell
  double continuityContrast = 0;   // step at lag 1 / step at continuityGpus
};

// The largest N considered without --gpus.
inline constexpr int kMaxCycleGpus = 64;

CycleResult inferGpuCount(const CycleEvidence& e);

std::string_view confidenceName(Confidence c);

}  // namespace wl::import::tel
