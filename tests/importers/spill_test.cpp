// SPDX-License-Identifier: GPL-3.0-or-later
// Import within a memory budget (core/kernel_spool.h): a budget small enough to spill many runs
// writes the same run as no budget at all, and the spill file is gone after success, an error
// and a cancel.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <sstream>

#include "import_test_util.h"
#include "loaders/core/error.h"
#include "loaders/core/kernel_spool.h"
#include "loaders/format/run_file.h"
#include "loaders/import/import_job.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::testData;

// A synthetic Kineto trace of one rank, written in the object form with distributedInfo.
// Model: three streams; on each, events follow each other with gaps of 0..3 us and last 1..40 us
// (whole microseconds, so the streams share many starts); every 7th event of a stream starts
// with the previous one (a tie only a stable order keeps apart) and overlaps it. One event in 10
// is an NCCL allreduce on stream 2 with collective metadata (process group "0" or "1"), one in 25
// a memcpy, the rest compute kernels with one of 50 names. The events are written shuffled within
// windows of 64, as profilers write them out of start order.
std::string syntheticRank(int rank, int worldSize, size_t events, uint32_t seed) {
  std::mt19937 rng(seed);
  std::array<int64_t, 3> clock{1000, 1000, 1000};
  std::array<size_t, 3> made{};
  std::array<int64_t, 3> lastStart{};
  std::vector<std::string> lines;
  lines.reserve(events);
  for (size_t i = 0; i < events; ++i) {
    const int kind = i % 10 == 3 ? 2 : i % 25 == 7 ? 1 : 0;  // 2: NCCL, 1: memcpy, 0: compute
    const size_t s = kind == 2 ? 2 : rng() % 2;
    int64_t ts = clock[s] + static_cast<int64_t>(rng() % 4);
    if (++made[s] % 7 == 0) ts = lastStart[s];
    const int64_t dur = 1 + static_cast<int64_t>(rng() % 40);
    lastStart[s] = ts;
    clock[s] = std::max(clock[s], ts + dur);
    const int64_t corr = static_cast<int64_t>(i) + 1;
    std::string args = fmt::format(R"("device": 0, "stream": {}, "correlation": {})", 7 + s, corr);
    std::string name, cat = "kernel";
    if (kind == 2) {
      name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
      args += fmt::format(
          R"(, "Collective name": "allreduce", "In msg nelems": {}, "Out msg nelems": {}, )"
          R"("Group size": {}, "dtype": "Float", "Process Group Name": "{}", )"
          R"("Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3]")",
          1024 * (i % 5 + 1), 1024 * (i % 5 + 1), worldSize, i % 20 == 3 ? 1 : 0);
    } else if (kind == 1) {
      name = "Memcpy HtoD (Pageable -> Device)";
      cat = "gpu_memcpy";
    } else {
      name = fmt::format("void gemm_kernel_{}<float>(Params)", rng() % 50);
    }
    lines.push_back(
        fmt::format(R"(  {{"ph": "X", "cat": "{}", "name": "{}", "pid": 0, "tid": {}, "ts": {}, )"
                    R"("dur": {}, "args": {{{}}}}})",
                    cat, name, 7 + s, ts, dur, args));
  }
  for (size_t w = 0; w < lines.size(); w += 64)
    std::shuffle(lines.begin() + static_cast<std::ptrdiff_t>(w),
                 lines.begin() + static_cast<std::ptrdiff_t>(std::min(lines.size(), w + 64)), rng);
  std::string out = fmt::format(
      "{{\n \"schemaVersion\": 1,\n \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, "
      "\"world_size\": {}}},\n \"baseTimeNanoseconds\": 1700000000000000000,\n "
      "\"traceEvents\": [\n",
      rank, worldSize);
  for (size_t i = 0; i < lines.size(); ++i)
    out += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  out += " ]\n}\n";
  return out;
}

import::ImportSummary importWithBudget(const std::vector<std::filesystem::path>& inputs,
                                       const std::filesystem::path& out, uint64_t budget,
                                       const Progress& progress = {}){import::ImportRequest req;
for (const auto& p : inputs)
  req.inputs.push_back({p, ""});
req.output = out;
req.memoryBudget = budget;
import::ImportJob job(std::move(req));
return job.run(progress);
}  // namespace

