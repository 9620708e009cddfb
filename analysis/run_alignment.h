// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Putting two runs on one time axis for a side-by-side comparison, and pairing their GPUs.
//
// An alignment is the offset added to the second run's timestamps so that they read on the first
// run's clock: by absolute time (0), at the runs' starts, at the start of iteration k of both runs
// (the earliest rank to start it), or at a chosen event of each run; or the iteration warp
// (compare/time_warp.h), which stretches every iteration of the second run onto the first's.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loaders/format/run_file.h"

namespace wl {

// Warp: B drawn through iterationWarp() (compare/time_warp.h; alignmentWarp() gives any mode's
// map).
enum class AlignMode { Absolute, Start, Iteration, Event, Warp };

// When iteration `step` starts in a run: the earliest start over its ranks; nullopt if no rank
// recorded that step.
std::optional<int64_t> iterationStart(const RunFile& run, int64_t step);
// Steps both runs recorded, ascending.
std::vector<int64_t> commonSteps(const RunFile& a, const RunFile& b);

int64_t alignAtStart(const RunFile& a, const RunFile& b);
// Iteration `step` of b under iteration `step` of a; nullopt if either lacks it.
std::optional<int64_t> alignAtIteration(const RunFile& a, const RunFile& b, int64_t step);
// The default for a comparison: the iteration warp when both runs have a common iteration, else the
// starts. With Warp, the offset returned (and *stepOut) are those of the shift at the first common
// iteration (the second common one when there are several: the first often includes warm-up), for
// callers that can only draw a shift.
std::pair<AlignMode, int64_t> defaultAlignment(const RunFile& a, const RunFile& b,
                                               int64_t* stepOut = nullptr);

enum class PairBy { Rank, Slot, Index };

// GPU pairs (gpu of a, gpu of b): by global rank, by (node, local index), or by id. GPUs without a
// partner are left out.
std::vector<std::pair<int, int>> pairGpus(const RunFile& a, const RunFile& b, PairBy by);

}  // namespace wl
