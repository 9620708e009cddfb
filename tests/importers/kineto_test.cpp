// SPDX-License-Identifier: GPL-3.0-or-later
// The Kineto importer on every real trace (numbers from the independent reference.py), exact
// timestamps and odd pids/tids on a hand-written trace, and a named message for each bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "import_test_util.h"
#include "loaders/core/error.h"
#include "loaders/import/json_stream.h"
#include "loaders/import/kineto_importer.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::errorOf;
using test::readFile;
using test::readFileRaw;
using test::testData;
using test::writeFile;

class KinetoRealTrace : public ::testing::TestWithParam<const char*> {};

TEST_P(KinetoRealTrace, ImportsWithTheReferenceNumbers) {
  const auto file = testData(std::string("kineto/") + GetParam());
  const nlohmann::json& ref = test::reference("kineto", file)["ranks"][0];
  test::TempDir dir;
  test::importFiles({file}, dir / "run.h5");
  const auto run = RunFile::open(dir / "run.h5");
  ASSERT_EQ(run->ranks().size(), 1u);
  const int rank = run->ranks()[0].rank;
  if (!ref["rank"].is_null()) {
    EXPECT_EQ(rank, ref["rank"].get<int>());
  }
  const test::RankNumbers n = test::rankNumbers(*run, rank);
  EXPECT_EQ(n.kernels, ref["kernels"].get<uint64_t>());
  EXPECT_EQ(n.memcpy, ref["memcpy"].get<uint64_t>());
  EXPECT_EQ(n.memset, ref["memset"].get<uint64_t>());
  EXPECT_EQ(n.comm, ref["comm"].get<uint64_t>());
  EXPECT_EQ(n.streams, ref["streams"].get<size_t>());
  EXPECT_EQ(n.iterations, ref["iterations"].get<size_t>());
  if (!ref["first_ns"].is_null()) {
    // Exact to the nanosecond: the reference reads the timestamps as decimals.
    EXPECT_EQ(n.first_ns, ref["first_ns"].get<int64_t>());
    EXPECT_EQ(n.last_ns, ref["last_ns"].get<int64_t>());
  } else {
    // A CPU-only trace: a note says so, and its iterations are still there.
    const auto& q = run->quality();
    EXPECT_TRUE(std::any_of(q.begin(), q.end(),
                            [](const QualityNote& x) { return x.code == "no_gpu_events"; }));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, KinetoRealTrace,
    ::testing::Values("hta-a100-nccl-metadata-rank0.json.gz", "hta-mi250-minitoy-rocm6.2.json.gz",
                      "tracelens-mi300x-rccl-rank0.json.gz", "kineto-legacy-array-resnet50.json.gz",
                      "hta-cpu-only-rank34.json.gz", "hta-no-distributed-info.json.gz",
                      "hta-old-naming-rank1.json.gz"));

TEST(KinetoImporter, KeepsNcclMetadataAndNumbersCollectivesPerProcessGroup) {
  const auto file = testData("kineto/hta-a100-nccl-metadata-rank0.json.gz");
  const nlohmann::json& ref = test::reference("kineto", file)["ranks"][0]["collectives"];
  test::TempDir dir;
  test::importFiles({file}, dir / "run.h5");
  const auto run = RunFile::open(dir / "run.h5");
  std::vector<std::pair<int64_t, CollectiveInfo>> got;
  for (const CollectiveRecord& c : run->collectives())
    got.push_back({run->readAllKernels(c.track)[c.event].start_ns, c.info});
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<nlohmann::json> want(ref.begin(), ref.end());
  std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
    return a["start_ns"].template get<int64_t>() < b["start_ns"].template get<int64_t>();
  });
  ASSERT_EQ(got.size(), want.size());
  ASSERT_GT(got.size(), 0u);
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    const CollectiveInfo& c = got[i].second;
    EXPECT_EQ(got[i].first, want[i]["start_ns"].get<int64_t>());
    EXPECT_EQ(run->str(c.collective), want[i]["collective"].get<std::string>());
    EXPECT_EQ(run->str(c.pg_name), want[i]["pg"].get<std::string>());
    EXPECT_EQ(c.in_nelems, want[i]["in_nelems"].get<int64_t>());
    EXPECT_EQ(c.group_size, want[i]["group_size"].get<int>());
    EXPECT_EQ(run->str(c.dtype), want[i]["dtype"].get<std::string>());
    EXPECT_EQ(run->str(c.pg_desc), "default_pg");
    EXPECT_EQ(run->str(c.pg_ranks), "[0, 1]");
    EXPECT_EQ(c.seq, static_cast<int64_t>(i));  // one process group: 0, 1, 2... in time order
  }
}

