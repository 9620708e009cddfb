// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The telemetry importers (docs/import-telemetry.md), one unit each, created by the registry
// (registry.cpp). Each reads one file or folder into ImportedData with one ImportedGpu per GPU.

#include <memory>

#include "loaders/import/importer.h"

namespace wl::import {

std::unique_ptr<Importer> makeNvidiaSmiCsvImporter();   // "nvidia-smi-csv"
std::unique_ptr<Importer> makeNvidiaSmiDmonImporter();  // "nvidia-smi-dmon"
std::unique_ptr<Importer> makeDcgmDmonImporter();       // "dcgm-dmon"
std::unique_ptr<Importer> makeDcgmCsvImporter();        // "dcgm-csv"
std::unique_ptr<Importer> makeAmdSmiCsvImporter();      // "amd-smi-csv"
std::unique_ptr<Importer> makeZeusMonitorImporter();    // "zeus-monitor"
std::unique_ptr<Importer> makeZeusWindowsImporter();    // "zeus-windows"
std::unique_ptr<Importer> makeCharLlmImporter();        // "charllm"

}  // namespace wl::import
