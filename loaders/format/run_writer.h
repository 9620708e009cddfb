// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Writes one run into the native HDF5 format (docs/format.md).
//
// The writer streams: telemetry is added one GPU (or node) at a time in id order, kernel tracks in
// any order, so a simulator or importer never holds the whole run in memory. Everything goes to a
// temporary file beside the output, which finish() renames into place; a writer destroyed without
// finish() (an error, a cancel) removes the temporary file, so no half-written run is ever left.
//
// The writer also repairs what it must and says so: telemetry rows out of time order are sorted,
// duplicate timestamps are dropped, and samples outside the run's span are dropped, each with a
// QualityNote in the file.

#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "loaders/core/power_domain.h"
#include "loaders/core/progress.h"
#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"

namespace wl {

struct SpilledKernels;  // core/kernel_spool.h

struct WriteOptions {
  int deflate = 4;  // gzip level 0..9 (0: none)
  bool shuffle = true;
  size_t chunk = 32768;  // elements per chunk
  // The largest number of samples one GPU's (or node's) telemetry will have, when known: bounds
  // the telemetry pyramids by the samples whatever the run's span (LodGrid::forTelemetry). 0:
  // the first table added stands for the others.
  size_t max_samples_per_series = 0;
  // Per-track kernel summaries (/kernels/summary, loaders/format/kernel_summary.h): written in
  // format version 3. Off: a version 2 file without them (what older builds wrote; tests compare
  // the two).
  bool kernel_summaries = true;
};

class RunWriter {
 public:
  // info.start_ns / end_ns must cover every timestamp that will be added.
  RunWriter(std::filesystem::path output, RunInfo info, std::vector<GpuInfo> gpus,
            std::vector<RankInfo> ranks, const WriteOptions& options = {});
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  // Number of nodes with node-level telemetry (CharLLM-PPT system files); call before adding any.
  void setNodeCount(int nodes);

  // Telemetry of GPU `gpu` (ids ascending; skipped GPUs get no samples).
  void addGpuTelemetry(int gpu, TelemetryTable table);
  // Node-level telemetry of node `node` (ids ascending).
  void addNodeTelemetry(int node, TelemetryTable table);

  // One stream of one rank. Events are sorted by start here; names are ids into `names`.
  void addKernelTrack(KernelTrack track, const StringTable& names);
  // The same for a track read within a memory budget: its events are `events` (sorted runs on
  // disk and a sorted tail, core/kernel_spool.h), merged and written in chunks; track.events is
  // ignored, track.collectives point at events by SpillRecord::collective.
  void addKernelTrack(KernelTrack track, const SpilledKernels& events, const StringTable& names);
  void addIterations(std::span<const Iteration> iterations);
  void addAnnotations(std::span<const Annotation> annotations, const StringTable& names);
  void addQualityNote(QualityNote note);
  void setGroundTruth(std::vector<ThrottleTruth> throttle, std::vector<double> energyPerGpuJ);
  // The run's power domains (core/power_domain.h). Optional: without it, finish() derives them
  // from GpuInfo::package and which GPUs were given power samples (deriveDomains()). finish()
  // throws wl::Error when they do not partition the GPUs.
  void setDomains(std::vector<PowerDomain> domains);

  // Writes the tables, closes the file and renames it to the output path.
  void finish(const Progress& progress = {});

  const std::filesystem::path& output() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

}  // namespace wl
