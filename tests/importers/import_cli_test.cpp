// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline import`: exit codes, --json summary, options reaching the run, --format list, and a
// one-line message with no file left behind on failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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
  // stderr is not a terminal here: each stage is reported once, although several files are read
  // at once (one per core) and their stages alternate.
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

// --start-time places telemetry whose times are relative (docs/import-telemetry.md). The expected
// times are worked out by hand: 2026-11-27T17:44:13Z is 1,795,801,453 s after the epoch
// (`date -u -d 2026-11-27T17:44:13Z +%s`), 2025-09-24T00:00:00Z 1,758,672,000 s.
constexpr int64_t kSec = 1'000'000'000;

std::vector<int64_t> powerTimes(const std::filesystem::path& run, size_t gpu) {
  return RunFile::open(run)->readAllSamples(SeriesKind::Gpu, gpu, "power_w").t_ns;
}

TEST(ImportCommand, StartTimePlacesDcgmDmonRows) {
  test::TempDir out;
  const auto o = out / "run.h5";
  // 18:44:13.6 at +01:00 is 17:44:13.6 UTC; dcgmi dmon rows of each GPU every 100 ms from there.
  const auto r =
      runWattline({"import", testData("telemetry/dcgm-dmon-2gpu.txt").string(), "-o", o.string(),
                   "--dcgm-interval-ms", "100", "--start-time", "2026-11-27T18:44:13.6+01:00"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const int64_t start = 1'795'801'453 * kSec + 600'000'000;
  const std::vector<int64_t> expected = {start, start + kSec / 10, start + 2 * kSec / 10,
                                         start + 3 * kSec / 10};
  EXPECT_EQ(powerTimes(o, 0), expected);  // the file has 4 rows per GPU
  EXPECT_EQ(powerTimes(o, 1), expected);
  const auto run = RunFile::open(o);
  EXPECT_EQ(run->info().start_ns, start);
  EXPECT_NE(run->info().parameters_json.find("\"start_time_ns\":" + std::to_string(start)),
            std::string::npos)
      << run->info().parameters_json;
  EXPECT_EQ(r.err.find("warning: --start-time"), std::string::npos) << r.err;
}

TEST(ImportCommand, StartTimePlacesZeusWindowsOnTheMonotonicClock) {
  test::TempDir out;
  const auto o = out / "run.h5";
  const auto r = runWattline({"import", testData("telemetry/zeus-windows-4xa40.csv").string(), "-o",
                              o.string(), "--start-time", "2026-11-27T17:44:13Z"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // Windows start at 13586624.12895549 and 13586667.135764524 s (monotonic); the first lasts
  // 33.27751154080033 s. Each window is a sample at its start and 1 ns before its end, and a
  // missing sample at its end marks the gap: the first window starts at the start time, the
  // second 43.006809034 s later.
  const int64_t start = 1'795'801'453 * kSec;
  const std::vector<int64_t> t = powerTimes(o, 0);
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t[0], start);
  EXPECT_EQ(t[1], start + 33'277'511'540);
  EXPECT_EQ(t[2], start + 33'277'511'541);
  EXPECT_EQ(t[3], start + 43'006'809'034);
}

TEST(ImportCommand, StartTimeGivesTheDateOfDmonTimesOfDay) {
  test::TempDir in, out;
  // nvidia-smi dmon -o T (no date) across local midnight, on a machine at +02:00: the date is the
  // local date of the start time (2025-09-24 at 23:59 local), the next day after midnight.
  test::writeFile(in / "dmon.txt",
                  "#Time        gpu    pwr  gtemp\n"
                  "#HH:MM:SS    Idx      W      C\n"
                  " 23:59:58      0    402     61\n"
                  " 23:59:59      0    650     70\n"
                  " 00:00:00      0    700     71\n");
  const auto o = out / "run.h5";
  const auto r =
      runWattline({"import", (in / "dmon.txt").string(), "-o", o.string(), "--utc-offset", "+02:00",
                   "--start-time", "2025-09-24T21:59:00Z"});  // 23:59 local
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const int64_t day = 1'758'672'000 * kSec;  // 2025-09-24T00:00:00Z
  EXPECT_EQ(powerTimes(o, 0), (std::vector<int64_t>{day + (21 * 3600 + 59 * 60 + 58) * kSec,
                                                    day + (21 * 3600 + 59 * 60 + 59) * kSec,
                                                    day + 22 * 3600 * kSec}));
  const auto notes = RunFile::open(o)->quality();
  const auto dated = std::find_if(notes.begin(), notes.end(), [](const QualityNote& n) {
    return n.code == "dmon_date_from_start_time";
  });
  ASSERT_NE(dated, notes.end());
  EXPECT_NE(dated->message.find("placed on 2025-09-24"), std::string::npos) << dated->message;
}

TEST(ImportCommand, StartTimeUnusedByAbsoluteTelemetryIsAWarning) {
  test::TempDir out;
  const auto r =
      runWattline({"import", testData("telemetry/nvidia-smi-h100-query.csv").string(), "-o",
                   (out / "run.h5").string(), "--start-time", "2026-11-27T17:44:13Z"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --start-time: no input has relative times"), std::string::npos)
      << r.err;
}

TEST(ImportCommand, BadStartTimeIsBadUsageWithOneLine) {
  test::TempDir out;
  const std::string in = testData("telemetry/dcgm-dmon-2gpu.txt").string();
  const std::string o = (out / "run.h5").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2026-11-27T17:44:13", "the time has no zone; add Z (UTC)"},
      {"yesterday", "expected an ISO 8601 time with its zone"},
      {"2026/11/27T17:44:13Z", "expected an ISO 8601 time with its zone"},
      {"2026-11-27T17:44:13.Z", "expected an ISO 8601 time with its zone"},
      {"2026-11-27T25:00:00Z", "expected an ISO 8601 time with its zone"},
      {"2026-02-29T00:00:00Z", "2026-02 has no day 29"},
      {"2026-11-27T17:44:13+15:00", "the offset from UTC must lie between -14:00 and +14:00"},
      {"2026-11-27T17:44:13+01:75", "the minutes of an offset are 00 to 59"},
      {"", "expected an ISO 8601 time with its zone"},
  };
  for (const auto& [value, expected] : cases) {
    const auto r =
        runWattline({"import", in, "-o", o, "--dcgm-interval-ms", "100", "--start-time", value});
    EXPECT_EQ(r.exitCode, 2) << value << ": " << r.err;
    // One line naming the option, the value and what was expected, then the pointer to --help.
    const size_t nl = r.err.find('\n');
    const std::string first = r.err.substr(0, nl);
    EXPECT_EQ(first.rfind("wattline import: --start-time \"" + value + "\": ", 0), 0u) << r.err;
    EXPECT_NE(first.find(expected), std::string::npos) << value << ": " << r.err;
    EXPECT_EQ(r.err.substr(nl + 1), "(see 'wattline import --help')\n") << r.err;
  }
  EXPECT_TRUE(std::filesystem::is_empty(out.path()));  // nothing written, not even a temporary
  // A leap day exists in 2028.
  EXPECT_EQ(runWattline({"import", in, "-o", o, "--dcgm-interval-ms", "100", "--start-time",
                         "2028-02-29T00:00:00Z"})
                .exitCode,
            0);
}

}  // namespace
}  // namespace wl
