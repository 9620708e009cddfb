// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi dmon and dcgmi dmon text, and the DCGM long CSV: the real dmon captures against a
// reference parse, the written fixtures against the numbers written in them, and the time rules.

#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <map>
#include <sstream>

#include "importers_telemetry/telemetry_test_util.h"
#include "loaders/core/throttle_reasons.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

constexpr int64_t kSec = 1'000'000'000;

// Reference: the data rows of a dmon file as whitespace-split tokens (comment lines skipped).
std::vector<std::vector<std::string>> dmonRows(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : readLines(path)) {
    std::istringstream in(line);
    std::vector<std::string> tok;
    for (std::string t; in >> t;)
      tok.push_back(t);
    if (tok.empty() || tok[0][0] == '#') continue;
    rows.push_back(tok);
  }
  return rows;
}

class DmonCapture : public ::testing::TestWithParam<std::string> {};

TEST_P(DmonCapture, RowsAreOneSecondApartFromTheStartAndMatchTheReference) {
  const auto path = kTelemetryData / ("nvidia-smi-" + GetParam() + "-dmon.txt");
  EXPECT_EQ(detectedFormat(path), "nvidia-smi-dmon");
  import::ImportOptions opt;
  opt.start_ns = utcNs(2026, 7, 14, 8, 12, 0);
  const import::ImportedData d = importWith("nvidia-smi-dmon", path, opt);
  const auto rows = dmonRows(path);  // gpu pwr gtemp mtemp sm mem enc dec jpg ofa mclk pclk
  ASSERT_EQ(rows.size(), 10u);
  ASSERT_EQ(d.gpus.size(), 1u);
  const import::ImportedGpu& g = d.gpus[0];
  ASSERT_EQ(g.table.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(g.table.t_ns[i], *opt.start_ns + static_cast<int64_t>(i) * kSec);
    EXPECT_DOUBLE_EQ(column(g, "power_w").values[i], std::stod(rows[i][1]));
    EXPECT_DOUBLE_EQ(column(g, "temp_c").values[i], std::stod(rows[i][2]));
    EXPECT_DOUBLE_EQ(column(g, "mem_temp_c").values[i], std::stod(rows[i][3]));
    EXPECT_DOUBLE_EQ(column(g, "util_pct").values[i], std::stod(rows[i][4]));
    EXPECT_DOUBLE_EQ(column(g, "mem_clock_mhz").values[i], std::stod(rows[i][10]));
    EXPECT_DOUBLE_EQ(column(g, "sm_clock_mhz").values[i], std::stod(rows[i][11]));
  }
  EXPECT_TRUE(g.table.column("enc_pct"));  // unmapped columns keep name and unit
  EXPECT_TRUE(d.absoluteTime);
  EXPECT_TRUE(hasNote(d.notes, "dmon_no_timestamps"));
  // Without a start time the times are relative.
  EXPECT_FALSE(importWith("nvidia-smi-dmon", path).absoluteTime);
}

INSTANTIATE_TEST_SUITE_P(H100AndH200, DmonCapture, ::testing::Values("h100", "h200"));

TEST(NvidiaSmiDmon, DateAndTimeColumnsCrossMidnight) {
  const auto path = kTelemetryData / "nvidia-smi-dmon-odt-2gpu.txt";
  EXPECT_EQ(detectedFormat(path), "nvidia-smi-dmon");
  import::ImportOptions opt;
  opt.utc_offset_s = -5 * 3600;  // the machine ran at UTC-5
  const import::ImportedData d = importWith("nvidia-smi-dmon", path, opt);
  ASSERT_EQ(d.gpus.size(), 2u);
  const int64_t off = 5 * 3600 * kSec;
  EXPECT_EQ(d.gpus[0].table.t_ns,
            (std::vector<int64_t>{
                utcNs(2025, 9, 24, 23, 59, 58) + off, utcNs(2025, 9, 24, 23, 59, 59) + off,
                utcNs(2025, 9, 25, 0, 0, 0) + off, utcNs(2025, 9, 25, 0, 0, 1) + off}));
  EXPECT_EQ(column(d.gpus[0], "power_w").values, (std::vector<double>{402, 650, 655, 88}));
  EXPECT_EQ(column(d.gpus[1], "sm_clock_mhz").values, (std::vector<double>{1965, 1770, 1755, 345}));
  // GPU 1's memory temperature is "-" throughout: no column.
  EXPECT_FALSE(d.gpus[1].table.column("mem_temp_c"));
  const auto& enc = column(d.gpus[1], "enc_pct").values;
  EXPECT_TRUE(std::isnan(enc[2]));
  EXPECT_FALSE(hasNote(d.notes, "local_time_assumed_utc"));
}