TEST(KinetoImporter, GzipAndPlainGiveTheSameEvents) {
  test::TempDir dir;
  const auto gz = testData("kineto/hta-mi250-minitoy-rocm6.2.json.gz");
  writeFile(dir / "plain.json", readFile(gz));
  const import::ImportedData a = import::readKinetoTrace(gz);
  const import::ImportedData b = import::readKinetoTrace(dir / "plain.json");
  ASSERT_EQ(a.ranks.size(), 1u);
  ASSERT_EQ(a.ranks[0].tracks.size(), b.ranks[0].tracks.size());
  for (size_t t = 0; t < a.ranks[0].tracks.size(); ++t)
    EXPECT_EQ(a.ranks[0].tracks[t].events, b.ranks[0].tracks[t].events);
  EXPECT_EQ(a.ranks[0].iterations, b.ranks[0].iterations);
}

// A hand-written trace with every oddity FORMATS.md lists; expected values computed by hand.
TEST(KinetoImporter, ParsesTimestampsExactlyAndToleratesOddPidsAndTids) {
  test::TempDir dir;
  writeFile(dir / "odd.json", R"({"schemaVersion": 1, "distributedInfo": {"rank": "3"},
 "traceEvents": [
  {"ph": "M", "name": "process_labels", "pid": "Spans", "tid": "", "args": {"labels": "x"}},
  {"ph": "i", "pid": "", "tid": -1, "ts": 1, "name": "Record Window End"},
  {"ph": "X", "cat": "Trace", "pid": "Traces", "tid": "PyTorch Profiler", "ts": 1, "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": "stream 7 ",
   "ts": 1694128201434718.123, "dur": 2.5, "args": {"correlation": 11}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": -1, "tid": -1,
   "ts": "1694128201434720", "dur": 1, "args": {"device": 2, "stream": 9}},
  {"dur": 1e0, "ts": 1694128201434721.0005, "tid": 3, "pid": 1,
   "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "cat": "kernel", "ph": "X"},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#42", "pid": 100, "tid": 100,
   "ts": 1694128201434700, "dur": 30},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "fwd \u00e9", "pid": 0, "tid": 7,
   "ts": 1694128201434718, "dur": 3},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
   "ts": "not even a number", "dur": 1}
 ]})");
  const import::ImportedData d = import::readKinetoTrace(dir / "odd.json");
  ASSERT_EQ(d.ranks.size(), 1u);
  const import::ImportedRank& r = d.ranks[0];
  EXPECT_EQ(r.info.rank, 3);
  ASSERT_EQ(r.tracks.size(), 3u);  // (0, 7), (1, 3), (2, 9) ordered by device and stream
  EXPECT_EQ(r.tracks[0].device, 0);
  EXPECT_EQ(r.tracks[0].stream, 7);
  ASSERT_EQ(r.tracks[0].events.size(), 1u);
  EXPECT_EQ(r.tracks[0].events[0].start_ns, 1694128201434718123);  // not on a 256 ns grid
  EXPECT_EQ(r.tracks[0].events[0].dur_ns, 2500);
  EXPECT_EQ(r.tracks[0].events[0].correlation, 11);
  EXPECT_EQ(r.tracks[1].device, 1);
  EXPECT_EQ(r.tracks[1].stream, 3);
  EXPECT_EQ(r.tracks[1].events[0].start_ns, 1694128201434721001);  // .0005 us rounds up
  EXPECT_EQ(r.tracks[1].events[0].dur_ns, 1000);
  EXPECT_EQ(r.tracks[1].events[0].cls, KernelClass::Communication);
  ASSERT_EQ(r.tracks[1].collectives.size(), 1u);
  EXPECT_EQ(d.strings.at(r.tracks[1].collectives[0].collective), "allreduce");
  EXPECT_EQ(d.strings.at(r.tracks[1].collectives[0].dtype), "float");
  EXPECT_EQ(r.tracks[1].collectives[0].seq, 0);
  EXPECT_EQ(r.tracks[2].device, 2);
  EXPECT_EQ(r.tracks[2].stream, 9);
  EXPECT_EQ(r.tracks[2].events[0].start_ns, 1694128201434720000);
  EXPECT_EQ(r.tracks[2].events[0].kind, GpuEventKind::Memcpy);
  EXPECT_EQ(r.tracks[2].events[0].cls, KernelClass::Memory);
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].step, 42);
  EXPECT_EQ(r.iterations[0].start_ns, 1694128201434700000);
  EXPECT_EQ(r.iterations[0].end_ns, 1694128201434730000);
  ASSERT_EQ(r.annotations.size(), 1u);
  EXPECT_TRUE(r.annotations[0].on_gpu);
  EXPECT_EQ(d.strings.at(r.annotations[0].name), "fwd \xc3\xa9");
}

