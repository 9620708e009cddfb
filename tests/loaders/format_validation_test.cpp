// SPDX-License-Identifier: GPL-3.0-or-later
// Bad files get one clear message that names the file and what is wrong; nothing crashes.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <fstream>

#include "loaders/core/error.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"
#include "loaders/h5/h5.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

// The message of the Error that opening `path` throws ("" if it opens).
std::string openError(const std::filesystem::path& path) {
  try {
    RunFile::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class FormatValidation : public ::testing::Test {
 protected:
  // A valid run, copied so that a test can damage its copy.
  std::filesystem::path validCopy(const std::string& name) {
    const auto p = dir / name;
    if (!std::filesystem::exists(dir / "valid.h5"))
      test::writeSyntheticRun(test::makeSyntheticRun(2, 4.0, 20), dir / "valid.h5");
    std::filesystem::copy_file(dir / "valid.h5", p);
    return p;
  }
  // Applies an edit to a copy through the raw HDF5 API.
  std::filesystem::path edited(const std::string& name, const std::function<void(hid_t)>& edit) {
    const auto p = validCopy(name);
    std::lock_guard lock(h5::lock());
    h5::silenceErrors();
    hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    EXPECT_GE(f, 0);
    edit(f);
    H5Fclose(f);
    return p;
  }
  test::TempDir dir;
};

#define EXPECT_MESSAGE(msg, text) \
  EXPECT_NE((msg).find(text), std::string::npos) << "message was: " << (msg)

TEST_F(FormatValidation, MissingFileIsNamed) {
  const std::string msg = openError(dir / "nope.h5");
  EXPECT_MESSAGE(msg, "nope.h5: no such file");
}

TEST_F(FormatValidation, FolderIsRejected) {
  const std::string msg = openError(dir.path());
  EXPECT_MESSAGE(msg, "is a folder");
}

TEST_F(FormatValidation, EmptyFileIsNotHdf5) {
  std::ofstream(dir / "empty.h5").close();
  const std::string msg = openError(dir / "empty.h5");
  EXPECT_MESSAGE(msg, "empty.h5: not an HDF5 file");
}

TEST_F(FormatValidation, TextFileIsNotHdf5AndPointsToImport) {
  std::ofstream(dir / "trace.json") << R"({"traceEvents": []})";
  const std::string msg = openError(dir / "trace.json");
  EXPECT_MESSAGE(msg, "trace.json: not an HDF5 file");
  EXPECT_MESSAGE(msg, "wattline import");
}

TEST_F(FormatValidation, OtherHdf5FileIsNotAWattlineRun) {
  {
    std::lock_guard lock(h5::lock());
    h5::Id f = h5::createFile(dir / "other.h5");
    h5::write<double>(f, "data", std::vector<double>{1, 2, 3});
  }
  const std::string msg = openError(dir / "other.h5");
  EXPECT_MESSAGE(msg, "other.h5: not a Wattline run");
}

TEST_F(FormatValidation, NewerFormatVersionAsksForAnUpdate) {
  const auto p = edited("newer.h5", [](hid_t f) { h5::setAttr(f, "format_version", int64_t{7}); });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "newer.h5: was written in run format version 7");
  EXPECT_MESSAGE(msg, "update Wattline");
}

TEST_F(FormatValidation, MissingRequiredGroupIsNamed) {
  const auto p = edited("nokernels.h5", [](hid_t f) { H5Ldelete(f, "kernels", H5P_DEFAULT); });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "nokernels.h5: missing required dataset or group /kernels");
}

TEST_F(FormatValidation, MissingRequiredDatasetIsNamed) {
  const auto p = edited("not.h5", [](hid_t f) { H5Ldelete(f, "telemetry/t_ns", H5P_DEFAULT); });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "not.h5: missing required dataset /telemetry/t_ns");
}

TEST_F(FormatValidation, MissingMetricDatasetIsNamed) {
  const auto p =
      edited("nopower.h5", [](hid_t f) { H5Ldelete(f, "telemetry/power_w", H5P_DEFAULT); });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "nopower.h5: missing required dataset /telemetry/power_w");
}

