// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline simulate`: exit codes, one-line errors, platform files, the experiment matrix.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "loaders/format/run_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

const std::string kMatrix = (std::filesystem::path(WATTLINE_SOURCE_DIR) /
                             "loaders/import/telemetry/charllm-experiment-matrix.csv")
                                .string();

std::vector<std::string> small(const std::string& out) {
  return {"simulate",
          "-o",
          out,
          "--model",
          "TinyLlama-1.1B",
          "--gpus-per-node",
          "4",
          "--tp",
          "2",
          "--mbs",
          "1",
          "--gbs",
          "8",
          "--duration",
          "1",
          "--seed",
          "3",
          "--quiet"};
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST(SimulateCommand, WritesASimulatedRunThatInfoReads) {
  test::TempDir dir;
  const std::string out = (dir / "run.h5").string();
  auto args = small(out);
  args.push_back("--json");
  const auto r = test::runWattline(args);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["gpus"], 4);
  EXPECT_GT(summary["kernels"].get<int>(), 1000);
  const auto info = test::runWattline({"info", out, "--json"});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["platform"], "H100");
  EXPECT_EQ(j["config"]["tp"], 2);
  EXPECT_EQ(j["config"]["dp"], 2);  // 4 GPUs / tp 2
  EXPECT_EQ(j["gpus"].size(), 4u);
}

TEST(SimulateCommand, InconsistentLayoutsAreBadUsageWithOneLine) {
  test::TempDir dir;
  const std::string out = (dir / "x.h5").string();
  auto a = small(out);
  a.insert(a.end(), {"--dp", "3"});  // 2 x 1 x 3 != 4
  auto r = test::runWattline(a);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("tp x pp x dp"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 2) << r.err;  // the message and the pointer to --help
  auto b = small(out);
  b[std::find(b.begin(), b.end(), "--gbs") - b.begin() + 1] = "7";  // not a multiple of 2 x 1
  r = test::runWattline(b);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("global batch 7"), std::string::npos) << r.err;
  r = test::runWattline({"simulate", "-o", out, "--model", "GPT-5"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("unknown --model"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SimulateCommand, PlatformFilesOverrideFieldsAndRejectUnknownOnes) {
  test::TempDir dir;
  std::ofstream(dir / "bad.json") << R"({"tdp": 600})";
  auto a = small((dir / "x.h5").string());
  a.insert(a.end(), {"--platform-file", (dir / "bad.json").string()});
  auto r = test::runWattline(a);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("bad.json: /tdp: unknown profile field"), std::string::npos) << r.err;

  std::ofstream(dir / "good.json") << R"({"base": "h200", "power_limit_w": 500})";
  const std::string out = (dir / "good.h5").string();
  auto b = small(out);
  b.insert(b.end(), {"--platform-file", (dir / "good.json").string()});
  r = test::runWattline(b);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto run = RunFile::open(out);
  EXPECT_EQ(run->info().platform, "H200");
  for (const GpuInfo& g : run->gpus())
    EXPECT_FLOAT_EQ(g.power_limit_w, 500.f);
  EXPECT_EQ(nlohmann::json::parse(run->info().parameters_json)["platform"]["power_limit_w"], 500);
}

TEST(SimulateCommand, RunsAConfigurationOfTheExperimentMatrixByName) {
  test::TempDir dir;
  const std::string out = (dir / "m.h5").string();
  // microbatch-sweep-h200,mixtral-8x7b,mixtral-8x7b_1_mbs2,4,8,32,1,1,1,8,,32,,False,2,128,4096,
  // 32,4096,14336,32,8,8,2,full,block,32,...
  const auto r = test::runWattline({"simulate", "-o", out, "--from-matrix", kMatrix, "--config",
                                    "microbatch-sweep-h200/mixtral-8x7b_1_mbs2", "--iterations",
                                    "1", "--trace-ranks", "none", "--quiet"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto run = RunFile::open(out);
  const RunInfo& i = run->info();
  EXPECT_TRUE(i.simulated);
  EXPECT_EQ(i.platform, "H200");
  EXPECT_EQ(i.model, "Mixtral-8x7B");
  EXPECT_EQ(i.config.nodes, 4);
  EXPECT_EQ(i.config.tp, 1);
  EXPECT_EQ(i.config.pp, 1);
  EXPECT_EQ(i.config.ep, 8);
  EXPECT_EQ(i.config.dp, 32);
  EXPECT_EQ(i.config.mbs, 2);
  EXPECT_EQ(i.config.recompute, true);
  EXPECT_EQ(run->gpus().size(), 32u);
  ASSERT_EQ(i.sources.size(), 1u);
  EXPECT_EQ(i.sources[0].path, "(simulated)");
  EXPECT_EQ(i.sources[0].format, "simulate");

  const auto bad = test::runWattline(
      {"simulate", "-o", out + "2", "--from-matrix", kMatrix, "--config", "nope"});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("no configuration named 'nope'"), std::string::npos) << bad.err;
}

TEST(SimulateCommand, OutOfMemoryIsBadUsageWithOneLineOrWithAllowOomAnInvalidRun) {
  test::TempDir dir;
  const std::string out = (dir / "oom.h5").string();
  std::vector<std::string> a = {
      "simulate", "-o",           out, "--model",       "Llama3-70B", "--tp",
      "1",        "--pp",         "1", "--mbs",         "1",          "--gbs",
      "8",        "--iterations", "1", "--trace-ranks", "none",       "--quiet"};
  auto r = test::runWattline(a);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("out of memory: rank 0 (pipeline stage 0) needs"), std::string::npos)
      << r.err;
  EXPECT_EQ(lines(r.err), 2) << r.err;  // the message and the pointer to --help
  EXPECT_FALSE(std::filesystem::exists(out));
  a.push_back("--allow-oom");
  r = test::runWattline(a);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto analyzed = test::runWattline({"analyze", out, "--json"});
  ASSERT_EQ(analyzed.exitCode, 0) << analyzed.err;
  const auto j = nlohmann::json::parse(analyzed.out);
  EXPECT_FALSE(j["data_quality"]["valid"].get<bool>());
  EXPECT_NE(j["data_quality"]["invalid_reasons"][0].get<std::string>().find("out of memory"),
            std::string::npos);
  // --memory-only answers without simulating.
  const auto m = test::runWattline({"simulate", "--model", "Llama3-70B", "--tp", "8", "--pp", "1",
                                    "--mbs", "1", "--gbs", "8", "--memory-only"});
  ASSERT_EQ(m.exitCode, 0) << m.err;
  const auto mj = nlohmann::json::parse(m.out);
  EXPECT_NEAR(mj["usable_gib"].get<double>(), 79.18, 1e-9);
  EXPECT_EQ(mj["stages"].size(), 1u);
}

}  // namespace
}  // namespace wl
