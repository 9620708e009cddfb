// SPDX-License-Identifier: GPL-3.0-or-later
// Sanity limits of the run reader (format/run_limits.h, h5/h5.h; docs/robustness.md): a file that
// declares more GPUs, ranks, streams, metrics, pyramid levels or nodes than the limit, a dataset
// far larger than what it stores, or strings wider than 1 MiB is refused with one message naming
// the file and the dataset, before anything is allocated from those numbers. One test per limit;
// each also checks that the limit is not hit by the valid file it starts from.
#include <gtest/gtest.h>

#include <hdf5.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "loaders/core/error.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_limits.h"
#include "loaders/h5/h5.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

std::string openError(const std::filesystem::path& path) {
  try {
    RunFile::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Replaces the dataset at `path` by a chunked one of `n` elements of `type` that stores nothing
// (every chunk unwritten: HDF5 reads them as the fill value), or, with `zeros`, n deflated zeros
// (stored, so that only the count limit can stop the reader).
void replaceSparse(hid_t f, const char* path, hid_t type, hsize_t n, bool zeros = false) {
  ASSERT_GE(H5Ldelete(f, path, H5P_DEFAULT), 0) << path;
  const hsize_t dims[1] = {n}, chunk[1] = {std::min<hsize_t>(n, zeros ? 1 << 20 : 4096)};
  const hid_t space = H5Screate_simple(1, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  if (zeros) H5Pset_deflate(dcpl, 9);
  const hid_t d = H5Dcreate2(f, path, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(d, 0) << path;
  if (zeros) {
    const std::vector<char> buf(n * H5Tget_size(type), 0);
    EXPECT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), 0);
  }
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

// The widest fixed-length string the readers accept (h5/h5.cpp).
constexpr size_t kMaxStringBytes = size_t{1} << 20;

class RunLimits : public ::testing::Test {
 protected:
  std::filesystem::path edited(const std::string& name, const std::function<void(hid_t)>& edit) {
    const auto valid = dir / "valid.h5";
    if (!std::filesystem::exists(valid)) {
      test::writeSyntheticRun(test::makeSyntheticRun(2, 4.0, 20), valid);
      EXPECT_EQ(openError(valid), "");
    }
    const auto p = dir / name;
    std::filesystem::copy_file(valid, p);
    std::lock_guard lock(h5::lock());
    h5::silenceErrors();
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    // Dense attribute storage, for the attribute wider than 64 KiB.
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, fapl);
    EXPECT_GE(f, 0);
    edit(f);
    H5Fclose(f);
    H5Pclose(fapl);
    return p;
  }
  test::TempDir dir;
};

#define EXPECT_MESSAGE(msg, text) \
  EXPECT_NE((msg).find(text), std::string::npos) << "message was: " << (msg)

TEST_F(RunLimits, GpuCount) {
  const auto p = edited("gpus.h5", [](hid_t f) {
    replaceSparse(f, "gpus/id", H5T_NATIVE_INT32, limits::kMaxGpus + 1);
  });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "gpus.h5: /gpus has 1048577 rows, more than the 1048576 Wattline reads");
}

TEST_F(RunLimits, RankCount) {
  const auto p = edited("ranks.h5", [](hid_t f) {
    replaceSparse(f, "ranks/rank", H5T_NATIVE_INT32, limits::kMaxRanks + 1, true);
  });
  EXPECT_MESSAGE(openError(p), "ranks.h5: /ranks has 4194305 rows, more than the 4194304");
}

TEST_F(RunLimits, StreamCount) {
  const auto p = edited("tracks.h5", [](hid_t f) {
    replaceSparse(f, "kernels/tracks/rank", H5T_NATIVE_INT32, limits::kMaxTracks + 1, true);
  });
  EXPECT_MESSAGE(openError(p), "/kernels/tracks has 16777217 rows, more than the 16777216");
}

TEST_F(RunLimits, MetricCount) {
  const auto p = edited("metrics.h5", [](hid_t f) {
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    replaceSparse(f, "telemetry/metrics", t, limits::kMaxMetrics + 1);
    H5Tclose(t);
  });
  EXPECT_MESSAGE(openError(p), "/telemetry/metrics has 4097 rows, more than the 4096");
}

TEST_F(RunLimits, PyramidLevels) {
  const auto p = edited("levels.h5", [](hid_t f) {
    // 49 levels, each stored (so only the level limit stops the reader).
    std::vector<int64_t> widths(limits::kMaxLodLevels + 1);
    std::vector<uint64_t> buckets(widths.size(), 1);
    for (size_t i = 0; i < widths.size(); ++i)
      widths[i] = int64_t{1} << std::min<size_t>(i, 60);
    H5Ldelete(f, "kernels/lod/widths_ns", H5P_DEFAULT);
    H5Ldelete(f, "kernels/lod/buckets", H5P_DEFAULT);
    const hid_t lod = H5Gopen2(f, "kernels/lod", H5P_DEFAULT);
    h5::write<int64_t>(lod, "widths_ns", widths);
    h5::write<uint64_t>(lod, "buckets", buckets);
    H5Gclose(lod);
  });
  EXPECT_MESSAGE(openError(p), "/kernels/lod/widths_ns has 49 rows, more than the 48");
}

TEST_F(RunLimits, PyramidBuckets) {
  // A top level of 2^16 + 1 buckets (the writers make at most 256).
  const auto top = edited("top.h5", [](hid_t f) {
    const hid_t lod = H5Gopen2(f, "telemetry/lod", H5P_DEFAULT);
    auto buckets = h5::read<uint64_t>(lod, "buckets");
    buckets.back() = limits::kMaxTopBuckets + 1;
    H5Ldelete(lod, "buckets", H5P_DEFAULT);
    h5::write<uint64_t>(lod, "buckets", buckets);
    H5Gclose(lod);
  });
  EXPECT_MESSAGE(openError(top), "top.h5: /telemetry/lod level");
  EXPECT_MESSAGE(openError(top),
                 "has 65537 buckets, more than the 65536 Wattline reads for the top");
  // Level 0 of 2^26 + 1 buckets.
  const auto low = edited("low.h5", [](hid_t f) {
    const hid_t lod = H5Gopen2(f, "kernels/lod", H5P_DEFAULT);
    auto buckets = h5::read<uint64_t>(lod, "buckets");
    ASSERT_GE(buckets.size(), 2u);
    buckets.front() = limits::kMaxLodBuckets + 1;
    H5Ldelete(lod, "buckets", H5P_DEFAULT);
    h5::write<uint64_t>(lod, "buckets", buckets);
    H5Gclose(lod);
  });
  EXPECT_MESSAGE(openError(low),
                 "/kernels/lod level 0 has 67108865 buckets, more than the "
                 "67108864 Wattline reads for a level");
}

TEST_F(RunLimits, DeclaredFarBeyondStored) {
  // 2^28 iterations declared, none stored: 1 GiB of int32 from 0 bytes on disk.
  const auto p = edited("sparse.h5", [](hid_t f) {
    for (const char* c :
         {"iterations/rank", "iterations/step", "iterations/start_ns", "iterations/end_ns"})
      replaceSparse(f, c, H5T_NATIVE_INT64, hsize_t{1} << 28);
  });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "sparse.h5: dataset /iterations/");
  EXPECT_MESSAGE(msg,
                 "declares 268435456 elements of 8 bytes but stores only 0 bytes (the file "
                 "is damaged)");
  // Within the slack (16 MiB), a dataset that stores nothing still opens: 2^20 int64 = 8 MiB.
  const auto small = edited("sparse-small.h5", [](hid_t f) {
    for (const char* c :
         {"iterations/rank", "iterations/step", "iterations/start_ns", "iterations/end_ns"})
      replaceSparse(f, c, H5T_NATIVE_INT64, hsize_t{1} << 20);
  });
  EXPECT_EQ(openError(small), "");
}

