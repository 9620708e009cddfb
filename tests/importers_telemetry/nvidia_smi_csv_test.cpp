// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi --query-gpu CSV: the real files (nanoGPT's 8-GPU log, the H100 / H200 exporter
// captures) against numbers read from the same files by a separate reference parser here, and
// every variant and bad input the importer must handle.

#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>

#include "importers_telemetry/telemetry_test_util.h"
#include "loaders/core/error.h"
#include "loaders/core/throttle_reasons.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

// Reference: "2025-09-24T03:41:43.487Z" -> ns, via sscanf and timegm.
int64_t isoToNs(const std::string& s) {
  int y, mo, d, h, mi;
  double sec;
  EXPECT_EQ(std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%lfZ", &y, &mo, &d, &h, &mi, &sec), 6) << s;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  const int64_t whole = static_cast<int64_t>(timegm(&tm));
  return whole * 1'000'000'000 + std::llround(sec * 1e9);
}

// Reference: "2026/07/14 08:12:38.696" -> ns as if UTC.
int64_t slashToNs(const std::string& s) {
  int y, mo, d, h, mi;
  double sec;
  EXPECT_EQ(std::sscanf(s.c_str(), "%d/%d/%d %d:%d:%lf", &y, &mo, &d, &h, &mi, &sec), 6) << s;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  return static_cast<int64_t>(timegm(&tm)) * 1'000'000'000 + std::llround(sec * 1e9);
}

std::string trimmed(std::string s) {
  while (!s.empty() && s.front() == ' ')
    s.erase(s.begin());
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s;
}

TEST(NvidiaSmiCsv, NanoGptEightGpuLogMatchesReferenceParse) {
  const auto path = kTelemetryData / "nanogpt-8gpu-h100class-nvidia-smi.csv.gz";
  EXPECT_EQ(detectedFormat(path), "nvidia-smi-csv");
  const import::ImportedData d = importWith("nvidia-smi-csv", path);

  // Reference: split each line on commas; columns timestamp, gpu_index, temperature_C,
  // utilization_gpu_percent, power_W.
  struct Ref {
    size_t n = 0;
    double pmin = 1e300, pmax = -1e300, tmin = 1e300, tmax = -1e300;
    int64_t first = 0, last = 0;
  };
  std::map<int, Ref> ref;
  const auto lines = readLines(path);
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto f = split(lines[i], ',');
    ASSERT_EQ(f.size(), 5u) << lines[i];
    Ref& r = ref[std::stoi(f[1])];
    const double p = std::stod(f[4]), t = std::stod(f[2]);
    if (r.n == 0) r.first = isoToNs(f[0]);
    r.last = isoToNs(f[0]);
    ++r.n;
    r.pmin = std::min(r.pmin, p), r.pmax = std::max(r.pmax, p);
    r.tmin = std::min(r.tmin, t), r.tmax = std::max(r.tmax, t);
  }
  ASSERT_EQ(d.gpus.size(), ref.size());
  ASSERT_EQ(d.gpus.size(), 8u);
  for (const auto& [g, r] : ref) {
    const import::ImportedGpu* gpu = gpuByIndex(d, g);
    ASSERT_NE(gpu, nullptr) << g;
    EXPECT_EQ(gpu->table.size(), r.n) << "gpu " << g;
    const auto [pmin, pmax] = finiteRange(column(*gpu, "power_w").values);
    EXPECT_DOUBLE_EQ(pmin, r.pmin) << "gpu " << g;
    EXPECT_DOUBLE_EQ(pmax, r.pmax) << "gpu " << g;
    const auto [tmin, tmax] = finiteRange(column(*gpu, "temp_c").values);
    EXPECT_DOUBLE_EQ(tmin, r.tmin);
    EXPECT_DOUBLE_EQ(tmax, r.tmax);
    EXPECT_EQ(gpu->table.t_ns.front(), r.first);
    EXPECT_EQ(gpu->table.t_ns.back(), r.last);
    EXPECT_TRUE(gpu->table.column("util_pct"));
    EXPECT_TRUE(gpu->table.throttle_reasons.empty());
  }
  // ISO timestamps with Z: no local-time note; ~266 s of data.
  EXPECT_FALSE(hasNote(d.notes, "local_time_assumed_utc"));
  const double span = static_cast<double>(ref[0].last - ref[0].first) / 1e9;
  EXPECT_GT(span, 260.0);
  EXPECT_LT(span, 270.0);
  EXPECT_GT(d.sample_interval_s, 0.2);
  EXPECT_LT(d.sample_interval_s, 0.5);
}

