// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// rocprofv3 JSON (rocprofiler-sdk-tool, FORMATS.md section 2): kernel dispatches and memory copies
// with their agents (GPUs) and kernel symbols. Streamed one record at a time. Its timestamps count
// nanoseconds on the host's monotonic clock (since boot), so the data is marked as relative: the
// assembler places it on the run's clock (docs/import.md, "Clocks").

#include <memory>

#include "loaders/import/importer.h"

namespace wl::import {

std::unique_ptr<Importer> makeRocprofV3Importer();

}  // namespace wl::import
