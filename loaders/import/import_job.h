// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One import, from the inputs the user named to one run file: the entry point that `wattline
// import` and the GUI's import dialog both call, so both read the same way.
//
// plan() says what will be read and by which importer (folders are expanded into their files
// unless an importer reads the folder as a whole, e.g. a CharLLM-PPT results folder); the GUI
// shows it as the detected-format preview. run() reads every input, several files at a time
// (ImportRequest::threads, within the memory budget: readerCount()), then assembleRun() merges
// them and writes the run; progress and cancel throughout; on any error or a cancel no output is
// left.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/import/assemble.h"
#include "loaders/import/importer.h"

namespace wl::import {

// The default --memory-budget: 512 MiB.
inline constexpr uint64_t kDefaultMemoryBudget = uint64_t{512} << 20;

struct ImportInput {
  std::filesystem::path path;  // a file or a folder
  std::string format;          // an importer name; empty: detect from the content
};

// The UTC offset of the local time a source was written in (--utc-offset [SOURCE=]+HH:MM).
struct UtcOffset {
  std::string source;   // a file name, a path as given, or an importer name; empty: every input
  int64_t seconds = 0;  // east of UTC: +02:00 is 7200

  bool operator==(const UtcOffset&) const = default;
};

// A source that is not a file (a Prometheus server), read by a function before the files.
struct RemoteInput {
  std::string label;   // the source as shown and recorded: "prometheus:http://host:9090"
  std::string format;  // "prometheus"
  std::function<ImportedData(const Progress&)> read;
};

struct ImportRequest {
  std::vector<ImportInput> inputs;
  std::vector<RemoteInput> remote;
  std::filesystem::path output;
  std::string format;  // used for inputs without a format of their own; empty: detect
  ImportOptions options;
  AssembleOptions assemble;
  // Per-source local time zones; for each input the offset naming its file wins over one naming
  // its format, which wins over one without a source, which wins over options.utc_offset_s.
  std::vector<UtcOffset> utcOffsets;
  // The memory the kernel events of the traces may take while they are read and written
  // (--memory-budget); past it they are spilled to a temporary file beside the output
  // (core/kernel_spool.h). GPU telemetry counts too: past a quarter of the budget each file's
  // tables are spilled as the file is read (ImportedGpu::spilled). 0: no limit, everything stays
  // in memory.
  uint64_t memoryBudget = kDefaultMemoryBudget;
  // Files read at the same time (--threads), each on its own thread; 0: one per core. Fewer when
  // there are fewer files or the budget has no room for more readers (readerCount()).
  unsigned threads = 0;
};

// The memory a reader needs beside the budget's kernel share (its read buffer, parser state, the
// collectives of the trace it is parsing): each reader past the first takes this much of the
// budget, so a small budget reads fewer files at once.
inline constexpr uint64_t kReaderMemory = uint64_t{16} << 20;

// How many files run() reads at once: `threads` (0: the cores), at most `files`, and at most one
// per kReaderMemory of `budget` (0: no limit); at least 1.
unsigned readerCount(unsigned threads, size_t files, uint64_t budget);

// One file (or folder read as a whole) and the importer that will read it.
struct PlannedInput {
  std::filesystem::path path;
  std::filesystem::path given;         // the input it comes from (differs for a folder's files)
  const Importer* importer = nullptr;  // nullptr: nothing reads it (see problem)
  bool overridden = false;             // the format was given rather than detected
  std::string problem;                 // one line: why it will not be read; empty if it will
};

class ImportJob {
 public:
  explicit ImportJob(ImportRequest request);

  const ImportRequest& request() const { return request_; }
  // Expands folders and detects formats. Throws wl::Error for an input that does not exist or
  // an unknown format name.
  std::vector<PlannedInput> plan() const;
  // Reads and writes. Throws wl::Error (one line) or wl::Cancelled; no output file is left
  // behind either way.
  ImportSummary run(const Progress& progress = {});
  // Asks a running run() to stop (from any thread); it throws wl::Cancelled soon after.
  void cancel() { cancel_ = true; }
  bool cancelRequested() const { return cancel_; }

 private:
  ImportRequest request_;
  std::atomic<bool> cancel_{false};
};

// "+02:00", "-05:30", "+0530", "+2", "Z", "UTC", optionally "SOURCE=" in front; offsets from
// -14:00 to +14:00. Throws wl::Error naming the text and what was expected.
UtcOffset parseUtcOffset(std::string_view text);

// --start-time: an ISO 8601 time with its zone ("2026-11-27T17:44:13.6Z",
// "2026-11-27T18:44:13+01:00"; a space for the T is accepted), in ns since the epoch (UTC). It
// places telemetry whose times are relative (ImportOptions::start_ns). Throws wl::Error naming
// the text and what was expected.
int64_t parseStartTime(std::string_view text);

// The importers, one per line ("  kineto        PyTorch profiler ..."), grouped into kernel
// traces and telemetry: what `wattline import --format list` prints.
std::string formatList();

}  // namespace wl::import
