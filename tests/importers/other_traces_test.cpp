// SPDX-License-Identifier: GPL-3.0-or-later
// rocprofv3 JSON, rocprof v1 CSV and Nsight Systems SQLite on their real files (numbers from the
// independent reference.py), content detection of every kernel-trace file, and bad inputs.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>

#include "import_test_util.h"
#include "loaders/core/error.h"
#include "loaders/import/importer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::errorOf;
using test::testData;

struct Case {
  const char* file;
  const char* format;
};

class OtherTraceFile : public ::testing::TestWithParam<Case> {};

TEST_P(OtherTraceFile, ImportsWithTheReferenceNumbers) {
  const Case c = GetParam();
  std::string format = c.format;  // test names cannot hold '-'
  std::replace(format.begin(), format.end(), '_', '-');
  const auto file = testData(c.file);
  const nlohmann::json& ref = test::reference(format, file)["ranks"];
  test::TempDir dir;
  const import::ImportSummary s = test::importFiles({file}, dir / "run.h5");
  ASSERT_EQ(s.info.sources.size(), 1u);
  EXPECT_EQ(s.info.sources[0].format, format);  // detected from the content
  const auto run = RunFile::open(dir / "run.h5");
  ASSERT_EQ(run->ranks().size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const test::RankNumbers n = test::rankNumbers(*run, run->ranks()[i].rank);
    EXPECT_EQ(n.kernels, ref[i]["kernels"].get<uint64_t>());
    EXPECT_EQ(n.memcpy, ref[i]["memcpy"].get<uint64_t>());
    EXPECT_EQ(n.memset, ref[i]["memset"].get<uint64_t>());
    EXPECT_EQ(n.comm, ref[i]["comm"].get<uint64_t>());
    EXPECT_EQ(n.streams, ref[i]["streams"].get<size_t>());
    EXPECT_EQ(n.first_ns, ref[i]["first_ns"].get<int64_t>());
    EXPECT_EQ(n.last_ns, ref[i]["last_ns"].get<int64_t>());
    EXPECT_EQ(run->info().start_ns, ref[i]["first_ns"].get<int64_t>());
    EXPECT_EQ(run->info().end_ns, ref[i]["last_ns"].get<int64_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, OtherTraceFile,
    ::testing::Values(Case{"rocprof/tracelens-rocprofv3-mi350x.json.gz", "rocprofv3"},
                      Case{"rocprof/gunrock-rocprof-v1.csv", "rocprof_csv"},
                      Case{"nsys/pipit-cloverleaf-a100-nsys2024.sqlite", "nsys_sqlite"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.format); });

TEST(Detection, EveryKernelTraceFileIsRecognisedByContent) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"kineto/hta-a100-nccl-metadata-rank0.json.gz", "kineto"},
      {"kineto/hta-cpu-only-rank34.json.gz", "kineto"},
      {"kineto/hta-mi250-minitoy-rocm6.2.json.gz", "kineto"},
      {"kineto/hta-no-distributed-info.json.gz", "kineto"},
      {"kineto/hta-old-naming-rank1.json.gz", "kineto"},
      {"kineto/kineto-legacy-array-resnet50.json.gz", "kineto"},
      {"kineto/tracelens-mi300x-rccl-rank0.json.gz", "kineto"},
      {"rocprof/tracelens-rocprofv3-mi350x.json.gz", "rocprofv3"},
      {"rocprof/gunrock-rocprof-v1.csv", "rocprof-csv"},
      {"nsys/pipit-cloverleaf-a100-nsys2024.sqlite", "nsys-sqlite"}};
  test::TempDir dir;
  for (const auto& [rel, format] : files) {
    // Under a misleading name: detection must not look at the name.
    const auto copy = dir / ("data-" + std::to_string(&rel - &files[0].first) + ".bin");
    std::filesystem::copy_file(testData(rel), copy);
    const import::Importer* imp = import::detectImporter(import::probeInput(copy));
    ASSERT_NE(imp, nullptr) << rel;
    EXPECT_EQ(imp->name(), format) << rel;
  }
}

TEST(RocprofV3, NamesTheGpuAndMarksTheClockRelative) {
  const auto d = import::findImporter("rocprofv3")
                     ->read(testData("rocprof/tracelens-rocprofv3-mi350x.json.gz"), {}, {});
  EXPECT_FALSE(d.absoluteTime);
  ASSERT_EQ(d.ranks.size(), 1u);
  EXPECT_EQ(d.ranks[0].info.pid, 908);
  EXPECT_EQ(d.ranks[0].info.hostname, "smci350-zts-gtu-c6-25");
  EXPECT_EQ(d.ranks[0].device, 0);  // agent 37946 is GPU 0 (logical_node_type_id)
  EXPECT_EQ(d.ranks[0].deviceName, "AMD Instinct MI350X");
}

