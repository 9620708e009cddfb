// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline analyze`: the documented JSON keys and values, --range / --gpus / --ranks, tables,
// exit codes and one-line errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis_test_util.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

class AnalyzeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    test::RunSpec s = test::baseRun(2, 100.0);
    s.info.name = "cli-run";
    s.info.sample_interval_s = 0.1;
    s.info.config.gbs = 32;
    s.info.config.seq_len = 1024;
    for (int g = 0; g < 2; ++g)
      s.telemetry.push_back(test::sampled(
          kT0, kT0 + 100 * kSec, 100 * kMs, {"power_w", "temp_c", "sm_clock_mhz", "util_pct"},
          [g](size_t m, int64_t t) {
            const bool capped = g == 1 && t >= kT0 + 20 * kSec && t < kT0 + 30 * kSec;
            const double v[] = {g ? 600.0 : 400.0, 70, capped ? 1500.0 : 1980.0, 100};
            return v[m];
          }));
    const uint32_t gemm = s.names.intern("gemm");
    for (int r = 0; r < 2; ++r) {
      KernelTrack t{r, 7, r, {}, {}, {}};
      for (int i = 0; i < 50; ++i)
        t.events.push_back({kT0 + (10 + i) * kSec, 500 * kMs, gemm, KernelClass::Compute,
                            GpuEventKind::Kernel, i});
      s.tracks.push_back(t);
      for (int i = 0; i < 10; ++i)
        s.iterations.push_back({r, i, kT0 + (10 + 8 * i) * kSec, kT0 + (18 + 8 * i) * kSec});
    }
    test::writeAndOpen(s, dir / "run.h5");
    path = (dir / "run.h5").string();
  }
  test::TempDir dir;
  std::string path;
};

