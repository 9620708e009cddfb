// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// `wattline compare A.h5 B.h5 --iterations [--json | --csv]`: two runs compared step by step
// (docs/compare.md, "Two runs"). cmdCompare() parses the arguments and hands them here.

#include "app/cli/arg_parser.h"
#include "loaders/core/progress.h"

namespace wl::cli {

// Exit 2 (UsageError) unless the positionals name exactly two runs and no study option is given.
int cmdCompareIterations(const ArgParser& p, const Progress& progress);

}  // namespace wl::cli
