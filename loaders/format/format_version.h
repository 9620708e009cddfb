// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Identity of the native run format (docs/format.md).

#include <cstdint>
#include <string_view>

namespace wl::format {

inline constexpr std::string_view kMagic = "wattline-run";  // root attribute "format"
// Root attribute "format_version". 2 added /domains and /gpus/domain (power domains); version 1
// files are still read, their domains derived from /gpus/package (core/power_domain.h). 3 added
// /kernels/summary (stored per-track kernel summaries, kernel_summary.h); version 2 files are still
// read and analysed from their events, and `wattline upgrade` adds the summaries.
inline constexpr int64_t kVersion = 3;
inline constexpr int64_t kVersionWithoutSummaries = 2;  // RunWriter without kernel summaries
inline constexpr int64_t kIndexStride = 1024;           // telemetry t_index: every 1024th timestamp
inline constexpr int64_t kKernelBlockSize = 4096;       // kernels per block of the block index

}  // namespace wl::format