// Everything a reader sees of the kernels: tracks, every column of every event, every pyramid
// level, the stored summaries, the collectives and the strings they name.
void expectSameKernels(const RunFile& a, const RunFile& b) {
  ASSERT_EQ(a.tracks().size(), b.tracks().size());
  ASSERT_EQ(a.kernelCount(), b.kernelCount());
  for (size_t t = 0; t < a.tracks().size(); ++t) {
    SCOPED_TRACE(fmt::format("track {}", t));
    EXPECT_EQ(a.tracks()[t].rank, b.tracks()[t].rank);
    EXPECT_EQ(a.tracks()[t].stream, b.tracks()[t].stream);
    EXPECT_EQ(a.tracks()[t].offset, b.tracks()[t].offset);
    EXPECT_EQ(a.tracks()[t].count, b.tracks()[t].count);
    EXPECT_EQ(a.tracks()[t].classCount, b.tracks()[t].classCount);
    const auto ea = a.readAllKernels(t, RunFile::kAllKernelColumns);
    const auto eb = b.readAllKernels(t, RunFile::kAllKernelColumns);
    ASSERT_EQ(ea.size(), eb.size());
    for (size_t i = 0; i < ea.size(); ++i) {
      ASSERT_EQ(ea[i], eb[i]) << "event " << i;
      ASSERT_EQ(a.str(ea[i].name), b.str(eb[i].name));
    }
    const LodGrid& g = a.kernelGrid();
    for (size_t k = 0; k < g.levels(); ++k) {
      const auto la = a.readKernelLod(t, k, 0, g.buckets[k]);
      const auto lb = b.readKernelLod(t, k, 0, g.buckets[k]);
      EXPECT_EQ(la.count, lb.count) << "level " << k;
      EXPECT_EQ(la.busy, lb.busy) << "level " << k;
    }
    // The stored summaries (format 3): a spilled track's partial, built chunk by chunk as it is
    // merged and written, equals the in-memory track's.
    ASSERT_TRUE(a.hasKernelSummary() && b.hasKernelSummary());
    EXPECT_EQ(a.kernelSummary(t), b.kernelSummary(t));
  }
  const auto ca = a.collectives(), cb = b.collectives();
  ASSERT_EQ(ca.size(), cb.size());
  for (size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(ca[i].track, cb[i].track);
    EXPECT_EQ(ca[i].event, cb[i].event);
    EXPECT_EQ(ca[i].info, cb[i].info);
  }
}

std::string analyzeJson(const std::filesystem::path& run) {
  const auto r = test::runWattline({"analyze", run.string(), "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.out;
}

bool hasSpillFile(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".spill.tmp-") != std::string::npos) return true;
  return false;
}

TEST(KernelSpool, ParsesMemorySizes) {
  EXPECT_EQ(parseByteSize("1048576"), 1048576u);
  EXPECT_EQ(parseByteSize("512M"), 512u << 20);
  EXPECT_EQ(parseByteSize("2G"), uint64_t{2} << 30);
  EXPECT_EQ(parseByteSize("2g"), uint64_t{2} << 30);
  EXPECT_EQ(parseByteSize("64KiB"), 64u << 10);
  EXPECT_EQ(parseByteSize("1.5GB"), uint64_t{3} << 29);
  EXPECT_EQ(parseByteSize("0"), 0u);
  for (const char* bad : {"", "M", "12Q", "1.5", "-1G", "2GX", "1..5G", ".5G", "99999999999T"})
    EXPECT_FALSE(parseByteSize(bad).has_value()) << bad;
}

TEST(KernelSpool, RunsReadBackAsWritten) {
  test::TempDir dir;
  std::vector<SpillRecord> a(3), b(2);
  for (size_t i = 0; i < a.size(); ++i)
    a[i].start_ns = static_cast<int64_t>(10 * i), a[i].name = static_cast<uint32_t>(i);
  for (size_t i = 0; i < b.size(); ++i)
    b[i].start_ns = static_cast<int64_t>(5 + i), b[i].collective = 7;
  std::filesystem::path file;
  {
    KernelSpool spool(dir / "run.h5", 1 << 20);
    EXPECT_TRUE(spool.path().empty());  // nothing written, nothing created
    const SpillRun ra = spool.write(a), rb = spool.write(b);
    EXPECT_EQ(ra.at, 0u);
    EXPECT_EQ(rb.at, 3 * sizeof(SpillRecord));
    EXPECT_EQ(rb.count, 2u);
    file = spool.path();
    EXPECT_TRUE(std::filesystem::exists(file));
    EXPECT_EQ(spool.bytesWritten(), 5 * sizeof(SpillRecord));
    std::vector<SpillRecord> back(2);
    spool.read(rb.at, back);
    EXPECT_EQ(back[1].start_ns, 6);
    EXPECT_EQ(back[1].collective, 7u);
    spool.read(sizeof(SpillRecord), back);
    EXPECT_EQ(back[0].name, 1u);
    EXPECT_EQ(back[1].start_ns, 20);
    EXPECT_NE(test::errorOf([&] { spool.read(4 * sizeof(SpillRecord), back); }), "");
    CollectiveInfo c;
    c.seq = 42, c.pg_name = 3;
    const std::vector<CollectiveInfo> cs{CollectiveInfo{}, c};
    const uint64_t at = spool.writeCollectives(cs);
    EXPECT_EQ(at, 5 * sizeof(SpillRecord));
    EXPECT_EQ(spool.readCollectives(at, 2), cs);
  }
  EXPECT_FALSE(std::filesystem::exists(file));
}

