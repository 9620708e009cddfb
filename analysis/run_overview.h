// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What is in a run at a glance: GPUs with their sample counts, ranks with their kernel counts,
// time span and data-quality notes. Behind `wattline info` and the GUI's run summary.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loaders/format/run_file.h"

namespace wl {

struct GpuOverview {
  GpuInfo gpu;
  uint64_t samples = 0;                                   // rows of its telemetry
  std::vector<std::pair<std::string, uint64_t>> metrics;  // valid samples per metric
};

struct RankOverview {
  int rank = 0;
  int gpu = -1;
  uint64_t kernels = 0;       // every device event of the rank (kernels, memcpy, memset)
  uint64_t comm_kernels = 0;  // communication class
  uint64_t compute_kernels = 0;
  uint64_t memory_ops = 0;
  size_t streams = 0;
  size_t iterations = 0;
};

struct RunOverview {
  RunInfo info;
  double duration_s = 0.0;
  std::vector<GpuOverview> gpus;
  std::vector<PowerDomain> domains;  // RunFile::domains()
  std::vector<RankOverview> ranks;
  std::vector<QualityNote> quality;
  std::vector<std::string> metrics;  // metric ids present in the run
};

RunOverview overview(const RunFile& run);

// The JSON of `wattline info --json` (the run's contents, named as docs/format.md names them).
nlohmann::json toJson(const RunOverview& o);
nlohmann::json toJson(const ParallelConfig& c);
// {id, kind, name, node, gpus, power_gpu (null for -1), power_limit_w}: one domain as `info` and
// `analyze` print it.
nlohmann::json toJson(const PowerDomain& d);

}  // namespace wl
