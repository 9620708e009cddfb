// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline calibrate` (analysis/calibration.h) against the simulator's true parameters: simulate
// a run with a known platform profile and seed, strip what a real run would not have (ground
// truth, parameters_json with the profile and seed, the simulated mark), calibrate, and compare
// every fitted value with the value the simulator used for that GPU: the profile's constants times
// the GPU's part-to-part draws, which this test recomputes from the seed as the engine draws them
// (loaders/sim/engine.cpp). docs/whatif.md tabulates what this test prints; the bounds are stated
// there with their reasons.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "analysis/calibration.h"
#include "loaders/format/run_file.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/power_model.h"
#include "loaders/sim/rng.h"
#include "loaders/sim/simulator.h"
#include "support/run_process.h"
#include "support/strip_run.h"
#include "support/temp_dir.h"
#include "whatif/truth_runs.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

// Llama3-8B TP 2 x PP 2 x DP 2 on one 8-GPU node in a hot aisle (the fans run at full speed
// once loaded, so the heatsinks' resistances are the profile's), NVML's 1 s power average.
sim::SimConfig hotAisleNode(const char* platform, double inletC, double seconds) {
  return test::truthNode(platform, "hot-aisle", inletC, seconds);
}

// What the engine drew for each GPU and node (loaders/sim/engine.cpp, "Part-to-part variation").
struct Draws {
  std::vector<double> leak, resistance, nodeInlet;
};
Draws drawsOf(const sim::SimConfig& c) {
  Draws d;
  const int n = c.nodes * c.gpusPerNode;
  for (int g = 0; g < n; ++g) {
    sim::Rng r =
        sim::Rng::keyed(c.seed, sim::RandomPurpose::GpuVariation, static_cast<uint64_t>(g));
    d.leak.push_back(std::max(0.5, 1.0 + c.platform.leak_spread * r.normal()));
    d.resistance.push_back(std::max(0.7, 1.0 + c.platform.thermal_resistance_spread * r.normal()));
  }
  for (int nd = 0; nd < c.nodes; ++nd) {
    sim::Rng r = sim::Rng::keyed(c.seed, sim::RandomPurpose::NodeInlet, static_cast<uint64_t>(nd));
    d.nodeInlet.push_back(c.inletTempC + c.inletRisePerNodeC * nd +
                          c.platform.node_inlet_spread_c * r.normal());
  }
  return d;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct Bounds {
  double idleW, computePowerFrac, resistanceFrac, dieResistanceFrac, tauFrac, inletC, capFrac,
      sensitivity;
};
// The bounds docs/whatif.md states, with their reasons there.
constexpr Bounds kBounds{5.0, 0.06, 0.15, 0.15, 0.35, 5.0, 0.07, 0.15};

struct Worst {
  double idle = 0, compute = 0, resistance = 0, die = 0, tau = 0, inlet = 0, cap = 0, sens = 0;
};

void checkGpu(const sim::SimConfig& c, const Draws& d, const RunFile& run, const GpuCalibration& g,
              const std::array<double, kActivityClassCount>& share, Worst& w) {
  const sim::PlatformProfile& P = c.platform;
  const sim::PowerModel truth(P, d.leak);
  // Idle: the true power at the idle clock and the GPU's idle temperature (its first sample; the
  // run starts at its idle equilibrium).
  const Samples temp = run.readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.gpu), "temp_c");
  const Samples clock =
      run.readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.gpu), "sm_clock_mhz");
  const Samples util = run.readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.gpu), "util_pct");
  const double idleTrue = truth.power(g.gpu, P.idle_sm_clock_mhz, temp.v.front(), 0.0);
  // Busy: the true power of compute kernels (the GEMMs' and attention's activity, time-weighted
  // by their share of compute time) at the GPU's median busy clock and temperature.
  std::vector<double> bf, bt;
  for (size_t k = 0; k < util.v.size(); ++k)
    if (util.v[k] > 50) bf.push_back(clock.v[k]), bt.push_back(temp.v[k]);
  const double f = median(bf), T = median(bt);
  const double tokens = static_cast<double>(c.mbs * c.seqLen);
  const double gemm = P.activity_gemm * (0.55 + 0.45 * tokens / (tokens + 1024.0));
  const double mm = share[0], att = share[1];
  const double activity = (mm * gemm + att * P.activity_attention) / (mm + att);
  const double busyTrue = truth.power(g.gpu, f, T, activity);
  const double busyFit = predictPower(g.power, f / P.max_sm_clock_mhz, T, {1.0, 0.0, 0.0});
  EXPECT_NEAR(g.power.idle_w, idleTrue, kBounds.idleW) << "GPU " << g.gpu;
  EXPECT_NEAR(busyFit / busyTrue, 1.0, kBounds.computePowerFrac) << "GPU " << g.gpu;
  w.idle = std::max(w.idle, std::fabs(g.power.idle_w - idleTrue));
  w.compute = std::max(w.compute, std::fabs(busyFit / busyTrue - 1));
  std::printf(
      "gpu %d slot %d: idle %.1f W (true %.1f); compute at %.0f MHz, %.0f C: %.0f W (true "
      "%.0f, activity %.3f); power fit R2 %.4f rms %.1f W\n",
      g.gpu, g.slot, g.power.idle_w, idleTrue, f, T, busyFit, busyTrue, activity,
      g.power.quality.r2, g.power.quality.rmse);
  const double rs = d.resistance[static_cast<size_t>(g.gpu)];
  const double rTrue = (P.die_resistance_c_per_w + P.sink_resistance_c_per_w) * rs;
  const double rDieTrue = P.die_resistance_c_per_w * rs;
  const double inletTrue = d.nodeInlet[static_cast<size_t>(g.node)];
  const ThermalFit& t = g.thermal;
  std::printf(
      "  thermal: inlet %.1f C (true %.1f), R %.4f C/W (true %.4f), R_die %.4f (true "
      "%.4f), tau %.1f s (true %.0f), upstream GPU %d %.4f C/W (true %.4f), rms %.2f C, "
      "R2 %.3f\n",
      t.inlet_c, inletTrue, t.resistance_c_per_w, rTrue, t.die_resistance_c_per_w, rDieTrue,
      t.tau_s, P.sink_tau_s, t.upstream_gpu, t.upstream_c_per_w, 1.0 / P.air_conductance_w_per_k,
      t.quality.rmse, t.quality.r2);
  EXPECT_NEAR(t.inlet_c, inletTrue, kBounds.inletC) << "GPU " << g.gpu;
  w.inlet = std::max(w.inlet, std::fabs(t.inlet_c - inletTrue));
  if (t.upstream_gpu < 0) {  // its own fit (a rear GPU borrows the front row's)
    EXPECT_NEAR(t.resistance_c_per_w / rTrue, 1.0, kBounds.resistanceFrac) << "GPU " << g.gpu;
    EXPECT_NEAR(t.die_resistance_c_per_w / rDieTrue, 1.0, kBounds.dieResistanceFrac);
    EXPECT_NEAR(t.tau_s / P.sink_tau_s, 1.0, kBounds.tauFrac) << "GPU " << g.gpu;
    w.resistance = std::max(w.resistance, std::fabs(t.resistance_c_per_w / rTrue - 1));
    w.die = std::max(w.die, std::fabs(t.die_resistance_c_per_w / rDieTrue - 1));
    w.tau = std::max(w.tau, std::fabs(t.tau_s / P.sink_tau_s - 1));
  }
  const GovernorFit& v = g.governor;
  EXPECT_EQ(v.power_limit_w, c.powerLimit());
  if (v.steady_capped_samples >= 50) {
    std::printf(
        "  cap: %.0f W while capped = %.3f of the limit (true setpoint %.3f), %zu samples\n",
        v.cap_power_w, v.cap_power_frac, P.power_cap_setpoint_frac, v.steady_capped_samples);
    EXPECT_NEAR(v.cap_power_frac, P.power_cap_setpoint_frac, kBounds.capFrac) << "GPU " << g.gpu;
    w.cap = std::max(w.cap, std::fabs(v.cap_power_frac - P.power_cap_setpoint_frac));
  }
}

