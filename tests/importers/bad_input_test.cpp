// SPDX-License-Identifier: GPL-3.0-or-later
// The bad-input corpus of the kernel-trace importers (support/bad_input.h): Kineto, rocprofv3,
// rocprof CSV and Nsight Systems SQLite, each given truncated, binary, wrong-format, NaN/Inf,
// negative, non-monotonic, duplicated, huge-number, empty and header-only input, with the one-line
// message or the quality note the user gets asserted.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/bad_input.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

// ---- Kineto: one kernel event at epoch microseconds `ts` lasting `dur` microseconds.
std::string kernel(const std::string& ts, const std::string& dur, int corr = 1) {
  return R"({"ph":"X","cat":"kernel","name":"sm90_gemm","pid":0,"tid":7,"ts":)" + ts +
         R"(,"dur":)" + dur + R"(,"args":{"device":0,"stream":7,"correlation":)" +
         std::to_string(corr) + "}}";
}
std::string trace(const std::vector<std::string>& events) {
  std::string s = R"({"schemaVersion":1,"traceEvents":[)";
  for (size_t i = 0; i < events.size(); ++i)
    s += (i ? "," : "") + events[i];
  return s + "]}";
}
const std::string kT0 = "1727385120000000";  // 2024-09-26 21:12:00 UTC, in microseconds
const std::string kT1 = "1727385120000100";

const std::string kSmiCsv =
    "timestamp, index, power.draw [W]\n2025/09/24 03:41:43.487, 0, 250.00 W\n";
const std::string kBinary = std::string("\x00\x01\x02\x03\xff\xfe\x7f\x80", 8) + "\x10rest";

// ---- rocprofv3: one process, one GPU agent, one kernel symbol, the given dispatches.
std::string dispatch(const std::string& start, const std::string& end, int corr = 1) {
  return R"({"start_timestamp":)" + start + R"(,"end_timestamp":)" + end +
         R"(,"correlation_id":{"internal":)" + std::to_string(corr) +
         R"(},"dispatch_info":{"kernel_id":5,"agent_id":{"handle":1},"queue_id":{"handle":3}}})";
}
std::string rocprofv3(const std::vector<std::string>& dispatches) {
  std::string d;
  for (size_t i = 0; i < dispatches.size(); ++i)
    d += (i ? "," : "") + dispatches[i];
  return R"({"rocprofiler-sdk-tool":[{"metadata":{"pid":42,"node":{"hostname":"n0"}},)"
         R"("agents":[{"id":{"handle":1},"type":2,"logical_node_type_id":0,)"
         R"("product_name":"AMD Instinct MI300X"}],)"
         R"("kernel_symbols":[{"kernel_id":5,"formatted_kernel_name":"gemm_kernel"}],)"
         R"("buffer_records":{"kernel_dispatch":[)" +
         d + "]}}]}";
}

// ---- rocprof v1 CSV
const std::string kRocHeader = "Index,KernelName,gpu-id,queue-id,pid,BeginNs,EndNs\n";
std::string rocRow(int i, const std::string& begin, const std::string& end) {
  return std::to_string(i) + ",\"gemm(int)\",2,1,4242," + begin + "," + end + "\n";
}

