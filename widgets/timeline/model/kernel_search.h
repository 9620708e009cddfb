// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Find kernels by name: a case-insensitive substring search over every kernel track of the open
// runs, run off the UI thread. Matching names are found in the string table first, so the scan of
// each track compares integers.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loaders/format/run_file.h"

namespace wl {

struct KernelMatch {
  int run = 0;
  int track = 0;
  long event = 0;
  KernelEvent data;
};

// Matches sorted by start time; at most `limit`. Stops early (returning what it has) when
// `cancel` becomes true.
std::vector<KernelMatch> findKernels(const std::vector<std::shared_ptr<const RunFile>>& runs,
                                     const std::string& text, size_t limit,
                                     const std::atomic<bool>* cancel = nullptr);

}  // namespace wl
