// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The importer interface: one small unit per input format (docs/import.md,
// docs/import-telemetry.md), registered in one table (registry.cpp). An importer reads one input
// (a file, or a folder for layouts such as CharLLM-PPT results) into ImportedData; assemble.h
// merges the ImportedData of every input into one run on one clock and writes it.
//
// Rules for every importer:
// - detect() looks at content (the first bytes, decompressed if gzip; a folder's listing), never
//   only at the file name;
// - read() streams: a multi-GB trace is never parsed into a DOM;
// - read() reports progress and stops with wl::Cancelled when asked;
// - bad input throws wl::Error with one line: "FILE:LINE: ..." or "FILE: at JSON path ...:
//   expected X, found Y"; recoverable oddities become QualityNotes instead.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/kernel_spool.h"
#include "loaders/core/progress.h"
#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"

namespace wl::import {

// The times an import accepts: every timestamp and duration read, and every time after a clock
// offset, lies strictly within +-kMaxAbsTimeNs (2^62 ns: 146 years either side of 1970, i.e.
// 1824..2116), so that a time plus a duration, a span (end - start) or a time plus an offset of
// that size never overflows int64. A value outside is an error that names where it is.
inline constexpr int64_t kMaxAbsTimeNs = int64_t{1} << 62;
inline constexpr bool inTimeRange(int64_t t) {
  return t > -kMaxAbsTimeNs && t < kMaxAbsTimeNs;
}

// What detect() may look at.
struct InputProbe {
  std::filesystem::path path;
  bool isDirectory = false;
  std::string head;  // the first up to 64 KiB of the file, gunzipped if it was gzip
  bool gzip = false;
  // For folders: relative paths of the files below it (depth <= 6, at most 100,000 entries).
  std::vector<std::filesystem::path> entries;
};

// Builds the probe of a path. Throws wl::Error if it cannot be read.
InputProbe probeInput(const std::filesystem::path& path);

struct ImportOptions {
  // DCGM dmon text has no timestamps: rows arrive every `dcgm_interval_ms` (given by the user).
  std::optional<double> dcgm_interval_ms;
  // Absolute start time for inputs whose times are relative (--start-time): DCGM dmon text,
  // nvidia-smi dmon without a date, ZeusMonitor windows on the monotonic clock; ns since the epoch.
  std::optional<int64_t> start_ns;
  // Local time zone offset for sources that write local time without a zone (nvidia-smi's
  // "YYYY/MM/DD HH:MM:SS.mmm", Zeus): seconds east of UTC. Unset: treat as UTC and add a note.
  std::optional<int64_t> utc_offset_s;
  // Number of GPUs that take turns in a log without a GPU column (nvidia-smi --query-gpu without
  // index, uuid or pci.bus_id): row i is GPU i mod gpus. Unset: inferred from the rows.
  std::optional<int> gpus;
  // Where kernel events go that do not fit the import's memory budget (core/kernel_spool.h),
  // shared by every input of one import; null: every event stays in memory. Importers that
  // collect events with a TraceBuilder hand it over (TraceBuilder::setSpool).
  std::shared_ptr<KernelSpool> spool;
};

// Telemetry of one GPU as a source sees it.
struct ImportedGpu {
  GpuInfo info;  // id is ignored (assigned when assembling); node / local_index / rank as known
  bool nodeKnown = false;  // info.node came from the source
  TelemetryTable table;
  // Set when the import spilled the table to stay within its memory budget (import_job.h):
  // `table` is then empty and the samples are on disk (core/kernel_spool.h).
  std::shared_ptr<SpilledTable> spilled;
};

// Host-level telemetry of one node (CharLLM-PPT system files).
struct ImportedNode {
  int node = 0;
  std::string hostname;
  TelemetryTable table;
};

// The kernel trace of one rank.
struct ImportedRank {
  RankInfo info;    // rank -1 if the source does not say
  int device = -1;  // device index the trace's GPU events ran on (for mapping to GPUs)
  std::string deviceName;
  std::vector<KernelTrack> tracks;  // names are ids into ImportedData::strings
  // Read within a memory budget (ImportOptions::spool): parallel to `tracks`, each track's events
  // (on disk and in memory), while KernelTrack::events stays empty. Empty otherwise.
  std::vector<std::shared_ptr<SpilledKernels>> spilled;
  std::vector<Iteration> iterations;
  std::vector<Annotation> annotations;
  int64_t world_size = -1;
};

// Everything an importer read from one input.
struct ImportedData {
  std::string format;  // the importer's name
  std::filesystem::path path;
  std::vector<ImportedGpu> gpus;
  std::vector<ImportedNode> nodes;
  std::vector<ImportedRank> ranks;
  StringTable strings;
  std::vector<QualityNote> notes;
  // The notes of the telemetry checks (telemetry_checks.h) when they ran as the input was read,
  // before its tables were spilled; unset: the assembler runs them.
  std::optional<std::vector<QualityNote>> checkNotes;
  // Hints for the run metadata, used when the user does not give them.
  std::string name, platform, model;
  ParallelConfig config;
  double sample_interval_s = 0.0;
  // True if timestamps are absolute (epoch); false if relative to an unknown start (then the
  // assembler needs an offset or aligns by content).
  bool absoluteTime = true;
  // True if the input's times were placed at ImportOptions::start_ns (the import warns when a
  // start time was given and no input used it).
  bool startTimeUsed = false;
  // True if energy_j is a counter measured independently of power_w (DCGM's
  // total_energy_consumption): the import compares the two (telemetry_checks.h).
  bool energyCounterMeasured = false;
  // What the source says its metrics mean (SensorInfo::source is set when assembling); metrics it
  // leaves out get core/sensors.h's defaults for their kind (counter, utilization, reading).
  std::vector<SensorInfo> sensors;
};

class Importer {
 public:
  virtual ~Importer() = default;
  virtual std::string_view name() const = 0;         // "kineto", "nvidia-smi-csv", ...
  virtual std::string_view description() const = 0;  // one line for --help and the GUI
  virtual bool telemetry() const = 0;                // true: telemetry; false: kernel traces
  // Confidence 0..100 that this importer reads the input.
  virtual int detect(const InputProbe& probe) const = 0;
  virtual ImportedData read(const std::filesystem::path& input, const ImportOptions& options,
                            const Progress& progress) const = 0;
};

// The registry: every importer, in the order --help lists them.
const std::vector<std::unique_ptr<Importer>>& importers();
const Importer* findImporter(std::string_view name);
// The importer with the highest confidence (> 0), or nullptr.
const Importer* detectImporter(const InputProbe& probe);

}  // namespace wl::import
