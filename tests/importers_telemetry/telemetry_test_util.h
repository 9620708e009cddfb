// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers of the telemetry importer tests: run an importer by name, capture its error message,
// write small inputs, read fixtures independently, and write ImportedData through RunWriter to see
// what reaches a run file.

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"
#include "loaders/import/importer.h"

namespace wl::test {

inline const std::filesystem::path kTelemetryData =
    std::filesystem::path(WATTLINE_TEST_DATA) / "telemetry";

// Reads `path` with the importer called `format` (fails the test if there is none).
import::ImportedData importWith(std::string_view format, const std::filesystem::path& path,
                                const import::ImportOptions& options = {});
// The name of the importer content detection picks for `path` ("" if none).
std::string detectedFormat(const std::filesystem::path& path);
// The message of the wl::Error that `f` throws ("" if it throws none).
std::string errorMessage(const std::function<void()>& f);
void writeText(const std::filesystem::path& path, const std::string& text);
// All lines of a text file, gunzipped if it is gzip (an independent reader: zlib gzgets).
std::vector<std::string> readLines(const std::filesystem::path& path);
// ns since the epoch of a UTC calendar time (an independent conversion: timegm).
int64_t utcNs(int y, int mo, int d, int h, int mi, int s);
// Splits on `sep` without trimming.
std::vector<std::string> split(const std::string& s, char sep);

// The column of `metric` in a GPU's table; fails the test if absent.
const TelemetryColumn& column(const import::ImportedGpu& gpu, std::string_view metric);
// Min and max of the finite values.
std::pair<double, double> finiteRange(const std::vector<double>& v);
size_t finiteCount(const std::vector<double>& v);
const import::ImportedGpu* gpuByIndex(const import::ImportedData& d, int localIndex);

// Writes the telemetry of `data` through RunWriter into `out` with a RunInfo spanning it, and
// opens the result.
std::shared_ptr<const RunFile> writeRun(const import::ImportedData& data,
                                        const std::filesystem::path& out);
// True if the run has a quality note with this code.
bool hasNote(const std::vector<QualityNote>& notes, std::string_view code);
const QualityNote* findNote(const std::vector<QualityNote>& notes, std::string_view code);

}  // namespace wl::test