TEST_F(FormatValidation, WrongLengthIsReportedWithBothNumbers) {
  const auto p = edited("short.h5", [](hid_t f) {
    H5Ldelete(f, "gpus/node", H5P_DEFAULT);
    h5::write<int32_t>(f, "gpus/node", std::vector<int32_t>{0});
  });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "short.h5: dataset /gpus/node has 1 elements, expected 2");
}

TEST_F(FormatValidation, InconsistentOffsetsAreRejected) {
  const auto p = edited("offsets.h5", [](hid_t f) {
    H5Ldelete(f, "telemetry/offsets", H5P_DEFAULT);
    h5::write<uint64_t>(f, "telemetry/offsets", std::vector<uint64_t>{0, 5, 3});
  });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "offsets.h5: /telemetry/offsets must rise from 0");
}

TEST_F(FormatValidation, MissingStartAttributeIsNamed) {
  const auto p = edited("nostart.h5", [](hid_t f) { H5Adelete(f, "start_ns"); });
  const std::string msg = openError(p);
  EXPECT_MESSAGE(msg, "nostart.h5: missing required attribute start_ns");
}

TEST_F(FormatValidation, TruncatedFileGivesOneMessage) {
  const auto p = validCopy("truncated.h5");
  const auto size = std::filesystem::file_size(p);
  for (double keep : {0.9, 0.5, 0.1}) {
    const auto q = dir / ("truncated-" + std::to_string(keep) + ".h5");
    std::filesystem::copy_file(p, q);
    std::filesystem::resize_file(q, static_cast<uintmax_t>(static_cast<double>(size) * keep));
    const std::string msg = openError(q);
    ASSERT_FALSE(msg.empty()) << "truncated to " << keep << " opened without complaint";
    EXPECT_MESSAGE(msg, q.filename().string());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
}

TEST_F(FormatValidation, ValidCopyOpens) {
  EXPECT_EQ(openError(validCopy("ok.h5")), "");
}

TEST(RunWriterSafety, NoOutputWhenNotFinished) {
  test::TempDir dir;
  const auto run = test::makeSyntheticRun(2, 2.0, 10);
  {
    RunWriter w(dir / "out.h5", run.info, run.gpus, run.ranks);
    w.addGpuTelemetry(0, run.telemetry[0]);
    // Destroyed without finish(): an error or a cancel happened.
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "temporary file left behind";
}

TEST(RunWriterSafety, MissingOutputFolderIsNamed) {
  test::TempDir dir;
  const auto run = test::makeSyntheticRun(2, 2.0, 10);
  try {
    RunWriter w(dir / "no/such/folder/out.h5", run.info, run.gpus, run.ranks);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(RunWriterSafety, ExistingOutputIsReplacedOnlyWhenFinished) {
  test::TempDir dir;
  std::ofstream(dir / "out.h5") << "old content";
  const auto run = test::makeSyntheticRun(2, 2.0, 10);
  { RunWriter w(dir / "out.h5", run.info, run.gpus, run.ranks); }
  EXPECT_EQ(std::filesystem::file_size(dir / "out.h5"), 11u);
  test::writeSyntheticRun(run, dir / "out.h5");
  EXPECT_NO_THROW(RunFile::open(dir / "out.h5"));
}

}  // namespace
}  // namespace wl

namespace wl {
namespace {

TEST(FormatCompatibility, ThrottlePyramidIsOptional) {
  test::TempDir dir;
  test::writeSyntheticRun(test::makeSyntheticRun(2, 4.0, 20), dir / "run.h5");
  {
    std::lock_guard lock(h5::lock());
    h5::silenceErrors();
    hid_t f = H5Fopen((dir / "run.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    for (int k = 0; k < 8; ++k)
      H5Ldelete(f, ("telemetry/lod/L" + std::to_string(k) + "/throttle_reasons").c_str(),
                H5P_DEFAULT);
    H5Fclose(f);
  }
  const auto run = RunFile::open(dir / "run.h5");
  EXPECT_TRUE(run->series().hasThrottle);
  EXPECT_FALSE(run->series().hasThrottleLod);
  EXPECT_TRUE(run->readThrottleLod(0, 0, 2, 0, 10).any.empty());
  EXPECT_EQ(run->readThrottle(0, 0, 3).size(), 3u);
}

}  // namespace
}  // namespace wl
