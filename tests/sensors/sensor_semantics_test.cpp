// SPDX-License-Identifier: GPL-3.0-or-later
// Sensor semantics (docs/format.md, "/sensors"; issue 29, item 1): each importer states what its
// source's samples mean, the simulator states its own settings, the run file keeps them, files
// without them read as assumed defaults, and `wattline info --json` shows them per source and
// metric. Expected values come from the sources' documentation (nvidia-smi --help-query-gpu: on
// Ampere and newer power.draw is a 1 s average, power.draw.instant the instantaneous reading; DCGM
// field 155 POWER_USAGE vs 157 POWER_USAGE_INSTANT), not from the code under test.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "loaders/core/error.h"
#include "loaders/core/sensors.h"
#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"
#include "loaders/h5/h5.h"
#include "loaders/import/importer.h"
#include "sim/sim_test_support.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace wl {
namespace {

const fs::path kData = fs::path(WATTLINE_TEST_DATA);

import::ImportedData importWith(std::string_view format, const fs::path& path,
                                const import::ImportOptions& options = {}){
    const import::Importer* imp = import::findImporter(format);
EXPECT_NE(imp, nullptr) << format;
return imp->read(path, options, {});
}  // namespace

const SensorInfo* sensorOf(const std::vector<SensorInfo>& v, std::string_view metric) {
  for (const SensorInfo& s : v)
    if (s.metric == metric) return &s;
  return nullptr;
}

void expectSensor(const SensorInfo* s, SensorKind kind, double window, std::string_view what) {
  ASSERT_NE(s, nullptr) << what;
  EXPECT_EQ(s->kind, kind) << what << ": " << s->basis;
  if (kind == SensorKind::Average && std::isfinite(window)) {
    EXPECT_DOUBLE_EQ(s->window_s, window) << what;
  }
  if (kind != SensorKind::Average) {
    EXPECT_EQ(s->window_s, 0.0) << what;
  }
  EXPECT_FALSE(s->assumed) << what;
}

nlohmann::json infoJson(const fs::path& run) {
  const auto r = test::runWattline({"info", "--json", run.string()});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The real H100 recording logs power.draw, power.draw.average and power.draw.instant side by side:
// power_w is power.draw (1 s average on Hopper), the two others keep their own meaning.
TEST(SensorSemantics, RealH100RecordingThroughTheCommandLine) {
  test::TempDir dir;
  const fs::path out = dir / "h100.h5";
  const auto imp = test::runWattline(
      {"import", "-o", out.string(), (kData / "h100-sensors" / "gpu.csv.gz").string()});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  const nlohmann::json j = infoJson(out);
  const nlohmann::json& m = j["sources"][0]["metrics"];
  EXPECT_EQ(m["power_w"]["sensor"]["kind"], "average");
  EXPECT_EQ(m["power_w"]["sensor"]["window_s"], 1.0);
  EXPECT_EQ(m["power_w"]["sensor"]["period_s"], 0.1);
  EXPECT_EQ(m["power_w"]["sensor"]["lag_s"], 0.0);
  EXPECT_EQ(m["power_w"]["sensor"]["assumed"], false);
  EXPECT_EQ(m["power_draw_instant_w"]["sensor"]["kind"], "instant");
  EXPECT_EQ(m["power_draw_instant_w"]["sensor"]["window_s"], 0.0);
  EXPECT_EQ(m["power_draw_average_w"]["sensor"]["kind"], "average");
  EXPECT_EQ(m["power_draw_average_w"]["sensor"]["window_s"], 1.0);
  EXPECT_EQ(m["util_pct"]["sensor"]["kind"], "average");
  EXPECT_TRUE(m["util_pct"]["sensor"]["window_s"].is_null());  // NVML: 1/6 to 1 s by product
  EXPECT_EQ(m["temp_c"]["sensor"]["kind"], "instant");
  // The text output names it too.
  const auto text = test::runWattline({"info", out.string()});
  EXPECT_NE(text.out.find("power_w          average over 1 s, updates every 0.1 s"),
            std::string::npos)
      << text.out;
}

// The real H200 recording logs power.draw only: a 1 s average on an H200.
TEST(SensorSemantics, RealH200Recording) {
  const auto d = importWith("nvidia-smi-csv", kData / "h200" / "gpu.csv.gz");
  expectSensor(sensorOf(d.sensors, "power_w"), SensorKind::Average, 1.0, "H200 power.draw");
  EXPECT_NE(sensorOf(d.sensors, "power_w")->basis.find("NVIDIA H200"), std::string::npos);
}

TEST(SensorSemantics, NvidiaSmiBeforeAmpereIsTheLastReading) {
  EXPECT_FALSE(nvidiaAveragesPower("Tesla V100-SXM2-16GB"));
  EXPECT_FALSE(nvidiaAveragesPower("Tesla T4"));
  EXPECT_TRUE(nvidiaAveragesPower("NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(nvidiaAveragesPower("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(nvidiaSmiPowerSensor("power.draw", "Tesla V100-SXM2-16GB").kind, SensorKind::Instant);
  EXPECT_EQ(nvidiaSmiPowerSensor("power.draw.instant", "NVIDIA H100").kind, SensorKind::Instant);
}

// DCGM: field 155 (POWER) is the average, 156 (TOTEC) a counter; 157 (POWINST) the instant.
TEST(SensorSemantics, DcgmFields) {
  import::ImportOptions o;
  o.dcgm_interval_ms = 100;
  const auto dmon = importWith("dcgm-dmon", kData / "telemetry" / "dcgm-dmon-2gpu.txt", o);
  expectSensor(sensorOf(dmon.sensors, "power_w"), SensorKind::Average, 1.0, "dmon POWER");
  expectSensor(sensorOf(dmon.sensors, "energy_j"), SensorKind::Counter, 0, "dmon TOTEC");
  const auto csv = importWith("dcgm-csv", kData / "telemetry" / "dcgm-long-2gpu.csv");
  expectSensor(sensorOf(csv.sensors, "power_w"), SensorKind::Average, 1.0, "155");
  expectSensor(sensorOf(csv.sensors, "energy_j"), SensorKind::Counter, 0, "156");

  // A dmon log with POWINST only: the instantaneous reading.
  test::TempDir dir;
  const fs::path inst = dir / "powinst.txt";
  {
    std::FILE* f = std::fopen(inst.c_str(), "w");
    std::fputs("#Entity   POWINST\nID        \nGPU 0     301.5\nGPU 0     305.0\n", f);
    std::fclose(f);
  }
  const auto di = importWith("dcgm-dmon", inst, o);
  expectSensor(sensorOf(di.sensors, "power_w"), SensorKind::Instant, 0, "157");
}

TEST(SensorSemantics, AmdSmiZeusAndNvidiaSmiDmon) {
  const auto amd =
      importWith("amd-smi-csv", kData / "telemetry" / "amd-smi-metric-8gpu-excerpt.csv");
  expectSensor(sensorOf(amd.sensors, "power_w"), SensorKind::Average, 1.0, "amd-smi socket_power");
  import::ImportOptions o;
  o.start_ns = 1735689600000000000;
  const auto zm = importWith("zeus-monitor", kData / "telemetry" / "zeus-monitor-power-mw.csv", o);
  expectSensor(sensorOf(zm.sensors, "power_w"), SensorKind::Average, 1.0, "Zeus PowerMonitor");
  const auto zw = importWith("zeus-windows", kData / "telemetry" / "zeus-windows-4xa40.csv", o);
  expectSensor(sensorOf(zw.sensors, "power_w"), SensorKind::Average, kNaN, "Zeus windows");
  expectSensor(sensorOf(zw.sensors, "energy_j"), SensorKind::Counter, 0, "Zeus windows energy");
  const auto dm =
      importWith("nvidia-smi-dmon", kData / "telemetry" / "nvidia-smi-h100-dmon.txt", o);
  expectSensor(sensorOf(dm.sensors, "power_w"), SensorKind::Average, 1.0, "dmon pwr");
}

// The simulator states its --power-window; what it writes reads back unchanged.
TEST(SensorSemantics, SimulatorStatesItsWindow) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.durationS = 6;
  c.gpusPerNode = 2, c.dp = 2, c.gbs = 8;
  const auto instant = test::simulateAndOpen(c, dir / "instant.h5");
  const auto si = instant->sensors();
  const SensorInfo* p = findSensor(si, 0, "power_w");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, SensorKind::Instant);
  EXPECT_DOUBLE_EQ(p->period_s, c.physicsStepS);
  EXPECT_FALSE(p->assumed);
  c.powerWindowS = 1.0;
  const auto avg = test::simulateAndOpen(c, dir / "avg.h5");
  const SensorInfo* a = findSensor(avg->sensors(), 0, "power_w");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, SensorKind::Average);
  EXPECT_DOUBLE_EQ(a->window_s, 1.0);
  EXPECT_EQ(findSensor(avg->sensors(), 0, "nvlink_tx_kib")->kind, SensorKind::Counter);
  EXPECT_EQ(avg->info().sensors, avg->sensors());  // every metric stated, nothing assumed
}

// A file written before /sensors (the bundled H200 sample) reads with defaults marked assumed.
TEST(SensorSemantics, FilesWithoutSensorsReadAsAssumed) {
  const fs::path sample = fs::path(WATTLINE_SOURCE_DIR) / "resources/samples/h200-gpt-1.3b-real.h5";
  const auto run = RunFile::open(sample);
  ASSERT_TRUE(run->info().sensors.empty());
  const auto s = run->sensors();
  const SensorInfo* p = findSensor(s, 0, "power_w");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->assumed);
  EXPECT_EQ(p->kind, SensorKind::Average);
  EXPECT_DOUBLE_EQ(p->window_s, 1.0);
  const nlohmann::json j = infoJson(sample);
  EXPECT_EQ(j["sources"][0]["metrics"]["power_w"]["sensor"]["assumed"], true);
  EXPECT_EQ(j["sources"][0]["metrics"]["power_w"]["sensor"]["kind"], "average");
}

// A damaged /sensors table is refused with a message naming the file and what was expected.
TEST(SensorSemantics, BadKindIsAClearError) {
  test::TempDir dir;
  const fs::path out = dir / "run.h5";
  sim::SimConfig c = test::tinyConfig();
  c.durationS = 4;
  c.gpusPerNode = 1, c.dp = 1, c.gbs = 4;
  c.linkCounters = false;
  test::simulateAndOpen(c, out);
  {
    const hid_t f = H5Fopen(out.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Ldelete(f, "/sensors/kind", H5P_DEFAULT), 0);
    const hid_t g = H5Gopen2(f, "/sensors", H5P_DEFAULT);
    std::vector<std::string> kinds(7, "gauge");
    h5::writeStrings(g, "kind", kinds);
    H5Gclose(g);
    H5Fclose(f);
  }
  try {
    RunFile::open(out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(out.filename().string()), std::string::npos) << m;
    EXPECT_NE(m.find("/sensors/kind[0] is \"gauge\", expected instant, average or counter"),
              std::string::npos)
        << m;
  }
}

}  // namespace wl
}  // namespace wl