TEST(NvidiaSmiDmon, TimeOnlyTakesTheDateOfTheStartAndAdvancesAtMidnight) {
  TempDir tmp;
  // The -o DT fixture without its date column (as dmon -o T writes it).
  std::string text;
  for (const std::string& line : readLines(kTelemetryData / "nvidia-smi-dmon-odt-2gpu.txt")) {
    std::istringstream in(line);
    std::vector<std::string> tok;
    for (std::string t; in >> t;)
      tok.push_back(t);
    std::string out;
    for (size_t i = 0; i < tok.size(); ++i)
      if (i != 0) out += (out.empty() ? "" : "  ") + tok[i];
    text += (tok[0][0] == '#' ? "#" : " ") + out + "\n";
  }
  writeText(tmp / "t.txt", text);
  import::ImportOptions opt;
  opt.start_ns = utcNs(2025, 9, 24, 23, 59, 0);  // UTC machine (no offset given)
  const import::ImportedData d = importWith("nvidia-smi-dmon", tmp / "t.txt", opt);
  EXPECT_EQ(d.gpus[0].table.t_ns,
            (std::vector<int64_t>{utcNs(2025, 9, 24, 23, 59, 58), utcNs(2025, 9, 24, 23, 59, 59),
                                  utcNs(2025, 9, 25, 0, 0, 0), utcNs(2025, 9, 25, 0, 0, 1)}));
  EXPECT_TRUE(hasNote(d.notes, "local_time_assumed_utc"));
  // Without a start: times of day, relative.
  const import::ImportedData rel = importWith("nvidia-smi-dmon", tmp / "t.txt");
  EXPECT_FALSE(rel.absoluteTime);
  EXPECT_EQ(rel.gpus[0].table.t_ns.front(), (23 * 3600 + 59 * 60 + 58) * kSec);
  EXPECT_TRUE(hasNote(rel.notes, "dmon_time_of_day_only"));
}

