// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// PyTorch profiler / Kineto Chrome-trace JSON (FORMATS.md section 1): the object form with
// traceEvents and the legacy bare-array form, plain or gzip, NVIDIA and AMD (ROCm) variants.
//
// The trace is streamed one event at a time (JsonStream + simdjson on-demand per event), so a
// multi-GB trace costs memory only for what is kept: kernels, memcpy/memset, NCCL/RCCL collective
// metadata, streams, correlation ids, ProfilerStep#N iterations and user annotations. Timestamps
// are parsed from their digits into int64 ns, never through a double.

#include <filesystem>
#include <memory>

#include "loaders/import/importer.h"

namespace wl::import {

std::unique_ptr<Importer> makeKinetoImporter();

// What the importer's read() does; also used by other importers for traces they find beside
// their telemetry (CharLLM-PPT's rank-N.json). With a spool, the kernel events are kept within
// its memory budget (TraceBuilder::setSpool).
ImportedData readKinetoTrace(const std::filesystem::path& path, const Progress& progress = {},
                             std::shared_ptr<KernelSpool> spool = nullptr);

}  // namespace wl::import
