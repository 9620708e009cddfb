// SPDX-License-Identifier: GPL-3.0-or-later
// The bad-input corpus of the telemetry importers (support/bad_input.h): nvidia-smi CSV and dmon,
// DCGM dmon and long CSV, amd-smi, both Zeus formats and CharLLM-PPT folders, each given
// truncated, binary, wrong-format, NaN/Inf, negative, non-monotonic, duplicated, huge-number,
// empty and header-only input, imported end to end, with the one-line message or the quality
// note the user gets asserted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/bad_input.h"

namespace wl::test {
namespace {

const std::string kBinary = std::string("\x00\x01\x02\x03\xff\xfe\x7f\x80", 8) + "\x10rest\n";
const std::string kKineto =
    R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1727385120000000,"dur":5}]})";

// nvidia-smi --query-gpu CSV: GPU 0 at 100 ms steps.
const std::string kSmiHeader = "timestamp, index, power.draw [W], temperature.gpu\n";
std::string smi(const std::string& ts, const std::string& power) {
  return "2025/09/24 03:41:" + ts + ", 0, " + power + " W, 60\n";
}

// nvidia-smi dmon -o DT.
const std::string kDmonHeader =
    "#Date       Time        gpu    pwr  gtemp\n#YYYYMMDD   HH:MM:SS    Idx      W      C\n";
std::string dmon(const std::string& time, const std::string& power) {
  return " 20250924   " + time + "      0    " + power + "     61\n";
}

// dcgmi dmon (no timestamps: rows every --dcgm-interval-ms).
const std::string kDcgmHeader =
    "#Entity   POWER     TOTEC     TMPTR\nID        W         mJ        C\n";
std::string dcgm(const std::string& power, const std::string& energy) {
  return "GPU 0     " + power + "    " + energy + "    45\n";
}

// DCGM long CSV: one field per row (155 power W, 150 temperature C).
const std::string kDcgmCsvHeader = "GPUId,TimeStampUs,Field,Values\n";
std::string dcgmRow(const std::string& us, const std::string& value) {
  return "0," + us + ",155," + value + "\n";
}

// amd-smi metric CSV: epoch seconds.
const std::string kAmdHeader = "timestamp,gpu,socket_power,gfx_0_clk\n";
std::string amd(const std::string& t, const std::string& power) {
  return t + ",0," + power + ",2100\n";
}

// Zeus power monitor (mW) and measurement windows (J).
const std::string kZeusHeader = "Time,Power\n";
std::string zeus(const std::string& t, const std::string& mw) {
  return "2022-07-13 02:07:" + t + "," + mw + "\n";
}
const std::string kWindowsHeader = "start_time,window_name,elapsed_time,gpu0_energy\n";
std::string window(const std::string& start, const std::string& elapsed,
                   const std::string& joules) {
  return start + ",step," + elapsed + "," + joules + "\n";
}

// CharLLM-PPT: a run folder with gpu_power_0.csv.
BadInput charllm(const std::string& kind, const std::string& power, const std::string& error,
                 const std::string& note = "", const std::string& noteText = "") {
  BadInput c{"charllm", kind, "results/sweep/model/run_11", "", error, note, noteText};
  c.files = {{"gpu_power_0.csv", power}};
  return c;
}

import::ImportOptions dcgmOptions(){import::ImportOptions o;
o.dcgm_interval_ms = 100;
return o;
}  // namespace

