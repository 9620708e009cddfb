// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Building TelemetryTables from what the telemetry importers read, and the repairs and notes they
// share: row-by-row tables, merging per-metric series onto one time column (CharLLM-PPT, DCGM long
// CSV), local-time handling, tallies of odd values that become QualityNotes, 32-bit counter wraps
// and the GCD pairs of AMD MI250 packages.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/import/importer.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import::tel {

// A telemetry table filled row by row; columns appear when first named and hold NaN until set.
class TableBuilder {
 public:
  // Index of the column of `metric`, created (NaN-filled) if new.
  size_t column(std::string_view metric);
  // Appends a row at `t_ns` with every value NaN (and the throttle mask kUnknown when masks are
  // kept).
  void addRow(int64_t t_ns);
  // Reserves room for `rows` rows in every column (and the mask), to avoid regrowing.
  void reserve(size_t rows);
  void set(size_t column, double value) { table_.columns[column].values.back() = value; }
  // Sets the throttle mask of the last row, creating the mask column on first use.
  void setThrottle(uint32_t mask);
  size_t rows() const { return table_.t_ns.size(); }
  const TelemetryTable& table() const { return table_; }
  // The table, without columns that never held a finite value.
  TelemetryTable finish();

 private:
  TelemetryTable table_;
};

// One metric of one entity as its own time series (before merging).
struct Series {
  std::string metric;
  std::vector<int64_t> t_ns;
  std::vector<double> values;
};

struct MergedTable {
  TelemetryTable table;
  size_t unsortedSeries = 0;  // series whose timestamps went backwards (sorted here)
};

// The tolerance used to merge series of one polling loop: min(5 ms, a quarter of the smallest
// median sampling interval of the series).
int64_t mergeTolerance(const std::vector<Series>& series);

// Merges series onto one time column. Walking all samples in time order, a row starts at the
// first unplaced sample t0 and takes, from each series, its next sample if it lies within
// `toleranceNs` of t0; a series with no such sample has NaN in that row. Rows are stamped t0.
MergedTable mergeSeries(std::vector<Series> series, int64_t toleranceNs);

// Turns wall-clock times into UTC: a time with a zone uses it; one without uses the user's UTC
// offset (ImportOptions::utc_offset_s) or, without one, is read as UTC and counted for a note.
class ZonePolicy {
 public:
  explicit ZonePolicy(std::optional<int64_t> utcOffsetS) : offset_(utcOffsetS) {}
  int64_t toUtc(const text::DateTime& dt) {
    if (dt.zone_offset_s) return dt.wall_ns - *dt.zone_offset_s * text::kNsPerSecond;
    return localToUtc(dt.wall_ns);
  }
  int64_t localToUtc(int64_t wallNs) {
    if (offset_) return wallNs - *offset_ * text::kNsPerSecond;
    ++assumedUtc_;
    return wallNs;
  }
  // The note "local_time_assumed_utc" when some local time was read as UTC.
  void addNote(std::vector<QualityNote>& notes, const std::string& subject) const;

 private:
  std::optional<int64_t> offset_;
  size_t assumedUtc_ = 0;
};

// Counts an oddity and remembers where it first occurred.
struct Tally {
  size_t count = 0;
  int64_t firstLine = 0;
  std::string firstText;
  void add(int64_t line, std::string_view text) {
    if (count++ == 0) {
      firstLine = line;
      firstText = text::excerpt(text, 40);
    }
  }
  // "N <what> (first at FILE:LINE: 'text')".
  std::string describe(const std::filesystem::path& path, std::string_view what) const;
};

// Adds the note `code` when the tally is not empty.
void addTallyNote(std::vector<QualityNote>& notes, const Tally& tally, std::string_view code,
                  const std::filesystem::path& path, std::string_view what,
                  std::string_view consequence, Severity severity = Severity::Warning);

// Decreases between consecutive finite values of a cumulative counter (32-bit wraps or resets).
size_t countDecreases(const std::vector<double>& values);

// "H100" from "NVIDIA H100 80GB HBM3", "MI250X" from "AMD Instinct MI250X"; "" if none.
std::string platformFromDeviceName(std::string_view deviceName);

// MI250 and similar dual-die packages: the two GCDs of one package appear as GPUs 2k and 2k+1 of
// a node, and board power is reported on only one of them (the other says N/A or 0) or duplicated
// on both. When `knownPairs` is true (the platform says MI250) or the power columns show that
// pattern on every pair, both GCDs get one GpuInfo::package id (numbered across nodes), and the
// second GCD's power_w is made NaN where it is 0 or a copy of the first's, so that sums over GPUs
// count each package once. Notes say what was done. GPUs need info.node and info.local_index.
void applyGcdPairs(std::vector<ImportedGpu>& gpus, bool knownPairs,
                   std::vector<QualityNote>& notes);

// Adds mem_used_pct = mem_used_mib / totalMib x 100 when the table has mem_used_mib, no
// mem_used_pct yet, and the total is known (> 0).
void addMemoryUsedPercent(TelemetryTable& table, double totalMib);

// Median interval of a table's timestamps in seconds (0 if fewer than two).
double medianIntervalSeconds(const std::vector<int64_t>& t_ns);

}  // namespace wl::import::tel
