// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The output of `wattline compare` (schema in docs/compare.md): the comparison table as JSON and
// as CSV. Each run's `totals` are printed by the same code as `wattline analyze --json`, so the two
// commands agree to the last digit.

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "analysis/study/study.h"
#include "analysis/study/study_table.h"

namespace wl {

// {normalization, baseline, columns, runs [...], deltas [...], pareto [...]}.
nlohmann::json compareJson(const Study& study, const StudyTable& table);

// One header line, then one line per row: the run's identity and configuration, then for every
// column its value, delta, relative delta and rank. Unknown values are empty fields.
std::string compareCsv(const Study& study, const StudyTable& table);

// The labels of the runs of the table on the throughput / energy-per-token Pareto front.
std::vector<std::string> paretoLabels(const Study& study, const StudyTable& table);

}  // namespace wl
