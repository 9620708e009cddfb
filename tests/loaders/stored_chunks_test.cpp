// SPDX-License-Identifier: GPL-3.0-or-later
// Columns read in two steps (h5/stored_chunks.h): the stored chunks under the lock, decoded
// without it. The elements equal what H5Dread gives for every filter pipeline the writer makes,
// every type the run format stores and every range (inside a chunk, across chunks, the partial
// last chunk); datasets it does not decode are read by H5Dread; a damaged chunk is refused.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "loaders/core/error.h"
#include "loaders/h5/h5.h"
#include "loaders/h5/stored_chunks.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

constexpr size_t kN = 10'000;  // 4 chunks of 3,000 elements, the last one partial

template <typename T>
std::vector<T> values() {
  std::mt19937_64 rng(42);
  std::vector<T> v(kN);
  for (size_t i = 0; i < kN; ++i) {
    // Slowly varying with noise, as a run's columns are (shuffle then finds long runs).
    const double x = static_cast<double>(i) * 0.37 + static_cast<double>(rng() % 1000) * 0.01;
    v[i] = static_cast<T>(x);
  }
  return v;
}

template <typename T>
std::vector<T> twoStep(hid_t ds, size_t offset, size_t count, bool* plain = nullptr) {
  h5::StoredChunks s;
  {
    std::lock_guard lock(h5::lock());
    s = h5::readStored(ds, h5::nativeType<T>(), offset, count);
  }
  if (plain) *plain = s.isPlain;
  std::vector<T> out(count);
  h5::decode(s, out.data());
  return out;
}

class StoredChunks : public ::testing::Test {
 protected:
  void SetUp() override {
    file = h5::createFile(dir.path() / "c.h5");
    std::lock_guard lock(h5::lock());
    const h5::Layout layouts[] = {{3000, 4, true}, {3000, 1, false}, {3000, 0, true}};
    const char* names[] = {"shuffle_deflate", "deflate", "shuffle"};
    for (size_t k = 0; k < 3; ++k) {
      const std::string n = names[k];
      h5::write<int64_t>(file, n + "_i64", values<int64_t>(), layouts[k]);
      h5::write<uint32_t>(file, n + "_u32", values<uint32_t>(), layouts[k]);
      h5::write<uint8_t>(file, n + "_u8", values<uint8_t>(), layouts[k]);
      h5::write<float>(file, n + "_f32", values<float>(), layouts[k]);
      h5::write<double>(file, n + "_f64", values<double>(), layouts[k]);
    }
  }
  template <typename T>
  void expectRanges(const std::string& name) {
    SCOPED_TRACE(name);
    h5::Id ds = h5::openDataset(file, name);
    const std::vector<T> all = values<T>();
    const std::pair<size_t, size_t> ranges[] = {
        {0, kN}, {0, 1}, {17, 100}, {2999, 2}, {3000, 3000}, {2500, 4000}, {8999, 1001}, {9999, 1}};
    for (auto [off, n] : ranges) {
      bool plain = true;
      const std::vector<T> got = twoStep<T>(ds, off, n, &plain);
      EXPECT_FALSE(plain) << off << "+" << n;
      ASSERT_EQ(got.size(), n);
      EXPECT_EQ(std::memcmp(got.data(), all.data() + off, n * sizeof(T)), 0) << off << "+" << n;
      std::vector<T> ref(n);
      std::lock_guard lock(h5::lock());
      h5::readRaw(ds, h5::nativeType<T>(), ref.data(), off, n);
      EXPECT_EQ(ref, got);
    }
  }

  test::TempDir dir;
  h5::Id file;
};

TEST_F(StoredChunks, EveryPipelineTypeAndRangeIsWhatH5DreadGives) {
  for (const std::string n : {"shuffle_deflate", "deflate", "shuffle"}) {
    expectRanges<int64_t>(n + "_i64");
    expectRanges<uint32_t>(n + "_u32");
    expectRanges<uint8_t>(n + "_u8");
    expectRanges<float>(n + "_f32");
    expectRanges<double>(n + "_f64");
  }
}

TEST_F(StoredChunks, WhatItDoesNotDecodeIsReadByH5Dread) {
  // A type conversion (floats read as doubles) and a dataset without chunks.
  h5::Id f32 = h5::openDataset(file, "shuffle_deflate_f32");
  bool plain = false;
  const std::vector<double> d = twoStep<double>(f32, 100, 50, &plain);
  EXPECT_TRUE(plain);
  const std::vector<float> want = values<float>();
  for (size_t i = 0; i < 50; ++i)
    EXPECT_EQ(d[i], static_cast<double>(want[100 + i]));
  {
    std::lock_guard lock(h5::lock());
    const hsize_t dims[1] = {kN};
    h5::Id space(H5Screate_simple(1, dims, nullptr));
    h5::Id ds(H5Dcreate2(file, "contiguous", H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    const std::vector<int64_t> v = values<int64_t>();
    ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  }
  h5::Id contiguous = h5::openDataset(file, "contiguous");
  const std::vector<int64_t> c = twoStep<int64_t>(contiguous, 5, 9000, &plain);
  EXPECT_TRUE(plain);
  const std::vector<int64_t> all = values<int64_t>();
  EXPECT_EQ(c, std::vector<int64_t>(all.begin() + 5, all.begin() + 9005));
  // A range past the end is refused as readRaw refuses it.
  std::lock_guard lock(h5::lock());
  EXPECT_THROW(h5::readStored(contiguous, H5T_NATIVE_INT64, 9000, 2000), Error);
}

TEST_F(StoredChunks, ADamagedChunkIsRefusedNamingTheDataset) {
  {
    std::lock_guard lock(h5::lock());
    h5::Id ds = h5::openDataset(file, "shuffle_deflate_i64");
    // Chunk 1 (elements 3,000..5,999) replaced by bytes that are not a deflate stream.
    const std::vector<uint8_t> junk(200, 0x5a);
    const hsize_t at[1] = {3000};
    ASSERT_GE(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, at, junk.size(), junk.data()), 0);
  }
  h5::Id ds = h5::openDataset(file, "shuffle_deflate_i64");
  // Chunks 0 and 2 still read.
  EXPECT_EQ(twoStep<int64_t>(ds, 0, 3000)[2999], values<int64_t>()[2999]);
  EXPECT_EQ(twoStep<int64_t>(ds, 6000, 100)[0], values<int64_t>()[6000]);
  try {
    (void)twoStep<int64_t>(ds, 2000, 2000);
    FAIL() << "a damaged chunk decoded";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("shuffle_deflate_i64"), std::string::npos) << m;
    EXPECT_NE(m.find("may be damaged"), std::string::npos) << m;
    EXPECT_NE(m.find("element 3000"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace wl
