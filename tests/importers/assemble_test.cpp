// SPDX-License-Identifier: GPL-3.0-or-later
// One run from many inputs: the 8-rank DLRM folder as one run whose collectives line up across
// ranks, rank -> GPU mapping with telemetry, manual offsets, relative clocks, clock skew notes,
// folders with other files in them, and the option parsers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "import_test_util.h"
#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/import/assemble.h"
#include "loaders/import/kineto_importer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::errorOf;
using test::testData;

// The DLRM tarball extracted once for all tests of this file.
const std::filesystem::path& dlrmFolder() {
  static test::TempDir dir;
  static const std::filesystem::path folder = [] {
    const auto r = test::runProcess(
        "/bin/tar", {"xzf", testData("kineto/param-dlrm-8rank-v100.tar.gz").string(), "-C",
                     dir.path().string()});
    if (r.exitCode != 0) throw std::runtime_error("tar failed: " + r.err);
    return dir.path() / "dlrm_kineto";
  }();
  return folder;
}

std::vector<std::filesystem::path> dlrmFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dlrmFolder()))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

const QualityNote* findNote(const std::vector<QualityNote>& notes, std::string_view code) {
  for (const QualityNote& n : notes)
    if (n.code == code) return &n;
  return nullptr;
}

TEST(Assemble, DlrmFolderIsOneEightRankRunWhoseCollectivesLineUp) {
  test::TempDir out;
  const import::ImportSummary s = test::importFiles({dlrmFolder()}, out / "dlrm.h5");
  const auto run = RunFile::open(out / "dlrm.h5");
  ASSERT_EQ(run->ranks().size(), 8u);
  ASSERT_EQ(run->gpus().size(), 8u);
  EXPECT_EQ(run->info().platform, "V100");
  EXPECT_EQ(run->info().sources.size(), 8u);

  // Per rank: the numbers of the reference, and rank r on the GPU with local index r.
  for (const auto& file : dlrmFiles()) {
    const nlohmann::json& ref = test::reference("kineto", file)["ranks"][0];
    const int rank = ref["rank"].get<int>();
    SCOPED_TRACE(rank);
    const test::RankNumbers n = test::rankNumbers(*run, rank);
    EXPECT_EQ(n.kernels, ref["kernels"].get<uint64_t>());
    EXPECT_EQ(n.memcpy, ref["memcpy"].get<uint64_t>());
    EXPECT_EQ(n.comm, ref["comm"].get<uint64_t>());
    EXPECT_EQ(n.streams, ref["streams"].get<size_t>());
    EXPECT_EQ(n.iterations, ref["iterations"].get<size_t>());
    EXPECT_EQ(n.first_ns, ref["first_ns"].get<int64_t>());
    EXPECT_EQ(n.last_ns, ref["last_ns"].get<int64_t>());
    const RankInfo& ri = run->ranks()[static_cast<size_t>(rank)];
    EXPECT_EQ(ri.rank, rank);
    ASSERT_GE(ri.gpu, 0);
    EXPECT_EQ(run->gpus()[static_cast<size_t>(ri.gpu)].local_index, rank);
    EXPECT_EQ(run->gpus()[static_cast<size_t>(ri.gpu)].device_name, "Tesla V100-SXM2-32GB");
  }

  // The same collective on every rank: same process group and seq, same name; the second one
  // (seq 1, a SendRecv) ends at ~1694128201434718 us everywhere (MANIFEST.md).
  std::map<int, std::map<int64_t, std::pair<std::string, int64_t>>> byRank;  // rank->seq->...
  for (const CollectiveRecord& c : run->collectives()) {
    const KernelEvent e = run->readAllKernels(c.track)[c.event];
    byRank[run->tracks()[c.track].rank][c.info.seq] = {run->str(c.info.collective),
                                                       e.start_ns + e.dur_ns};
  }
  ASSERT_EQ(byRank.size(), 8u);
  for (const auto& [rank, seqs] : byRank) {
    SCOPED_TRACE(rank);
    ASSERT_EQ(seqs.size(), 8u);  // 5 SendRecv + 3 AllReduce, seq 0..7
    EXPECT_EQ(seqs.begin()->first, 0);
    EXPECT_EQ(seqs.rbegin()->first, 7);
    for (const auto& [seq, c] : seqs)
      EXPECT_EQ(c.first, byRank.begin()->second.at(seq).first) << "seq " << seq;
    EXPECT_EQ(seqs.at(1).first, "sendrecv");
    EXPECT_NEAR(static_cast<double>(seqs.at(1).second), 1694128201434718000.0, 3000.0);
  }
  EXPECT_EQ(s.kernels, run->kernelCount());
}

