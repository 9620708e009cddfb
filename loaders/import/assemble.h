// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Merges what every importer read (ImportedData, one per input) into one run on one clock and
// writes it with RunWriter (docs/import.md explains the rules to users):
//
// - Clock: every source is shifted by its offset: a manual one (--offset SOURCE=NS), else 0 for
//   sources on the epoch clock; a source on an unknown clock (rocprof's time since boot) is
//   aligned to the start of the epoch-clock sources, with a warning. Every applied offset is
//   recorded in RunInfo::sources.
// - GPUs: telemetry GPUs are identified by host (or node) and node-local index; the same GPU in
//   two telemetry sources is merged. Without telemetry, the traces' devices become the GPUs.
// - Ranks -> GPUs: the telemetry GPU that names the rank, else the GPU with the rank's device
//   index on its node (node = rank / GPUs per node when there are several nodes).
// - A clock_skew quality note when a rank's first kernels fall where its GPU's telemetry says
//   idle and the nearest rise in utilization is more than one sampling interval away.
// - The run's span is the union of all data; name, platform and configuration come from the
//   options, else from the inputs' hints.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/progress.h"
#include "loaders/core/run_model.h"
#include "loaders/import/importer.h"

namespace wl::import {

// A manual clock offset for one source: added to each of its timestamps.
struct SourceOffset {
  std::string source;  // a file name, a path as given, or an importer name ("kineto")
  int64_t offset_ns = 0;

  bool operator==(const SourceOffset&) const = default;
};

// How telemetry sources without a manual offset are put on the traces' clock: by matching their
// power and utilization to the traced kernels (Auto, telemetry_alignment.h), or by their wall
// clocks as recorded (Wall).
enum class AlignMode { Auto, Wall };

struct AssembleOptions {
  std::string name, platform, model;  // empty: from the inputs (or the output's file name)
  ParallelConfig config;              // fields given here override the inputs' hints
  std::vector<SourceOffset> offsets;
  AlignMode align = AlignMode::Auto;
  std::string createdBy = "wattline import";
  std::string parametersJson;  // recorded as RunInfo::parameters_json
};

// What was written.
struct ImportSummary {
  std::filesystem::path output;
  RunInfo info;
  std::vector<GpuInfo> gpus;
  std::vector<RankInfo> ranks;
  uint64_t kernels = 0;            // device events written
  uint64_t telemetrySamples = 0;   // GPU telemetry rows written
  std::vector<QualityNote> notes;  // notes the import added (the writer may add repairs)
  // Kernel events spilled to disk to stay within the memory budget (ImportRequest::memoryBudget).
  uint64_t spillRuns = 0, spillBytes = 0;
};

// Merges the inputs and writes the run to `output` (through a temporary file: on an error or a
// cancel nothing is left behind). Throws wl::Error or wl::Cancelled.
ImportSummary assembleRun(std::vector<ImportedData> inputs, const AssembleOptions& options,
                          const std::filesystem::path& output, const Progress& progress = {});

// "tp=4,pp=8,dp=1,mbs=2,gbs=512,seq=2048,recompute=1,overlap=0,nodes=4,gpus_per_node=8";
// throws wl::Error naming the bad item.
ParallelConfig parseConfig(std::string_view text);
// "auto" or "wall"; throws wl::Error naming the value.
AlignMode parseAlignMode(std::string_view text);
// "SOURCE=NS" with NS in integer nanoseconds, or with a unit ("-1.5ms", "2s"); throws wl::Error.
SourceOffset parseOffset(std::string_view text);
// The GPU model in a device name: "NVIDIA H100 80GB HBM3" -> "H100", "AMD Instinct MI300X" ->
// "MI300X"; the name itself when no model is recognised.
std::string platformFromDeviceName(std::string_view device);

}  // namespace wl::import