TEST_F(RunLimits, WideStrings) {
  const auto p = edited("wide.h5", [](hid_t f) {
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, kMaxStringBytes + 1);
    replaceSparse(f, "sources/path", t, 1);
    H5Tclose(t);
  });
  EXPECT_MESSAGE(openError(p),
                 "/sources/path holds strings of 1048577 bytes, more than the 1048576");
}

TEST_F(RunLimits, WideAttribute) {
  const auto p = edited("wide-attr.h5", [](hid_t f) {
    H5Adelete(f, "model");
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, kMaxStringBytes + 1);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(f, "model", t, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0);
    const std::string text(kMaxStringBytes + 1, 'x');
    H5Awrite(a, t, text.data());
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(t);
  });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "wide-attr.h5: attribute model of");
  EXPECT_MESSAGE(msg, "is a string of 1048577 bytes, more than the 1048576 Wattline reads");
}

// A variable-length string states its length on disk (4 bytes before its global heap address),
// in a chunk no checksum covers, and HDF5 1.10 allocated and zeroed that many bytes before it
// read the string: the run_file fuzzer's 3.4 GB string (tests/data/fuzz/run_file/
// string-of-3-gigabytes) took 2.7 s and 3.4 GB. The lengths are now read from the raw chunk first.
// Here the first string of /sources/detail, in a deflated chunk, is made 3 GiB long.
TEST_F(RunLimits, VariableLengthStringLongerThanWattlineReads) {
  const auto p = edited("long-string.h5", [](hid_t f) {
    const hid_t d = H5Dopen2(f, "sources/detail", H5P_DEFAULT);
    ASSERT_GE(d, 0);
    const hid_t space = H5Dget_space(d);
    hsize_t offset = 0, size = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    ASSERT_GE(H5Dget_chunk_info(d, space, 0, &offset, &mask, &addr, &size), 0);
    std::vector<uint8_t> stored(size);
    uint32_t filters = 0;
    ASSERT_GE(H5Dread_chunk(d, H5P_DEFAULT, &offset, &filters, stored.data()), 0);
    ASSERT_EQ(filters, 0u) << "deflated, as RunWriter writes";
    std::vector<uint8_t> raw(1 << 20);
    uLongf rawSize = raw.size();
    ASSERT_EQ(uncompress(raw.data(), &rawSize, stored.data(), stored.size()), Z_OK);
    raw.resize(rawSize);
    ASSERT_GE(raw.size(), 16u);
    const uint32_t length = 3u << 30;
    for (int i = 0; i < 4; ++i)
      raw[static_cast<size_t>(i)] = static_cast<uint8_t>(length >> (8 * i));
    std::vector<uint8_t> packed(compressBound(raw.size()));
    uLongf packedSize = packed.size();
    ASSERT_EQ(compress(packed.data(), &packedSize, raw.data(), raw.size()), Z_OK);
    ASSERT_GE(H5Dwrite_chunk(d, H5P_DEFAULT, 0, &offset, packedSize, packed.data()), 0);
    H5Sclose(space);
    H5Dclose(d);
  });
  EXPECT_MESSAGE(openError(p),
                 "long-string.h5: dataset /sources/detail: string 0 is 3221225472 bytes long, more "
                 "than the 1048576 Wattline reads (the file is damaged)");
}