TEST(Assemble, ManualOffsetsShiftTheirSourceAndAreRecorded) {
  const auto files = dlrmFiles();
  test::TempDir out;
  import::AssembleOptions opt;
  opt.offsets = {{files[3].filename().string(), 1500}, {"kineto", -1000}};
  test::importFiles({dlrmFolder()}, out / "a.h5");
  test::importFiles({dlrmFolder()}, out / "b.h5", {}, opt);
  const auto a = RunFile::open(out / "a.h5");
  const auto b = RunFile::open(out / "b.h5");
  for (int rank : {0, 3}) {
    // rank 3's file has its own offset; the format's offset applies to the others.
    const int64_t want = rank == 3 ? 1500 : -1000;
    EXPECT_EQ(test::rankNumbers(*b, rank).first_ns, test::rankNumbers(*a, rank).first_ns + want);
  }
  for (const SourceInfo& src : b->info().sources) {
    const bool own = std::filesystem::path(src.path).filename() == files[3].filename();
    EXPECT_EQ(src.offset_ns, own ? 1500 : -1000) << src.path;
    EXPECT_NE(src.detail.find("manual offset"), std::string::npos);
  }
  const std::string msg = errorOf([&] {
    import::AssembleOptions bad;
    bad.offsets = {{"nope.json", 5}};
    test::importFiles({dlrmFolder()}, out / "c.h5", {}, bad);
  });
  EXPECT_NE(msg.find("--offset nope.json: no input is named nope.json"), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(out / "c.h5"));
}

// Simulated telemetry (a documented model, not measured data): 8 GPUs of one node sampled every
// 100 ms from 2 s before to 2 s after `busyFrom`; utilization 0 % before it and 90 % after.
import::ImportedData simulatedTelemetry(int64_t busyFrom, bool withRanks){import::ImportedData d;
d.format = "simulated";
d.path = "simulated-telemetry.csv";
d.sample_interval_s = 0.1;
for (int g = 0; g < 8; ++g) {
  import::ImportedGpu gpu;
  gpu.info.node = 0;
  gpu.info.local_index = g;
  gpu.info.rank = withRanks ? 7 - g : -1;
  gpu.info.device_name = "Tesla V100-SXM2-32GB";
  gpu.nodeKnown = true;
  TelemetryColumn util{std::string(metric::kUtil), {}};
  TelemetryColumn power{std::string(metric::kPower), {}};
  for (int k = -20; k <= 20; ++k) {
    const int64_t t = busyFrom + int64_t{k} * 100'000'000 + 50'000'000;
    gpu.table.t_ns.push_back(t);
    util.values.push_back(t > busyFrom ? 90.0 : 0.0);
    power.values.push_back(t > busyFrom ? 250.0 : 40.0);
  }
  gpu.table.columns = {util, power};
  d.gpus.push_back(std::move(gpu));
}
return d;
}  // namespace

std::vector<import::ImportedData> dlrmTraces() {
  std::vector<import::ImportedData> v;
  for (const auto& f : dlrmFiles())
    v.push_back(import::readKinetoTrace(f));
  return v;
}

int64_t firstKernel(const std::vector<import::ImportedData>& traces) {
  int64_t first = INT64_MAX;
  for (const auto& d : traces)
    for (const auto& t : d.ranks[0].tracks)
      for (const auto& e : t.events)
        first = std::min(first, e.start_ns);
  return first;
}

TEST(Assemble, RanksMapToTheTelemetryGpuThatNamesThem) {
  auto inputs = dlrmTraces();
  inputs.push_back(simulatedTelemetry(firstKernel(inputs), true));
  test::TempDir out;
  const auto s = import::assembleRun(std::move(inputs), {}, out / "run.h5");
  ASSERT_EQ(s.gpus.size(), 8u);
  for (const RankInfo& r : s.ranks) {
    ASSERT_GE(r.gpu, 0);
    EXPECT_EQ(s.gpus[static_cast<size_t>(r.gpu)].local_index, 7 - r.rank);  // the GPU's rank
  }
  EXPECT_EQ(findNote(s.notes, "clock_skew"), nullptr);
}

TEST(Assemble, RanksMapToTheNodeLocalDeviceWithoutRanksInTelemetry) {
  auto inputs = dlrmTraces();
  inputs.push_back(simulatedTelemetry(firstKernel(inputs), false));
  test::TempDir out;
  const auto s = import::assembleRun(std::move(inputs), {}, out / "run.h5");
  ASSERT_EQ(s.gpus.size(), 8u);  // the telemetry's GPUs, no extra ones from the traces
  for (const RankInfo& r : s.ranks) {
    ASSERT_GE(r.gpu, 0);
    EXPECT_EQ(s.gpus[static_cast<size_t>(r.gpu)].local_index, r.rank);  // trace device = rank
    EXPECT_EQ(s.gpus[static_cast<size_t>(r.gpu)].rank, r.rank);
  }
  const auto run = RunFile::open(out / "run.h5");
  EXPECT_EQ(run->series().samples(0), 41u);
}

