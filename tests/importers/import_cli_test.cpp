// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline import`: exit codes, --json summary, options reaching the run, --format list, and a
// one-line message with no file left behind on failure.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <sstream>
#include <string>

#include "import_test_util.h"
#include "loaders/format/run_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::runWattline;
using test::testData;

std::string lastLine(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '\n')
    t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

TEST(ImportCommand, ImportsAFolderWithOptionsAndPrintsJson) {
  test::TempDir src, out;
  ASSERT_EQ(
      test::runProcess("/bin/tar", {"xzf", testData("kineto/param-dlrm-8rank-v100.tar.gz").string(),
                                    "-C", src.path().string()})
          .exitCode,
      0);
  const auto folder = src / "dlrm_kineto";
  const auto r = runWattline({"import", folder.string(), "-o", (out / "dlrm.h5").string(), "--json",
                              "--name", "dlrm step 12", "--platform", "V100-SXM2", "--config",
                              "tp=1,dp=8,mbs=2", "--offset", "kineto=10"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["name"], "dlrm step 12");
  EXPECT_EQ(j["platform"], "V100-SXM2");
  uint64_t events = 0;
  for (const auto& f : std::filesystem::directory_iterator(folder)) {
    const auto& ref = test::reference("kineto", f.path())["ranks"][0];
    events += ref["kernels"].get<uint64_t>() + ref["memcpy"].get<uint64_t>() +
              ref["memset"].get<uint64_t>();
  }
  EXPECT_EQ(j["kernels"].get<uint64_t>(), events);
  ASSERT_EQ(j["sources"].size(), 8u);
  EXPECT_EQ(j["sources"][0]["offset_ns"], 10);
  EXPECT_EQ(j["sources"][0]["format"], "kineto");
  // stderr is not a terminal here: each stage is reported once, although two files are read at
  // once and their stages alternate.
  std::istringstream err(r.err);
  std::set<std::string> lines;
  size_t reading = 0;
  for (std::string line; std::getline(err, line);) {
    EXPECT_TRUE(lines.insert(line).second) << "repeated: " << line;
    if (line.find(" reading ") != std::string::npos) ++reading;
  }
  EXPECT_EQ(reading, 8u) << r.err;

  const auto run = RunFile::open(out / "dlrm.h5");
  EXPECT_EQ(run->info().name, "dlrm step 12");
  EXPECT_EQ(run->info().config.dp, 8);
  EXPECT_EQ(run->info().config.mbs, 2);
  EXPECT_FALSE(run->info().config.pp.has_value());
  EXPECT_EQ(run->kernelCount(), events);
  EXPECT_NE(run->info().parameters_json.find("\"offsets\":{\"kineto\":10}"), std::string::npos)
      << run->info().parameters_json;
  EXPECT_NE(r.err.find("reading"), std::string::npos) << "progress goes to stderr";
  EXPECT_EQ(runWattline({"info", (out / "dlrm.h5").string()}).exitCode, 0);
}

TEST(ImportCommand, ListsTheFormats) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"import", "--format", "list"},
                                                                {"import", "--list-formats"}}) {
    const auto r = runWattline(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    for (const char* name : {"kineto", "rocprofv3", "rocprof-csv", "nsys-sqlite"})
      EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
}

TEST(ImportCommand, BadUsageExitsWithTwo) {
  test::TempDir out;
  const std::string trace = testData("kineto/hta-old-naming-rank1.json.gz").string();
  EXPECT_EQ(runWattline({"import"}).exitCode, 2);
  const auto noOut = runWattline({"import", trace});
  EXPECT_EQ(noOut.exitCode, 2);
  EXPECT_NE(noOut.err.find("missing -o RUN.h5"), std::string::npos) << noOut.err;
  const std::string o = (out / "run.h5").string();
  EXPECT_EQ(runWattline({"import", trace, "-o", o, "--format", "nope"}).exitCode, 2);
  EXPECT_EQ(runWattline({"import", trace, "-o", o, "--config", "tp=x"}).exitCode, 2);
  EXPECT_EQ(runWattline({"import", trace, "-o", o, "--offset", "kineto"}).exitCode, 2);
  EXPECT_EQ(runWattline({"import", trace, "-o", o, "--bogus"}).exitCode, 2);
  EXPECT_TRUE(test::leftovers(out.path()).empty());
}

TEST(ImportCommand, BadInputExitsWithOneAndOneLineAndNoFile) {
  test::TempDir in, out;
  const std::string cut = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "na)";
  test::writeFile(in / "cut.json", cut);
  const auto r =
      runWattline({"import", (in / "cut.json").string(), "-o", (out / "run.h5").string()});
  EXPECT_EQ(r.exitCode, 1);
  const std::string line = lastLine(r.err);
  EXPECT_EQ(line.rfind("wattline import: ", 0), 0u) << r.err;
  EXPECT_NE(line.find("cut.json: truncated JSON: the data ends at byte " +
                      std::to_string(cut.size()) + " inside traceEvents[0]"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(test::leftovers(out.path()).empty());
  EXPECT_TRUE(std::filesystem::is_empty(out.path()));

  const auto wrong = runWattline({"import", testData("rocprof/gunrock-rocprof-v1.csv").string(),
                                  "-o", (out / "run.h5").string(), "--format", "kineto"});
  EXPECT_EQ(wrong.exitCode, 1);
  EXPECT_NE(lastLine(wrong.err).find("not a Kineto JSON trace"), std::string::npos) << wrong.err;
  EXPECT_TRUE(std::filesystem::is_empty(out.path()));
}

}  // namespace
}  // namespace wl
