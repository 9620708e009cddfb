// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline whatif --mbs` (analysis/whatif_layout.h) against the simulator's own answer: simulate
// at microbatch 1, strip the file to what a real run has, calibrate from it alone, project to
// microbatch 4, and compare with a direct simulation at microbatch 4 (measured the same way,
// measureRun). Step time and energy per token within 5 %, peak temperature within 3 C.
// docs/whatif.md tabulates what this test prints ("Layout changes").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "analysis/calibration.h"
#include "analysis/whatif.h"
#include "analysis/whatif_layout.h"
#include "loaders/format/run_file.h"
#include "loaders/sim/simulator.h"
#include "support/run_process.h"
#include "support/strip_run.h"
#include "support/temp_dir.h"
#include "whatif/truth_runs.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

constexpr double kStepFrac = 0.05, kEnergyFrac = 0.05, kPeakC = 3.0;

struct Calibrated {
  std::shared_ptr<const RunFile> run;
  Calibration cal;
};

Calibrated simulateStripCalibrate(const sim::SimConfig& a, const fs::path& path) {
  sim::simulate(a, path, {}, nullptr);
  test::stripToWhatARealRunHas(path);
  Calibrated c;
  c.run = RunFile::open(path);
  EXPECT_FALSE(c.run->hasGroundTruth());
  CalibrationOptions opt;
  opt.power_window_s = 1.0;
  c.cal = calibrateRun(*c.run, opt);
  return c;
}

void compare(const char* name, const LayoutProjection& p, const WhatifOutcome& t,
             bool check = true) {
  const WhatifOutcome& v = p.row.value;
  const WhatifOutcome& s = p.sim_projected;
  std::printf(
      "%s: step %.3f s (direct %.3f, %+.1f %%; simulated B alone %.3f, %+.1f %%), energy %.4f "
      "J/token (direct %.4f, %+.1f %%; B alone %.4f, %+.1f %%), peak %.1f C (direct %.1f, %+.1f C; "
      "B alone %.1f, %+.1f C); simulated A %.3f s, %.4f J/token, %.1f C\n",
      name, v.step_s, t.step_s, 100 * (v.step_s / t.step_s - 1), s.step_s,
      100 * (s.step_s / t.step_s - 1), v.energy_per_token_j, t.energy_per_token_j,
      100 * (v.energy_per_token_j / t.energy_per_token_j - 1), s.energy_per_token_j,
      100 * (s.energy_per_token_j / t.energy_per_token_j - 1), v.peak_temp_c, t.peak_temp_c,
      v.peak_temp_c - t.peak_temp_c, s.peak_temp_c, s.peak_temp_c - t.peak_temp_c,
      p.sim_measured.step_s, p.sim_measured.energy_per_token_j, p.sim_measured.peak_temp_c);
  if (!check) return;
  EXPECT_NEAR(v.step_s / t.step_s, 1.0, kStepFrac) << name;
  EXPECT_NEAR(v.energy_per_token_j / t.energy_per_token_j, 1.0, kEnergyFrac) << name;
  EXPECT_NEAR(v.peak_temp_c, t.peak_temp_c, kPeakC) << name;
}

WhatifOutcome direct(const sim::SimConfig& b, const fs::path& path) {
  sim::simulate(b, path, {}, nullptr);
  return measureRun(*RunFile::open(path));
}

sim::SimConfig mbs1(const char* platform) {
  sim::SimConfig a = test::truthNode(platform, "hot-aisle", 39, 60);
  a.mbs = 1;
  return a;
}

TEST(WhatifLayoutTruth, H100Microbatch1To4) {
  test::TempDir dir;
  const sim::SimConfig a = mbs1("h100");
  const Calibrated c = simulateStripCalibrate(a, dir.path() / "a.h5");
  WhatifLayout layout;
  layout.mbs = 4;
  const LayoutProjection p = projectLayout(*c.run, c.cal, {}, layout);
  EXPECT_EQ(p.mbs, 4);
  EXPECT_EQ(p.tp, 2);
  const WhatifOutcome m = measureRun(*c.run);
  std::printf("A: measured step %.3f s, %.4f J/token, peak %.1f C\n", m.step_s,
              m.energy_per_token_j, m.peak_temp_c);
  sim::SimConfig b = a;
  b.mbs = 4;
  compare("mbs 1 -> 4, H100 hot aisle 39 C", p, direct(b, dir.path() / "b.h5"));
  b.seed = 2;
  compare("mbs 1 -> 4, direct on seed 2", p, direct(b, dir.path() / "b2.h5"));
}

// Simulates `a` at microbatch 1, projects it to 4 and compares with a direct simulation at 4.
void microbatch1To4(const sim::SimConfig& a, const char* name) {
  test::TempDir dir;
  const Calibrated c = simulateStripCalibrate(a, dir.path() / "a.h5");
  WhatifLayout layout;
  layout.mbs = 4;
  const LayoutProjection p = projectLayout(*c.run, c.cal, {}, layout);
  sim::SimConfig b = a;
  b.mbs = 4;
  const WhatifOutcome t = direct(b, dir.path() / "b.h5");
  compare(name, p, t);
  // The experiment of docs/whatif.md ("Layout changes"): printed, not checked.
  if (std::getenv("WL_LAYOUT_FITS")) {
    LayoutOptions o;
    o.apply_fits = true;
    compare((std::string(name) + " [fits applied]").c_str(),
            projectLayout(*c.run, c.cal, {}, layout, o), t, false);
  }
}