// ---- Nsight Systems: an SQLite export with the tables the importer reads and the given kernel
// rows (start, end as SQL literals), as bytes.
std::string nsysBytes(const std::vector<std::pair<std::string, std::string>>& kernels,
                      bool nsysTables = true) {
  TempDir dir;
  const std::string path = (dir / "x.sqlite").string();
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  std::string sql = "CREATE TABLE misc(a INTEGER);";
  if (nsysTables) {
    sql =
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES(1, 'sm90_gemm');"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER);"
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1727385120000000000);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, "
        "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
        "demangledName INTEGER);";
    int corr = 1;
    for (const auto& [s, e] : kernels)
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(" + s + "," + e + ",0,7," +
             std::to_string(corr++) + ",71131136,1);";
  }
  char* err = nullptr;
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (err) ADD_FAILURE() << err;
  sqlite3_free(err);
  sqlite3_close(db);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<BadInput> cases() {
  const std::string ok = trace({kernel(kT0, "5")});
  const std::string v3ok = rocprofv3({dispatch("1000", "2000")});
  const std::string nsysOk = nsysBytes({{"1000", "2000"}, {"3000", "4000"}});
  return {
      // Kineto
      {"kineto", "truncated", "trace.json", ok.substr(0, ok.size() - 20),
       "truncated JSON: the data ends at byte"},
      {"kineto", "binary", "trace.json", kBinary,
       "not a Kineto JSON trace: expected '{' or '[' at byte 0, found binary data (00 01 02 03"},
      {"kineto", "wrong_format", "trace.json", kSmiCsv,
       "not a Kineto JSON trace: expected '{' or '[' at byte 0, found \"timestamp, index"},
      // The message gives the byte where the event starts: after `{..."traceEvents":[`.
      {"kineto", "nan_inf", "trace.json", trace({kernel("NaN", "5")}),
       "at traceEvents[0].ts (byte " + std::to_string(trace({}).size() - 2) +
           "): expected a finite number of microseconds, found NaN"},
      {"kineto", "negative", "trace.json", trace({kernel(kT0, "-3")}), "", "negative_durations",
       "had a negative duration and were set to 0 (first: traceEvents[0].dur = -3000 ns)"},
      {"kineto", "non_monotonic", "trace.json", trace({kernel(kT1, "5", 1), kernel(kT0, "5", 2)}),
       ""},
      {"kineto", "duplicated", "trace.json", trace({kernel(kT0, "5"), kernel(kT0, "5")}), ""},
      {"kineto", "huge_number", "trace.json", trace({kernel("1e30", "5")}),
       "traceEvents[0].ts (byte " + std::to_string(trace({}).size() - 2) +
           "): 1e30 microseconds is out of range (expected a time within 146 years of 1970)"},
      {"kineto", "empty", "trace.json", "", "the file is empty"},
      {"kineto", "header_only", "trace.json", trace({}),
       "nothing to import: no telemetry samples, GPU events, iterations or annotations"},
      // rocprofv3
      {"rocprofv3", "truncated", "r.json", v3ok.substr(0, v3ok.size() - 30),
       "truncated JSON: the data ends at byte"},
      {"rocprofv3", "binary", "r.json", kBinary,
       "not a rocprofv3 JSON file: expected '{' at byte 0, found binary data (00 01 02 03"},
      {"rocprofv3", "wrong_format", "r.json", ok,
       "not a rocprofv3 JSON file: no \"rocprofiler-sdk-tool\" member"},
      {"rocprofv3", "nan_inf", "r.json", rocprofv3({dispatch("NaN", "2000")}),
       "at rocprofiler-sdk-tool[0].buffer_records.kernel_dispatch[0]"},
      {"rocprofv3", "negative", "r.json", rocprofv3({dispatch("2000", "1000")}), "",
       "negative_durations", "1 records end before they start"},
      {"rocprofv3", "non_monotonic", "r.json",
       rocprofv3({dispatch("5000", "6000", 1), dispatch("1000", "2000", 2)}), ""},
      {"rocprofv3", "duplicated", "r.json",
       rocprofv3({dispatch("1000", "2000"), dispatch("1000", "2000")}), ""},
      {"rocprofv3", "huge_number", "r.json", rocprofv3({dispatch("18446744073709551615", "2000")}),
       "start_timestamp: 18446744073709551615 ns is out of range"},
      {"rocprofv3", "empty", "r.json", "", "the file is empty"},
      {"rocprofv3", "header_only", "r.json", R"({"rocprofiler-sdk-tool":[]})", "nothing to import"},
      // rocprof CSV
      {"rocprof-csv", "truncated", "k.csv", kRocHeader + rocRow(0, "1000", "2000") + "1,\"gem", "",
       "truncated_last_line", "k.csv:3) is cut off (no newline, too few columns)"},
      {"rocprof-csv", "binary", "k.csv", kBinary,
       "not a rocprof kernel CSV: expected KernelName, BeginNs and EndNs columns, found binary "
       "data"},
      {"rocprof-csv", "wrong_format", "k.csv", kSmiCsv,
       "not a rocprof kernel CSV: expected KernelName, BeginNs and EndNs columns, found "
       "\"timestamp, index"},
      {"rocprof-csv", "nan_inf", "k.csv", kRocHeader + rocRow(0, "nan", "2000"),
       "k.csv:2: BeginNs: expected an integer, found \"nan\""},
      {"rocprof-csv", "negative", "k.csv", kRocHeader + rocRow(0, "2000", "1000"), "",
       "negative_durations", "1 rows end before they begin"},
      {"rocprof-csv", "non_monotonic", "k.csv",
       kRocHeader + rocRow(0, "5000", "6000") + rocRow(1, "1000", "2000"), ""},
      {"rocprof-csv", "duplicated", "k.csv",
       kRocHeader + rocRow(0, "1000", "2000") + rocRow(0, "1000", "2000"), ""},
      {"rocprof-csv", "huge_number", "k.csv",
       kRocHeader + rocRow(0, "99999999999999999999", "2000"),
       "k.csv:2: BeginNs: expected an integer"},
      {"rocprof-csv", "empty", "k.csv", "", "the file is empty"},
      {"rocprof-csv", "header_only", "k.csv", kRocHeader, "nothing to import"},
      // Nsight Systems SQLite
      {"nsys-sqlite", "truncated", "n.sqlite", nsysOk.substr(0, nsysOk.size() / 2),
       "the SQLite database is damaged or truncated"},
      {"nsys-sqlite", "binary", "n.sqlite", kBinary,
       "not an Nsight Systems SQLite export: the file does not start with the SQLite header"},
      {"nsys-sqlite", "wrong_format", "n.sqlite", nsysBytes({}, false),
       "an SQLite database, but not an Nsight Systems export"},
      {"nsys-sqlite", "nan_inf", "n.sqlite", nsysBytes({{"1e999", "2000"}}),
       "CUPTI_ACTIVITY_KIND_KERNEL row 1: start is not an integer, expected an integer number "
       "of ns"},
      {"nsys-sqlite", "negative", "n.sqlite", nsysBytes({{"2000", "1000"}}), "",
       "negative_durations", "1 rows end before they start"},
      {"nsys-sqlite", "non_monotonic", "n.sqlite", nsysBytes({{"5000", "6000"}, {"1000", "2000"}}),
       ""},
      {"nsys-sqlite", "duplicated", "n.sqlite", nsysBytes({{"1000", "2000"}, {"1000", "2000"}}),
       ""},
      {"nsys-sqlite", "huge_number", "n.sqlite",
       nsysBytes({{"9223372036854775000", "9223372036854775800"}}),
       "CUPTI_ACTIVITY_KIND_KERNEL row 1: start = 9223372036854775000 ns is out of range"},
      {"nsys-sqlite", "empty", "n.sqlite", "", "the file is empty"},
      {"nsys-sqlite", "header_only", "n.sqlite", nsysBytes({}), "nothing to import"},
  };
}

class KernelTraceBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(KernelTraceBadInput, GetsItsMessage) {
  checkBadInput(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Corpus, KernelTraceBadInput, testing::ValuesIn(cases()),
                         [](const auto& info) { return badInputName(info.param); });

TEST(KernelTraceBadInputCorpus, EveryImporterHasEveryKind) {
  checkEveryKindIsCovered(cases());
}

}  // namespace
}  // namespace wl::test
