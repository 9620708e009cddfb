// SPDX-License-Identifier: GPL-3.0-or-later
// amd-smi metric CSV and Zeus (power monitor, windows): the real files against a reference parse,
// and MI250 GCD pairs on written inputs.

#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <map>

#include "importers_telemetry/telemetry_test_util.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

// Reference CSV split that honours double quotes (amd-smi list cells hold commas).
std::vector<std::string> splitQuoted(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

TEST(AmdSmiCsv, EightGpuExcerptMatchesReferenceParse) {
  const auto path = kTelemetryData / "amd-smi-metric-8gpu-excerpt.csv";
  EXPECT_EQ(detectedFormat(path), "amd-smi-csv");
  const import::ImportedData d = importWith("amd-smi-csv", path);

  const auto lines = readLines(path);
  const auto header = splitQuoted(lines[0]);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i)
    col[header[i]] = i;
  std::map<int, std::vector<std::vector<std::string>>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto f = splitQuoted(lines[i]);
    ASSERT_EQ(f.size(), header.size());
    rows[std::stoi(f[col["gpu"]])].push_back(f);
  }
  ASSERT_EQ(d.gpus.size(), rows.size());
  ASSERT_EQ(d.gpus.size(), 8u);
  for (const auto& [g, rs] : rows) {
    const import::ImportedGpu* gpu = gpuByIndex(d, g);
    ASSERT_NE(gpu, nullptr);
    ASSERT_EQ(gpu->table.size(), rs.size());
    for (size_t r = 0; r < rs.size(); ++r) {
      const auto& f = rs[r];
      EXPECT_EQ(gpu->table.t_ns[r], std::stoll(f[col["timestamp"]]) * 1'000'000'000);
      EXPECT_DOUBLE_EQ(column(*gpu, "power_w").values[r], std::stod(f[col["socket_power"]]));
      EXPECT_DOUBLE_EQ(column(*gpu, "util_pct").values[r], std::stod(f[col["gfx_activity"]]));
      EXPECT_DOUBLE_EQ(column(*gpu, "hotspot_temp_c").values[r], std::stod(f[col["hotspot"]]));
      EXPECT_DOUBLE_EQ(column(*gpu, "mem_temp_c").values[r], std::stod(f[col["mem"]]));
      // edge is N/A on this GPU: temp_c is the hotspot.
      EXPECT_EQ(f[col["edge"]], "N/A");
      EXPECT_DOUBLE_EQ(column(*gpu, "temp_c").values[r], std::stod(f[col["hotspot"]]));
      double sum = 0;
      for (int x = 0; x < 8; ++x)
        sum += std::stod(f[col["gfx_" + std::to_string(x) + "_clk"]]);
      EXPECT_DOUBLE_EQ(column(*gpu, "sm_clock_mhz").values[r], sum / 8);
      EXPECT_DOUBLE_EQ(column(*gpu, "mem_clock_mhz").values[r], std::stod(f[col["mem_0_clk"]]));
      EXPECT_DOUBLE_EQ(column(*gpu, "fclk_0_clk_mhz").values[r], std::stod(f[col["fclk_0_clk"]]));
    }
    EXPECT_FLOAT_EQ(gpu->info.max_sm_clock_mhz, std::stof(rs[0][col["gfx_0_max_clk"]]));
    EXPECT_FLOAT_EQ(gpu->info.max_mem_clock_mhz, std::stof(rs[0][col["mem_0_max_clk"]]));
    EXPECT_EQ(gpu->info.package, -1) << "every GPU reports its own power: no GCD pairs";
    // Text columns (ENABLED / DISABLED) and all-N/A columns are not metrics.
    EXPECT_FALSE(gpu->table.column("power_management"));
    EXPECT_FALSE(gpu->table.column("throttle_status"));
    EXPECT_FALSE(gpu->table.column("vcn_activity"));  // a list of N/A only
  }
  EXPECT_TRUE(hasNote(d.notes, "edge_temperature_missing"));
  EXPECT_FALSE(hasNote(d.notes, "gcd_pairs"));
}

std::string amdCsv(const std::vector<std::string>& powerPerGpu, int samples) {
  std::string s = "timestamp,gpu,gfx_activity,socket_power,gfx_0_clk,gfx_0_max_clk,edge\n";
  for (int k = 0; k < samples; ++k) {
    for (size_t g = 0; g < powerPerGpu.size(); ++g) {
      std::string p = powerPerGpu[g];
      if (p == "ramp") p = std::to_string(200 + 10 * k + static_cast<int>(g));
      if (p == "ramp-pair") p = std::to_string(200 + 10 * k + static_cast<int>(g / 2));
      s +=
          std::to_string(1700000000 + k) + "," + std::to_string(g) + ",50," + p + ",1700,1700,45\n";
    }
    s += "\n";
  }
  return s;
}