TEST(Nsys, AcceptsTheOldMetadataTableNameAndAMissingSessionStart) {
  test::TempDir dir;
  const auto copy = dir / "old.sqlite";
  std::filesystem::copy_file(testData("nsys/pipit-cloverleaf-a100-nsys2024.sqlite"), copy);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA;"
                         "DROP TABLE TARGET_INFO_SESSION_START_TIME;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto d = import::findImporter("nsys-sqlite")->read(copy, {}, {});
  EXPECT_FALSE(d.absoluteTime);  // no session start: relative to it
  const auto& ref =
      test::reference("nsys-sqlite", testData("nsys/pipit-cloverleaf-a100-nsys2024.sqlite"));
  size_t events = 0;
  int64_t first = INT64_MAX;
  for (const KernelTrack& t : d.ranks.at(0).tracks)
    for (const KernelEvent& e : t.events)
      ++events, first = std::min(first, e.start_ns);
  EXPECT_EQ(events,
            ref["ranks"][0]["kernels"].get<size_t>() + ref["ranks"][0]["memcpy"].get<size_t>());
  // Session start 1696392839587175550 (TARGET_INFO_SESSION_START_TIME.utcEpochNs) removed.
  EXPECT_EQ(first, ref["ranks"][0]["first_ns"].get<int64_t>() - 1696392839587175550);
  const bool schemaNoted = std::any_of(d.notes.begin(), d.notes.end(), [](const QualityNote& n) {
    return n.code == "export_schema" && n.message.find("3.13.2") != std::string::npos;
  });
  EXPECT_TRUE(schemaNoted);
}

// Sections in another order than the real file, a memory copy and an unknown kernel id; the
// expected values are read off the text by hand.
TEST(RocprofV3, ReadsSectionsInAnyOrderWithCopies) {
  test::TempDir dir;
  test::writeFile(dir / "r.json", R"({"rocprofiler-sdk-tool": [{
    "buffer_records": {
      "memory_copy": [{"start_timestamp": 1000, "end_timestamp": 1500, "operation": 2,
        "correlation_id": {"internal": 7, "external": 0},
        "src_agent_id": {"handle": 1}, "dst_agent_id": {"handle": 2}}],
      "kernel_dispatch": [
        {"start_timestamp": 2000, "end_timestamp": 2600, "correlation_id": {"internal": 8},
         "dispatch_info": {"agent_id": {"handle": 2}, "queue_id": {"handle": 5}, "kernel_id": 1}},
        {"start_timestamp": 3000, "end_timestamp": 2900, "correlation_id": {"internal": 9},
         "dispatch_info": {"agent_id": {"handle": 2}, "queue_id": {"handle": 5}, "kernel_id": 4}}]},
    "strings": {"buffer_records": [{"kind": "MEMORY_COPY", "operations": ["MEMORY_COPY_NONE",
      "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE"]}]},
    "kernel_symbols": [{"kernel_id": 1, "formatted_kernel_name": "ncclDevKernel_Generic_1"}],
    "agents": [{"id": {"handle": 1}, "type": 1, "logical_node_type_id": 0, "name": "cpu"},
               {"id": {"handle": 2}, "type": 2, "logical_node_type_id": 3,
                "product_name": "AMD Instinct MI300X"}],
    "metadata": {"pid": 42, "node": {"hostname": "n1"}}}]})");
  const auto d = import::findImporter("rocprofv3")->read(dir / "r.json", {}, {});
  ASSERT_EQ(d.ranks.size(), 1u);
  const import::ImportedRank& r = d.ranks[0];
  EXPECT_EQ(r.device, 3);
  EXPECT_EQ(r.deviceName, "AMD Instinct MI300X");
  ASSERT_EQ(r.tracks.size(), 2u);  // copies (-2), queue 5
  EXPECT_EQ(r.tracks[0].stream, -2);
  EXPECT_EQ(r.tracks[0].device, 3);  // the GPU end of the host-to-device copy
  EXPECT_EQ(d.strings.at(r.tracks[0].events[0].name), "MEMORY_COPY_HOST_TO_DEVICE");
  EXPECT_EQ(r.tracks[0].events[0].kind, GpuEventKind::Memcpy);
  EXPECT_EQ(r.tracks[0].events[0].dur_ns, 500);
  EXPECT_EQ(r.tracks[0].events[0].correlation, 7);
  EXPECT_EQ(r.tracks[1].stream, 5);
  ASSERT_EQ(r.tracks[1].events.size(), 2u);
  EXPECT_EQ(r.tracks[1].events[0].cls, KernelClass::Communication);
  EXPECT_EQ(d.strings.at(r.tracks[1].events[1].name), "kernel 4");
  EXPECT_EQ(r.tracks[1].events[1].dur_ns, 0);  // ends before it starts
  auto has = [&](std::string_view code) {
    return std::any_of(d.notes.begin(), d.notes.end(),
                       [&](const QualityNote& n) { return n.code == code; });
  };
  EXPECT_TRUE(has("negative_durations"));
  EXPECT_TRUE(has("missing_kernel_symbols"));
  EXPECT_TRUE(has("relative_clock"));
}