TEST(KinetoImporter, AddsBaseTimeNanosecondsEvenWhenItComesLast) {
  test::TempDir dir;
  writeFile(dir / "base.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4458676416431.397,
     "dur": 0.001}], "baseTimeNanoseconds": 1711964646000000000})");
  const auto d = import::readKinetoTrace(dir / "base.json");
  // 1711964646000000000 + 4458676416431397 (hand sum).
  EXPECT_EQ(d.ranks[0].tracks[0].events[0].start_ns, 1716423322416431397);
  EXPECT_EQ(d.ranks[0].tracks[0].events[0].dur_ns, 1);
  EXPECT_TRUE(d.absoluteTime);
}

TEST(KinetoImporter, DecimalParserIsExact) {
  EXPECT_EQ(import::parseMicrosToNs("1694128201434718.123"), 1694128201434718123);
  EXPECT_EQ(import::parseMicrosToNs("-2.5"), -2500);
  EXPECT_EQ(import::parseMicrosToNs("1.2345e3"), 1234500);
  EXPECT_EQ(import::parseMicrosToNs("0.0004"), 0);
  EXPECT_EQ(import::parseMicrosToNs("0.0005"), 1);
  EXPECT_EQ(import::parseMicrosToNs("9223372036854775.807"), INT64_MAX);
  EXPECT_FALSE(import::parseMicrosToNs("9223372036854775.808"));
  EXPECT_FALSE(import::parseMicrosToNs("NaN"));
  EXPECT_FALSE(import::parseMicrosToNs("Infinity"));
  EXPECT_FALSE(import::parseMicrosToNs("1."));
  EXPECT_FALSE(import::parseMicrosToNs("abc"));
  EXPECT_FALSE(import::parseMicrosToNs(""));
}

// ---- Bad inputs: each has its own one-line message and leaves no output behind.

class KinetoBadInput : public ::testing::Test {
 protected:
  // Imports `bytes` (written as `name`) into out/run.h5; returns the error message.
  std::string importBytes(const std::string& name, const std::string& bytes,
                          const std::string& format = "kineto") {
    writeFile(in.path() / name, bytes);
    const std::string msg =
        errorOf([&] { test::importFiles({in.path() / name}, out.path() / "run.h5", format); });
    EXPECT_TRUE(test::leftovers(out.path()).empty()) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find(name), std::string::npos) << "the message names the file: " << msg;
    return msg;
  }
  static std::string kernel(const std::string& ts, const std::string& dur) {
    return R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1,
      "ts": 1, "dur": 1}, {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
           ts + R"(, "dur": )" + dur + "}]}";
  }
  test::TempDir in, out;
};

TEST_F(KinetoBadInput, EmptyFile) {
  EXPECT_NE(importBytes("empty.json", "").find("the file is empty"), std::string::npos);
  EXPECT_NE(importBytes("empty2.json", "", "").find("the file is empty"), std::string::npos);
}