std::vector<BadInput> cases() {
  const std::string smiOk = kSmiHeader + smi("43.487", "250.00") + smi("43.587", "251.00");
  std::vector<BadInput> v = {
      // nvidia-smi CSV
      {"nvidia-smi-csv", "truncated", "smi.csv.gz", gzipText(smiOk + smiOk + smiOk).substr(0, 60),
       "the file is truncated or corrupt"},
      {"nvidia-smi-csv", "binary", "smi.csv", kBinary, "binary data"},
      {"nvidia-smi-csv", "wrong_format", "smi.csv", kKineto, "no 'timestamp' column in the header"},
      {"nvidia-smi-csv", "nan_inf", "smi.csv",
       kSmiHeader + smi("43.487", "inf") + smi("43.587", "nan"), "", "non_finite_values",
       "2 NaN or infinite values"},
      {"nvidia-smi-csv", "negative", "smi.csv", kSmiHeader + smi("43.487", "-5.00"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"nvidia-smi-csv", "non_monotonic", "smi.csv",
       kSmiHeader + smi("43.587", "250.00") + smi("43.487", "251.00"), "",
       "non_monotonic_timestamps", "samples were sorted by time"},
      {"nvidia-smi-csv", "duplicated", "smi.csv",
       kSmiHeader + smi("43.487", "250.00") + smi("43.487", "250.00"), "", "duplicate_timestamps",
       "1 samples repeated an earlier timestamp and were dropped"},
      {"nvidia-smi-csv", "huge_number", "smi.csv", kSmiHeader + smi("43.487", "1e300"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"nvidia-smi-csv", "empty", "smi.csv", "", "empty file"},
      {"nvidia-smi-csv", "header_only", "smi.csv", kSmiHeader, "a header but no data rows"},
      // nvidia-smi dmon
      {"nvidia-smi-dmon", "truncated", "dmon.txt",
       kDmonHeader + dmon("23:59:58", "402") + " 20250924   23:59", "", "truncated_last_line",
       "cut off"},
      {"nvidia-smi-dmon", "binary", "dmon.txt", kBinary, "binary data"},
      {"nvidia-smi-dmon", "wrong_format", "dmon.txt", smiOk, "expected"},
      {"nvidia-smi-dmon", "nan_inf", "dmon.txt", kDmonHeader + dmon("23:59:58", "nan"), "",
       "non_finite_values", "NaN or infinite"},
      {"nvidia-smi-dmon", "negative", "dmon.txt", kDmonHeader + dmon("23:59:58", "-5"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"nvidia-smi-dmon", "non_monotonic", "dmon.txt",
       kDmonHeader + dmon("23:59:58", "402") + dmon("23:59:57", "403"), "",
       "non_monotonic_timestamps", "sorted"},
      {"nvidia-smi-dmon", "duplicated", "dmon.txt",
       kDmonHeader + dmon("23:59:58", "402") + dmon("23:59:58", "402"), "", "duplicate_timestamps",
       "dropped"},
      {"nvidia-smi-dmon", "huge_number", "dmon.txt", kDmonHeader + dmon("23:59:58", "1e300"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"nvidia-smi-dmon", "empty", "dmon.txt", "", "empty"},
      {"nvidia-smi-dmon", "header_only", "dmon.txt", kDmonHeader, "a dmon header but no data rows"},
      // dcgmi dmon
      {"dcgm-dmon", "truncated", "dcgm.txt", kDcgmHeader + dcgm("120.50", "1000") + "GPU 0  12", "",
       "truncated_last_line", "cut off"},
      {"dcgm-dmon", "binary", "dcgm.txt", kBinary, "binary data"},
      {"dcgm-dmon", "wrong_format", "dcgm.txt", smiOk, "expected the dcgmi dmon header"},
      {"dcgm-dmon", "nan_inf", "dcgm.txt", kDcgmHeader + dcgm("inf", "1000"), "",
       "non_finite_values", "NaN or infinite"},
      {"dcgm-dmon", "negative", "dcgm.txt", kDcgmHeader + dcgm("-5", "1000"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      // dmon text has no timestamps (rows are placed every --dcgm-interval-ms): nothing can go
      // backwards in time; GPUs interleaved out of order are read as they are.
      {"dcgm-dmon", "non_monotonic", "dcgm.txt",
       kDcgmHeader + "GPU 1  120.5  1000  45\n" + dcgm("121.5", "1000"), "",
       "dcgm_interval_timestamps", "rows were placed every 100 ms"},
      {"dcgm-dmon", "duplicated", "dcgm.txt",
       kDcgmHeader + dcgm("120.5", "1000") + dcgm("120.5", "1000"), ""},
      // DCGM writes huge sentinels for blank values: read as missing.
      {"dcgm-dmon", "huge_number", "dcgm.txt", kDcgmHeader + dcgm("1e300", "1000"), "",
       "dcgm_blank_values", "DCGM blank sentinels"},
      {"dcgm-dmon", "empty", "dcgm.txt", "", "empty file"},
      {"dcgm-dmon", "header_only", "dcgm.txt", kDcgmHeader, "a dcgmi dmon header but no GPU rows"},
      // DCGM long CSV
      {"dcgm-csv", "truncated", "dcgm.csv",
       kDcgmCsvHeader + dcgmRow("1727385120000000", "250.5") + "0,17273851", "",
       "truncated_last_line", "cut off"},
      {"dcgm-csv", "binary", "dcgm.csv", kBinary, "binary data"},
      {"dcgm-csv", "wrong_format", "dcgm.csv", smiOk, "expected"},
      {"dcgm-csv", "nan_inf", "dcgm.csv", kDcgmCsvHeader + dcgmRow("1727385120000000", "inf"), "",
       "non_finite_values", "NaN or infinite"},
      {"dcgm-csv", "negative", "dcgm.csv", kDcgmCsvHeader + dcgmRow("-1727385120000000", "250"),
       "TimeStampUs"},
      {"dcgm-csv", "non_monotonic", "dcgm.csv",
       kDcgmCsvHeader + dcgmRow("1727385120500000", "250") + dcgmRow("1727385120000000", "251"), "",
       "non_monotonic_timestamps", "sorted"},
      {"dcgm-csv", "duplicated", "dcgm.csv",
       kDcgmCsvHeader + dcgmRow("1727385120000000", "250") + dcgmRow("1727385120000000", "250"),
       ""},
      {"dcgm-csv", "huge_number", "dcgm.csv",
       kDcgmCsvHeader + dcgmRow("99999999999999999999", "250"), "TimeStampUs"},
      {"dcgm-csv", "empty", "dcgm.csv", "", "empty file"},
      {"dcgm-csv", "header_only", "dcgm.csv", kDcgmCsvHeader, "a header but no data rows"},
      // amd-smi
      {"amd-smi-csv", "truncated", "amd.csv", kAmdHeader + amd("1786553852", "300") + "17865538",
       "", "truncated_last_line", "cut off"},
      {"amd-smi-csv", "binary", "amd.csv", kBinary, "binary data"},
      {"amd-smi-csv", "wrong_format", "amd.csv", smiOk, "expected"},
      {"amd-smi-csv", "nan_inf", "amd.csv", kAmdHeader + amd("1786553852", "inf"), "",
       "non_finite_values", "NaN or infinite"},
      {"amd-smi-csv", "negative", "amd.csv", kAmdHeader + amd("1786553852", "-300"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"amd-smi-csv", "non_monotonic", "amd.csv",
       kAmdHeader + amd("1786553853", "300") + amd("1786553852", "301"), "",
       "non_monotonic_timestamps", "sorted"},
      {"amd-smi-csv", "duplicated", "amd.csv",
       kAmdHeader + amd("1786553852", "300") + amd("1786553852", "300"), "", "duplicate_timestamps",
       "dropped"},
      {"amd-smi-csv", "huge_number", "amd.csv", kAmdHeader + amd("1e300", "300"), "timestamp"},
      {"amd-smi-csv", "empty", "amd.csv", "", "empty file"},
      {"amd-smi-csv", "header_only", "amd.csv", kAmdHeader, "a header but no data rows"},
      // Zeus power monitor
      {"zeus-monitor", "truncated", "zeus.csv",
       kZeusHeader + zeus("36.708783111", "32402") + "2022-07", "", "truncated_last_line",
       "cut off"},
      {"zeus-monitor", "binary", "zeus.csv", kBinary, "binary data"},
      {"zeus-monitor", "wrong_format", "zeus.csv", smiOk, "expected"},
      {"zeus-monitor", "nan_inf", "zeus.csv", kZeusHeader + zeus("36.708783111", "inf"), "",
       "non_finite_values", "NaN or infinite"},
      {"zeus-monitor", "negative", "zeus.csv", kZeusHeader + zeus("36.708783111", "-5000"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"zeus-monitor", "non_monotonic", "zeus.csv",
       kZeusHeader + zeus("36.8", "32402") + zeus("36.7", "32402"), "", "non_monotonic_timestamps",
       "sorted"},
      {"zeus-monitor", "duplicated", "zeus.csv",
       kZeusHeader + zeus("36.7", "32402") + zeus("36.7", "32402"), "", "duplicate_timestamps",
       "dropped"},
      {"zeus-monitor", "huge_number", "zeus.csv", kZeusHeader + zeus("36.7", "1e300"), "",
       "impossible_values", "of power_w outside what a GPU can report"},
      {"zeus-monitor", "empty", "zeus.csv", "", "empty file"},
      {"zeus-monitor", "header_only", "zeus.csv", kZeusHeader, "a header but no data rows"},
      // Zeus measurement windows
      {"zeus-windows", "truncated", "win.csv",
       kWindowsHeader + window("13586624.12", "33.2", "3991.3") + "13586667.1,st", "",
       "truncated_last_line", "cut off"},
      {"zeus-windows", "binary", "win.csv", kBinary, "binary data"},
      {"zeus-windows", "wrong_format", "win.csv", smiOk, "expected"},
      {"zeus-windows", "nan_inf", "win.csv", kWindowsHeader + window("13586624.12", "33.2", "inf"),
       "", "non_finite_values", "NaN or infinite"},
      {"zeus-windows", "negative", "win.csv",
       kWindowsHeader + window("13586624.12", "-33.2", "3991.3"), "elapsed"},
      {"zeus-windows", "non_monotonic", "win.csv",
       kWindowsHeader + window("13586700.00", "33.2", "3991.3") +
           window("13586624.12", "33.2", "3991.3"),
       ""},
      {"zeus-windows", "duplicated", "win.csv",
       kWindowsHeader + window("13586624.12", "33.2", "3991.3") +
           window("13586624.12", "33.2", "3991.3"),
       "overlap"},
      {"zeus-windows", "huge_number", "win.csv", kWindowsHeader + window("1e300", "33.2", "3991.3"),
       "start_time"},
      {"zeus-windows", "empty", "win.csv", "", "empty file"},
      {"zeus-windows", "header_only", "win.csv", kWindowsHeader, "a header but no windows"},
  };
  for (BadInput& c : v)
    if (c.importer == "dcgm-dmon") c.options = dcgmOptions();
  // CharLLM-PPT folders
  const std::string rows = "1727385120.00,300\n1727385120.05,310\n";
  v.push_back(charllm("truncated", rows + "1727385120.1", "", "", ""));
  v.push_back(charllm("binary", kBinary, "gpu_power_0.csv:1: expected"));
  v.push_back(charllm("wrong_format", kSmiHeader + smi("43.487", "250.00"), "gpu_power_0.csv"));
  v.push_back(charllm("nan_inf", rows + "1727385120.10,inf\n", "", "non_finite_values", "NaN"));
  v.push_back(charllm("negative", rows + "1727385120.10,-300\n", "", "impossible_values",
                      "of power_w outside what a GPU can report"));
  v.push_back(charllm("non_monotonic", "1727385120.05,310\n1727385120.00,300\n", "",
                      "non_monotonic_timestamps", "sorted"));
  v.push_back(charllm("duplicated", "1727385120.00,300\n1727385120.00,300\n", "",
                      "duplicate_timestamps", "dropped"));
  v.push_back(charllm("huge_number", "1e300,300\n", "gpu_power_0.csv:1: expected epoch seconds"));
  v.push_back(charllm("empty", "", "nothing to import"));
  v.push_back(charllm("header_only", "epoch_seconds,value\n", "nothing to import"));
  return v;
}

class TelemetryBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(TelemetryBadInput, GetsItsMessage) {
  checkBadInput(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Corpus, TelemetryBadInput, testing::ValuesIn(cases()),
                         [](const auto& info) { return badInputName(info.param); });

TEST(TelemetryBadInputCorpus, EveryImporterHasEveryKind) {
  checkEveryKindIsCovered(cases());
}

}  // namespace wl::test
}  // namespace wl::test
