// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The per-run summary cache that lets a study of hundreds of runs open without analysing them
// again (docs/compare.md, "The summary cache").
//
// Beside each run RUN.h5 lies RUN.h5.summary.json (or, with a cache folder, one file per run in
// that folder), holding the RunSummary and the key it was made under: the run file's size and
// modification time, the summary version, the program version and every analysis option. A cached
// summary is used only when the whole key matches, so a rewritten or touched run, another version
// of Wattline or other thresholds analyse the run again. Cache files are written to a temporary
// file in the same folder and renamed, so a crash never leaves half a file, and a folder that
// cannot be written to only costs the cache (the run file itself is never modified).

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "analysis/analysis_options.h"
#include "analysis/study/run_summary.h"

namespace wl {

// Bump when RunSummary's content or the numbers of the analyses it holds change.
// 2: power domains (totals.domains, domain_gpus, domain_kind, mean_power_per_device_w; GPU
// domain; package_temp_skew_c).
// 3: totals and kernel categories written by analysis_json.h, as `analyze --json` writes them
// (throttled_by_reason by cause id, categories by category id).
inline constexpr int kRunSummaryVersion = 4;

struct SummaryCacheOptions {
  bool read = true;
  bool write = true;
  std::filesystem::path dir;  // empty: beside each run
};

struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // std::filesystem::last_write_time, ns since the file clock's epoch
};
// nullopt when the file cannot be stat'ed.
std::optional<FileStamp> fileStamp(const std::filesystem::path& path);

// Where the summary of `run` is cached.
std::filesystem::path summaryCachePath(const std::filesystem::path& run,
                                       const SummaryCacheOptions& cache);

// The key a cached summary must carry to be used.
nlohmann::json summaryCacheKey(const FileStamp& stamp, const AnalysisOptions& options);

// The cached summary, when its file exists, parses and carries exactly this key; nullopt
// otherwise (a damaged cache file is a miss, never an error).
std::optional<RunSummary> readCachedSummary(const std::filesystem::path& run,
                                            const FileStamp& stamp, const AnalysisOptions& options,
                                            const SummaryCacheOptions& cache);

// Writes the cache file atomically. Returns false and says why in `error` when it cannot.
bool writeCachedSummary(const std::filesystem::path& run, const FileStamp& stamp,
                        const AnalysisOptions& options, const RunSummary& summary,
                        const SummaryCacheOptions& cache, std::string* error = nullptr);

}  // namespace wl