TEST(AmdSmiCsv, Mi250PowerOnOneGcdSharesThePackageAndIsCountedOnce) {
  TempDir tmp;
  writeText(tmp / "a.csv", amdCsv({"ramp", "N/A", "ramp", "0"}, 4));
  const import::ImportedData d = importWith("amd-smi-csv", tmp / "a.csv");
  ASSERT_EQ(d.gpus.size(), 4u);
  EXPECT_EQ(d.gpus[0].info.package, 0);
  EXPECT_EQ(d.gpus[1].info.package, 0);
  EXPECT_EQ(d.gpus[2].info.package, 1);
  EXPECT_EQ(d.gpus[3].info.package, 1);
  // Package power stays on GCD 0 / 2; GCD 1 / 3 have none (N/A, and the zeros were made missing).
  EXPECT_EQ(column(d.gpus[0], "power_w").values, (std::vector<double>{200, 210, 220, 230}));
  EXPECT_FALSE(d.gpus[1].table.column("power_w"));
  EXPECT_EQ(finiteCount(column(d.gpus[3], "power_w").values), 0u);
  double sum = 0;
  for (const auto& g : d.gpus)
    if (const TelemetryColumn* p = g.table.column("power_w"))
      for (double v : p->values)
        if (std::isfinite(v)) sum += v;
  EXPECT_DOUBLE_EQ(sum, (200 + 210 + 220 + 230) + (202 + 212 + 222 + 232));
  EXPECT_TRUE(hasNote(d.notes, "gcd_pairs"));
}

TEST(AmdSmiCsv, Mi250DuplicatedPackagePowerIsKeptOnTheFirstGcd) {
  TempDir tmp;
  writeText(tmp / "a.csv", amdCsv({"ramp-pair", "ramp-pair", "ramp-pair", "ramp-pair"}, 5));
  const import::ImportedData d = importWith("amd-smi-csv", tmp / "a.csv");
  EXPECT_EQ(d.gpus[1].info.package, 0);
  EXPECT_FALSE(d.gpus[1].table.column("power_w"));
  EXPECT_FALSE(d.gpus[3].table.column("power_w"));
  EXPECT_EQ(column(d.gpus[2], "power_w").values, (std::vector<double>{201, 211, 221, 231, 241}));
  const QualityNote* n = findNote(d.notes, "gcd_pairs");
  ASSERT_NE(n, nullptr);
  EXPECT_NE(n->message.find("same board power"), std::string::npos) << n->message;
}