// The exporter captures: two query-gpu sections (idle, load), each a header and one row.
class Capture : public ::testing::TestWithParam<std::string> {};

TEST_P(Capture, QueryCsvMatchesReferenceParse) {
  const auto path = kTelemetryData / ("nvidia-smi-" + GetParam() + "-query.csv");
  EXPECT_EQ(detectedFormat(path), "nvidia-smi-csv");
  const import::ImportedData d = importWith("nvidia-smi-csv", path);

  // Reference: split on ", ", index the header, read the two data rows.
  const auto lines = readLines(path);
  ASSERT_EQ(lines.size(), 4u);
  const auto header = split(lines[0], ',');
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (trimmed(header[i]) == name) return i;
    ADD_FAILURE() << name;
    return size_t{0};
  };
  std::vector<std::vector<std::string>> rows = {split(lines[1], ','), split(lines[3], ',')};
  auto number = [](const std::string& cell) { return std::stod(trimmed(cell)); };

  ASSERT_EQ(d.gpus.size(), 1u);
  const import::ImportedGpu& g = d.gpus[0];
  ASSERT_EQ(g.table.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(g.table.t_ns[r], slashToNs(trimmed(rows[r][col("timestamp")])));
    EXPECT_DOUBLE_EQ(column(g, "power_w").values[r], number(rows[r][col("power.draw [W]")]));
    EXPECT_DOUBLE_EQ(column(g, "temp_c").values[r], number(rows[r][col("temperature.gpu")]));
    EXPECT_DOUBLE_EQ(column(g, "mem_temp_c").values[r], number(rows[r][col("temperature.memory")]));
    EXPECT_DOUBLE_EQ(column(g, "sm_clock_mhz").values[r],
                     number(rows[r][col("clocks.current.sm [MHz]")]));
    EXPECT_DOUBLE_EQ(column(g, "util_pct").values[r], number(rows[r][col("utilization.gpu [%]")]));
    const double used = number(rows[r][col("memory.used [MiB]")]);
    const double total = number(rows[r][col("memory.total [MiB]")]);
    EXPECT_DOUBLE_EQ(column(g, "mem_used_pct").values[r], used / total * 100.0);
    const uint32_t mask = static_cast<uint32_t>(
        std::stoul(trimmed(rows[r][col("clocks_event_reasons.active")]), nullptr, 16));
    EXPECT_EQ(g.table.throttle_reasons[r], mask);
  }
  // Idle shows the GPU-idle reason, load shows none (read off the capture).
  EXPECT_EQ(g.table.throttle_reasons[0], throttle::kGpuIdle);
  EXPECT_EQ(g.table.throttle_reasons[1], 0u);
  EXPECT_EQ(g.info.device_name, trimmed(rows[0][col("name")]));
  EXPECT_EQ(g.info.uuid, trimmed(rows[0][col("uuid")]));
  EXPECT_FLOAT_EQ(g.info.power_limit_w, 700.0f);
  EXPECT_FLOAT_EQ(g.info.max_sm_clock_mhz, 1980.0f);
  EXPECT_EQ(d.platform, GetParam() == "h100" ? "H100" : "H200");
  // "[N/A]" fields (module.power.*) never become columns; deprecated-field strings do not either.
  EXPECT_FALSE(g.table.column("module_power_draw_average_w"));
  EXPECT_FALSE(g.table.column("clocks_applications_graphics_mhz"));
  // Local time without a zone: read as UTC with a note, or shifted by the given offset.
  EXPECT_TRUE(hasNote(d.notes, "local_time_assumed_utc"));
  import::ImportOptions opt;
  opt.utc_offset_s = 2 * 3600;
  const import::ImportedData shifted = importWith("nvidia-smi-csv", path, opt);
  EXPECT_EQ(shifted.gpus[0].table.t_ns[0], g.table.t_ns[0] - 7200LL * 1'000'000'000);
  EXPECT_FALSE(hasNote(shifted.notes, "local_time_assumed_utc"));
}

