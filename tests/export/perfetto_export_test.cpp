// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline export --format perfetto` (analysis/chrome_trace_export.h) on the bundled 8-GPU sample:
// the trace read back by Wattline's own Kineto importer gives the same kernels (names, streams,
// start times and durations to the nanosecond), collectives (process groups, sequence in each
// group) and iterations; the counters and throttle slices, parsed as JSON, equal the run's samples
// and detectThrottle(); the events carry the Trace Event Format's fields; bad usage exits 2 and
// a bad file 1, with one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analysis/chrome_trace_export.h"
#include "analysis/throttle_detection.h"
#include "loaders/format/run_file.h"
#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

const std::string kSample = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5";
constexpr int64_t kS = 1'000'000'000;

// A kernel as both runs can name it: (rank, stream, start, duration, name, kind).
using KernelKey = std::tuple<int, int64_t, int64_t, int64_t, std::string, int>;

std::vector<KernelKey> kernelsOf(const RunFile& run, int rank, TimeRange r) {
  std::vector<KernelKey> out;
  for (size_t t = 0; t < run.tracks().size(); ++t) {
    const TrackInfo& tr = run.tracks()[t];
    if (tr.rank != rank) continue;
    for (const KernelEvent& e : run.readKernels(t, r.t0, r.t1).events)
      out.emplace_back(rank, tr.stream, e.start_ns, e.dur_ns, run.str(e.name),
                       static_cast<int>(e.kind));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Collectives of a rank in the range, by (stream, start): process group, collective, seq.
std::map<std::pair<int64_t, int64_t>, std::tuple<std::string, std::string, int64_t>> collectivesOf(
    const RunFile& run, int rank, TimeRange r) {
  std::map<std::pair<int64_t, int64_t>, std::tuple<std::string, std::string, int64_t>> out;
  for (const CollectiveRecord& c : run.collectives()) {
    const TrackInfo& tr = run.tracks()[c.track];
    if (tr.rank != rank) continue;
    const KernelSlice k = run.readKernels(c.track, r.t0, r.t1);
    const auto at = std::find(k.index.begin(), k.index.end(), c.event);
    if (at == k.index.end()) continue;
    const KernelEvent& e = k.events[static_cast<size_t>(at - k.index.begin())];
    out[{tr.stream, e.start_ns}] = {run.str(c.info.pg_name), run.str(c.info.collective),
                                    c.info.seq};
  }
  return out;
}

std::vector<Iteration> iterationsOf(const RunFile& run, int rank, TimeRange r) {
  std::vector<Iteration> out;
  for (const Iteration& it : run.iterations())
    if (it.rank == rank && it.start_ns < r.t1 && it.end_ns > r.t0) out.push_back(it);
  return out;
}

class PerfettoExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir();
    run = RunFile::open(kSample);
  }
  static void TearDownTestSuite() {
    run.reset();
    delete dir;
  }
  static std::string out(const std::string& name) { return (dir->path() / name).string(); }
  static TimeRange seconds(int64_t a, int64_t b) {
    return {run->info().start_ns + a * kS, run->info().start_ns + b * kS};
  }
  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};

test::TempDir* PerfettoExport::dir = nullptr;
std::shared_ptr<const RunFile> PerfettoExport::run;