TEST_F(KinetoBadInput, TruncatedJson) {
  const std::string full = readFile(testData("kineto/hta-old-naming-rank1.json.gz"));
  const std::string msg = importBytes("cut.json", full.substr(0, full.size() / 2));
  EXPECT_NE(msg.find(fmt::format("truncated JSON: the data ends at byte {} inside traceEvents[",
                                 full.size() / 2)),
            std::string::npos)
      << msg;
}

TEST_F(KinetoBadInput, TruncatedGzip) {
  const std::string gz = readFileRaw(testData("kineto/hta-mi250-minitoy-rocm6.2.json.gz"));
  const std::string msg = importBytes("cut.json.gz", gz.substr(0, gz.size() / 2));
  EXPECT_NE(msg.find("truncated gzip data"), std::string::npos) << msg;
}

TEST_F(KinetoBadInput, PngGivenAsKineto) {
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  EXPECT_NE(importBytes("image.png", png)
                .find("not a Kineto JSON trace: expected '{' or '[' at "
                      "byte 0, found a PNG image"),
            std::string::npos);
  EXPECT_NE(importBytes("image2.png", png, "")
                .find("not a format Wattline reads (it starts "
                      "with a PNG image"),
            std::string::npos);
}

TEST_F(KinetoBadInput, CsvGivenAsKineto) {
  const std::string csv = readFileRaw(testData("rocprof/gunrock-rocprof-v1.csv"));
  const std::string msg = importBytes("results.csv", csv);
  EXPECT_NE(msg.find("not a Kineto JSON trace: expected '{' or '[' at byte 0, found "
                     "\"\"Index\",\"KernelName"),
            std::string::npos)
      << msg;
}

TEST_F(KinetoBadInput, NaNTimestamp) {
  const std::string msg = importBytes("nan.json", kernel("NaN", "1"));
  EXPECT_NE(msg.find("at traceEvents[1].ts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a finite number of microseconds, found NaN"), std::string::npos)
      << msg;
}

TEST_F(KinetoBadInput, InfiniteDuration) {
  const std::string msg = importBytes("inf.json", kernel("1694128201434718", "Infinity"));
  EXPECT_NE(msg.find("at traceEvents[1].dur"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found Infinity"), std::string::npos) << msg;
}

TEST_F(KinetoBadInput, NonNumericTimestamp) {
  const std::string msg = importBytes("text.json", kernel("\"abc\"", "1"));
  EXPECT_NE(msg.find("at traceEvents[1].ts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a number of microseconds, found \"\"abc\"\""), std::string::npos)
      << msg;
}

TEST_F(KinetoBadInput, TraceEventsNotAnArray) {
  const std::string msg = importBytes("obj.json", R"({"schemaVersion": 1, "traceEvents": {}})");
  EXPECT_NE(msg.find("at traceEvents (byte 36): expected an array of events, found an object"),
            std::string::npos)
      << msg;
}

TEST_F(KinetoBadInput, ObjectWithoutTraceEvents) {
  const std::string msg = importBytes("other.json", R"({"data": [1, 2, 3]})");
  EXPECT_NE(msg.find("no \"traceEvents\" array"), std::string::npos) << msg;
}

TEST_F(KinetoBadInput, InvalidJsonInsideAnEvent) {
  const std::string msg =
      importBytes("bad.json", R"({"traceEvents": [{"ph": "X" "cat": "kernel"}]})");
  EXPECT_NE(msg.find("at traceEvents[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("invalid JSON"), std::string::npos) << msg;
}

TEST_F(KinetoBadInput, NegativeDurationsAreRepairedAndNoted) {
  writeFile(in.path() / "neg.json", kernel("1694128201434718", "-5"));
  test::importFiles({in.path() / "neg.json"}, out.path() / "run.h5");
  const auto run = RunFile::open(out.path() / "run.h5");
  ASSERT_EQ(run->tracks().size(), 1u);
  EXPECT_EQ(run->readAllKernels(0)[0].dur_ns, 0);
  const auto& q = run->quality();
  const auto it = std::find_if(q.begin(), q.end(),
                               [](const QualityNote& n) { return n.code == "negative_durations"; });
  ASSERT_NE(it, q.end());
  EXPECT_NE(it->message.find("traceEvents[1].dur = -5000 ns"), std::string::npos) << it->message;
}

}  // namespace
}  // namespace wl
