// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The kernel pyramid of one track built from pieces, for RunWriter's tracks written in chunks
// (a track merged from spilled runs, core/kernel_spool.h). Its own header so that lod.h, which
// every reader includes, stays as it is.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "loaders/format/lod.h"

namespace wl {

// buildKernelLod() fed in pieces (a track written in chunks): add() the events in start order, then
// finish(). The result is identical to buildKernelLod() over all of them at once.
class KernelLodBuilder {
 public:
  explicit KernelLodBuilder(const LodGrid& grid);
  void add(std::span<const KernelEvent> events);
  std::vector<KernelLodLevel> finish();

 private:
  void addInterval(size_t cls, int64_t a, int64_t b);

  const LodGrid& grid_;
  std::vector<KernelLodLevel> levels_;
  // Busy nanoseconds per class at each level, turned into fractions by finish().
  std::vector<std::array<std::vector<double>, kKernelClassCount>> busyNs_;
  // Union of intervals per class: events come sorted by start, so one open interval per class.
  std::array<int64_t, kKernelClassCount> curStart_{}, curEnd_{};
  std::array<bool, kKernelClassCount> open_{};
};

}  // namespace wl