TEST_F(PerfettoExport, KernelsCollectivesAndIterationsRoundTripThroughTheKinetoImporter) {
  // One file per rank (the importer reads a Kineto file as one rank), one plain, one gzip; ranks
  // 0 and 4 are in different pipeline stages, so their kernels and groups differ.
  const TimeRange range = seconds(124, 126);
  const std::string f0 = out("rank0.json"), f4 = out("rank4.json.gz"), back = out("back.h5");
  for (const auto& [gpus, file] : {std::pair{"0", f0}, std::pair{"4", f4}}) {
    const auto r = test::runWattline({"export", kSample, "--format", "perfetto", "--range",
                                      "124:126", "--gpus", gpus, "-o", file});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("wrote " + file), std::string::npos) << r.out;
  }
  const auto imp = test::runWattline({"import", f0, f4, "-o", back});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  const auto b = RunFile::open(back);
  ASSERT_EQ(b->ranks().size(), 2u);
  for (int rank : {0, 4}) {
    SCOPED_TRACE(rank);
    const std::vector<KernelKey> src = kernelsOf(*run, rank, range);
    ASSERT_GT(src.size(), 1000u);
    EXPECT_EQ(kernelsOf(*b, rank, TimeRange{}), src);  // names, streams, times to the ns

    // Collectives: the same kernels carry the same group and collective; the importer numbers
    // each group's collectives from the first in the file, so a group's sequence numbers are the
    // source's less one constant, the number of that group's collectives before the range.
    const auto srcColl = collectivesOf(*run, rank, range);
    const auto backColl = collectivesOf(*b, rank, TimeRange{});
    ASSERT_GT(srcColl.size(), 100u);
    ASSERT_EQ(backColl.size(), srcColl.size());
    std::map<std::string, int64_t> shift;
    for (const auto& [key, s] : srcColl) {
      ASSERT_TRUE(backColl.count(key));
      const auto& k = backColl.at(key);
      EXPECT_EQ(std::get<0>(k), std::get<0>(s));
      EXPECT_EQ(std::get<1>(k), std::get<1>(s));
      const auto [it, fresh] = shift.emplace(std::get<0>(s), std::get<2>(s) - std::get<2>(k));
      EXPECT_EQ(std::get<2>(s) - std::get<2>(k), it->second) << std::get<0>(s);
    }
    EXPECT_GE(shift.size(), 2u);  // tensor and data parallel groups at least

    const std::vector<Iteration> its = iterationsOf(*run, rank, range);
    ASSERT_FALSE(its.empty());
    EXPECT_EQ(iterationsOf(*b, rank, TimeRange{}), its);
  }
}

TEST_F(PerfettoExport, CountersAndThrottleSlicesEqualTheRunsSamplesAndDetection) {
  const std::string file = out("gpus45.json.gz");
  const auto r = test::runWattline({"export", kSample, "--format", "perfetto", "--range", "100:154",
                                    "--gpus", "4-5", "-o", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(test::readFile(file));
  const TimeRange range = seconds(100, 154);
  const nlohmann::json& events = j.at("traceEvents");

  std::map<std::pair<int64_t, std::string>, std::vector<std::pair<double, double>>> counters;
  std::map<int64_t, std::vector<double>> throttle;  // pid -> starts (us)
  for (const auto& e : events) {
    if (e.at("ph") == "C") {
      const std::string name = e.at("name");
      counters[{e.at("pid").get<int64_t>(), name}].emplace_back(
          e.at("ts").get<double>(), e.at("args").at(name).get<double>());
    } else if (e.at("ph") == "X" && e.at("cat") == "throttle") {
      throttle[e.at("pid").get<int64_t>()].push_back(e.at("ts").get<double>());
    }
  }
  for (int gpu : {4, 5})
    for (const char* metric : {"power_w", "temp_c", "sm_clock_mhz", "util_pct"}) {
      SCOPED_TRACE(std::string(metric) + " of GPU " + std::to_string(gpu));
      const Samples s = run->readSamples(SeriesKind::Gpu, static_cast<size_t>(gpu), metric,
                                         range.t0, range.t1, false);
      std::vector<std::pair<double, double>> want;
      for (size_t i = 0; i < s.t_ns.size(); ++i)
        if (range.contains(s.t_ns[i]) && std::isfinite(s.v[i]))
          want.emplace_back(static_cast<double>(s.t_ns[i]) / 1000.0, s.v[i]);
      const auto& got = counters[{chromeTraceGpuPid(gpu), metric}];
      ASSERT_EQ(got.size(), want.size());
      ASSERT_GT(got.size(), 1000u);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i].first, want[i].first, 1.0);  // a double holds epoch us to 0.25 us
        EXPECT_EQ(got[i].second, want[i].second);
      }
    }
  EXPECT_EQ(counters.size(), 8u);  // nothing of the GPUs not chosen

  const auto found = detectThrottle(*run, {4, 5}, range, AnalysisOptions{});
  size_t intervals = 0;
  for (const GpuThrottle& g : found) {
    const auto& got = throttle[chromeTraceGpuPid(g.gpu)];
    ASSERT_EQ(got.size(), g.intervals.size()) << "GPU " << g.gpu;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], static_cast<double>(g.intervals[i].start_ns) / 1000.0, 1.0);
    intervals += got.size();
  }
  EXPECT_GT(intervals, 0u);  // the sample throttles late in the run
}

