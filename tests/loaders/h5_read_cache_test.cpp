// SPDX-License-Identifier: GPL-3.0-or-later
// The chunk cache a dataset is opened with for reading (h5::openDatasetForReading): a 1-D column
// keeps four chunks (at least 1 MiB), a 2-D pyramid level one band of chunks across all its rows,
// at most 32 MiB. A run file keeps its datasets open, so these bound what a viewer holds after
// reading a run (docs/performance.md, "10^8 kernels").
#include <gtest/gtest.h>

#include <hdf5.h>

#include <mutex>
#include <string>

#include "loaders/h5/h5.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Creates a chunked dataset of doubles (8 B) with the given dimensions and chunk dimensions.
void create(hid_t file, const std::string& name, int rank, const hsize_t* dims,
            const hsize_t* chunk) {
  h5::Id space(H5Screate_simple(rank, dims, nullptr));
  h5::Id dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl, rank, chunk);
  h5::Id ds(
      H5Dcreate2(file, name.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  ASSERT_TRUE(ds.valid()) << name;
}

size_t cacheOf(hid_t file, const std::string& name) {
  h5::Id ds = h5::openDatasetForReading(file, name);
  h5::Id dapl(H5Dget_access_plist(ds));
  size_t slots = 0, bytes = 0;
  double w0 = 0;
  EXPECT_GE(H5Pget_chunk_cache(dapl, &slots, &bytes, &w0), 0);
  return bytes;
}

TEST(H5ReadCache, SizedByTheDatasetsChunks) {
  test::TempDir dir;
  const std::string path = (dir / "cache.h5").string();
  std::lock_guard lock(h5::lock());
  h5::Id file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(file.valid());
  {
    const hsize_t dims[1] = {1u << 24}, chunk32k[1] = {32768}, chunk128k[1] = {131072};
    create(file, "column_32k", 1, dims, chunk32k);    // 256 KiB chunks: 4 of them = 1 MiB
    create(file, "column_128k", 1, dims, chunk128k);  // 1 MiB chunks: 4 MiB
  }
  {
    const hsize_t gpus1024[2] = {1024, 65536}, tracks128[2] = {128, 65536},
                  rows4096[2] = {4096, 65536}, chunk[2] = {8, 4096};  // 256 KiB chunks
    create(file, "level_1024_rows", 2, gpus1024, chunk);              // 128 chunks a band: 32 MiB
    create(file, "level_128_rows", 2, tracks128, chunk);              // 16 chunks a band: 4 MiB
    create(file, "level_4096_rows", 2, rows4096, chunk);  // 512 chunks: capped at 32 MiB
    const hsize_t one[2] = {1, 256}, oneChunk[2] = {1, 256};
    create(file, "level_tiny", 2, one, oneChunk);  // 2 KiB: at least 1 MiB
  }
  EXPECT_EQ(cacheOf(file, "column_32k"), 1 * kMiB);
  EXPECT_EQ(cacheOf(file, "column_128k"), 4 * kMiB);
  EXPECT_EQ(cacheOf(file, "level_1024_rows"), 32 * kMiB);
  EXPECT_EQ(cacheOf(file, "level_128_rows"), 4 * kMiB);
  EXPECT_EQ(cacheOf(file, "level_4096_rows"), 32 * kMiB);
  EXPECT_EQ(cacheOf(file, "level_tiny"), 1 * kMiB);
}

}  // namespace
}  // namespace wl