TEST(NvidiaSmiDmon, BadInputs) {
  TempDir tmp;
  const std::string header = "# gpu    pwr  gtemp\n# Idx      W      C\n";
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"empty", "", "empty.txt: empty file"},
      {"header_only", header, "header_only.txt:1: a dmon header but no data rows"},
      {"changed", header + "    0     69     41\n# gpu    pwr\n# Idx      W\n    0     70\n",
       "changed.txt:4: the dmon header changed halfway"},
      {"columns", header + "    0     69     41\n    0     70\n",
       "columns.txt:4: expected 3 columns"},
      {"text", header + "    0     high     41\n",
       "text.txt:3: column 'pwr': expected a number or '-', found 'high'"},
  };
  for (const Case& c : cases) {
    writeText(tmp / (c.name + ".txt"), c.text);
    const std::string e =
        errorMessage([&] { importWith("nvidia-smi-dmon", tmp / (c.name + ".txt")); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.name << ": " << e;
  }
}

TEST(DcgmDmon, RowsAtTheGivenIntervalWithUnitsScaledAndBlanksMissing) {
  const auto path = kTelemetryData / "dcgm-dmon-2gpu.txt";
  EXPECT_EQ(detectedFormat(path), "dcgm-dmon");
  // The interval is required.
  const std::string e = errorMessage([&] { importWith("dcgm-dmon", path); });
  EXPECT_NE(e.find("dcgm-dmon-2gpu.txt: dcgmi dmon text has no timestamps"), std::string::npos)
      << e;
  EXPECT_NE(e.find("--dcgm-interval-ms"), std::string::npos) << e;

  import::ImportOptions opt;
  opt.dcgm_interval_ms = 100;
  opt.start_ns = utcNs(2025, 1, 1, 0, 0, 0);
  const import::ImportedData d = importWith("dcgm-dmon", path, opt);
  ASSERT_EQ(d.gpus.size(), 2u);
  const auto& g0 = d.gpus[0];
  const auto& g1 = d.gpus[1];
  ASSERT_EQ(g0.table.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(g0.table.t_ns[i], *opt.start_ns + static_cast<int64_t>(i) * 100'000'000);
  // Numbers as written in the fixture.
  EXPECT_EQ(column(g0, "power_w").values, (std::vector<double>{120.5, 410.25, 695.0, 330.0}));
  EXPECT_EQ(column(g0, "energy_j").values, (std::vector<double>{1000, 1040, 1110, 1150}));  // mJ
  EXPECT_EQ(column(g0, "sm_clock_mhz").values, (std::vector<double>{1980, 1755, 1410, 1980}));
  EXPECT_EQ(g0.table.throttle_reasons,
            (std::vector<uint32_t>{0, throttle::kSwPowerCap,
                                   throttle::kSwPowerCap | throttle::kHwThermal, 0}));  // 68
  EXPECT_DOUBLE_EQ(column(g0, "sm_active_pct").values[1], 95.0);  // ratio 0.95
  EXPECT_DOUBLE_EQ(column(g0, "tensor_active_pct").values[2], 81.0);
  EXPECT_TRUE(std::isnan(column(g1, "power_w").values[2]));  // N/A
  EXPECT_EQ(g1.table.throttle_reasons[2], throttle::kUnknown);
  EXPECT_DOUBLE_EQ(d.sample_interval_s, 0.1);
}

TEST(DcgmDmon, BadInputs) {
  TempDir tmp;
  import::ImportOptions opt;
  opt.dcgm_interval_ms = 1000;
  const std::string header = "#Entity   POWER   TMPTR\nID        W       C\n";
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"header_only", header, "header_only.txt:1: a dcgmi dmon header but no GPU rows"},
      {"changed", header + "GPU 0 1 2\n#Entity POWER\nGPU 0 1\n",
       "changed.txt:4: the dcgmi dmon header changed halfway"},
      {"tokens", header + "GPU 0 1 2\nGPU 0 1\n", "tokens.txt:4: expected an entity"},
      {"text", header + "GPU 0 hot 2\n", "text.txt:3: column 'POWER': expected a number or N/A"},
      {"entity", header + "GPU x 1 2\n", "entity.txt:3: expected a GPU id after 'GPU'"},
  };
  for (const Case& c : cases) {
    writeText(tmp / (c.name + ".txt"), c.text);
    const std::string e =
        errorMessage([&] { importWith("dcgm-dmon", tmp / (c.name + ".txt"), opt); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.name << ": " << e;
  }
  opt.dcgm_interval_ms = -5;
  writeText(tmp / "ok.txt", header + "GPU 0 1 2\n");
  EXPECT_NE(errorMessage([&] {
              importWith("dcgm-dmon", tmp / "ok.txt", opt);
            }).find("interval must be between"),
            std::string::npos);
}

TEST(DcgmCsv, LongRowsMergeIntoOneRowPerSamplingTime) {
  const auto path = kTelemetryData / "dcgm-long-2gpu.csv";
  EXPECT_EQ(detectedFormat(path), "dcgm-csv");
  const import::ImportedData d = importWith("dcgm-csv", path);
  ASSERT_EQ(d.gpus.size(), 2u);
  // Reference: group the fixture's rows by GPU and by 100 ms sampling time.
  std::map<int, std::map<int64_t, std::map<std::string, std::string>>> ref;
  const auto lines = readLines(path);
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto f = split(lines[i], ',');
    const int64_t us = std::stoll(f[1]);
    ref[std::stoi(f[0])][us / 100'000][f[2]] = f[3];
  }
  for (const auto& [g, byTime] : ref) {
    const import::ImportedGpu* gpu = gpuByIndex(d, g);
    ASSERT_NE(gpu, nullptr);
    ASSERT_EQ(gpu->table.size(), byTime.size()) << "one row per sampling time";
    size_t row = 0;
    for (const auto& [slot, fields] : byTime) {
      EXPECT_EQ(gpu->table.t_ns[row], slot * 100'000 * 1000) << "row stamped with its first value";
      auto num = [&](const std::string& field) {
        const std::string& v = fields.at(field);
        return v == "N/A" || v == "2147483632" ? NAN : std::stod(v);
      };
      auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
      EXPECT_TRUE(same(column(*gpu, "power_w").values[row], num("155"))) << g << " " << row;
      EXPECT_TRUE(same(column(*gpu, "temp_c").values[row], num("150"))) << g << " " << row;
      EXPECT_NEAR(column(*gpu, "energy_j").values[row], num("156") / 1000.0, 1e-9);  // mJ
      EXPECT_EQ(gpu->table.throttle_reasons[row],
                static_cast<uint32_t>(std::stoul(fields.at("112"))));
      ++row;
    }
  }
  const QualityNote* blank = findNote(d.notes, "dcgm_blank_values");
  ASSERT_NE(blank, nullptr);
  EXPECT_NE(blank->message.find("dcgm-long-2gpu.csv:18"), std::string::npos) << blank->message;
  EXPECT_DOUBLE_EQ(d.sample_interval_s, 0.1);
}

TEST(DcgmCsv, BadInputs) {
  TempDir tmp;
  const std::string header = "GPUId,TimeStampUs,Field,Values\n";
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"empty", "", "empty.csv: empty file"},
      {"header_only", header, "header_only.csv:1: a header but no data rows"},
      {"changed", header + "0,1000,155,1\nGPUId,TimeStampUs,Field,Values,Extra\n",
       "changed.csv:3: the CSV header changed halfway"},
      {"fields", header + "0,1000,155\n0,1000,155,1\n", "fields.csv:2: expected 4 fields"},
      {"value", header + "0,1000,155,lots\n", "value.csv:2: column Values: expected a number"},
      {"time", header + "0,soon,155,1\n", "time.csv:2: column TimeStampUs"},
  };
  for (const Case& c : cases) {
    writeText(tmp / (c.name + ".csv"), c.text);
    const std::string e = errorMessage([&] { importWith("dcgm-csv", tmp / (c.name + ".csv")); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.name << ": " << e;
  }
}

}  // namespace
}  // namespace wl::test
