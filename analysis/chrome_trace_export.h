// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run as a Chrome trace event JSON file ("Trace Event Format"), the form Perfetto's UI and
// chrome://tracing open, and the form PyTorch's profiler (Kineto) writes (docs/export.md,
// "Perfetto / Chrome trace").
//
// What is written, for the chosen range and GPUs:
// - kernels, memcpy and memset of each rank as complete slices ("ph":"X"): pid = rank, tid =
//   stream, cat "kernel" / "gpu_memcpy" / "gpu_memset", args.device (the rank's GPU),
//   args.stream and args.correlation, and for NCCL/RCCL kernels the collective metadata under
//   Kineto's names ("Collective name", "Process Group Name", ...), so that Wattline's Kineto
//   importer reads them back;
// - iterations as "ProfilerStep#N" slices (cat "user_annotation") on the rank's process;
// - per GPU, a process "GPU N" with one counter event ("ph":"C") per sample of power_w, temp_c,
//   sm_clock_mhz and util_pct, and the throttle intervals of detectThrottle() as slices;
// - metadata events naming and ordering the processes and threads.
// Times are absolute microseconds since the Unix epoch, written as decimals with three digits
// after the point from the integer nanoseconds (never through a double), so a round trip through
// the importer keeps every nanosecond. A file of one rank also carries Kineto's top-level
// "distributedInfo" (rank, world size) and "deviceProperties", which the importer reads.
//
// The file is streamed: one event at a time into a buffer flushed to disk (gzip when the name ends
// in .gz), through a temporary file renamed into place when complete. Memory: one track's kernels
// of the range at a time, plus the run's collective table.

#include <cstdint>
#include <filesystem>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/progress.h"
#include "loaders/core/time_range.h"
#include "loaders/format/run_file.h"

namespace wl {

struct ChromeTraceOptions {
  TimeRange range;           // default: the whole run
  std::vector<int> gpus;     // empty: every GPU (and every rank, with or without a GPU)
  AnalysisOptions analysis;  // throttle detection's thresholds
};

struct ChromeTraceSummary {
  size_t ranks = 0;
  size_t gpus = 0;
  uint64_t kernels = 0;  // kernel, memcpy and memset slices
  uint64_t iterations = 0;
  uint64_t counterEvents = 0;
  uint64_t throttleIntervals = 0;
  bool gzip = false;
};

// The counters written per GPU, in this order (the metrics the run has).
const std::vector<std::string_view>& chromeTraceCounters();

// The pid of GPU `gpu`'s process (1,000,000 + gpu); a rank's process is its rank number.
int64_t chromeTraceGpuPid(int gpu);

// Writes the trace to `path` (gzip when it ends in ".gz"). Throws wl::Error naming the file when it
// cannot be written, or a GPU the run does not have; wl::Cancelled when progress says stop (the
// temporary file is removed either way).
ChromeTraceSummary writeChromeTrace(const RunFile& run, const std::filesystem::path& path,
                                    const ChromeTraceOptions& options,
                                    const Progress& progress = {});

}  // namespace wl