// Found by the run_file fuzzer (tests/data/fuzz/run_file/superblock-v1-garbage-addresses): 54
// bytes with an HDF5 signature and a version 1 superblock whose addresses lie far past the end.
// HDF5 sized an allocation from them (2.4 GB, 5 s) before failing; the superblock is now checked
// first. A superblock cut short and one with impossible field sizes are refused the same way.
TEST(RunFileLimits, AVersion1SuperblockThatDoesNotFitTheFileIsRefusedBeforeHdf5ReadsIt) {
  const std::filesystem::path found =
      std::filesystem::path(WATTLINE_TEST_DATA) / "fuzz/run_file/superblock-v1-garbage-addresses";
  std::string msg = openError(found);
  EXPECT_MESSAGE(msg, "the file may be truncated or damaged (superblock: cut short)");
  test::TempDir dir;
  // A whole version 0 superblock (O = L = 8: 24 + 32 + 40 = 96 bytes) whose driver-information
  // address points past the end of a 200-byte file.
  std::string bytes("\x89HDF\r\n\x1a\n", 8);
  bytes += std::string("\0\0\0\0\0\x08\x08\0", 8);
  bytes += std::string("\x04\0\x10\0\0\0\0\0", 8);
  auto address = [&bytes](uint64_t a) {
    for (int j = 0; j < 8; ++j)
      bytes += static_cast<char>((a >> (8 * j)) & 0xff);
  };
  address(0);                     // base
  address(~uint64_t{0});          // free space: undefined
  address(200);                   // end of file
  address(uint64_t{0x92929292});  // driver information block: past the end
  bytes.resize(200, '\0');
  const auto path = dir.path() / "v0.h5";
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  msg = openError(path);
  EXPECT_MESSAGE(msg,
                 "(superblock: an address past the end of the file (2459079314 of 200 bytes))");
  bytes[13] = 3;  // a size of offsets HDF5 does not know
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  EXPECT_MESSAGE(openError(path), "(superblock: field sizes other than 2, 4 or 8)");
}

}  // namespace
}  // namespace wl