TEST(AmdSmiCsv, BadInputs) {
  TempDir tmp;
  const std::string header = "timestamp,gpu,socket_power\n";
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"empty", "", "empty.csv: empty file"},
      {"header_only", header, "header_only.csv:1: a header but no data rows"},
      {"changed", header + "1700000000,0,100\ntimestamp,gpu\n",
       "changed.csv:3: the CSV header changed"},
      {"fields", header + "1700000000,0\n1700000000,0,1\n", "fields.csv:2: expected 3 fields"},
      {"text", header + "1700000000,0,lots\n",
       "text.csv:2: column 'socket_power': expected a number"},
      {"time", header + "later,0,100\n", "time.csv:2: column 'timestamp'"},
  };
  for (const Case& c : cases) {
    writeText(tmp / (c.name + ".csv"), c.text);
    const std::string e = errorMessage([&] { importWith("amd-smi-csv", tmp / (c.name + ".csv")); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.name << ": " << e;
  }
}

TEST(ZeusMonitor, MilliwattsBecomeWatts) {
  const auto path = kTelemetryData / "zeus-monitor-power-mw.csv";
  EXPECT_EQ(detectedFormat(path), "zeus-monitor");
  const import::ImportedData d = importWith("zeus-monitor", path);
  const auto lines = readLines(path);
  ASSERT_EQ(d.gpus.size(), 1u);
  const auto& g = d.gpus[0];
  ASSERT_EQ(g.table.size(), lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto f = split(lines[i], ',');
    EXPECT_DOUBLE_EQ(column(g, "power_w").values[i - 1], std::stod(f[1]) / 1000.0);
    // "2022-07-13 02:07:36.708783111": whole seconds by timegm, nanoseconds from the digits.
    int y, mo, dd, h, mi, s;
    char frac[16] = {};
    ASSERT_EQ(std::sscanf(f[0].c_str(), "%d-%d-%d %d:%d:%d.%9s", &y, &mo, &dd, &h, &mi, &s, frac),
              7);
    std::tm tm{};
    tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = dd, tm.tm_hour = h, tm.tm_min = mi,
    tm.tm_sec = s;
    EXPECT_EQ(g.table.t_ns[i - 1],
              static_cast<int64_t>(timegm(&tm)) * 1'000'000'000 + std::stoll(frac));
  }
  EXPECT_DOUBLE_EQ(finiteRange(column(g, "power_w").values).second, 32.5);
  EXPECT_TRUE(hasNote(d.notes, "local_time_assumed_utc"));
  EXPECT_NEAR(d.sample_interval_s, 0.053, 0.002);
}

TEST(ZeusMonitor, BadInputs) {
  TempDir tmp;
  writeText(tmp / "a.csv", "Time,Power\n2022-07-13 02:07:36.708783111,lots\n");
  EXPECT_NE(errorMessage([&] {
              importWith("zeus-monitor", tmp / "a.csv");
            }).find("a.csv:2: column Power: expected milliwatts, found 'lots'"),
            std::string::npos);
  writeText(tmp / "b.csv", "Time,Power\n");
  EXPECT_NE(errorMessage([&] {
              importWith("zeus-monitor", tmp / "b.csv");
            }).find("b.csv:1: a header but no data rows"),
            std::string::npos);
  writeText(tmp / "c.csv", "Time,Power\n2022-07-13 02:07:36.7,1\nTime,Energy\n");
  EXPECT_NE(errorMessage([&] {
              importWith("zeus-monitor", tmp / "c.csv");
            }).find("c.csv:3: the CSV header changed halfway"),
            std::string::npos);
}

TEST(ZeusWindows, EachWindowIsItsMeanPowerAndAnEnergyStep) {
  const auto path = kTelemetryData / "zeus-windows-4xa40.csv";
  EXPECT_EQ(detectedFormat(path), "zeus-windows");
  const import::ImportedData d = importWith("zeus-windows", path);
  const auto lines = readLines(path);
  const size_t windows = lines.size() - 1;
  ASSERT_EQ(d.gpus.size(), 4u);
  for (int g = 0; g < 4; ++g) {
    const import::ImportedGpu* gpu = gpuByIndex(d, g);
    ASSERT_NE(gpu, nullptr);
    const auto& t = gpu->table.t_ns;
    const auto& p = column(*gpu, "power_w").values;
    const auto& e = column(*gpu, "energy_j").values;
    // Two samples per window plus a NaN sample in each gap (these windows never touch).
    ASSERT_EQ(t.size(), 2 * windows + (windows - 1));
    double total = 0;
    for (size_t w = 0; w < windows; ++w) {
      const auto f = split(lines[w + 1], ',');
      const double start = std::stod(f[0]), len = std::stod(f[2]), energy = std::stod(f[3 + g]);
      const size_t row = 3 * w;
      EXPECT_NEAR(static_cast<double>(t[row]) / 1e9, start, 1e-6);
      EXPECT_NEAR(static_cast<double>(t[row + 1] + 1) / 1e9, start + len, 1e-6);
      EXPECT_NEAR(p[row], energy / len, 1e-7);  // the length is rounded to ns
      EXPECT_NEAR(e[row + 1] - e[row], energy, 1e-6);
      total += energy;
    }
    EXPECT_NEAR(e.back(), total, 1e-6);
    // The trapezoid integral of the power, skipping NaN, is the measured energy.
    double integral = 0;
    for (size_t i = 1; i < t.size(); ++i)
      if (std::isfinite(p[i]) && std::isfinite(p[i - 1]))
        integral += 0.5 * (p[i] + p[i - 1]) * static_cast<double>(t[i] - t[i - 1]) / 1e9;
    EXPECT_NEAR(integral, total, total * 1e-6);
  }
  EXPECT_FALSE(d.absoluteTime);  // time.monotonic() seconds
  EXPECT_TRUE(hasNote(d.notes, "monotonic_clock"));
  EXPECT_TRUE(hasNote(d.notes, "zeus_windows"));
  // With a start time the first window begins there.
  import::ImportOptions opt;
  opt.start_ns = 1'700'000'000LL * 1'000'000'000;
  const import::ImportedData placed = importWith("zeus-windows", path, opt);
  EXPECT_EQ(placed.gpus[0].table.t_ns.front(), *opt.start_ns);
  EXPECT_TRUE(placed.absoluteTime);
}

TEST(ZeusWindows, OverlappingWindowsAreAnError) {
  TempDir tmp;
  writeText(tmp / "w.csv",
            "start_time,window_name,elapsed_time,gpu0_energy\n10.0,a,5.0,100\n12.0,b,5.0,100\n");
  EXPECT_NE(errorMessage([&] {
              importWith("zeus-windows", tmp / "w.csv");
            }).find("w.csv:3: window 'b' starts before window 'a' (line 2) ends"),
            std::string::npos);
  writeText(tmp / "x.csv", "start_time,window_name,elapsed_time,gpu0_energy\n10.0,a,-5.0,100\n");
  EXPECT_NE(errorMessage([&] {
              importWith("zeus-windows", tmp / "x.csv");
            }).find("x.csv:2: column elapsed_time: expected a positive number"),
            std::string::npos);
}

}  // namespace
}  // namespace wl::test