// Real traces: HTA's A100 trace has NCCL collectives with metadata, TraceLens' MI300X trace RCCL.
TEST(SpillImport, TinyBudgetWritesTheSameRunForRealTraces) {
  for (const char* name : {"kineto/hta-a100-nccl-metadata-rank0.json.gz",
                           "kineto/tracelens-mi300x-rccl-rank0.json.gz"}) {
    SCOPED_TRACE(name);
    test::TempDir out, out2;
    const auto whole = importWithBudget({testData(name)}, out / "run.h5", 0);
    const auto spilled = importWithBudget({testData(name)}, out2 / "run.h5", 64 << 10);
    EXPECT_EQ(whole.spillRuns, 0u);
    EXPECT_GT(spilled.spillRuns, 10u);  // the budget forced many runs
    EXPECT_EQ(whole.kernels, spilled.kernels);
    expectSameKernels(*RunFile::open(out / "run.h5"), *RunFile::open(out2 / "run.h5"));
    const std::string a = analyzeJson(out / "run.h5"), b = analyzeJson(out2 / "run.h5");
    EXPECT_GT(a.size(), 1000u);
    EXPECT_TRUE(a == b) << "wattline analyze --json differs";
    EXPECT_EQ(test::leftovers(out2.path()), std::vector<std::string>{"run.h5"});
  }
}

TEST(SpillImport, TinyBudgetWritesTheSameRunForManyRanks) {
  test::TempDir src, out, out2;
  std::vector<std::filesystem::path> files;
  constexpr int kRanks = 4;
  for (int r = 0; r < kRanks; ++r) {
    files.push_back(src / fmt::format("rank-{}.json", r));
    test::writeFile(files.back(), syntheticRank(r, kRanks, 75000, 17u + static_cast<uint32_t>(r)));
  }
  const auto whole = importWithBudget(files, out / "run.h5", 0);
  const auto spilled = importWithBudget(files, out2 / "run.h5", 1 << 20);
  EXPECT_EQ(whole.kernels, 4u * 75000u);
  EXPECT_EQ(spilled.kernels, whole.kernels);
  EXPECT_GT(spilled.spillRuns, 20u);
  // Runs hold at least an eighth of the budget (3,276 events) each, spread over the 3 streams of
  // the file being read: 12 MB of events make at most ~3 x 12 MB / 128 KiB runs, plus the tails.
  EXPECT_LT(spilled.spillRuns, 300u) << "runs are too short";
  // At most every event and collective once: 40 B and 56 B each.
  EXPECT_LE(spilled.spillBytes, 4u * 75000u * sizeof(SpillRecord) + 4u * 7500u * 56u);
  const auto a = RunFile::open(out / "run.h5");
  const auto b = RunFile::open(out2 / "run.h5");
  EXPECT_EQ(a->collectives().size(), 4u * 7500u);  // the model's one in ten
  expectSameKernels(*a, *b);
  const std::string ja = analyzeJson(out / "run.h5"), jb = analyzeJson(out2 / "run.h5");
  EXPECT_GT(ja.size(), 1000u);
  EXPECT_TRUE(ja == jb) << "wattline analyze --json differs";
  EXPECT_EQ(test::leftovers(out2.path()), std::vector<std::string>{"run.h5"});
}

