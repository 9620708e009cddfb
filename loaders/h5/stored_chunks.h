// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reading a 1-D column in two steps, so that decoding runs outside HDF5's lock.
//
// HDF5 inflates and unshuffles a chunk inside H5Dread, under h5::lock() (the library is not
// thread-safe), so threads that read columns take turns for the whole decode: on the 10^8-kernel
// run, 45 ns per event of the analysis went to it (docs/performance.md, "10^8 kernels"). Here
// the lock is held only to copy each chunk's stored bytes out of the file (H5Dread_chunk);
// decode() inflates and unshuffles them on the calling thread with zlib alone, so two analysis
// threads decode side by side.
//
// Only what the run writer makes is decoded here: chunked datasets whose filters are shuffle and
// deflate, read as their own stored type. Anything else (other filters, a type conversion, a
// contiguous or compact layout, a chunk never written) is read whole by H5Dread in the first
// step, as before. A stored chunk that does not inflate to exactly one chunk's bytes is refused
// with the same message as a failed H5Dread (the file may be damaged). HDF5's chunk cache is not
// used: this is for columns read once, front to back (a track's events), not for data read again.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wl::h5 {

struct StoredChunks {
  size_t offset = 0, count = 0;  // the elements asked for
  size_t elem = 0;               // bytes per element
  size_t chunk = 0;              // elements per chunk
  // The filters to undo, last applied first: true = deflate, false = shuffle; a chunk's mask bit
  // k set means filter k of the pipeline was skipped for it.
  std::vector<bool> pipeline;
  struct Chunk {
    size_t first = 0;  // the chunk's first element in the dataset
    uint32_t mask = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<Chunk> chunks;
  // Read whole by H5Dread (the fallback): the elements themselves.
  std::vector<uint8_t> plain;
  bool isPlain = false;
  std::string what;  // "FILE: dataset PATH (elements A..B)", for a message
};

// Step 1, under h5::lock(): the stored bytes of elements [offset, offset + count) of a 1-D
// dataset, or the elements themselves (StoredChunks::isPlain) where the dataset is not one
// decode() handles. Throws as readRaw does.
StoredChunks readStored(hid_t dset, hid_t memType, size_t offset, size_t count);
// The same elements read by H5Dread now, through the dataset's chunk cache (readRaw): for reads
// of parts of a column that later reads touch again (ranges, tiles), where the cache saves
// inflating the same chunks twice. decode() then only copies them.
StoredChunks readPlain(hid_t dset, hid_t memType, size_t offset, size_t count);

// Step 2, on any thread, without the lock: the elements into out (count x elem bytes). Throws
// wl::Error naming the dataset when a chunk does not decode.
void decode(const StoredChunks& stored, void* out);

}  // namespace wl::h5