// ---- Bad inputs.

class OtherBadInput : public ::testing::Test {
 protected:
  std::string importBytes(const std::string& name, const std::string& bytes,
                          const std::string& format) {
    test::writeFile(in.path() / name, bytes);
    const std::string msg =
        errorOf([&] { test::importFiles({in.path() / name}, out.path() / "run.h5", format); });
    EXPECT_TRUE(test::leftovers(out.path()).empty()) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    return msg;
  }
  test::TempDir in, out;
};

TEST_F(OtherBadInput, TruncatedSqlite) {
  const std::string db = test::readFileRaw(testData("nsys/pipit-cloverleaf-a100-nsys2024.sqlite"));
  const std::string msg = importBytes("cut.sqlite", db.substr(0, 200000), "nsys-sqlite");
  EXPECT_NE(msg.find("damaged or truncated"), std::string::npos) << msg;
}

TEST_F(OtherBadInput, JsonGivenAsNsys) {
  const std::string msg = importBytes("trace.json", R"({"traceEvents": []})", "nsys-sqlite");
  EXPECT_NE(msg.find("not an Nsight Systems SQLite export: the file does not start with the "
                     "SQLite header"),
            std::string::npos)
      << msg;
}

TEST_F(OtherBadInput, SqliteThatIsNotAnNsysExport) {
  const auto path = in.path() / "other.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  const std::string msg =
      errorOf([&] { test::importFiles({path}, out.path() / "run.h5", "nsys-sqlite"); });
  EXPECT_NE(msg.find("an SQLite database, but not an Nsight Systems export"), std::string::npos)
      << msg;
  EXPECT_TRUE(test::leftovers(out.path()).empty());
}

TEST_F(OtherBadInput, RocprofCsvRowWithTooFewColumns) {
  const std::string csv = test::readFileRaw(testData("rocprof/gunrock-rocprof-v1.csv"));
  const size_t third = csv.find('\n', csv.find('\n', csv.find('\n') + 1) + 1);
  const std::string msg =
      importBytes("results.csv", csv.substr(0, third) + "\n7,\"k\",2,0\n", "rocprof-csv");
  EXPECT_NE(msg.find("results.csv:4: expected 22 columns as in the header, found 4"),
            std::string::npos)
      << msg;
}

TEST_F(OtherBadInput, RocprofCsvNonNumericTime) {
  const std::string msg =
      importBytes("bad.csv", "KernelName,gpu-id,queue-id,pid,BeginNs,EndNs\n\"k\",0,0,1,abc,5\n",
                  "rocprof-csv");
  EXPECT_NE(msg.find("bad.csv:2: BeginNs: expected an integer, found \"abc\""), std::string::npos)
      << msg;
}

TEST_F(OtherBadInput, CsvWithoutKernelColumnsGivenAsRocprof) {
  const std::string msg = importBytes("telemetry.csv", "timestamp,power\n1,2\n", "rocprof-csv");
  EXPECT_NE(msg.find("telemetry.csv:1: not a rocprof kernel CSV"), std::string::npos) << msg;
}

TEST_F(OtherBadInput, TruncatedRocprofV3) {
  const std::string json = test::readFile(testData("rocprof/tracelens-rocprofv3-mi350x.json.gz"));
  const std::string msg =
      importBytes("908_results.json", json.substr(0, json.size() - 5000), "rocprofv3");
  EXPECT_NE(msg.find("truncated JSON"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rocprofiler-sdk-tool[0]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace wl
