// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline info` on a run: JSON keys and values, exit codes and one-line errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "support/run_process.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

class InfoCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    src = test::makeSyntheticRun();
    test::writeSyntheticRun(src, dir / "run.h5");
  }
  test::TempDir dir;
  test::SyntheticRun src;
};

TEST_F(InfoCommand, JsonHasTheDocumentedKeysAndValues) {
  const auto r = test::runWattline({"info", (dir / "run.h5").string(), "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "synthetic");
  EXPECT_EQ(j["platform"], "H100");
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["start_ns"], src.info.start_ns);
  EXPECT_EQ(j["end_ns"], src.info.end_ns);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 10.0);
  EXPECT_EQ(j["config"]["tp"], 2);
  EXPECT_EQ(j["config"]["pp"], 2);
  EXPECT_EQ(j["config"]["overlap"], true);
  EXPECT_EQ(j["config"]["recompute"], false);
  EXPECT_FALSE(j["config"].contains("ep"));
  ASSERT_EQ(j["gpus"].size(), 4u);
  const auto& g2 = j["gpus"][2];
  EXPECT_EQ(g2["id"], 2);
  EXPECT_EQ(g2["node"], 1);
  EXPECT_EQ(g2["local_index"], 0);
  EXPECT_EQ(g2["rank"], 2);
  EXPECT_EQ(g2["device_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g2["samples"], src.telemetry[2].size());
  EXPECT_EQ(g2["metrics"]["power_w"], src.telemetry[2].size());
  EXPECT_EQ(j["gpus"][3]["metrics"]["power_w"], src.telemetry[3].size() - 1);  // one NaN
  ASSERT_EQ(j["ranks"].size(), 4u);  // ranks 0-3 from the rank table; 0 and 1 have kernels
  const auto& r0 = j["ranks"][0];
  EXPECT_EQ(r0["rank"], 0);
  EXPECT_EQ(r0["kernels"], 400);
  EXPECT_EQ(r0["comm_kernels"], 200);
  EXPECT_EQ(r0["streams"], 2);
  EXPECT_EQ(r0["iterations"], 3);
  EXPECT_EQ(j["ranks"][3]["kernels"], 0);
  ASSERT_GE(j["data_quality"].size(), 1u);
  EXPECT_EQ(j["data_quality"][0]["code"], "test_note");
}

TEST_F(InfoCommand, TextOutputNamesTheRunAndMarksItSimulated) {
  const auto r = test::runWattline({"info", (dir / "run.h5").string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("synthetic  [SIMULATED]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tp=2 pp=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2023-11-14 22:13:20.000 UTC"), std::string::npos) << r.out;
}

TEST_F(InfoCommand, BadFileExitsOneWithOneLine) {
  std::ofstream(dir / "bad.h5") << "this is not hdf5";
  const auto r = test::runWattline({"info", (dir / "bad.h5").string()});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("bad.h5: not an HDF5 file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(InfoCommand, BadUsageExitsTwo) {
  EXPECT_EQ(test::runWattline({"info"}).exitCode, 2);
  EXPECT_EQ(test::runWattline({"info", "--frobnicate", "x.h5"}).exitCode, 2);
  EXPECT_EQ(test::runWattline({"info", "a.h5", "b.h5"}).exitCode, 2);
  EXPECT_EQ(test::runWattline({"nosuchcommand"}).exitCode, 2);
  // An option after a run is refused before a window opens (no display needed), naming it.
  const auto gui = test::runWattline({"a.h5", "--compare", "b.h5"});
  EXPECT_EQ(gui.exitCode, 2);
  EXPECT_NE(gui.err.find("unknown option --compare"), std::string::npos) << gui.err;
  const auto help = test::runWattline({"info", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("usage: wattline info"), std::string::npos);
}

TEST_F(InfoCommand, TopLevelHelpListsCommands) {
  const auto r = test::runWattline({"--help"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find("info"), std::string::npos);
}

}  // namespace
}  // namespace wl