INSTANTIATE_TEST_SUITE_P(H100AndH200, Capture, ::testing::Values("h100", "h200"));

TEST(NvidiaSmiCsv, NoIndexColumnAssignsGpusByBurstPositionAndReasonFlags) {
  TempDir tmp;
  // nounits, no index, per-reason fields instead of the mask, old field names.
  writeText(tmp / "q.csv",
            "timestamp, power.draw, clocks.sm, clocks_throttle_reasons.sw_power_cap, "
            "clocks_throttle_reasons.hw_thermal_slowdown\n"
            "2024/01/02 03:04:05.100, 100.5, 1980, Not Active, Not Active\n"
            "2024/01/02 03:04:05.100, 200.5, 1980, Active, Not Active\n"
            "2024/01/02 03:04:05.100, 300.5, 1755, Active, Active\n"
            "2024/01/02 03:04:06.100, 101.5, 1980, Not Active, Not Active\n"
            "2024/01/02 03:04:06.100, 201.5, 1965, [N/A], [N/A]\n"
            "2024/01/02 03:04:06.100, 301.5, 1740, Not Active, Active\n");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  ASSERT_EQ(d.gpus.size(), 3u);
  for (int g = 0; g < 3; ++g) {
    const auto* gpu = gpuByIndex(d, g);
    ASSERT_NE(gpu, nullptr);
    EXPECT_EQ(column(*gpu, "power_w").values,
              (std::vector<double>{100.5 + 100 * g, 101.5 + 100 * g}));
  }
  EXPECT_EQ(gpuByIndex(d, 0)->table.throttle_reasons, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(gpuByIndex(d, 1)->table.throttle_reasons,
            (std::vector<uint32_t>{throttle::kSwPowerCap, throttle::kUnknown}));
  EXPECT_EQ(
      gpuByIndex(d, 2)->table.throttle_reasons,
      (std::vector<uint32_t>{throttle::kSwPowerCap | throttle::kHwThermal, throttle::kHwThermal}));
  EXPECT_TRUE(hasNote(d.notes, "gpu_by_position"));
}

TEST(NvidiaSmiCsv, OldMaskFieldNameUuidKeysAndIsoOffsets) {
  TempDir tmp;
  writeText(tmp / "q.csv",
            "timestamp,uuid,power.draw [W],clocks_throttle_reasons.active\n"
            "2024-01-02T03:04:05.250+02:00,GPU-b,50.00 W,0x0000000000000040\n"
            "2024-01-02T03:04:05.250+02:00,GPU-a,60.00 W,0x0000000000000004\n"
            "2024-01-02T03:04:06.250+02:00,GPU-a,61.00 W,[N/A]\n");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  ASSERT_EQ(d.gpus.size(), 2u);
  const auto& b = d.gpus[0];  // first seen
  const auto& a = d.gpus[1];
  EXPECT_EQ(b.info.uuid, "GPU-b");
  EXPECT_EQ(a.info.uuid, "GPU-a");
  EXPECT_EQ(b.table.throttle_reasons, (std::vector<uint32_t>{throttle::kHwThermal}));
  EXPECT_EQ(a.table.throttle_reasons,
            (std::vector<uint32_t>{throttle::kSwPowerCap, throttle::kUnknown}));
  // 03:04:05.25 at +02:00 is 01:04:05.25 UTC.
  std::tm tm{};
  tm.tm_year = 124, tm.tm_mon = 0, tm.tm_mday = 2, tm.tm_hour = 1, tm.tm_min = 4, tm.tm_sec = 5;
  EXPECT_EQ(a.table.t_ns[0], static_cast<int64_t>(timegm(&tm)) * 1'000'000'000 + 250'000'000);
  EXPECT_FALSE(hasNote(d.notes, "local_time_assumed_utc"));
}

TEST(NvidiaSmiCsv, NoHeaderIsANamedError) {
  TempDir tmp;
  writeText(tmp / "q.csv", "2024/01/02 03:04:05.100, 0, 69.32 W, 1980 MHz\n");
  EXPECT_EQ(detectedFormat(tmp / "q.csv"), "nvidia-smi-csv");
  const std::string e = errorMessage([&] { importWith("nvidia-smi-csv", tmp / "q.csv"); });
  EXPECT_NE(e.find("q.csv:1: no header line"), std::string::npos) << e;
  EXPECT_NE(e.find("noheader"), std::string::npos) << e;
}

TEST(NvidiaSmiCsv, BadInputsGetOneLineMessagesWithFileAndLine) {
  TempDir tmp;
  const std::string header = "timestamp, index, power.draw [W], temperature.gpu\n";
  const std::string row1 = "2024/01/02 03:04:05.100, 0, 69.32 W, 40\n";
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"empty", "", "empty.csv: empty file"},
      {"blank", "\n\n", "blank.csv: empty file"},
      {"header_only", header, "header_only.csv:1: a header but no data rows"},
      {"header_change",
       header + row1 + "timestamp, index, power.draw [W]\n" +
           "2024/01/02 03:04:06.100, 0, 70.0 W\n",
       "header_change.csv:3: the CSV header changed halfway"},
      {"field_count", header + row1 + "2024/01/02 03:04:06.100, 0, 70.0 W\n" + row1,
       "field_count.csv:3: expected 4 fields as in the header, found 3"},
      {"not_a_number", header + "2024/01/02 03:04:05.100, 0, abc, 40\n",
       "not_a_number.csv:2: column 'power.draw [W]': expected a number, found 'abc'"},
      {"bad_time", header + "yesterday, 0, 69.32 W, 40\n",
       "bad_time.csv:2: timestamp 'yesterday' is not a date and time"},
      {"bad_index", header + "2024/01/02 03:04:05.100, x, 69.32 W, 40\n",
       "bad_index.csv:2: column 'index': expected a GPU index"},
      {"no_timestamp", "index, power.draw [W]\n0, 69.32 W\n",
       "no_timestamp.csv:1: no 'timestamp' column"},
  };
  for (const Case& c : cases) {
    const auto path = tmp / (c.name + ".csv");
    writeText(path, c.text);
    const std::string e = errorMessage([&] { importWith("nvidia-smi-csv", path); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.name << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << c.name;
    EXPECT_EQ(e.rfind((tmp / c.name).string(), 0), 0u) << "names the file: " << e;
  }
}

TEST(NvidiaSmiCsv, NanAndInfAreMissingWithANote) {
  TempDir tmp;
  writeText(tmp / "q.csv",
            "timestamp, index, power.draw [W]\n"
            "2024/01/02 03:04:05.100, 0, 69.32 W\n"
            "2024/01/02 03:04:06.100, 0, nan\n"
            "2024/01/02 03:04:07.100, 0, inf W\n"
            "2024/01/02 03:04:08.100, 0, 70.5 W\n");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  const auto& p = column(d.gpus[0], "power_w").values;
  ASSERT_EQ(p.size(), 4u);
  EXPECT_TRUE(std::isnan(p[1]));
  EXPECT_TRUE(std::isnan(p[2]));
  EXPECT_DOUBLE_EQ(p[3], 70.5);
  const QualityNote* n = findNote(d.notes, "non_finite_values");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->message.find("2 NaN or infinite values"), std::string::npos) << n->message;
  EXPECT_NE(n->message.find("q.csv:3"), std::string::npos) << n->message;
}

TEST(NvidiaSmiCsv, TruncatedLastLineIsSkippedWithANote) {
  TempDir tmp;
  writeText(tmp / "q.csv",
            "timestamp, index, power.draw [W], temperature.gpu\n"
            "2024/01/02 03:04:05.100, 0, 69.32 W, 40\n"
            "2024/01/02 03:04:06.100, 0, 7");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  EXPECT_EQ(d.gpus[0].table.size(), 1u);
  const QualityNote* n = findNote(d.notes, "truncated_last_line");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->message.find("q.csv:3"), std::string::npos) << n->message;
}

