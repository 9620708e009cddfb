// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Sanity limits of the run reader (issue 16, "bounded work"; docs/robustness.md).
//
// A run file says how many GPUs, ranks, streams and pyramid levels it has, and HDF5 lets a
// damaged or hostile file declare a dataset of 2^40 elements while storing none of them. The
// reader allocates from those numbers, so each is checked first against a limit far above any
// real run (the largest supported runs have 1,024 GPUs) and the file is refused with a one-line
// message instead of an allocation that fails or exhausts memory. Fixed-width strings wider than
// 1 MiB are refused by the string readers of h5/h5.cpp.

#include <hdf5.h>

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
// Pyramid sizes: writers make at most 2^22 level-0 buckets and a top level of at most 256
// (format/lod.h); readers size whole-level reads (the overview, energy) from these numbers.
inline constexpr size_t kMaxLodBuckets = size_t{1} << 26;  // buckets of any level
inline constexpr size_t kMaxTopBuckets = size_t{1} << 16;  // buckets of the top level

// Throws wl::Error "FILE: /WHAT has N rows, more than the LIMIT Wattline reads (the file is
// damaged)" when n > limit.
void checkCount(const std::filesystem::path& file, std::string_view what, size_t n, size_t limit);

// HDF5 lets a file declare a chunked dataset far larger than what it stores (unwritten chunks
// read as the fill value), and the reader reads 1-D datasets whole or in ranges sized from their
// length. Wattline's writers store every element of a 1-D dataset, and deflate shrinks data at
// most ~1,000 times, so a 1-D dataset declaring more than kMaxExpansion times the bytes it stores
// plus kSlackBytes is damaged.
inline constexpr size_t kMaxExpansion = 4096;
inline constexpr size_t kSlackBytes = size_t{16} << 20;
// Checks every 1-D dataset of the file once (at open; cost: one walk of the file's objects);
// throws wl::Error "FILE: dataset /PATH declares N elements of B bytes but stores only S bytes
// (the file is damaged)".
void checkStoredSizes(const std::filesystem::path& file, hid_t root);

// Throws wl::Error naming the file, `where` (e.g. "telemetry") and the level when a pyramid has a
// level over kMaxLodBuckets buckets or a top level over kMaxTopBuckets.
void checkPyramid(const std::filesystem::path& file, std::string_view where,
                  const std::vector<uint64_t>& buckets);

}  // namespace wl::limits