// A CharLLM-PPT folder reads its rank traces through the kineto importer and moves their ranks into
// its own string table: spilled records and collectives are renamed when the writer reads them.
TEST(SpillImport, TinyBudgetWritesTheSameRunForACharLlmFolder) {
  test::TempDir src, out, out2;
  const auto run = src / "run";
  std::filesystem::create_directories(run / "4242_kineto");
  std::string power, util;
  for (int k = 0; k < 60; ++k) {
    power += fmt::format("{:.2f},{}\n", 1700000000.0 + 0.05 * k, 300 + k);
    util += fmt::format("{:.2f},{}\n", 1700000000.0 + 0.05 * k, 90);
  }
  test::writeFile(run / "gpu_power_0.csv", power);
  test::writeFile(run / "gpu_util_0.csv", util);
  // Two ranks whose names come in different orders: the second's ids change when moved.
  test::writeFile(run / "4242_kineto" / "rank-0.json", syntheticRank(0, 2, 30000, 3));
  test::writeFile(run / "4242_kineto" / "rank-1.json", syntheticRank(1, 2, 30000, 4));
  auto importAs = [&](const std::filesystem::path& o, uint64_t budget) {
    import::ImportRequest req;
    req.inputs.push_back({run, "charllm"});
    req.output = o;
    req.memoryBudget = budget;
    import::ImportJob job(std::move(req));
    return job.run();
  };
  const auto whole = importAs(out / "run.h5", 0);
  const auto spilled = importAs(out2 / "run.h5", 64 << 10);
  EXPECT_EQ(whole.kernels, 60000u);
  EXPECT_GT(spilled.spillRuns, 10u);
  const auto a = RunFile::open(out / "run.h5");
  const auto b = RunFile::open(out2 / "run.h5");
  ASSERT_EQ(a->collectives().size(), 6000u);
  expectSameKernels(*a, *b);
  EXPECT_EQ(a->str(a->collectives()[0].info.pg_desc), "default_pg");
  EXPECT_EQ(b->str(b->collectives()[0].info.pg_desc), "default_pg");
}

// A bad event in the third file: at this budget files are read one at a time (readerCount()), so
// the third starts when the first two are done, i.e. after the import has spilled. The error names
// the bad file and nothing is left.
TEST(SpillImport, SpillFileIsRemovedOnError) {
  test::TempDir src, out;
  const auto good0 = src / "rank-0.json", good1 = src / "rank-1.json", bad = src / "rank-2.json";
  test::writeFile(good0, syntheticRank(0, 3, 20000, 5));
  test::writeFile(good1, syntheticRank(1, 3, 20000, 6));
  std::string text = syntheticRank(2, 3, 40000, 7);
  const size_t at = text.find("\"ts\": ", text.size() / 2);
  text.replace(at, 6, "\"ts\": \"soon\", \"x\": ");
  test::writeFile(bad, text);
  std::atomic<bool> sawSpill{false};
  const std::string msg = test::errorOf([&] {
    importWithBudget(
        {good0, good1, bad}, out / "run.h5", 256 << 10,
        Progress([&](double, std::string_view stage) {
          if (stage.find("rank-2.json") != std::string_view::npos && hasSpillFile(out.path()))
            sawSpill = true;
          return true;
        }));
  });
  EXPECT_NE(msg.find("rank-2.json: at traceEvents["), std::string::npos) << msg;
  EXPECT_TRUE(sawSpill);
  EXPECT_TRUE(test::leftovers(out.path()).empty());
  EXPECT_FALSE(hasSpillFile(out.path()));
}

TEST(SpillImport, SpillFileIsRemovedOnCancel) {
  test::TempDir src, out;
  const auto file = src / "rank-0.json";
  test::writeFile(file, syntheticRank(0, 1, 80000, 9));
  import::ImportRequest req;
  req.inputs.push_back({file, ""});
  req.output = out / "run.h5";
  req.memoryBudget = 256 << 10;
  import::ImportJob job(std::move(req));
  bool sawSpill = false;
  bool cancelled = false;
  try {
    job.run(Progress([&](double f, std::string_view) {
      sawSpill = sawSpill || hasSpillFile(out.path());
      if (f > 0.5 && sawSpill) job.cancel();
      return true;
    }));
  } catch (const Cancelled&) {
    cancelled = true;
  }
  EXPECT_TRUE(sawSpill);
  EXPECT_TRUE(cancelled);
  EXPECT_TRUE(test::leftovers(out.path()).empty());
  EXPECT_FALSE(hasSpillFile(out.path()));
}

TEST(SpillImport, CommandLineTakesAndChecksTheBudget) {
  test::TempDir out;
  const auto trace = testData("kineto/hta-no-distributed-info.json.gz");
  const auto ok = test::runWattline({"import", trace.string(), "-o", (out / "a.h5").string(),
                                     "--memory-budget", "16M", "--json"});
  ASSERT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["spilled_bytes"], 0);  // 46 kB of trace: nothing spills
  for (const char* bad : {"lots", "1M", "2X"}) {
    const auto r = test::runWattline(
        {"import", trace.string(), "-o", (out / "b.h5").string(), "--memory-budget", bad});
    EXPECT_EQ(r.exitCode, 2) << bad;
    const std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_NE(first.find("wattline import: option --memory-budget: "), std::string::npos) << r.err;
    EXPECT_NE(first.find(bad), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out / "b.h5"));
}

}  // namespace wl
}  // namespace wl
