// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Nsight Systems SQLite export (`nsys export --type sqlite`, FORMATS.md section 3): CUDA kernels,
// memcpy and memset activity, NVTX ranges (ProfilerStep#N ranges become iterations), GPU names,
// and the session's UTC start for the absolute clock. Accepts both metadata table names
// (META_DATA_EXPORT, and EXPORT_META_DATA of schema 2.x exports). One rank per process with GPU
// activity.

#include <memory>

#include "loaders/import/importer.h"

namespace wl::import {

std::unique_ptr<Importer> makeNsysImporter();

}  // namespace wl::import