TEST(NvidiaSmiCsv, DecreasingAndDuplicateTimestampsAreRepairedByTheWriterWithNotes) {
  TempDir tmp;
  writeText(tmp / "q.csv",
            "timestamp, index, power.draw [W]\n"
            "2024/01/02 03:04:05.000, 0, 100 W\n"
            "2024/01/02 03:04:07.000, 0, 300 W\n"
            "2024/01/02 03:04:06.000, 0, 200 W\n"  // goes backwards
            "2024/01/02 03:04:07.000, 0, 301 W\n"  // repeats 07.000
            "2024/01/02 03:04:08.000, 0, 400 W\n");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  // The importer keeps the rows as written; the writer sorts and drops the duplicate.
  EXPECT_EQ(d.gpus[0].table.size(), 5u);
  const auto run = writeRun(d, tmp / "run.h5");
  EXPECT_TRUE(hasNote(run->quality(), "non_monotonic_timestamps"));
  EXPECT_TRUE(hasNote(run->quality(), "duplicate_timestamps"));
  const Samples s = run->readAllSamples(SeriesKind::Gpu, 0, "power_w");
  ASSERT_EQ(s.v.size(), 4u);
  EXPECT_TRUE(std::is_sorted(s.t_ns.begin(), s.t_ns.end()));
  EXPECT_DOUBLE_EQ(s.v[1], 200.0);
  EXPECT_DOUBLE_EQ(s.v[2], 300.0);  // the first of the two 07.000 rows is kept
}

