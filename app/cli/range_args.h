// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Parsing of the options that scope a command to part of a run, shared by the subcommands that
// take them (`wattline analyze`, `wattline export`):
//   --range START:END  durations after the run start ("10s:25.5s", "1m:2m", "12m:12m10s", bare
//                      seconds) or, as bare integers of 16 or more digits, absolute times in ns;
//                      either side may be empty (the run's edge);
//   --gpus LIST        "0,2,4-7";
//   --metrics LIST     "power_w,temp_c".
// Mistakes throw UsageError naming the option (exit code 2).

#include <cstdint>
#include <string>
#include <vector>

#include "loaders/core/time_range.h"

namespace wl::cli {

// "0,2,4-7" -> {0, 2, 4, 5, 6, 7}.
std::vector<int> parseIndexList(const std::string& option, const std::string& text);
// "a,b,c" -> {"a", "b", "c"} (no empty items).
std::vector<std::string> parseNameList(const std::string& option, const std::string& text);
// Checks the shape of a --range value ("START:END") before the run is opened.
void checkRangeSyntax(const std::string& text);
// The range [START, END) of a --range value for a run starting at runStart; an empty side keeps
// the default (everything). END must be after START.
TimeRange parseRunRange(const std::string& text, int64_t runStart);

}  // namespace wl::cli
