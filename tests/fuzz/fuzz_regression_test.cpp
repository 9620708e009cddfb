// SPDX-License-Identifier: GPL-3.0-or-later
// Every input the fuzzers found a defect with (tests/data/fuzz/TARGET/NAME) runs through the same
// fuzz target again (fuzz/targets.h): it must be handled, i.e. read or refused with a one-line
// wl::Error, with no crash, sanitizer report or stray exception (the asan preset runs this test
// too). A NAME.expect file beside an input holds text the error message must contain.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "targets.h"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(WATTLINE_TEST_DATA) / "fuzz";

struct Case {
  std::string target;
  fs::path input;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(kRoot, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (!f.is_regular_file() || f.path().extension() == ".expect") continue;
      out.push_back({dir.path().filename().string(), f.path()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.input < b.input; });
  return out;
}

// The bytes as stored (fixtures are read without gunzipping: a gzip input is the input).
std::string rawBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

class FuzzRegression : public testing::TestWithParam<Case> {};

TEST_P(FuzzRegression, InputIsHandled) {
  const Case& c = GetParam();
  const wl::fuzz::Target* target = wl::fuzz::findTarget(c.target);
  ASSERT_NE(target, nullptr) << "tests/data/fuzz/" << c.target << " names no fuzz target";
  const std::string bytes = rawBytes(c.input);
  wl::fuzz::clearLastError();
  target->run({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  fs::path expect = c.input;
  expect += ".expect";
  if (fs::exists(expect)) {
    const std::string want = trimmed(rawBytes(expect));
    EXPECT_NE(wl::fuzz::lastError().find(want), std::string::npos)
        << "expected the error to contain \"" << want << "\", got \"" << wl::fuzz::lastError()
        << "\"";
    EXPECT_EQ(wl::fuzz::lastError().find('\n'), std::string::npos) << "not one line";
  }
}

std::string caseName(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.target + "_" + info.param.input.filename().string();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Inputs, FuzzRegression, testing::ValuesIn(cases()), caseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FuzzRegression);

// The replay above passes with no case at all if the corpus is missing (an uninstantiated suite is
// allowed): the corpus must be there, with inputs for more than one target.
TEST(FuzzRegressionCorpus, IsPresent) {
  const std::vector<Case> all = cases();
  ASSERT_FALSE(all.empty()) << kRoot << " holds no fuzz regression inputs";
  std::vector<std::string> targets;
  for (const Case& c : all)
    targets.push_back(c.target);
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  EXPECT_GE(targets.size(), 2u);
}

// The corpus stays small and every folder names a target.
TEST(FuzzRegressionCorpus, FoldersNameTargetsAndFilesAreSmall) {
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(kRoot, ec)) {
    if (!dir.is_directory()) continue;
    EXPECT_NE(wl::fuzz::findTarget(dir.path().filename().string()), nullptr) << dir.path();
    for (const auto& f : fs::directory_iterator(dir.path()))
      EXPECT_LE(f.file_size(), 256u * 1024u) << f.path();
  }
}

// The run_file target must get past HDF5's open: a valid run file is read without an error. (It
// once handed HDF5 a memfd path, which HDF5 refuses after the superblock, so every input ended
// at the open and the reader itself was never fuzzed.)
TEST(FuzzTargets, RunFileTargetReadsAValidRunFile) {
  wl::test::TempDir dir;
  wl::test::writeSyntheticRun(wl::test::makeSyntheticRun(2, 1.0, 12), dir / "run.h5");
  const std::string bytes = rawBytes(dir / "run.h5");
  const wl::fuzz::Target* target = wl::fuzz::findTarget("run_file");
  ASSERT_NE(target, nullptr);
  wl::fuzz::clearLastError();
  target->run({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  EXPECT_EQ(wl::fuzz::lastError(), "");
  // A damaged copy (its superblock signature gone) is refused with a message.
  std::string damaged = bytes;
  damaged[1] = 'X';
  target->run({reinterpret_cast<const uint8_t*>(damaged.data()), damaged.size()});
  EXPECT_NE(wl::fuzz::lastError().find("HDF5"), std::string::npos) << wl::fuzz::lastError();
}

}  // namespace