TEST(Assemble, NotesClockSkewAndAnOffsetFixesIt) {
  auto traces = dlrmTraces();
  const int64_t first = firstKernel(traces);
  {
    // The telemetry's clock runs 1 s behind: utilization rises 1 s after the first kernels.
    auto inputs = dlrmTraces();
    inputs.push_back(simulatedTelemetry(first + 1'000'000'000, false));
    test::TempDir out;
    const auto s = import::assembleRun(std::move(inputs), {}, out / "run.h5");
    size_t skews = 0;
    for (const QualityNote& n : s.notes)
      if (n.code == "clock_skew") {
        ++skews;
        // The estimate is good to one sampling interval (100 ms) plus the rank's own lag.
        const size_t at = n.message.find("rises ");
        ASSERT_NE(at, std::string::npos) << n.message;
        const double seconds = std::stod(n.message.substr(at + 6));
        EXPECT_NEAR(seconds, 1.0, 0.11) << n.message;
        EXPECT_NE(n.message.find(" s later"), std::string::npos) << n.message;
      }
    EXPECT_EQ(skews, 8u);  // one per rank
    const auto run = RunFile::open(out / "run.h5");
    EXPECT_NE(findNote(run->quality(), "clock_skew"), nullptr);  // written into the run
  }
  {
    auto inputs = dlrmTraces();
    inputs.push_back(simulatedTelemetry(first + 1'000'000'000, false));
    import::AssembleOptions opt;
    opt.offsets = {{"simulated-telemetry.csv", -1'000'000'000}};
    test::TempDir out;
    const auto s = import::assembleRun(std::move(inputs), opt, out / "run.h5");
    EXPECT_EQ(findNote(s.notes, "clock_skew"), nullptr);
    EXPECT_EQ(s.info.sources.back().offset_ns, -1'000'000'000);
  }
}

TEST(Assemble, RelativeClockSourceIsAlignedToTheAbsoluteOnesWithANote) {
  test::TempDir out;
  const auto rocprof = testData("rocprof/gunrock-rocprof-v1.csv");
  const auto kineto = testData("kineto/hta-old-naming-rank1.json.gz");
  const auto s = test::importFiles({kineto, rocprof}, out / "run.h5");
  const auto& kref = test::reference("kineto", kineto)["ranks"][0];
  const auto& rref = test::reference("rocprof-csv", rocprof)["ranks"][0];
  const int64_t want = kref["first_ns"].get<int64_t>() - rref["first_ns"].get<int64_t>();
  ASSERT_EQ(s.info.sources.size(), 2u);
  EXPECT_EQ(s.info.sources[0].offset_ns, 0);
  EXPECT_EQ(s.info.sources[1].offset_ns, want);
  const QualityNote* n = findNote(s.notes, "clock_unknown");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->subject, "gunrock-rocprof-v1.csv");
  const auto run = RunFile::open(out / "run.h5");
  ASSERT_EQ(run->ranks().size(), 2u);
  for (const RankInfo& r : run->ranks()) {
    // The Kineto trace says rank 1 (distributedInfo); the rocprof one gets the first free number.
    const bool isKineto = r.source == kineto.string();
    EXPECT_EQ(r.rank, isKineto ? 1 : 0) << r.source;
  }
  EXPECT_EQ(test::rankNumbers(*run, 0).first_ns, kref["first_ns"].get<int64_t>());  // aligned
  EXPECT_EQ(test::rankNumbers(*run, 1).first_ns, kref["first_ns"].get<int64_t>());
}

TEST(Assemble, FolderWithOtherFilesSkipsThemWithANote) {
  test::TempDir dir, out;
  for (const auto& f : dlrmFiles())
    std::filesystem::copy_file(f, dir / f.filename());
  test::writeFile(dir / "README.txt", "traces of one DLRM step\n");
  const auto s = test::importFiles({dir.path()}, out / "run.h5");
  EXPECT_EQ(s.ranks.size(), 8u);
  const QualityNote* n = findNote(s.notes, "skipped_files");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->message.find("README.txt"), std::string::npos);
}

TEST(Assemble, FailuresLeaveNoOutputBehind) {
  test::TempDir in, out;
  test::writeFile(in / "note.txt", "nothing here\n");
  std::string msg = errorOf([&] { test::importFiles({in.path()}, out / "run.h5"); });
  EXPECT_NE(msg.find("no file in the folder is a format Wattline reads (1 files looked at)"),
            std::string::npos)
      << msg;
  msg = errorOf([&] {
    test::importFiles({testData("kineto/param-dlrm-8rank-v100.tar.gz")}, out / "run.h5");
  });
  EXPECT_NE(msg.find("a tar archive: extract it and import the folder"), std::string::npos) << msg;
  test::writeFile(in / "empty-trace.json", R"({"traceEvents": []})");
  msg = errorOf([&] { test::importFiles({in / "empty-trace.json"}, out / "run.h5"); });
  EXPECT_NE(msg.find("empty-trace.json: nothing to import"), std::string::npos) << msg;
  msg = errorOf([&] { test::importFiles({in / "missing.json"}, out / "run.h5"); });
  EXPECT_NE(msg.find("missing.json: no such file or folder"), std::string::npos) << msg;
  EXPECT_TRUE(test::leftovers(out.path()).empty());
}

TEST(Assemble, CancelStopsTheJobAndLeavesNothing) {
  test::TempDir out;
  import::ImportRequest req;
  req.inputs = {{dlrmFolder(), {}}};
  req.output = out / "run.h5";
  import::ImportJob job(req);
  int calls = 0;
  EXPECT_THROW(job.run(Progress([&](double, std::string_view) { return ++calls < 3; })), Cancelled);
  EXPECT_TRUE(test::leftovers(out.path()).empty());
  import::ImportJob job2(req);
  job2.cancel();
  EXPECT_THROW(job2.run(), Cancelled);
  EXPECT_TRUE(test::leftovers(out.path()).empty());
}

TEST(Assemble, PlanShowsTheDetectedFormatPerFile) {
  import::ImportRequest req;
  req.inputs = {{dlrmFolder(), {}}, {testData("rocprof/gunrock-rocprof-v1.csv"), {}}};
  const auto plan = import::ImportJob(req).plan();
  ASSERT_EQ(plan.size(), 9u);
  for (size_t i = 0; i < 8; ++i) {
    ASSERT_NE(plan[i].importer, nullptr);
    EXPECT_EQ(plan[i].importer->name(), "kineto");
    EXPECT_EQ(plan[i].given, dlrmFolder());
    EXPECT_FALSE(plan[i].overridden);
  }
  EXPECT_EQ(plan[8].importer->name(), "rocprof-csv");
  req.format = "nope";
  EXPECT_NE(errorOf([&] { import::ImportJob(req).plan(); }).find("unknown format \"nope\""),
            std::string::npos);
}

TEST(Options, ParseConfigOffsetAndPlatform) {
  const ParallelConfig c =
      import::parseConfig("tp=4,pp=8,dp=1,mbs=2,seq=2048,recompute=on,overlap=0");
  EXPECT_EQ(c.tp, 4);
  EXPECT_EQ(c.pp, 8);
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(c.mbs, 2);
  EXPECT_EQ(c.seq_len, 2048);
  EXPECT_EQ(c.recompute, true);
  EXPECT_EQ(c.overlap, false);
  EXPECT_FALSE(c.ep.has_value());
  EXPECT_NE(errorOf([] { import::parseConfig("tp=four"); }).find("tp must be a non-negative"),
            std::string::npos);
  EXPECT_NE(errorOf([] { import::parseConfig("zz=1"); }).find("unknown key \"zz\""),
            std::string::npos);
  EXPECT_EQ(import::parseOffset("rank0.json=-250").offset_ns, -250);
  EXPECT_EQ(import::parseOffset("rank0.json=-250").source, "rank0.json");
  EXPECT_EQ(import::parseOffset("kineto=1.5ms").offset_ns, 1'500'000);
  EXPECT_EQ(import::parseOffset("kineto=-2s").offset_ns, -2'000'000'000);
  EXPECT_NE(errorOf([] { import::parseOffset("kineto"); }).find("is not SOURCE=NS"),
            std::string::npos);
  EXPECT_NE(errorOf([] { import::parseOffset("a=1.5"); }).find("expected nanoseconds"),
            std::string::npos);
  EXPECT_EQ(import::platformFromDeviceName("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(import::platformFromDeviceName("NVIDIA A100-SXM4-80GB"), "A100");
  EXPECT_EQ(import::platformFromDeviceName("Tesla V100-SXM2-32GB"), "V100");
  EXPECT_EQ(import::platformFromDeviceName("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(import::platformFromDeviceName("AMD Instinct MI250X / MI250"), "MI250X");
  EXPECT_EQ(import::platformFromDeviceName("AMD Radeon Graphics"), "AMD Radeon Graphics");
}

}  // namespace wl
}  // namespace wl
