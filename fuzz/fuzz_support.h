// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers shared by the fuzz targets (fuzz/README.md): the importers read paths, so a fuzz input
// is handed to them as an in-memory file (memfd, opened through /proc/self/fd/N) or, for inputs
// that are folders (CharLLM-PPT results), as files in one scratch folder per process that is
// emptied between inputs and removed at exit. Nothing is written outside that folder.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "loaders/import/importer.h"

namespace wl::fuzz {

using Bytes = std::span<const uint8_t>;

inline std::string_view asText(Bytes b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// An anonymous in-memory file holding the bytes; path() names it for open(), gzopen() and
// SQLite (not for HDF5, which wants the real path of what it opens: the run_file target writes
// into scratchDir() instead). Closed (and gone) when destroyed.
class MemFile {
 public:
  explicit MemFile(std::string_view bytes, const char* name = "fuzz-input");
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// The process's scratch folder (created on first use under /dev/shm or $TMPDIR, removed at exit).
const std::filesystem::path& scratchDir();
// Removes everything inside `dir` (which must lie in scratchDir()).
void clearDir(const std::filesystem::path& dir);
// Writes a file (creating parent folders) below scratchDir(). False when the file system cannot
// hold that name: a folder's name ("." or one ending in '/'), a name an earlier file already
// holds as a folder, or a name below an earlier file.
[[nodiscard]] bool writeFile(const std::filesystem::path& path, std::string_view bytes);

// The probe detect() sees for these bytes (gunzipped head when they are gzip), as probeInput()
// builds it for a file.
import::InputProbe probeOf(const std::filesystem::path& path);

// Aborts (a finding) when what an importer returned breaks the model's invariants: a column
// whose length differs from its table's, a negative kernel duration, a name id outside the
// string table, a collective pointing past its track.
void checkImported(const import::ImportedData& data);

// Reads `data` as the importer named `importer` and, before that, runs every importer's detect()
// on it. wl::Error and wl::Cancelled are expected outcomes; anything else escapes (a finding).
void importBytes(std::string_view importer, std::string_view data,
                 const import::ImportOptions& options = {});

// The message of the last wl::Error (or usage error) a target caught, for the regression test's
// NAME.expect files; cleared by clearLastError().
const std::string& lastError();
void clearLastError();
void noteError(const std::exception& e);

// Import options for an input: most inputs get the plain defaults (DCGM dmon: 100 ms rows); a
// few, picked by the input's size so that a crash reproduces from the file alone, get values at
// the edges of what `wattline import` accepts (a DCGM interval of 1e-9 or 1e300 ms).
import::ImportOptions optionsFor(std::string_view data);

}  // namespace wl::fuzz
