// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Stored kernel summaries (docs/format.md, "/kernels/summary", format version 3): partials of the
// kernel analyses computed per track by one function and combined across tracks by one function.
// RunWriter calls add() on every chunk of a track's events as it writes them and stores the rows;
// `wattline upgrade` calls it on the events of an older file; the analysis
// (analysis/kernel_table.h) calls it on the events it reads when a file has no summaries, and
// merges stored rows with addRows() when it has. Every quantity is an integer sum, minimum or
// maximum, and the class and kind of a name are those of its first event in track order, so the
// result does not depend on where it was computed: `analyze --json` gives the same bytes either
// way.

#include <cstdint>
#include <span>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/core/time_range.h"

namespace wl {

// One kernel name on one track (or, combined, on several): the events that start in the range.
struct KernelNameSummary {
  uint32_t name = 0;  // string id in the run
  KernelClass cls = KernelClass::Compute;
  GpuEventKind kind = GpuEventKind::Kernel;
  uint64_t count = 0;
  int64_t total_ns = 0;  // sum of max(duration, 0)
  int64_t min_ns = 0;
  int64_t max_ns = 0;

  bool operator==(const KernelNameSummary&) const = default;
};

// The per-name table of one track (the partial) or of several (the combination), by name id.
class KernelNameTable {
 public:
  // The partial: every event of `events` that starts in `range`, in order.
  void add(std::span<const KernelEvent> events, TimeRange range);
  // The combination: another table's rows (the first holder of a name keeps its class and kind).
  void merge(const KernelNameTable& other);
  void addRows(std::span<const KernelNameSummary> rows);

  // The names with at least one event, by name id.
  std::vector<KernelNameSummary> rows() const;
  // Indexed by name id; count 0 where the name has no event.
  const std::vector<KernelNameSummary>& byName() const { return byName_; }
  uint64_t events() const { return events_; }

 private:
  void fold(const KernelNameSummary& row);
  std::vector<KernelNameSummary> byName_;
  uint64_t events_ = 0;
};

// The range a file's stored summaries cover: the run's span [start_ns, end_ns + 1), which is what
// a whole-run analysis covers (analysis/run_analysis.cpp, clampToRun).
inline TimeRange summaryRange(int64_t startNs, int64_t endNs) {
  const int64_t last = endNs > startNs ? endNs : startNs;
  return {startNs, last < INT64_MAX ? last + 1 : last};  // no overflow on a damaged file
}

}  // namespace wl
