// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Sanity limits of the run reader (issue 16, "bounded work"; docs/robustness.md).
//
// A run file says how many GPUs, ranks, streams and pyramid levels it has, and HDF5 lets a
// damaged or hostile file declare a dataset of 2^40 elements while storing none of them. The
// reader allocates from those numbers, so each is checked first against a limit far above any
// real run (the largest supported runs have 1,024 GPUs) and the file is refused with a one-line
// message instead of an allocation that fails or exhausts memory. The limits on what a single
// HDF5 read may allocate (declared size against stored bytes, string widths) live in h5/h5.h.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace wl::limits {

inline constexpr size_t kMaxGpus = size_t{1} << 20;    // rows of /gpus (and /domains)
inline constexpr size_t kMaxRanks = size_t{1} << 22;   // rows of /ranks
inline constexpr size_t kMaxTracks = size_t{1} << 24;  // streams: rows of /kernels/tracks
inline constexpr size_t kMaxNodes = size_t{1} << 20;   // entities of /node_telemetry
inline constexpr size_t kMaxLodLevels = 48;            // levels of a pyramid (factor >= 2)
inline constexpr size_t kMaxMetrics = 4096;            // metrics of a telemetry group

// Throws wl::Error "FILE: /WHAT has N rows, more than the LIMIT Wattline reads (the file is
// damaged)" when n > limit.
void checkCount(const std::filesystem::path& file, std::string_view what, size_t n, size_t limit);

// Throws wl::Error naming the file, `where` (e.g. "telemetry") and the level when a pyramid has a
// level over kMaxLodBuckets buckets or a top level over kMaxTopBuckets.
void checkPyramid(const std::filesystem::path& file, std::string_view where,
                  const std::vector<uint64_t>& buckets);

}  // namespace wl::limits
