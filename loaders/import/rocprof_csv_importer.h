// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// rocprof v1/v2 kernel CSV (results.csv; FORMATS.md section 2): one row per kernel dispatch with
// its GPU, queue, process and begin/end nanoseconds on the host's monotonic clock. Read one line
// at a time; plain or gzip.

#include <memory>

#include "loaders/import/importer.h"

namespace wl::import {

std::unique_ptr<Importer> makeRocprofCsvImporter();

}  // namespace wl::import
