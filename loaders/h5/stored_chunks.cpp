// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/h5/stored_chunks.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "loaders/core/error.h"
#include "loaders/h5/h5.h"

namespace wl::h5 {

namespace {

// The filters of a dataset's pipeline, in the order they were applied, if every one is shuffle
// or deflate; false otherwise.
bool decodablePipeline(hid_t dcpl, std::vector<bool>& deflate) {
  const int n = H5Pget_nfilters(dcpl);
  if (n < 0) return false;
  for (int k = 0; k < n; ++k) {
    unsigned flags = 0, config = 0;
    size_t values = 0;
    const H5Z_filter_t f = H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &values, nullptr,
                                          0, nullptr, &config);
    if (f == H5Z_FILTER_DEFLATE)
      deflate.push_back(true);
    else if (f == H5Z_FILTER_SHUFFLE)
      deflate.push_back(false);
    else
      return false;
  }
  return true;
}

// Fills `s` with the stored chunks of its element range; false if the dataset is not one that
// decode() handles (the caller then reads it with H5Dread).
bool storeChunks(hid_t dset, hid_t memType, StoredChunks& s) {
  Id dcpl(H5Dget_create_plist(dset));
  Id type(H5Dget_type(dset));
  if (!dcpl.valid() || !type.valid() || H5Pget_layout(dcpl) != H5D_CHUNKED) return false;
  if (H5Tequal(type, memType) <= 0) return false;
  hsize_t chunk = 0;
  if (H5Pget_chunk(dcpl, 1, &chunk) != 1 || chunk == 0) return false;
  if (!decodablePipeline(dcpl, s.pipeline)) return false;
  s.elem = H5Tget_size(type);
  s.chunk = static_cast<size_t>(chunk);
  if (s.elem == 0) return false;
  const size_t chunkBytes = s.chunk * s.elem;
  for (size_t first = s.offset / s.chunk * s.chunk; first < s.offset + s.count; first += s.chunk) {
    const hsize_t at[1] = {first};
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(dset, at, &size) < 0 || size == 0) return false;  // unwritten
    // Deflate never grows data by half; a larger size is a damaged index: H5Dread reports it.
    if (size > chunkBytes + chunkBytes / 2 + 1024) return false;
    StoredChunks::Chunk c;
    c.first = first;
    c.bytes.resize(static_cast<size_t>(size));
    if (H5Dread_chunk(dset, H5P_DEFAULT, at, &c.mask, c.bytes.data()) < 0) return false;
    s.chunks.push_back(std::move(c));
  }
  return true;
}

// HDF5's shuffle filter stores byte j of element i at j * n + i (n = elements in the chunk);
// bytes past n * elem stay where they are.
void unshuffle(const uint8_t* in, uint8_t* out, size_t bytes, size_t elem) {
  const size_t n = bytes / elem;
  for (size_t j = 0; j < elem; ++j) {
    const uint8_t* src = in + j * n;
    for (size_t i = 0; i < n; ++i)
      out[i * elem + j] = src[i];
  }
  std::memcpy(out + n * elem, in + n * elem, bytes - n * elem);
}

}  // namespace

StoredChunks readStored(hid_t dset, hid_t memType, size_t offset, size_t count) {
  const auto shape = shapeOf(dset);
  if (shape.size() != 1)
    throw Error(fmt::format("{}: dataset {} has {} dimensions, expected 1", fileOf(dset),
                            pathOf(dset), shape.size()));
  StoredChunks s;
  s.offset = offset;
  s.count = count;
  s.what = fmt::format("{}: dataset {} (elements {}..{})", fileOf(dset), pathOf(dset), offset,
                       offset + count);
  // Not one decode() handles (or a bad range, which readRaw reports): read as before.
  if (offset + count > shape[0] || offset + count < offset || count == 0 ||
      !storeChunks(dset, memType, s))
    return readPlain(dset, memType, offset, count);
  return s;
}

StoredChunks readPlain(hid_t dset, hid_t memType, size_t offset, size_t count) {
  StoredChunks s;
  s.offset = offset;
  s.count = count;
  s.isPlain = true;
  s.elem = H5Tget_size(memType);
  s.plain.resize(count * s.elem);
  readRaw(dset, memType, s.plain.data(), offset, count);
  return s;
}

void decode(const StoredChunks& s, void* out) {
  if (s.isPlain) {
    if (!s.plain.empty()) std::memcpy(out, s.plain.data(), s.plain.size());
    return;
  }
  auto* dst = static_cast<uint8_t*>(out);
  const size_t chunkBytes = s.chunk * s.elem;
  std::vector<uint8_t> a(chunkBytes), b(chunkBytes);
  auto damaged = [&s](const std::string& why) {
    return Error(fmt::format("cannot read {}, the file may be damaged ({})", s.what, why));
  };
  for (const StoredChunks::Chunk& c : s.chunks) {
    // The chunk's bytes after each filter is undone, last applied first.
    const uint8_t* cur = c.bytes.data();
    size_t have = c.bytes.size();
    for (size_t k = s.pipeline.size(); k-- > 0;) {
      if (c.mask & (1u << k)) continue;
      uint8_t* next = cur == a.data() ? b.data() : a.data();
      if (s.pipeline[k]) {
        uLongf got = static_cast<uLongf>(chunkBytes);
        if (uncompress(next, &got, cur, static_cast<uLong>(have)) != Z_OK || got != chunkBytes)
          throw damaged(fmt::format("the chunk at element {} does not inflate to {} bytes", c.first,
                                    chunkBytes));
        have = static_cast<size_t>(got);
      } else {
        unshuffle(cur, next, have, s.elem);
      }
      cur = next;
    }
    if (have != chunkBytes)
      throw damaged(fmt::format("the chunk at element {} holds {} bytes, expected {}", c.first,
                                have, chunkBytes));
    // The part of the chunk inside [offset, offset + count).
    const size_t from = std::max(c.first, s.offset);
    const size_t to = std::min(c.first + s.chunk, s.offset + s.count);
    std::memcpy(dst + (from - s.offset) * s.elem, cur + (from - c.first) * s.elem,
                (to - from) * s.elem);
  }
}

}  // namespace wl::h5
