// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// `wattline upgrade`: a run file of an older format version (1 or 2) rewritten in the current one
// (docs/format.md): the input copied to a temporary file beside the output, what the newer
// version adds written into the copy (/domains and /gpus/domain for version 1, as the reader
// derives them; /kernels/summary from every track's events, through the partial RunWriter
// stores, loaders/format/kernel_summary.h), format_version set, then renamed into place. The input
// is never modified.

#include <filesystem>

#include "loaders/core/progress.h"

namespace wl {

struct UpgradeResult {
  int64_t from_version = 0;
  int64_t to_version = 0;
  size_t tracks = 0;
  size_t summary_rows = 0;
};

// Throws wl::Error (input unreadable or damaged, already current, output = input, cannot write)
// and wl::Cancelled; leaves no output or temporary file then.
UpgradeResult upgradeRun(const std::filesystem::path& input, const std::filesystem::path& output,
                         const Progress& progress = {});

}  // namespace wl
