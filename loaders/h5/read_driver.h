// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The HDF5 file driver Wattline reads run files through: POSIX reads like HDF5's "sec2" driver,
// read-only, that first checks the blocks HDF5 1.10 trusts without checking.
//
// HDF5 1.10.8 (Debian bookworm's) walks a global heap collection (where variable-length strings
// live) object by object, each object's size telling where the next begins; a free-space object
// of size 0 makes that walk stand still forever, and a size past the collection's end makes it
// read past its buffer. The run_file fuzzer found the first (an attribute read that never
// returned). Every collection is checked here as it is read, before HDF5 parses it; a damaged one
// fails the read with an HDF5 error that names the object, and the open or read fails with it.

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wl::h5 {

// A new file-access property list that selects the read driver (caller closes it).
hid_t readDriverAccessList();

// The unsigned little-endian integer of `bytes` (at most 8) bytes at p: how HDF5 stores its
// numbers and addresses.
inline uint64_t littleEndian(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// The size (header included) a global heap collection at the start of `block` states, or 0 when
// the block does not begin with a collection's signature and version 1 (or is shorter than its
// 16-byte header).
uint64_t globalHeapSize(std::span<const uint8_t> block);

// Checks a block that begins with a global heap collection ("GCOL", version 1) as HDF5 1.10
// walks it, with 8-byte lengths (what HDF5 writes unless told otherwise, and what RunWriter
// writes). "" when it is sound, when it is not a collection, or when the block does not hold the
// whole collection (HDF5 reads it again in full); otherwise what is wrong.
// With `sizes`, the size of each object it holds, by index (kNoObject where none).
std::string globalHeapProblem(std::span<const uint8_t> block,
                              std::vector<uint64_t>* sizes = nullptr);
inline constexpr uint64_t kNoObject = ~uint64_t{0};

}  // namespace wl::h5
