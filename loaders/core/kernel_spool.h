// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel events that do not fit an import's memory budget, kept on disk as sorted runs.
//
// An import gathers the device events of each (rank, stream) in memory. When the event buffers of
// the whole import pass the budget's share, each buffer is sorted by start and written to one
// spill file as a run; RunWriter later merges the runs of a track (plus its in-memory tail) while
// it writes the track in chunks, so the import's memory is bounded whatever the trace size
// (docs/performance.md "Import").
//
// The spill file is a TempFile beside the output (".NAME.spill.tmp-PID-N"): removed when the
// spool is destroyed (success, error, cancel), on SIGINT/SIGTERM of the CLI, and by a later run's
// stale-file cleanup after a crash. The spool is shared (std::shared_ptr) by every track that has
// runs in it, so the file lives exactly as long as some track may still be read.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/core/temp_files.h"

namespace wl {

// One kernel event as spilled: KernelEvent's fields plus the index of its CollectiveInfo in the
// track (kNoCollective: none), so the writer can point each collective at the event's final place.
struct SpillRecord {
  static constexpr uint32_t kNoCollective = UINT32_MAX;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t correlation = -1;
  uint32_t name = 0;
  uint32_t collective = kNoCollective;
  uint8_t cls = 0;
  uint8_t kind = 0;
  uint8_t pad[6] = {};  // written as zeros: the file holds no uninitialised bytes
};
static_assert(sizeof(SpillRecord) == 40);

// A sorted run in the spill file: `count` records from byte offset `at`.
struct SpillRun {
  uint64_t at = 0;
  uint64_t count = 0;
};

class KernelSpool {
 public:
  // `target`: the output the import writes (the spill file goes beside it). `budgetBytes`: the
  // memory the import may use for event buffers, in total over every track it reads.
  KernelSpool(const std::filesystem::path& target, size_t budgetBytes);
  ~KernelSpool();
  KernelSpool(const KernelSpool&) = delete;
  KernelSpool& operator=(const KernelSpool&) = delete;

  size_t budget() const { return budget_; }
  // Bytes of event buffers that are held in memory now (all builders of the import together);
  // builders add what they allocate and subtract what they free or spill.
  void hold(int64_t bytes) { held_ += bytes; }
  int64_t held() const { return held_.load(); }

  // Appends one sorted run; creates the file on first use. Thread-safe. Throws wl::Error naming
  // the file when it cannot be written (a full disk).
  SpillRun write(std::span<const SpillRecord> sorted);
  // Reads out.size() records from byte offset `at` (any thread). Throws wl::Error.
  void read(uint64_t at, std::span<SpillRecord> out) const;
  // A track's collectives once numbered (TraceBuilder::finish): written, then read back by the
  // writer. Returns the byte offset.
  uint64_t writeCollectives(std::span<const CollectiveInfo> collectives);
  std::vector<CollectiveInfo> readCollectives(uint64_t at, size_t count) const;

  // The import's telemetry (ImportedGpu::spilled): bytes of the telemetry tables held in memory
  // now, and whole tables written and read back (writeTable/readTable below).
  void holdTelemetry(int64_t bytes) { telemetryHeld_ += bytes; }
  int64_t telemetryHeld() const { return telemetryHeld_.load(); }
  // Writes the pieces one after another, with no other write between them (thread-safe);
  // returns the offset of the first.
  uint64_t writeBytes(std::span<const std::span<const std::byte>> pieces);
  void readBytes(uint64_t at, void* out, size_t bytes) const { readAt(at, out, bytes); }

  // The spill file's path once created (empty before), how many runs and bytes it got.
  std::filesystem::path path() const;
  uint64_t runs() const { return runs_.load(); }
  uint64_t bytesWritten() const;

 private:
  std::filesystem::path target_;
  size_t budget_;
  std::atomic<int64_t> held_{0};
  std::atomic<int64_t> telemetryHeld_{0};
  std::atomic<uint64_t> runs_{0};
  mutable std::mutex mutex_;
  uint64_t append(const void* data, size_t bytes);  // with mutex_ held
  void readAt(uint64_t at, void* out, size_t bytes) const;

  std::optional<TempFile> temp_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
};

// A track's events when the import ran with a spool (TraceBuilder::setSpool, ImportedRank::
// spilled): sorted runs in the spool plus the sorted in-memory tail, which together are the
// events in the order they were added.
// Reading adds shift_ns to every start (clock offsets are applied here, not to the records).
struct SpilledKernels {
  std::shared_ptr<KernelSpool> spool;
  std::vector<SpillRun> runs;     // in the order they were written (earlier events first)
  std::vector<SpillRecord> tail;  // sorted by start (stable)
  // The track's collectives when they were spilled too (KernelTrack::collectives is then empty);
  // their string ids are mapped through `names` like the records'.
  uint64_t collectivesAt = 0, collectiveCount = 0;
  uint64_t count = 0;
  int64_t shift_ns = 0;
  // When not empty: the name id of a record is names[record.name] (a reader that moved the track
  // into another StringTable), else record.name.
  std::vector<uint32_t> names;
  // Before the shift: the earliest start and the latest end (durations below 0 count as 0).
  int64_t minStart = INT64_MAX, maxEnd = INT64_MIN;
};

// A GPU's telemetry table kept in the spill file while an import within a budget gathers its
// inputs (ImportedGpu::spilled): written whole once its input is read, read back whole when the
// run is written (or when the assembler must look at its values). Times are stored as read and
// shift_ns is added when the table is read back (clock offsets are applied here).
struct SpilledTable {
  std::shared_ptr<KernelSpool> spool;
  uint64_t at = 0;
  uint64_t rows = 0;
  std::vector<std::string> metrics;  // the columns, in order
  bool throttle = false;             // the table has throttle_reasons
  bool sorted = true;                // t_ns never decreases
  int64_t minT = 0, maxT = 0;        // before the shift; 0 when there are no rows
  int64_t shift_ns = 0;
};

// Writes `table` to the spool's file; the memory it takes is the caller's to free. Throws
// wl::Error when the file cannot be written.
std::shared_ptr<SpilledTable> writeTable(const std::shared_ptr<KernelSpool>& spool,
                                         const TelemetryTable& table);
// The table as written, with shift_ns added to its times. Throws wl::Error.
TelemetryTable readTable(const SpilledTable& spilled);
// Bytes a table holds in memory (its vectors' capacities).
size_t tableBytes(const TelemetryTable& table);

// Parses a memory size: plain bytes ("1048576") or a number with a binary unit K, M, G, T
// (optionally followed by "B" or "iB", any case: "512M", "2G", "1.5GiB"). Returns nullopt when
// the text is not such a size or it does not fit 64 bits.
std::optional<uint64_t> parseByteSize(std::string_view text);

}  // namespace wl