TEST_F(PerfettoExport, EventsCarryTheTraceEventFormatsFields) {
  // The whole run: every rank and GPU, and the counts the command reports.
  const std::string file = out("all.json");
  const auto r = test::runWattline({"export", kSample, "--format", "perfetto", "-o", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find(std::to_string(run->kernelCount()) + " kernels"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(std::to_string(run->iterations().size()) + " iterations"), std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(test::readFile(file));
  EXPECT_EQ(j.at("displayTimeUnit"), "ns");
  EXPECT_FALSE(j.contains("distributedInfo"));  // several ranks: not one Kineto rank file
  std::set<int64_t> named;
  std::map<std::string, size_t> byPh, byCat;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    ++byPh[ph];
    ASSERT_TRUE(e.at("pid").is_number_integer()) << e;
    ASSERT_TRUE(e.at("name").is_string()) << e;
    if (ph == "M") {
      const std::string n = e.at("name");
      EXPECT_TRUE(n == "process_name" || n == "thread_name" || n == "process_sort_index" ||
                  n == "thread_sort_index")
          << e;
      if (n == "process_name") named.insert(e.at("pid").get<int64_t>());
      continue;
    }
    ASSERT_TRUE(e.at("ts").is_number()) << e;
    ASSERT_TRUE(e.at("tid").is_number_integer()) << e;
    ASSERT_TRUE(e.at("args").is_object()) << e;
    if (ph == "X") {
      ASSERT_TRUE(e.at("dur").is_number()) << e;
      EXPECT_GE(e.at("dur").get<double>(), 0.0) << e;
      ++byCat[e.at("cat").get<std::string>()];
      EXPECT_TRUE(named.count(e.at("pid").get<int64_t>())) << "process not named first: " << e;
    } else {
      ASSERT_EQ(ph, "C") << e;
      ASSERT_EQ(e.at("args").size(), 1u) << e;
      EXPECT_TRUE(e.at("args").begin()->is_number()) << e;
    }
  }
  EXPECT_EQ(named.size(), run->ranks().size() + run->gpus().size());
  EXPECT_EQ(byCat["kernel"] + byCat["gpu_memcpy"] + byCat["gpu_memset"], run->kernelCount());
  EXPECT_GT(byCat["gpu_memcpy"] + byCat["gpu_memset"], 0u);
  EXPECT_EQ(byCat["user_annotation"], run->iterations().size());
  EXPECT_GT(byCat["throttle"], 0u);
  EXPECT_GT(byPh["C"], 4u * 8u * 3000u);
}

TEST_F(PerfettoExport, BadUsageExitsTwoAndBadFilesOne) {
  const std::string json = out("bad.json");
  const std::vector<std::vector<std::string>> usage = {
      {"export", kSample, "--format", "protobuf", "-o", json},
      {"export", kSample, "--format", "perfetto", "--view", "timeline", "-o", json},
      {"export", kSample, "--format", "perfetto", "--metrics", "power_w", "-o", json},
      {"export", kSample, "--format", "perfetto", "-o", out("bad.png")},
      {"export", kSample, "--format", "perfetto"},
      {"export", kSample, "--format", "perfetto", "--range", "20s:10s", "-o", json},
  };
  for (const auto& args : usage) {
    const auto r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 2) << args[3] << " " << args[4] << "\n" << r.err;
    EXPECT_NE(r.err.find("see 'wattline export --help'"), std::string::npos) << r.err;
  }
  const std::vector<std::vector<std::string>> files = {
      {"export", kSample, "--format", "perfetto", "-o", out("no/such/folder/x.json.gz")},
      {"export", kSample, "--format", "perfetto", "--gpus", "9", "-o", json},
      {"export", kSample, "--format", "perfetto", "--range", "2h:3h", "-o", json},
      {"export", out("missing.h5"), "--format", "perfetto", "-o", json},
  };
  for (const auto& args : files) {
    const auto r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 1) << args.back() << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("wattline export: ", 0), 0u) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(json));
  for (const auto& f : std::filesystem::directory_iterator(dir->path()))
    EXPECT_EQ(f.path().filename().string().find(".tmp-"), std::string::npos) << f.path();
}

}  // namespace
}  // namespace wl
