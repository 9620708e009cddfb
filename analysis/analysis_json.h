// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The JSON of `wattline analyze --json` (schema in docs/analyses.md). Unknown values are null,
// never 0 or NaN.

#include <nlohmann/json_fwd.hpp>

#include "range_summary.h"
#include "run_analysis.h"

namespace wl {

nlohmann::json toJson(const RunAnalysis& a);
nlohmann::json toJson(const MetricStats& s);
nlohmann::json toJson(const RangeSummary& s);

}  // namespace wl