TEST(WhatifLayoutTruth, H200Microbatch1To4) {
  sim::SimConfig a = test::truthNode("h200", "hot-aisle", 37, 60);
  a.mbs = 1;
  microbatch1To4(a, "mbs 1 -> 4, H200 hot aisle 37 C");
}

TEST(WhatifLayoutTruth, Mi250Microbatch1To4) {
  sim::SimConfig a = test::truthNode("mi250", "hot-aisle", 37, 60);
  a.mbs = 1;
  microbatch1To4(a, "mbs 1 -> 4, MI250 hot aisle 37 C");
}

// The machine is not the built-in profile (more dynamic power, more idle power, a warmer
// heatsink): the prior the projection simulates from is off, the ratio has to cancel it.
TEST(WhatifLayoutTruth, H100OffTheProfileMicrobatch1To4) {
  sim::SimConfig a = mbs1("h100");
  a.platform.power_dyn_max_w *= 1.15;
  a.platform.power_base_w += 15;
  a.platform.sink_resistance_c_per_w *= 1.2;
  microbatch1To4(a, "mbs 1 -> 4, H100 off the profile (dynamic +15 %, base +15 W, sink R +20 %)");
}

TEST(WhatifLayoutTruth, StrippedRunProjectsTheSame) {
  test::TempDir dir;
  sim::SimConfig a = mbs1("h100");
  a.durationS = 20;
  const fs::path pa = dir.path() / "a.h5";
  sim::simulate(a, pa, {}, nullptr);
  CalibrationOptions opt;
  opt.power_window_s = 1.0;
  WhatifLayout layout;
  layout.mbs = 2;
  LayoutOptions lo;
  lo.max_simulated_s = 10;
  nlohmann::json full, stripped;
  {
    const auto run = RunFile::open(pa);
    full =
        toJson(projectLayout(*run, calibrateRun(*run, opt), {500.0, std::nullopt, {}}, layout, lo));
  }
  test::stripToWhatARealRunHas(pa);
  {
    const auto run = RunFile::open(pa);
    stripped =
        toJson(projectLayout(*run, calibrateRun(*run, opt), {500.0, std::nullopt, {}}, layout, lo));
  }
  EXPECT_EQ(full, stripped);
  EXPECT_EQ(full["mbs"], 2);
  EXPECT_EQ(full["power_limit_w"], 500.0);
}

TEST(WhatifLayoutTruth, RefusesALayoutTheSimulatorCannotRun) {
  test::TempDir dir;
  sim::SimConfig a = mbs1("h100");
  a.durationS = 12;
  const Calibrated c = simulateStripCalibrate(a, dir.path() / "a.h5");
  WhatifLayout layout;
  layout.tp = 3;  // 3 x 2 x 2 is not 8 GPUs
  EXPECT_THROW(projectLayout(*c.run, c.cal, {}, layout), LayoutUnsupported);
}

TEST(WhatifLayoutTruth, CommandPrintsTheLayoutRow) {
  test::TempDir dir;
  sim::SimConfig a = mbs1("h100");
  a.durationS = 15;
  const fs::path path = dir.path() / "run.h5";
  sim::simulate(a, path, {}, nullptr);
  const auto r =
      test::runWattline({"whatif", path.string(), "--mbs", "2", "--power-limit", "500", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("simulating the layouts"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["settings"].size(), 2u);
  EXPECT_EQ(j["settings"][0]["kind"], "measured");
  const nlohmann::json& e = j["settings"][1];
  EXPECT_EQ(e["kind"], "projected layout");
  EXPECT_EQ(e["tp"], 2);
  EXPECT_EQ(e["pp"], 2);
  EXPECT_EQ(e["dp"], 2);
  EXPECT_EQ(e["mbs"], 2);
  EXPECT_EQ(e["power_limit_w"], 500.0);
  for (const char* k : {"step_s", "tokens_per_s", "energy_per_token_j", "peak_temp_c"}) {
    EXPECT_TRUE(e[k].is_number()) << k;
    EXPECT_TRUE(e["uncertainty"][k].is_number()) << k;
  }
  // The ratio: measured x simulated B / simulated A.
  EXPECT_NEAR(e["step_s"].get<double>(),
              j["settings"][0]["step_s"].get<double>() *
                  e["simulated_new_layout"]["step_s"].get<double>() /
                  e["simulated_measured_layout"]["step_s"].get<double>(),
              1e-9);
  const auto text = test::runWattline({"whatif", path.string(), "--mbs", "2"});
  EXPECT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("projected TP2 PP2 DP2 mbs2"), std::string::npos) << text.out;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--tp", "3"},
        {"--mbs", "0"},
        {"--mbs", "1.5"},
        {"--mbs", "3"},  // 64 sequences over DP 2 x microbatch 3 do not divide
        {"--mbs", "2", "--sweep", "power-limit=400:700:100"},
        {"--mbs", "2", "-o", (dir.path() / "out.h5").string()}}) {
    std::vector<std::string> args = {"whatif", path.string()};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto b = test::runWattline(args);
    EXPECT_EQ(b.exitCode, 2) << bad.front() << " " << bad[1] << ": " << b.err;
  }
}

}  // namespace
}  // namespace wl
