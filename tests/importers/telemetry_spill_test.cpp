// SPDX-License-Identifier: GPL-3.0-or-later
// Telemetry within the import's memory budget (import_job.h, core/kernel_spool.h SpilledTable)
// and files read in parallel (--threads): a budget small enough to spill every GPU table, and one
// or several reader threads, write the same run as no budget and one thread. "The same" is h5diff
// finding no difference in any dataset or attribute, and `wattline analyze --json` byte for byte.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "import_test_util.h"
#include "loaders/core/kernel_spool.h"
#include "loaders/format/run_file.h"
#include "loaders/import/assemble.h"
#include "loaders/import/import_job.h"
#include "support/missing.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::testData;

// An nvidia-smi --query-gpu CSV of one node: 8 GPUs sampled every 100 ms (rows of one burst share
// a timestamp) from 2025-03-01 00:00 + startS; power follows a sine with per-GPU phases, the SM
// clock drops and the mask says SW power cap above 680 W. With `backwards` the bursts of the
// second half come before those of the first (a log appended out of order).
std::string nvidiaSmiLog(int bursts, int startS, double phase, bool backwards = false) {
  std::string out =
      "timestamp, index, name, power.draw [W], temperature.gpu, clocks.sm [MHz], "
      "utilization.gpu [%], memory.used [MiB], clocks_event_reasons.active\n";
  for (int k = 0; k < bursts; ++k) {
    const int b = backwards ? (k + bursts / 2) % bursts : k;
    const int64_t ms = int64_t{startS} * 1000 + int64_t{b} * 100;
    const int64_t s = ms / 1000;
    for (int g = 0; g < 8; ++g) {
      const double x = b * 0.01 + g * 0.4 + phase;
      const double power = 390 + 310 * std::sin(x) + g;
      out += fmt::format(
          "2025/03/01 {:02}:{:02}:{:02}.{:03}, {}, NVIDIA H100 80GB HBM3, {:.2f} W, {:.0f}, "
          "{} MHz, {} %, {} MiB, 0x{:016X}\n",
          s / 3600, s / 60 % 60, s % 60, ms % 1000, g, power, 60 + 25 * std::sin(x - 0.5),
          power > 680 ? 1410 + b % 300 : 1980, static_cast<int>(50 + 50 * std::sin(3 * x)),
          40000 + 100 * g, power > 680 ? 4 : 0);
    }
  }
  return out;
}

import::ImportSummary importWith(const std::vector<std::filesystem::path>& inputs,
                                 const std::filesystem::path& out, uint64_t budget,
                                 unsigned threads){import::ImportRequest req;
for (const auto& p : inputs)
  req.inputs.push_back({p, ""});
req.output = out;
req.memoryBudget = budget;
req.threads = threads;
req.options.utc_offset_s = 0;
import::ImportJob job(std::move(req));
return job.run();
}  // namespace

bool hasH5diff() {
  return std::system("h5diff --version >/dev/null 2>&1") == 0;
}

// h5diff's report of two runs ("" when they are the same in every dataset and attribute).
std::string h5diff(const std::filesystem::path& a, const std::filesystem::path& b) {
  const std::string cmd = fmt::format("h5diff -c '{}' '{}' 2>&1", a.string(), b.string());
  std::FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  const int rc = p ? ::pclose(p) : -1;
  return rc == 0 ? std::string{} : fmt::format("h5diff exit {}:\n{}", rc, out.substr(0, 4000));
}

