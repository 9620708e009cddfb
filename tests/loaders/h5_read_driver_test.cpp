// SPDX-License-Identifier: GPL-3.0-or-later
// The driver run files are read through (loaders/h5/read_driver.h): a global heap collection that
// would make HDF5 1.10.8 walk in place forever (a free-space object of size 0, found by the
// run_file fuzzer) or past its end is refused with a message, and the open or read fails with it
// instead of hanging. Collections are built here byte by byte from the file format
// specification's layout, and found in a real run file by their signature.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "loaders/core/error.h"
#include "loaders/format/run_file.h"
#include "loaders/h5/read_driver.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

void putLe(std::vector<uint8_t>& b, size_t at, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// A collection of `size` bytes holding strings "ab" (index 1) and "cdefghij" (index 2), then
// the free space to its end.
std::vector<uint8_t> collection(size_t size) {
  std::vector<uint8_t> b(size, 0);
  std::memcpy(b.data(), "GCOL", 4);
  b[4] = 1;
  putLe(b, 8, size, 8);
  size_t at = 16;
  for (const auto& [index, text] : {std::pair<int, std::string>{1, "ab"}, {2, "cdefghij"}}) {
    putLe(b, at, static_cast<uint64_t>(index), 2);
    putLe(b, at + 2, 1, 2);
    putLe(b, at + 8, text.size(), 8);
    std::memcpy(b.data() + at + 16, text.data(), text.size());
    at += 16 + (text.size() + 7) / 8 * 8;  // 16 + 8 = 24, then 16 + 8 = 24
  }
  putLe(b, at, 0, 2);  // free space, its header included: 4096 - 64 bytes
  putLe(b, at + 8, size - at, 8);
  return b;
}

TEST(H5ReadDriver, ASoundCollectionPasses) {
  const std::vector<uint8_t> b = collection(4096);
  EXPECT_EQ(h5::globalHeapProblem(b), "");
  // Not a collection, a collection of another version, one larger than the block (HDF5 reads it
  // again in full): not judged.
  std::vector<uint8_t> other = b;
  other[0] = 'X';
  EXPECT_EQ(h5::globalHeapProblem(other), "");
  other = b;
  other[4] = 2;
  EXPECT_EQ(h5::globalHeapProblem(other), "");
  EXPECT_EQ(h5::globalHeapProblem(std::span(b).first(1000)), "");
  EXPECT_EQ(h5::globalHeapProblem({}), "");
}

TEST(H5ReadDriver, FreeSpaceOfSizeZeroIsRefused) {
  std::vector<uint8_t> b = collection(4096);
  putLe(b, 16 + 24 + 24 + 8, 0, 8);  // the free space object starts at 64
  EXPECT_EQ(h5::globalHeapProblem(b), "free space at offset 64 has size 0");
}

TEST(H5ReadDriver, ObjectsPastTheCollectionAreRefused) {
  std::vector<uint8_t> b = collection(4096);
  putLe(b, 16 + 8, 5000, 8);  // object 1 claims 5000 bytes of a 4096-byte collection
  EXPECT_EQ(h5::globalHeapProblem(b),
            "object 1 at offset 16 has 5000 bytes, past the collection's 4096");
  b = collection(4096);
  putLe(b, 16 + 8, ~uint64_t{0}, 8);  // a size whose padding would wrap around
  EXPECT_NE(h5::globalHeapProblem(b), "");
  b = collection(4096);
  putLe(b, 16 + 8, 4080 - 8, 8);  // fits, but its 16-byte header and padding do not
  EXPECT_EQ(h5::globalHeapProblem(b),
            "object 1 at offset 16 runs past the collection's 4096 bytes");
}

std::string readAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A run file whose first global heap collection's free space is set to size 0: HDF5 1.10.8 read
// the root's "format" attribute from it for ever; through the driver the open fails at once.
TEST(H5ReadDriver, ARunWithAStandingStillHeapFailsToOpenInsteadOfHanging) {
  test::TempDir dir;
  const auto path = dir / "run.h5";
  test::writeSyntheticRun(test::makeSyntheticRun(1, 0.2, 6), path);
  ASSERT_NO_THROW(RunFile::open(path));

  std::string bytes = readAll(path);
  const size_t gcol = bytes.find("GCOL\x01");
  ASSERT_NE(gcol, std::string::npos);
  auto u = [&](size_t at, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v |= uint64_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
    return v;
  };
  const uint64_t size = u(gcol + 8, 8);
  size_t at = 16;
  while (u(gcol + at, 2) != 0) {  // to the free space
    at += 16 + (u(gcol + at + 8, 8) + 7) / 8 * 8;
    ASSERT_LT(at + 16, size);
  }
  for (size_t i = 0; i < 8; ++i)
    bytes[gcol + at + 8 + i] = 0;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;

  try {
    RunFile::open(path);
    FAIL() << "opened a run whose global heap is damaged";
  } catch (const Error& e) {
    const std::string want = "damaged global heap collection at byte " + std::to_string(gcol) +
                             ": free space at offset " + std::to_string(at) + " has size 0";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wl
