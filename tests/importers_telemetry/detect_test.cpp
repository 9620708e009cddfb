// SPDX-License-Identifier: GPL-3.0-or-later
// Content detection picks the right telemetry importer for every fixture, and every importer
// given another format's input (what --format NAME does) stops with a one-line error that names
// the file, instead of importing nonsense or crashing.

#include <gtest/gtest.h>

#include <map>

#include "importers_telemetry/telemetry_test_util.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

const std::map<std::string, std::string>& fixtures() {
  static const std::map<std::string, std::string> m = {
      {"nanogpt-8gpu-h100class-nvidia-smi.csv.gz", "nvidia-smi-csv"},
      {"nvidia-smi-h100-query.csv", "nvidia-smi-csv"},
      {"nvidia-smi-h200-query.csv", "nvidia-smi-csv"},
      {"nvidia-smi-h100-dmon.txt", "nvidia-smi-dmon"},
      {"nvidia-smi-h200-dmon.txt", "nvidia-smi-dmon"},
      {"nvidia-smi-dmon-odt-2gpu.txt", "nvidia-smi-dmon"},
      {"dcgm-dmon-2gpu.txt", "dcgm-dmon"},
      {"dcgm-long-2gpu.csv", "dcgm-csv"},
      {"amd-smi-metric-8gpu-excerpt.csv", "amd-smi-csv"},
      {"zeus-monitor-power-mw.csv", "zeus-monitor"},
      {"zeus-windows-4xa40.csv", "zeus-windows"},
  };
  return m;
}

TEST(TelemetryDetection, EveryFixtureIsDetectedAsItsFormatAndImports) {
  size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kTelemetryData)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".LICENSE") != std::string::npos) continue;
    ++seen;
    const auto it = fixtures().find(name);
    ASSERT_NE(it, fixtures().end()) << "fixture without an expected format: " << name;
    EXPECT_EQ(detectedFormat(entry.path()), it->second) << name;
    import::ImportOptions opt;
    opt.dcgm_interval_ms = 1000;
    const import::ImportedData d = importWith(it->second, entry.path(), opt);
    EXPECT_FALSE(d.gpus.empty()) << name;
    for (const auto& g : d.gpus) {
      EXPECT_GT(g.table.size(), 0u) << name;
      for (const TelemetryColumn& c : g.table.columns)
        EXPECT_EQ(c.values.size(), g.table.size()) << name << " " << c.metric;
    }
  }
  EXPECT_EQ(seen, fixtures().size());
}

TEST(TelemetryDetection, EachImporterRejectsEveryOtherFormatWithANamedError) {
  std::vector<std::string> formats = {"nvidia-smi-csv", "nvidia-smi-dmon", "dcgm-dmon",
                                      "dcgm-csv",       "amd-smi-csv",     "zeus-monitor",
                                      "zeus-windows",   "charllm"};
  import::ImportOptions opt;
  opt.dcgm_interval_ms = 1000;
  for (const std::string& format : formats) {
    for (const auto& [file, own] : fixtures()) {
      if (own == format) continue;
      const auto path = kTelemetryData / file;
      const std::string e = errorMessage([&] { importWith(format, path, opt); });
      EXPECT_FALSE(e.empty()) << format << " accepted " << file;
      EXPECT_EQ(e.rfind(path.string(), 0), 0u) << format << " on " << file << ": " << e;
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
  }
  // A folder given to a file format.
  TempDir tmp;
  const std::string e = errorMessage([&] { importWith("nvidia-smi-csv", tmp.path()); });
  EXPECT_NE(e.find("is a folder; expected a file"), std::string::npos) << e;
}

TEST(TelemetryDetection, UnknownContentIsNotClaimed) {
  TempDir tmp;
  writeText(tmp / "notes.txt", "just some text\nnothing to see\n");
  writeText(tmp / "other.csv", "a,b,c\n1,2,3\n");
  EXPECT_EQ(detectedFormat(tmp / "notes.txt"), "");
  EXPECT_EQ(detectedFormat(tmp / "other.csv"), "");
}

}  // namespace
}  // namespace wl::test
