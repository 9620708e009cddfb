// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline whatif -o OUT.h5` (analysis/projected_run.h): the projection written as a run. Its own
// measurement (measureRun, what analyze and compare read) is the projection's row, one number, and
// is checked against a direct simulation at the setting within the projection truth test's bounds
// (projection_truth_test.cpp); it opens, is marked projected, carries no ground truth, and the
// measured file is left as it was. docs/whatif.md, "A projected run", quotes what it prints.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "analysis/calibration.h"
#include "analysis/projected_run.h"
#include "analysis/whatif.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_file.h"
#include "loaders/sim/simulator.h"
#include "support/read_file.h"
#include "support/run_process.h"
#include "support/strip_run.h"
#include "support/temp_dir.h"
#include "whatif/truth_runs.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

constexpr double kStepFrac = 0.05, kEnergyFrac = 0.05, kPeakC = 3.0;

// The projection truth test's H100 run in a hot aisle (39 C).
sim::SimConfig node(double seconds) {
  return test::truthNode("h100", "hot-aisle", 39, seconds);
}

std::string bytes(const fs::path& p) {
  return test::readFile(p);
}

double rel(double a, double b) {
  return std::abs(a / b - 1);
}

// Simulated at 700 W, stripped, calibrated, written at 500 W; measured like a direct simulation
// at 500 W.
TEST(ProjectedRun, MeasuresAsTheProjectionAndAsTheDirectSimulation) {
  test::TempDir dir;
  const fs::path pa = dir.path() / "a.h5", out = dir.path() / "a-500.h5";
  sim::simulate(node(60), pa, {}, nullptr);
  test::stripToWhatARealRunHas(pa);
  const auto run = RunFile::open(pa);
  CalibrationOptions opt;
  opt.power_window_s = 1.0;
  const Calibration cal = calibrateRun(*run, opt);
  const WhatifSetting s{500.0, std::nullopt, {}};
  const WhatifRow row = projectRun(*run, cal, {s}).rows.at(2);
  const std::string before = bytes(pa);
  writeProjectedRun(*run, cal, s, out);
  EXPECT_EQ(bytes(pa), before) << "the measured file changed";

  const auto proj = RunFile::open(out);
  EXPECT_TRUE(isProjectedRun(proj->info()));
  EXPECT_FALSE(isProjectedRun(run->info()));
  EXPECT_FALSE(proj->info().simulated);
  EXPECT_FALSE(proj->hasGroundTruth());
  EXPECT_EQ(proj->kernelCount(), run->kernelCount());
  EXPECT_EQ(proj->iterations().size(), run->iterations().size());
  EXPECT_EQ(proj->info().config, run->info().config);
  for (const GpuInfo& g : proj->gpus())
    EXPECT_FLOAT_EQ(g.power_limit_w, 500.0f);
  const nlohmann::json j = nlohmann::json::parse(proj->info().parameters_json).at("projected");
  EXPECT_EQ(j.at("source"), "a.h5");
  EXPECT_EQ(j.at("setting").at("power_limit_w"), 500.0);
  EXPECT_EQ(j.at("calibration").at("gpus").size(), 8u);

  // One number: the file measures as the projection's row.
  const WhatifOutcome m = measureRun(*proj);
  EXPECT_LT(rel(m.step_s, row.value.step_s), 1e-6);
  EXPECT_LT(rel(m.energy_per_token_j, row.value.energy_per_token_j), 1e-6);
  EXPECT_NEAR(m.peak_temp_c, row.value.peak_temp_c, 1e-3);
  EXPECT_NEAR(m.throttled_fraction, row.value.throttled_fraction, 1e-9);

  // Against the direct simulation at 500 W, as the projection truth test.
  const fs::path pb = dir.path() / "b.h5";
  sim::SimConfig b = node(60);
  b.powerLimitW = 500;
  sim::simulate(b, pb, {}, nullptr);
  const WhatifOutcome t = measureRun(*RunFile::open(pb));
  std::printf(
      "projected run at 500 W: step %.3f s (projection %.3f, direct %.3f, %+.1f %%), energy "
      "%.4f J/token (projection %.4f, direct %.4f, %+.1f %%), peak %.1f C (direct %.1f), "
      "throttled %.2f (direct %.2f)\n",
      m.step_s, row.value.step_s, t.step_s, 100 * (m.step_s / t.step_s - 1), m.energy_per_token_j,
      row.value.energy_per_token_j, t.energy_per_token_j,
      100 * (m.energy_per_token_j / t.energy_per_token_j - 1), m.peak_temp_c, t.peak_temp_c,
      m.throttled_fraction, t.throttled_fraction);
  EXPECT_NEAR(m.step_s / t.step_s, 1.0, kStepFrac);
  EXPECT_NEAR(m.energy_per_token_j / t.energy_per_token_j, 1.0, kEnergyFrac);
  EXPECT_NEAR(m.peak_temp_c, t.peak_temp_c, kPeakC);
}