std::string analyzeJson(const std::filesystem::path& run) {
  const auto r = test::runWattline({"analyze", run.string(), "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.out;
}

void expectSameSamples(const RunFile& a, const RunFile& b) {
  ASSERT_EQ(a.gpus().size(), b.gpus().size());
  for (size_t g = 0; g < a.gpus().size(); ++g)
    for (const char* m : {"power_w", "util_pct", "sm_clock_mhz"}) {
      const auto sa = a.readSamples(SeriesKind::Gpu, g, m, INT64_MIN, INT64_MAX);
      const auto sb = b.readSamples(SeriesKind::Gpu, g, m, INT64_MIN, INT64_MAX);
      ASSERT_EQ(sa.t_ns, sb.t_ns) << "GPU " << g << " " << m;
      ASSERT_EQ(sa.v.size(), sb.v.size());
      for (size_t i = 0; i < sa.v.size(); ++i)
        ASSERT_TRUE(sa.v[i] == sb.v[i] || (std::isnan(sa.v[i]) && std::isnan(sb.v[i])))
            << "GPU " << g << " " << m << " sample " << i;
    }
}

TEST(TelemetrySpill, TablesReadBackAsWritten) {
  test::TempDir dir;
  auto spool = std::make_shared<KernelSpool>(dir / "run.h5", 1 << 20);
  TelemetryTable t;
  t.t_ns = {30, 10, 20};
  t.columns = {{"power_w", {1.5, NAN, -2.0}}, {"util_pct", {0, 50, 100}}};
  t.throttle_reasons = {0, 4, 0xffffffffu};
  const auto s = writeTable(spool, t);
  EXPECT_EQ(s->rows, 3u);
  EXPECT_FALSE(s->sorted);
  EXPECT_EQ(s->minT, 10);
  EXPECT_EQ(s->maxT, 30);
  EXPECT_EQ(s->metrics, (std::vector<std::string>{"power_w", "util_pct"}));
  EXPECT_EQ(spool->bytesWritten(), 3u * 8 + 2 * 3 * 8 + 3 * 4);
  s->shift_ns = -5;
  const TelemetryTable back = readTable(*s);
  EXPECT_EQ(back.t_ns, (std::vector<int64_t>{25, 5, 15}));
  ASSERT_EQ(back.columns.size(), 2u);
  EXPECT_EQ(back.columns[0].values[0], 1.5);
  EXPECT_TRUE(std::isnan(back.columns[0].values[1]));
  EXPECT_EQ(back.columns[1].values, (std::vector<double>{0, 50, 100}));
  EXPECT_EQ(back.throttle_reasons, t.throttle_reasons);
}

TEST(TelemetrySpill, ReaderCountFollowsThreadsFilesAndBudget) {
  EXPECT_EQ(import::readerCount(4, 10, 0), 4u);
  EXPECT_EQ(import::readerCount(4, 3, 0), 3u);
  EXPECT_EQ(import::readerCount(8, 10, 512u << 20), 8u);
  EXPECT_EQ(import::readerCount(8, 10, 32u << 20), 2u);  // 16M per reader
  EXPECT_EQ(import::readerCount(8, 10, 16u << 20), 1u);
  EXPECT_EQ(import::readerCount(8, 10, 64u << 10), 1u);
  EXPECT_EQ(import::readerCount(3, 0, 0), 1u);
  EXPECT_GE(import::readerCount(0, 1000, 0), 1u);  // the cores
}

// Two sources of one GPU (same host and index) are merged in memory whichever of them was spilled;
// a spilled table out of time order is read back and sorted with its note. Assembled directly,
// with each combination of spilled sources against none.
TEST(TelemetrySpill, SpilledSourcesOfOneGpuMergeAsInMemory) {
  if (!hasH5diff()) WL_SKIP_OR_FAIL_MISSING("h5diff (Debian package hdf5-tools)");
  test::TempDir spoolDir;
  auto source = [](int k) {
    import::ImportedData d;
    d.format = "test";
    d.path = fmt::format("source{}.csv", k);
    import::ImportedGpu g;
    g.info.hostname = "node0";
    g.info.local_index = 0;
    const int64_t t0 =
        1'700'000'000'000'000'000 + int64_t{k} * 50'000'000;  // interleaved 50 ms apart
    for (int i = 0; i < 200; ++i)
      g.table.t_ns.push_back(t0 +
                             int64_t{k == 1 ? 199 - i : i} * 100'000'000);  // source 1 backwards
    g.table.columns = {{"power_w", {}}, {"util_pct", {}}};
    for (int i = 0; i < 200; ++i) {
      g.table.columns[0].values.push_back(300.0 + k * 10 + i);
      g.table.columns[1].values.push_back(i % 7 == 0 ? NAN : 50.0 + k);
    }
    d.gpus.push_back(std::move(g));
    return d;
  };
  auto spool = std::make_shared<KernelSpool>(spoolDir / "x.h5", 1 << 20);
  test::TempDir whole;
  auto a = import::assembleRun({source(0), source(1)}, {}, whole / "run.h5");
  for (int mask : {1, 2, 3}) {
    SCOPED_TRACE(mask);
    std::vector<import::ImportedData> inputs{source(0), source(1)};
    for (int k = 0; k < 2; ++k)
      if (mask & (1 << k)) {
        import::ImportedGpu& g = inputs[static_cast<size_t>(k)].gpus[0];
        g.spilled = writeTable(spool, g.table);
        g.table = {};
      }
    test::TempDir out;
    const auto b = import::assembleRun(std::move(inputs), {}, out / "run.h5");
    EXPECT_EQ(b.telemetrySamples, 400u);
    EXPECT_EQ(b.notes, a.notes);
    EXPECT_EQ(h5diff(whole / "run.h5", out / "run.h5"), "");
  }
  EXPECT_EQ(a.telemetrySamples, 400u);
  EXPECT_NE(std::find_if(a.notes.begin(), a.notes.end(),
                         [](const QualityNote& n) { return n.code == "merged_telemetry"; }),
            a.notes.end());
}

// Four node logs (one written out of order) and a kernel trace: the telemetry is spilled as each
// log is read, aligned to the trace, checked against its ranks and written one GPU at a time.
TEST(TelemetrySpill, TinyBudgetWritesTheSameRun) {
  if (!hasH5diff()) WL_SKIP_OR_FAIL_MISSING("h5diff (Debian package hdf5-tools)");
  test::TempDir src, whole, spilled, parallel;
  std::vector<std::filesystem::path> files;
  for (int n = 0; n < 4; ++n) {
    files.push_back(src / fmt::format("node{}.csv", n));
    test::writeFile(files.back(), nvidiaSmiLog(1500, 60 * n, 0.3 * n, n == 2));
  }
  files.push_back(testData("kineto/hta-no-distributed-info.json.gz"));
  const auto a = importWith(files, whole / "run.h5", 0, 1);
  const auto b = importWith(files, spilled / "run.h5", 64 << 10, 1);
  const auto c = importWith(files, parallel / "run.h5", 0, 3);
  EXPECT_EQ(a.spillBytes, 0u);
  // Every GPU table went to disk: 32 GPUs x 1,500 samples x (8 B time + 5 x 8 B + 4 B mask).
  EXPECT_GE(b.spillBytes, 32u * 1500u * (8 + 5 * 8 + 4));
  EXPECT_EQ(a.telemetrySamples, 32u * 1500u);
  EXPECT_EQ(b.telemetrySamples, a.telemetrySamples);
  ASSERT_EQ(a.notes.size(), b.notes.size());
  for (size_t i = 0; i < a.notes.size(); ++i) {
    EXPECT_EQ(a.notes[i].code, b.notes[i].code) << i;
    EXPECT_EQ(a.notes[i].message, b.notes[i].message) << i;
  }
  EXPECT_EQ(h5diff(whole / "run.h5", spilled / "run.h5"), "");
  EXPECT_EQ(h5diff(whole / "run.h5", parallel / "run.h5"), "");
  expectSameSamples(*RunFile::open(whole / "run.h5"), *RunFile::open(spilled / "run.h5"));
  const std::string ja = analyzeJson(whole / "run.h5");
  EXPECT_GT(ja.size(), 1000u);
  EXPECT_TRUE(ja == analyzeJson(spilled / "run.h5")) << "analyze --json differs";
  EXPECT_EQ(test::leftovers(spilled.path()), std::vector<std::string>{"run.h5"});
}

// The command line: --memory-budget 16M against no budget, --threads 1 against 2, on four node
// logs of ~3.3 MB of tables each. At 16M (a telemetry share of 4M, one reader) every table after
// the first is spilled; at 32M (8M, two readers) the first two files are kept and the other two
// spilled by the two readers at once, into the one spill file.
TEST(TelemetrySpill, CommandLineBudgetAndThreadsWriteTheSameRun) {
  if (!hasH5diff()) WL_SKIP_OR_FAIL_MISSING("h5diff (Debian package hdf5-tools)");
  test::TempDir src, out;
  std::vector<std::string> inputs;
  for (int n = 0; n < 4; ++n) {
    inputs.push_back((src / fmt::format("node{}.csv", n)).string());
    test::writeFile(inputs.back(), nvidiaSmiLog(8000, 0, 0.7 * n));
  }
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args{"import"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(),
                {"-o", (out / name / "run.h5").string(), "--utc-offset", "Z", "--json"});
    args.insert(args.end(), extra.begin(), extra.end());
    std::filesystem::create_directories(out / name);
    const auto r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  };
  const auto whole = run("whole", {"--memory-budget", "0", "--threads", "1"});
  const auto budget = run("budget", {"--memory-budget", "16M", "--threads", "1"});
  const auto two = run("two", {"--memory-budget", "32M", "--threads", "2"});
  const auto four = run("four", {"--memory-budget", "0", "--threads", "4"});
  const uint64_t table = 8u * 8000u * (8 + 5 * 8 + 4);  // one file's GPU tables on disk
  EXPECT_EQ(whole["spilled_bytes"], 0);
  // The tables count by their capacity, so a file may count more than it writes: ranges.
  EXPECT_GE(budget["spilled_bytes"].get<uint64_t>(), 3 * table);
  EXPECT_LE(budget["spilled_bytes"].get<uint64_t>(), 4 * table);
  EXPECT_GE(two["spilled_bytes"].get<uint64_t>(), 1 * table);
  EXPECT_LE(two["spilled_bytes"].get<uint64_t>(), 3 * table);
  EXPECT_EQ(h5diff(out / "whole" / "run.h5", out / "budget" / "run.h5"), "");
  EXPECT_EQ(h5diff(out / "whole" / "run.h5", out / "two" / "run.h5"), "");
  EXPECT_EQ(h5diff(out / "whole" / "run.h5", out / "four" / "run.h5"), "");
  for (const char* bad : {"0", "x", "2000"}) {
    const auto r =
        test::runWattline({"import", inputs[0], "-o", (out / "bad.h5").string(), "--threads", bad});
    EXPECT_EQ(r.exitCode, 2) << bad;
    EXPECT_NE(r.err.find("option --threads"), std::string::npos) << r.err;
  }
}

}  // namespace wl
}  // namespace wl