// Simulates, strips, calibrates, checks; returns the worst errors.
Worst checkPlatform(const sim::SimConfig& c, const fs::path& dir) {
  const fs::path path = dir / "run.h5", stripped = dir / "stripped.h5";
  sim::simulate(c, path, {}, nullptr);
  fs::copy_file(path, stripped);
  test::stripToWhatARealRunHas(stripped);
  const auto run = RunFile::open(stripped);
  EXPECT_FALSE(run->hasGroundTruth());
  const Calibration cal = calibrateRun(*run);
  // The same calibration with or without what only the simulator knows.
  nlohmann::json a = toJson(cal), b = toJson(calibrateRun(*RunFile::open(path)));
  a.erase("run"), b.erase("run");
  EXPECT_EQ(a.dump(), b.dump());
  std::array<double, kActivityClassCount> share{};
  Worst w;
  for (const ClassResponse& r : cal.classes) {
    share[static_cast<size_t>(r.cls)] = r.time_share;
    // Compute-bound kernels (GEMMs, attention) follow the clock, memory-bound ones do not.
    const bool compute = r.cls == ActivityClass::Matmul || r.cls == ActivityClass::Attention;
    std::printf("%s: clock sensitivity %.3f (true %d), %zu kernels, %.3f of kernel time\n",
                activityClassId(r.cls), r.clock_sensitivity, compute ? 1 : 0, r.names,
                r.time_share);
    EXPECT_NEAR(r.clock_sensitivity, compute ? 1.0 : 0.0, kBounds.sensitivity)
        << activityClassId(r.cls);
    w.sens = std::max(w.sens, std::fabs(r.clock_sensitivity - (compute ? 1.0 : 0.0)));
  }
  const Draws d = drawsOf(c);
  for (const GpuCalibration& g : cal.gpus)
    checkGpu(c, d, *run, g, share, w);
  std::printf(
      "worst: idle %.1f W, compute power %.1f %%, R %.1f %%, R_die %.1f %%, tau %.1f %%, "
      "inlet %.1f C, cap %.3f, clock sensitivity %.3f\n",
      w.idle, 100 * w.compute, 100 * w.resistance, 100 * w.die, 100 * w.tau, w.inlet, w.cap,
      w.sens);
  return w;
}

