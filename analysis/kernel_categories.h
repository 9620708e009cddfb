// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel categories of the seed paper's charts (its Fig. 10 / Fig. 15), by lower-cased name
// substring in the paper's order (docs/analyses.md, "Seed paper kernel categories"). That order
// sends most "...kernel..." names to Elementwise before MatMul or LayerNorm are tried; it is kept
// for fidelity, and a corrected order is offered beside it.

#include <array>
#include <cstdint>
#include <string_view>

#include "loaders/core/kernel_class.h"

namespace wl {

enum class KernelCategory : uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  SendRecv,
  Communication,  // corrected order only: other collectives (all-to-all, reduce, barrier...)
  Memory,
  MatMul,
  Elementwise,  // the paper's "Memory/Elementwise"
  LayerNorm,
  Attention,  // corrected order only: flash / fused attention
  Other,
};
inline constexpr size_t kKernelCategoryCount = 11;

std::string_view kernelCategoryId(KernelCategory c);  // "allreduce", "matmul", ...
std::string_view kernelCategoryLabel(KernelCategory c);

// The seed paper's rules, in its order.
KernelCategory seedPaperCategory(std::string_view name);
// The corrected order: communication by class, memory by event kind, then matmul, attention and
// normalization before the generic elementwise / "kernel" rule.
KernelCategory correctedCategory(std::string_view name, KernelClass cls, GpuEventKind kind);

using CategoryTimes = std::array<int64_t, kKernelCategoryCount>;

}  // namespace wl