TEST_F(AnalyzeCommand, JsonHasTheDocumentedKeysAndValues) {
  const auto r = test::runWattline({"analyze", path, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"]["name"], "cli-run");
  EXPECT_EQ(j["run"]["platform"], "H100");
  EXPECT_EQ(j["run"]["simulated"], true);
  EXPECT_DOUBLE_EQ(j["run"]["duration_s"].get<double>(), 100.0);
  EXPECT_EQ(j["run"]["iterations"], 10);
  const auto& t = j["totals"];
  EXPECT_NEAR(t["energy_j"].get<double>(), 1000 * 99.9, 1e-6);
  EXPECT_NEAR(t["mean_power_w"].get<double>(), 500, 1e-9);
  EXPECT_DOUBLE_EQ(t["peak_power_w"].get<double>(), 600);
  EXPECT_NEAR(t["throttled_fraction"].get<double>(), 10.0 / (2 * 99.9), 1e-9);
  EXPECT_NEAR(t["throughput_samples_per_s"].get<double>(), 4, 1e-12);
  EXPECT_NEAR(t["tokens_per_s"].get<double>(), 4096, 1e-9);
  EXPECT_NEAR(t["energy_per_token_j"].get<double>(), 8000.0 / 32768, 1e-12);
  EXPECT_NEAR(t["energy_per_iteration_j"].get<double>(), 8000, 1e-6);
  EXPECT_TRUE(t.contains("efficiency_samples_per_s_mj"));
  ASSERT_EQ(j["gpus"].size(), 2u);
  const auto& g1 = j["gpus"][1];
  EXPECT_EQ(g1["id"], 1);
  EXPECT_NEAR(g1["energy_j"].get<double>(), 600 * 99.9, 1e-6);
  for (const char* k : {"power_w", "temp_c", "sm_clock_mhz"})
    for (const char* s : {"mean", "min", "max"})
      EXPECT_TRUE(g1[k].contains(s)) << k << "." << s;
  EXPECT_NEAR(g1["power_w"]["mean"].get<double>(), 600, 1e-9);
  EXPECT_DOUBLE_EQ(g1["sm_clock_mhz"]["min"].get<double>(), 1500);
  EXPECT_NEAR(g1["throttle"]["fraction"].get<double>(), 10.0 / 99.9, 1e-9);
  EXPECT_NEAR(g1["throttle"]["by_reason"]["power_cap_inferred"].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(g1["throttle"]["clock_deficit_mhz_s"].get<double>(), 480 * 10, 1e-6);
  EXPECT_TRUE(g1["throttle"]["by_reason"].contains("sw_power_cap"));
  EXPECT_TRUE(g1["burstiness"].contains("peak_to_average"));
  EXPECT_TRUE(g1["thermal"].contains("time_constant_s"));
  // Unknown values are null, not 0 or NaN: no slowdown crossing means no time to first throttle.
  EXPECT_TRUE(j["gpus"][0]["thermal"]["time_to_first_throttle_s"].is_null());
  ASSERT_EQ(j["ranks"].size(), 2u);
  const auto& r0 = j["ranks"][0];
  for (const char* k : {"rank", "kernels", "comm_kernels", "span_ns", "idle_ns", "compute_ns",
                        "comm_ns", "exposed_comm_ns", "memory_ns", "overlap_ratio"})
    EXPECT_TRUE(r0.contains(k)) << k;
  EXPECT_EQ(r0["kernels"], 50);
  EXPECT_EQ(r0["span_ns"], 49 * kSec + 500 * kMs);
  EXPECT_EQ(r0["compute_ns"], 50 * 500 * kMs);
  EXPECT_TRUE(r0["overlap_ratio"].is_null());  // no communication
  EXPECT_TRUE(j.contains("stragglers"));
  EXPECT_TRUE(j["data_quality"]["valid"].get<bool>());
  EXPECT_EQ(r.out.find("NaN"), std::string::npos);
}

TEST_F(AnalyzeCommand, RangeGpusAndRanks) {
  const auto r = test::runWattline(
      {"analyze", path, "--json", "--range", "10s:0.5m", "--gpus", "1", "--ranks", "0"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["range"]["start_ns"], kT0 + 10 * kSec);
  EXPECT_EQ(j["range"]["end_ns"], kT0 + 30 * kSec);
  EXPECT_DOUBLE_EQ(j["range"]["duration_s"].get<double>(), 20);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["id"], 1);
  EXPECT_NEAR(j["gpus"][0]["energy_j"].get<double>(), 600 * 20, 1e-6);
  EXPECT_NEAR(j["gpus"][0]["throttle"]["fraction"].get<double>(), 0.5, 1e-9);
  ASSERT_EQ(j["ranks"].size(), 1u);
  EXPECT_EQ(j["ranks"][0]["kernels"], 20);
  // Absolute ns ends.
  const auto abs = test::runWattline(
      {"analyze", path, "--json", "--range", std::to_string(kT0 + 5 * kSec) + ":"});
  ASSERT_EQ(abs.exitCode, 0) << abs.err;
  EXPECT_EQ(nlohmann::json::parse(abs.out)["range"]["start_ns"], kT0 + 5 * kSec);
}

TEST_F(AnalyzeCommand, TablesByDefault) {
  const auto r = test::runWattline({"analyze", path});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("totals"), std::string::npos);
  EXPECT_NE(r.out.find("99.90 kJ"), std::string::npos);
  EXPECT_NE(r.out.find("throttle intervals (1)"), std::string::npos);
  EXPECT_NE(r.out.find("HTA breakdown"), std::string::npos);
}

TEST_F(AnalyzeCommand, ErrorsAndExitCodes) {
  auto r = test::runWattline({"analyze", path, "--range", "20s:10s"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("END must be after START"), std::string::npos);
  r = test::runWattline({"analyze", path, "--range", "10s"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"analyze", path, "--range", "abc:1s"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"analyze", path, "--gpus", "1-x"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"analyze", path, "--gpus", "7"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("no GPU 7 in the run"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  r = test::runWattline({"analyze", (dir / "missing.h5").string()});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("missing.h5"), std::string::npos);
  r = test::runWattline({"analyze"});
  EXPECT_EQ(r.exitCode, 2);
}

// A run with kernel traces and no telemetry: the slot table has no temperatures, and the summary
// line says unknown (it once printed "hottest slot -1 is - % hotter than coolest slot -1").
TEST(AnalyzeCommandNoTelemetry, HottestSlotIsUnknownWithoutTemperatures) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(2, 20.0);
  const uint32_t gemm = s.names.intern("gemm");
  for (int r = 0; r < 2; ++r) {
    KernelTrack t{r, 7, r, {}, {}, {}};
    for (int i = 0; i < 10; ++i)
      t.events.push_back(
          {kT0 + (2 + i) * kSec, 500 * kMs, gemm, KernelClass::Compute, GpuEventKind::Kernel, i});
    s.tracks.push_back(t);
  }
  test::writeAndOpen(s, dir / "run.h5");
  const test::ProcessResult r = test::runWattline({"analyze", (dir / "run.h5").string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find("slot -1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spatial imbalance"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hottest and coolest slot: unknown (no temperature samples)"),
            std::string::npos)
      << r.out;
}

// A range wholly after the run is refused as export refuses it (it once exited 0 with a negative
// span and "INVALID RUN: gpu 0 has no power samples"); a start before the run is a mistake, not
// clipped silently; a range reaching past the end is clipped to the run.
TEST_F(AnalyzeCommand, RangesOutsideTheRun) {
  for (const char* fmt : {"", "--json"}) {
    std::vector<std::string> args{"analyze", path, "--range", "200s:300s"};
    if (*fmt) args.push_back(fmt);
    const test::ProcessResult r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 1) << r.out;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("run.h5: the range 200.0 s to 300.0 s is outside the run (100.0 s long)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  }
  test::ProcessResult r = test::runWattline({"analyze", path, "--range", "-5s:10s"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("'-5s' is before the run's start"), std::string::npos) << r.err;
  r = test::runWattline({"analyze", path, "--json", "--range", "90s:300s"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["range"]["start_ns"], kT0 + 90 * kSec);
  EXPECT_LE(j["range"]["end_ns"].get<int64_t>(), kT0 + 100 * kSec + 1);
  EXPECT_GT(j["range"]["duration_s"].get<double>(), 9.9);
}

}  // namespace
}  // namespace wl