TEST(NvidiaSmiCsv, HugeValuesReachTheRunWithAnOutOfRangeNote) {
  TempDir tmp;
  writeText(tmp / "q.csv",
            "timestamp, index, power.draw [W], temperature.gpu\n"
            "2024/01/02 03:04:05.000, 0, 100 W, 40\n"
            "2024/01/02 03:04:06.000, 0, 1e30 W, 41\n"
            "2024/01/02 03:04:07.000, 0, 110 W, 1e300\n");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  const auto run = writeRun(d, tmp / "run.h5");
  size_t outOfRange = 0;
  for (const QualityNote& n : run->quality())
    if (n.code == "out_of_range") ++outOfRange;
  EXPECT_EQ(outOfRange, 2u);  // power and temperature
}

TEST(NvidiaSmiCsv, RepeatedIdenticalHeaderIsSkipped) {
  TempDir tmp;
  const std::string header = "timestamp, index, power.draw [W]\n";
  writeText(tmp / "q.csv", header + "2024/01/02 03:04:05.000, 0, 100 W\n" + header +
                               "2024/01/02 03:04:06.000, 0, 110 W\n");
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "q.csv");
  EXPECT_EQ(column(d.gpus[0], "power_w").values, (std::vector<double>{100, 110}));
}

TEST(NvidiaSmiCsv, TruncatedGzipIsANamedError) {
  TempDir tmp;
  const auto src = kTelemetryData / "nanogpt-8gpu-h100class-nvidia-smi.csv.gz";
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  writeText(tmp / "cut.csv.gz", bytes.substr(0, bytes.size() / 2));
  const std::string e = errorMessage([&] { importWith("nvidia-smi-csv", tmp / "cut.csv.gz"); });
  EXPECT_EQ(e.rfind((tmp / "cut.csv.gz").string() + ": read error after", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(NvidiaSmiCsv, ReportsProgressAndStopsWhenCancelled) {
  TempDir tmp;
  std::string text = "timestamp, index, power.draw [W]\n";
  for (int i = 0; i < 200000; ++i)
    text += "2024/01/02 03:04:05.100, " + std::to_string(i % 8) + ", 100 W\n";
  writeText(tmp / "big.csv", text);
  std::vector<double> seen;
  const Progress record([&](double f, std::string_view) {
    seen.push_back(f);
    return true;
  });
  import::findImporter("nvidia-smi-csv")->read(tmp / "big.csv", {}, record);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  const Progress cancel([](double, std::string_view) { return false; });
  EXPECT_THROW(import::findImporter("nvidia-smi-csv")->read(tmp / "big.csv", {}, cancel),
               Cancelled);
}

}  // namespace
}  // namespace wl::test
