// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline analyze --json` gives the same bytes whether the kernel table of a whole-run analysis
// comes from the stored per-track summaries (format version 3) or from the events: on every run of
// tests/data with kernels (imported), the bundled samples (upgraded with `wattline upgrade`) and a
// simulated run written both ways.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/notes.h"
#include "analysis/run_analysis.h"
#include "loaders/format/run_writer.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

std::string jsonOf(const RunFile& run, bool summaries) {
  AnalysisOptions o;
  o.kernelSummaries = summaries;
  return toJson(analyzeRun(run, {}, o)).dump();
}

uint64_t kernelsOf(const RunFile& run) {
  uint64_t n = 0;
  for (const TrackInfo& t : run.tracks())
    n += t.count;
  return n;
}

TEST(KernelSummaryJson, TestDataRunsWithKernelsGiveTheSameBytes) {
  const std::string d = WATTLINE_TEST_DATA;
  const std::vector<std::vector<std::string>> inputs = {
      {d + "/kineto/hta-a100-nccl-metadata-rank0.json.gz"},
      {d + "/kineto/hta-mi250-minitoy-rocm6.2.json.gz"},
      {d + "/kineto/hta-old-naming-rank1.json.gz"},
      {d + "/kineto/kineto-legacy-array-resnet50.json.gz"},
      {"DLRM"},  // the 8-rank DLRM traces, extracted below
      {d + "/kineto/tracelens-mi300x-rccl-rank0.json.gz"},
      {d + "/nsys/pipit-cloverleaf-a100-nsys2024.sqlite"},
      {d + "/rocprof/gunrock-rocprof-v1.csv"},
      {d + "/rocprof/tracelens-rocprofv3-mi350x.json.gz"},
      {d + "/h200/gpu.csv.gz", d + "/h200/trace.json.gz", "--utc-offset", "+00:00"},
  };
  test::TempDir dir;
  const auto tar = test::runProcess(
      "/bin/tar", {"xzf", d + "/kineto/param-dlrm-8rank-v100.tar.gz", "-C", dir.path().string()});
  ASSERT_EQ(tar.exitCode, 0) << tar.err;
  int n = 0;
  for (auto in : inputs) {
    if (in.front() == "DLRM") in.front() = (dir / "dlrm_kineto").string();
    SCOPED_TRACE(in.front());
    const std::string out = (dir / fmt::format("run{}.h5", n++)).string();
    std::vector<std::string> args = {"import"};
    args.insert(args.end(), in.begin(), in.end());
    args.insert(args.end(), {"-o", out});
    const auto r = test::runWattline(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto run = RunFile::open(out);
    ASSERT_TRUE(run->hasKernelSummary());
    ASSERT_GT(kernelsOf(*run), 0u);
    EXPECT_EQ(jsonOf(*run, true), jsonOf(*run, false));
  }
}

TEST(KernelSummaryJson, UpgradedSamplesAnalyzeToTheSameBytes) {
  test::TempDir dir;
  const std::filesystem::path samples = WATTLINE_SOURCE_DIR "/resources/samples";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(samples)) {
    if (e.path().extension() != ".h5") continue;
    SCOPED_TRACE(e.path().string());
    ++n;
    const std::string up = (dir / e.path().filename()).string();
    const auto u = test::runWattline({"upgrade", e.path().string(), "-o", up, "--quiet"});
    ASSERT_EQ(u.exitCode, 0) << u.err;
    EXPECT_NE(u.out.find("format version 2 -> 3"), std::string::npos) << u.out;
    const auto a = test::runWattline({"analyze", e.path().string(), "--json"});
    const auto b = test::runWattline({"analyze", up, "--json"});
    ASSERT_EQ(a.exitCode, 0) << a.err;
    ASSERT_EQ(b.exitCode, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
    const auto run = RunFile::open(up);
    EXPECT_TRUE(run->hasKernelSummary());
    EXPECT_EQ(jsonOf(*run, true), jsonOf(*run, false));
  }
  EXPECT_GE(n, 4);
}

TEST(KernelSummaryJson, SimulatedRunWrittenBothWaysGivesTheSameBytes) {
  test::TempDir dir;
  sim::SimConfig c;
  c.platform = *sim::findProfile("h100");
  c.model = *sim::findModel("TinyLlama-1.1B");
  c.nodes = 1, c.gpusPerNode = 4;
  c.tp = 2, c.pp = 1, c.dp = 2;
  c.mbs = 2, c.gbs = 16, c.seqLen = 2048;
  c.durationS = 8;
  c.seed = 3;
  WriteOptions without;
  without.kernel_summaries = false;
  sim::simulate(c, dir / "with.h5");
  sim::simulate(c, dir / "without.h5", {}, nullptr, without);
  const auto with = RunFile::open(dir / "with.h5");
  const auto old = RunFile::open(dir / "without.h5");
  ASSERT_TRUE(with->hasKernelSummary());
  ASSERT_FALSE(old->hasKernelSummary());
  ASSERT_GT(kernelsOf(*with), 0u);
  EXPECT_EQ(jsonOf(*with, true), jsonOf(*old, true));
  // And through the command line, as users run it.
  const auto a = test::runWattline({"analyze", (dir / "with.h5").string(), "--json"});
  const auto b = test::runWattline({"analyze", (dir / "without.h5").string(), "--json"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(KernelSummaryJson, UpgradeKeepsTheNotesBesideTheRun) {
  test::TempDir dir;
  const std::filesystem::path run = dir / "run.h5", up = dir / "up.h5";
  std::filesystem::copy_file(WATTLINE_SOURCE_DIR "/resources/samples/synthetic-pattern.h5", run);
  writeNotes(run.string(), {{1'000'000'000, 3'000'000'000, {0}, {}, "warm-up"}});
  const auto u = test::runWattline({"upgrade", run.string(), "-o", up.string(), "--quiet"});
  ASSERT_EQ(u.exitCode, 0) << u.err;
  EXPECT_NE(u.out.find("1 notes copied"), std::string::npos) << u.out;
  EXPECT_EQ(readNotes(up.string()), readNotes(run.string()));
  const auto a = test::runWattline({"analyze", run.string(), "--json"});
  const auto b = test::runWattline({"analyze", up.string(), "--json"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  EXPECT_NE(a.out.find("warm-up"), std::string::npos);
  EXPECT_EQ(a.out, b.out);
}

TEST(KernelSummaryJson, UpgradeErrorsAreOneLineWithExitCodes) {
  test::TempDir dir;
  const auto none =
      test::runWattline({"upgrade", (dir / "nope.h5").string(), "-o", (dir / "out.h5").string()});
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_NE(none.err.find("nope.h5: no such file"), std::string::npos) << none.err;
  const auto noOut = test::runWattline({"upgrade", (dir / "nope.h5").string()});
  EXPECT_EQ(noOut.exitCode, 2);
  EXPECT_NE(noOut.err.find("-o OUT.h5 is required"), std::string::npos) << noOut.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
}

}  // namespace
}  // namespace wl
