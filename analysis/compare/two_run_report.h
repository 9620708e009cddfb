// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The comparison of two runs step by step, as `wattline compare A.h5 B.h5 --iterations` prints it
// (schema in docs/compare.md, "Two runs"): what differs, how B is aligned on A (the iteration
// warp, and the mean |A − B| power under it and under the plain shift it replaces), and the
// per-iteration table with its mean ± stddev summary. JSON and CSV come from here so that any
// other front end prints the same numbers.

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare/config_diff.h"
#include "analysis/compare/iteration_compare.h"
#include "analysis/compare/ledger_compare.h"
#include "analysis/compare/warped_difference.h"

namespace wl {

struct TwoRunAlignment {
  bool warp = false;  // false: the runs share no step, B is aligned at the starts
  size_t knots = 0;
  std::optional<int64_t> shift_step;  // the step the shift aligns (defaultAlignment's)
  std::optional<TimeRange> window;    // commonStepWindow() on A's clock
  std::vector<std::pair<int, int>> pairs;
  std::string pair_by;  // "rank" or "index" (when the GPUs have no ranks to pair by)
  // Power A − B over the window and the pairs, under the warp and under the shift at shift_step.
  DifferenceStats warp_power, shift_power;
};

struct TwoRunComparison {
  std::string path_a, path_b, name_a, name_b;
  RunDifferences differences;
  TwoRunAlignment alignment;
  IterationComparison iterations;
  std::vector<LedgerStepComparison> ledgers;  // the energy ledgers at the steps both traced
};

TwoRunComparison compareTwoRuns(const RunFile& a, const RunFile& b,
                                const AnalysisOptions& options = {}, const Progress& progress = {});

nlohmann::json twoRunJson(const TwoRunComparison& c);
// One header line, then one line per common step: step, each run's window, then per column
// a_ID, b_ID, delta_ID, delta_pct_ID, then per throttle cause a_/b_/delta_throttled_CAUSE_s, then
// per energy ledger part a_/b_ledger_PART_j, _u_j, _resolved and delta_ledger_PART_j, _u_j.
// Unknown values are empty fields (a step one run did not trace has no ledger).
std::string twoRunCsv(const TwoRunComparison& c);

}  // namespace wl
