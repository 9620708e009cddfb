// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/study/run_summary_cache.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include "loaders/core/error.h"
#include "loaders/core/temp_files.h"

#ifndef WATTLINE_ANALYSIS_VERSION
#define WATTLINE_ANALYSIS_VERSION "unknown"
#endif

namespace wl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kMagic = "wattline_run_summary";

json optionsJson(const AnalysisOptions& o) {
  return {
      {"clock_threshold_fraction", o.clockThresholdFraction},
      {"clock_reference", o.clockReference == ClockReference::Observed ? "observed" : "nominal"},
      {"busy_util_pct", o.busyUtilPct},
      {"power_cap_fraction", o.powerCapFraction},
      {"kernel_wait_ns", o.kernelWaitNs},
      {"top_kernels", o.topKernels},
      {"straggler_instances", o.stragglerInstances},
      {"raw_sample_budget", o.rawSampleBudget},
      {"thermal_fit_min_bucket_s", o.thermalFitMinBucketS},
      {"thermal_fit_max_cells", o.thermalFitMaxCells},
      {"thermal_max_lag_s", o.thermalMaxLagS}};
}

// FNV-1a, for cache file names inside a cache folder.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::optional<FileStamp> fileStamp(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return std::nullopt;
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) return std::nullopt;
  FileStamp s;
  s.size = size;
  s.mtime_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  return s;
}

fs::path summaryCachePath(const fs::path& run, const SummaryCacheOptions& cache) {
  if (cache.dir.empty()) return fs::path(run.string() + ".summary.json");
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(run, ec);
  if (ec) abs = fs::absolute(run);
  return cache.dir /
         fmt::format("{}-{:016x}.summary.json", run.filename().string(), fnv1a(abs.string()));
}

json summaryCacheKey(const FileStamp& stamp, const AnalysisOptions& options) {
  return {{"summary_version", kRunSummaryVersion},
          {"program", WATTLINE_ANALYSIS_VERSION},
          {"file_size", stamp.size},
          {"file_mtime_ns", stamp.mtime_ns},
          {"options", optionsJson(options)}};
}

std::optional<RunSummary> readCachedSummary(const fs::path& run, const FileStamp& stamp,
                                            const AnalysisOptions& options,
                                            const SummaryCacheOptions& cache) {
  if (!cache.read) return std::nullopt;
  std::ifstream in(summaryCachePath(run, cache), std::ios::binary);
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    if (!j.is_object() || !j.contains(kMagic) ||
        j.value("key", json()) != summaryCacheKey(stamp, options))
      return std::nullopt;
    RunSummary s = runSummaryFromJson(j.at("summary"));
    s.path = run.string();  // the cache may have been made under another spelling of the path
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // damaged or foreign: analyse again and overwrite it
  }
}

bool writeCachedSummary(const fs::path& run, const FileStamp& stamp, const AnalysisOptions& options,
                        const RunSummary& summary, const SummaryCacheOptions& cache,
                        std::string* error) {
  if (!cache.write) return true;
  const fs::path target = summaryCachePath(run, cache);
  removeStaleTempFiles(target.parent_path());  // left by runs that were killed
  TempFile temp(target);  // removed on failure or an interrupt; the cache is never half-written
  const fs::path& tmp = temp.path();
  auto fail = [&](const std::string& why) {
    if (error) *error = fmt::format("{}: cannot write the summary cache: {}", target.string(), why);
    return false;
  };
  try {
    if (!cache.dir.empty()) {
      std::error_code ec;
      fs::create_directories(cache.dir, ec);
    }
    const json j = {{kMagic, kRunSummaryVersion},
                    {"key", summaryCacheKey(stamp, options)},
                    {"summary", toJson(summary)}};
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) return fail("cannot create a temporary file in its folder");
      temp.lock();
      out << j.dump();
      out.flush();
      if (!out) return fail("write failed");
    }
    std::error_code ec;
    temp.commit(ec);
    if (ec) return fail(ec.message());
    return true;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace wl
