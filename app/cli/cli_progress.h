// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Progress of a headless command on stderr: a rewritten line on a terminal ("COMMAND:  42% stage"),
// otherwise a line every 10 %. Quiet: no progress at all.

#include <string>
#include <string_view>

#include "loaders/core/progress.h"

namespace wl::cli {

Progress stderrProgress(std::string_view command, bool quiet);

}  // namespace wl::cli
