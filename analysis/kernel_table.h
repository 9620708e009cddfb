// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel table (HTA's kernel breakdown): per kernel name, count, total, mean, min and max
// duration of the events that start in the range (full durations), sorted by total time, with
// the kernels after the top N folded into "others". Also the time per seed-paper category and per
// corrected category, summed over the same events.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/kernel_categories.h"
#include "loaders/core/run_model.h"
#include "loaders/format/kernel_summary.h"

namespace wl {

class RunFile;

struct KernelStat {
  uint32_t name = 0;  // string id in the run
  std::string name_text;
  KernelClass cls = KernelClass::Compute;
  GpuEventKind kind = GpuEventKind::Kernel;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  bool others = false;  // the folded remainder

  double mean_ns() const { return count ? static_cast<double>(total_ns) / count : kNaN; }
};

// Accumulates events by name id: the per-track partial and its combination are
// loaders/format/kernel_summary.h's, which RunWriter stores (format version 3).
class KernelTableBuilder {
 public:
  void add(std::span<const KernelEvent> events, TimeRange range) { names_.add(events, range); }
  // One track's stored partial (RunFile::kernelSummary), as add() of its events would give it.
  void addSummary(std::span<const KernelNameSummary> rows) { names_.addRows(rows); }
  void merge(const KernelTableBuilder& other) { names_.merge(other.names_); }
  // Every kernel, sorted by total time (descending, then name id).
  std::vector<KernelStat> all(const RunFile& run) const;
  // The top `top` kernels plus one "others" row when more exist.
  std::vector<KernelStat> top(const RunFile& run, size_t top) const;
  // Time per category (seed paper order and corrected order).
  CategoryTimes seedCategories(const RunFile& run) const;
  CategoryTimes correctedCategories(const RunFile& run) const;
  uint64_t events() const { return names_.events(); }

 private:
  KernelNameTable names_;
};

}  // namespace wl
