// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers of the importer tests: the independent Python reference (reference.py), importing into
// a run file, and reading per-rank numbers back from the written run.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "loaders/format/run_file.h"
#include "loaders/import/import_job.h"

namespace wl::test {

std::filesystem::path testData(const std::string& rel);

// Runs tests/importers/reference.py on a file (cached per format and path).
const nlohmann::json& reference(const std::string& format, const std::filesystem::path& file);

// Per-rank numbers of a written run, computed from its kernel events.
struct RankNumbers {
  uint64_t kernels = 0, memcpy = 0, memset = 0, comm = 0;
  size_t streams = 0, iterations = 0;
  int64_t first_ns = 0, last_ns = 0;
};
RankNumbers rankNumbers(const RunFile& run, int rank);

// Imports inputs into `out` with ImportJob.
import::ImportSummary importFiles(const std::vector<std::filesystem::path>& inputs,
                                  const std::filesystem::path& out, const std::string& format = {},
                                  const import::AssembleOptions& assemble = {});

std::string readFile(const std::filesystem::path& path);     // gunzips .gz content
std::string readFileRaw(const std::filesystem::path& path);  // the bytes as they are
void writeFile(const std::filesystem::path& path, const std::string& bytes);
std::string gzipBytes(const std::string& plain);

// Files in a folder that a failed import must not leave: *.h5 and writer temporaries.
std::vector<std::string> leftovers(const std::filesystem::path& dir);

// The message of the wl::Error that f throws, or "" if it throws none.
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace wl::test
