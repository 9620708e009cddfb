// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The part of one run's analysis report that a study of many runs needs (docs/compare.md): the
// run's identity and configuration, validity, the totals of `wattline analyze`, run-level
// numbers of the other analyses, and small per-GPU and per-rank tables for the study figures.
//
// A RunSummary is made from a RunAnalysis (analyzeRun(), the same code path as `wattline analyze`
// and the analysis panel), so every number in it equals the report's. It is a plain value that
// round-trips through JSON exactly (doubles are written with 17 significant digits, unknown values
// as null), which is what the per-run summary cache (study_cache.h) stores.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/kernel_categories.h"
#include "analysis/run_analysis.h"

namespace wl {

// Per GPU: what the GPU x configuration heatmaps show.
struct GpuSummary {
  int id = 0;
  int node = 0;
  int domain = -1;  // its power domain (an MI250 package holds two GCDs)
  int slot = 0;     // chassis slot where known, else the index inside the node
  double power_mean_w = kNaN, power_max_w = kNaN;
  double temp_mean_c = kNaN, temp_max_c = kNaN;
  double clock_mean_mhz = kNaN, clock_min_mhz = kNaN, clock_max_mhz = kNaN;
  double energy_j = kNaN;
  double throttled_fraction = kNaN;
  double peak_to_average = kNaN;
};

// Per traced rank: the HTA breakdown and the kernel categories of the seed paper's Fig. 10 / 15.
struct RankSummary {
  int rank = 0;
  int gpu = -1;
  int stage = -1;  // pipeline stage (pipelineStage()), -1 when the configuration does not say
  uint64_t kernels = 0;
  int64_t span_ns = 0, compute_ns = 0, exposed_comm_ns = 0, exposed_memory_ns = 0, idle_ns = 0;
  double overlap_ratio = kNaN;
  double lost_ns = kNaN;  // throttle slowdown estimate; NaN without the GPU's telemetry
  double compute_j = kNaN, exposed_comm_j = kNaN, idle_j = kNaN;  // energy attribution
  CategoryTimes seed_categories{};
  CategoryTimes corrected_categories{};
};

struct RunSummary {
  // The file the summary was made from, and its size and modification time then.
  std::string path;
  uint64_t file_size = 0;
  int64_t file_mtime_ns = 0;
  // False when the file could not be read at all; load_error then says why.
  bool readable = true;
  std::string load_error;

  // Identity (RunInfo).
  std::string name, platform, model, device_name;
  ParallelConfig config;
  bool simulated = false;
  int64_t start_ns = 0, end_ns = 0;
  int gpu_count = 0;  // GPUs analysed

  // data_quality.valid / invalid_reasons (docs/analyses.md, "Invalid runs").
  bool valid = false;
  std::vector<std::string> invalid_reasons;

  double duration_s = kNaN;  // analysed range
  RunTotals totals;

  // Run-level numbers of the other analyses (docs/compare.md lists how each is aggregated).
  double temp_mean_c = kNaN;            // mean over GPUs of the time-weighted mean
  double temp_max_c = kNaN;             // max over GPUs
  double clock_mean_mhz = kNaN;         // mean over GPUs
  double clock_min_mhz = kNaN;          // min over GPUs
  double clock_max_mhz = kNaN;          // max over GPUs
  double peak_to_average = kNaN;        // mean over GPUs of max / mean power
  double excursions = kNaN;             // sum over GPUs with a known power limit
  double excursion_s = kNaN;            // sum over GPUs
  double time_above_slowdown_s = kNaN;  // sum over GPUs with a known slowdown temperature
  double headroom_c = kNaN;             // min over GPUs
  double clock_deficit_mhz_s = kNaN;    // sum over GPUs with a clock
  double iteration_cv = kNaN;           // iterations.step_s.cv
  double rank_spread_s = kNaN;          // iterations.rank_spread_s.mean
  double straggler_skew_p99_ns = kNaN;
  double throttle_cost_s = kNaN;         // cost.step_s: seconds per step heat and power limits took
  double throttle_cost_fraction = kNaN;  // cost.fraction
  double temp_spread_c = kNaN;           // spatial.temp_mean_c.spread (max - min of GPU means)
  double hottest_vs_coolest_pct = kNaN;
  double package_temp_skew_c = kNaN;  // spatial.package_temp_skew_c.mean (MI250 GCD pairs)
  double gap_s = 0.0;

  CategoryTimes seed_categories{};  // over the traced ranks
  CategoryTimes corrected_categories{};
  std::vector<GpuSummary> gpus;
  std::vector<RankSummary> ranks;  // ranks with kernel events only

  size_t tracedRanks() const { return ranks.size(); }
  // Power domains (boards, MI250 packages); a summary that does not know them (domains 0) is
  // taken as one board per GPU.
  double domainCount() const {
    return totals.domains > 0 ? static_cast<double>(totals.domains) : gpu_count;
  }
  // The mean power per device (per GCD on MI250): totals.mean_power_per_device_w, or without
  // known domains the mean over GPUs.
  double meanPowerPerDevice() const {
    return totals.domains > 0 ? totals.mean_power_per_device_w : totals.mean_power_w;
  }
  // Completed iterations x global batch x sequence length; NaN when unknown or zero.
  double tokens() const;
};

// The pipeline stage of a rank under Megatron-LM's default rank order (tensor parallel fastest,
// pipeline slowest): rank / (world / pp). -1 when pp is unknown or does not divide the world.
int pipelineStage(int rank, const ParallelConfig& config, int gpuCount);

// Builds the summary of an analysis report (path, size and time are left for the caller).
RunSummary summarizeAnalysis(const RunAnalysis& a);

// The summary of a file that could not be read: not readable, invalid, with the reason.
RunSummary unreadableRun(const std::string& path, const std::string& error);

// Exact JSON round trip. fromJson throws wl::Error naming the JSON path on malformed input.
nlohmann::json toJson(const RunSummary& s);
RunSummary runSummaryFromJson(const nlohmann::json& j);

// Memory per GPU in GB: from the device name ("NVIDIA H100 80GB HBM3" -> 80) or, failing that,
// the platform's datasheet value (H100 80, H200 141, MI250 64 per GCD, MI300X 192); NaN if unknown.
double gpuMemoryGb(const std::string& platform, const std::string& deviceName);

}  // namespace wl
