// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The JSON of `wattline analyze --json` (schema in docs/analyses.md). Unknown values are null,
// never 0 or NaN.

#include <nlohmann/json_fwd.hpp>

#include "analysis/range_summary.h"
#include "analysis/run_analysis.h"

namespace wl {

// The one writer of analysis results: `analyze --json`, the study report and the per-run summary
// cache (run_summary.h) all write totals and kernel categories with these.
nlohmann::json toJson(const RunAnalysis& a);
nlohmann::json toJson(const RunTotals& t);              // the report's "totals"
nlohmann::json categoriesJson(const CategoryTimes& t);  // {category id: ns}
nlohmann::json toJson(const MetricStats& s);
nlohmann::json toJson(const RangeSummary& s);
// The "cost" block of `analyze --json` and `explain --json`; perIteration adds "iterations".
nlohmann::json toJson(const ThrottleCost& c, bool perIteration = false);

}  // namespace wl