TEST(CalibrationTruth, H100HotAisleNode) {
  test::TempDir dir;
  checkPlatform(hotAisleNode("h100", 39, 90), dir.path());
}

TEST(CalibrationTruth, H200HotAisleNode) {
  test::TempDir dir;
  checkPlatform(hotAisleNode("h200", 37, 90), dir.path());
}

// What the fits need and the run lacks: one line naming the file and what is missing, exit 1.
TEST(CalibrationTruth, RefusesARunWithoutKernelTraces) {
  test::TempDir dir;
  sim::SimConfig c = hotAisleNode("h100", 39, 5);
  c.trace.ranks = sim::TraceSelection::Ranks::None;
  const fs::path path = dir.path() / "untraced.h5";
  sim::simulate(c, path, {}, nullptr);
  try {
    calibrateRun(*RunFile::open(path));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel traces"), std::string::npos) << e.what();
  }
  const auto r = test::runWattline({"calibrate", path.string()});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("untraced.h5: cannot calibrate: the run has no kernel traces"),
            std::string::npos)
      << r.err;
}

// The command line: text and JSON on stdout, -o writes the same JSON.
TEST(CalibrationTruth, CommandWritesTheCalibration) {
  test::TempDir dir;
  const fs::path path = dir.path() / "run.h5", out = dir.path() / "cal.json";
  sim::simulate(hotAisleNode("h100", 39, 20), path, {}, nullptr);
  const auto r = test::runWattline({"calibrate", path.string(), "-o", out.string(), "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::ifstream in(out);
  EXPECT_EQ(nlohmann::json::parse(in), j);
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_TRUE(j["gpus"][0]["power"]["idle_w"].is_number());
  EXPECT_EQ(j["kernel_classes"].size(), 4u);
  EXPECT_EQ(j["power_window_s"], 1.0);
  const auto text = test::runWattline({"calibrate", path.string()});
  EXPECT_EQ(text.exitCode, 0);
  EXPECT_NE(text.out.find("clock sensitivity"), std::string::npos);
  const auto bad = test::runWattline({"calibrate", path.string(), "--power-window", "-1"});
  EXPECT_EQ(bad.exitCode, 2);
  const auto missing = test::runWattline({"calibrate", (dir.path() / "none.h5").string()});
  EXPECT_EQ(missing.exitCode, 1);
}

}  // namespace
}  // namespace wl