// The time map is monotone: every track's kernels stay in order and inside the run's span, each
// whole iteration lasts about the projected step, and a sample's limit bits are the projection's.
TEST(ProjectedRun, TimeMapKeepsOrderAndStretchesTheSteps) {
  test::TempDir dir;
  const fs::path pa = dir.path() / "a.h5", out = dir.path() / "a-450.h5";
  sim::simulate(node(20), pa, {}, nullptr);
  const auto run = RunFile::open(pa);
  const Calibration cal = calibrateRun(*run);
  const WhatifSetting s{450.0, std::nullopt, {}};
  writeProjectedRun(*run, cal, s, out);
  const auto proj = RunFile::open(out);
  EXPECT_FALSE(proj->hasGroundTruth()) << "a simulated source's truth is not the projection's";
  EXPECT_TRUE(proj->readTruthClock(0).empty());
  EXPECT_EQ(proj->info().start_ns, run->info().start_ns);
  EXPECT_GT(proj->info().end_ns, run->info().end_ns);
  for (size_t tr = 0; tr < proj->tracks().size(); ++tr) {
    const auto ev = proj->readAllKernels(tr);
    ASSERT_EQ(ev.size(), run->readAllKernels(tr).size());
    for (size_t k = 0; k < ev.size(); ++k) {
      EXPECT_GE(ev[k].dur_ns, 0);
      EXPECT_GE(ev[k].start_ns, proj->info().start_ns);
      EXPECT_LE(ev[k].start_ns + ev[k].dur_ns, proj->info().end_ns);
      if (k) {
        ASSERT_LE(ev[k - 1].start_ns, ev[k].start_ns);
      }
    }
  }
  const ProjectedSamples p = projectSamples(*run, cal, s);
  const WhatifOutcome m = measureRun(*proj);
  EXPECT_GT(m.step_s, p.measured_step_s);
  EXPECT_LT(rel(m.step_s, p.value.step_s), 1e-6);
  EXPECT_LT(rel(m.energy_per_token_j, p.value.energy_per_token_j), 1e-6);
  // Unchanged where the projection does not reach: utilization.
  const Samples ua = run->readAllSamples(SeriesKind::Gpu, 0, "util_pct");
  const Samples ub = proj->readAllSamples(SeriesKind::Gpu, 0, "util_pct");
  ASSERT_EQ(ua.v.size(), ub.v.size());
  for (size_t i = 0; i < ua.v.size(); ++i)
    if (!std::isnan(ua.v[i])) {
      ASSERT_EQ(ua.v[i], ub.v[i]) << i;
    }
  // Limit bits: the projection's, SW power cap where a limit slowed a busy sample.
  const auto reasons = proj->readThrottle(0, 0, proj->series().samples(0));
  ASSERT_EQ(reasons.size(), p.gpus[0].limit_bits.size());
  for (size_t i = 0; i < reasons.size(); ++i)
    if (reasons[i] != throttle::kUnknown) {
      ASSERT_EQ(reasons[i] & (throttle::kSwPowerCap | throttle::kSwThermal),
                p.gpus[0].limit_bits[i])
          << i;
    }
  // Faster than measured (every GPU unthrottled, a hotter aisle's run): the steps shrink, the
  // file still measures as the projection.
  sim::SimConfig hot = node(20);
  hot.inletTempC = 45;
  const fs::path ph = dir.path() / "hot.h5", fast = dir.path() / "hot-free.h5";
  sim::simulate(hot, ph, {}, nullptr);
  const auto hotRun = RunFile::open(ph);
  const Calibration hotCal = calibrateRun(*hotRun);
  const WhatifSetting free{std::nullopt, std::nullopt, {0, 1, 2, 3, 4, 5, 6, 7}};
  writeProjectedRun(*hotRun, hotCal, free, fast);
  const ProjectedSamples q = projectSamples(*hotRun, hotCal, free);
  const auto f = RunFile::open(fast);
  const WhatifOutcome mf = measureRun(*f);
  EXPECT_LT(q.value.step_s, q.measured_step_s);
  EXPECT_LT(rel(mf.step_s, q.value.step_s), 1e-6);
  EXPECT_LT(rel(mf.energy_per_token_j, q.value.energy_per_token_j), 1e-6);
  EXPECT_NEAR(mf.throttled_fraction, 0.0, 1e-12);
  EXPECT_LT(f->info().end_ns, hotRun->info().end_ns);
}

// The command line: -o writes the run (and the JSON says where); info marks it; compare reads it;
// -o with --sweep, without a setting, or onto its own input is bad usage (exit 2).
TEST(ProjectedRun, CommandWritesARunThatOpensAndCompares) {
  test::TempDir dir;
  const fs::path pa = dir.path() / "a.h5", out = dir.path() / "out.h5";
  sim::simulate(node(20), pa, {}, nullptr);
  const std::string before = bytes(pa);
  const auto r = test::runWattline(
      {"whatif", pa.string(), "--power-limit", "500", "-o", out.string(), "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("output"), out.string());
  EXPECT_EQ(bytes(pa), before);
  const auto info = test::runWattline({"info", out.string()});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  EXPECT_NE(info.out.find("[PROJECTED]"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("projected to power limit 500 W"), std::string::npos);
  const auto cmp =
      test::runWattline({"compare", out.string(), pa.string(), "--iterations", "--json"});
  ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
  const nlohmann::json c = nlohmann::json::parse(cmp.out);
  EXPECT_FALSE(c.at("iterations").empty());
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--sweep", "power-limit=400:700:100", "-o", out.string()},
        {"-o", out.string()},
        {"--power-limit", "500", "-o", pa.string()}}) {
    std::vector<std::string> a = {"whatif", pa.string()};
    a.insert(a.end(), bad.begin(), bad.end());
    const auto u = test::runWattline(a);
    EXPECT_EQ(u.exitCode, 2) << bad.front();
    EXPECT_EQ(std::count(u.err.begin(), u.err.end(), '\n'), 2) << u.err;  // the line and a hint
  }
  EXPECT_EQ(bytes(pa), before);
}

}  // namespace
}  // namespace wl
