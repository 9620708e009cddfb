// SPDX-License-Identifier: GPL-3.0-or-later
// The simulator against real measurements (tests/data/telemetry, docs/simulator.md "Calibration"):
//
// - idle power of an H100 and an H200 (nvidia-smi dmon captures: 69 W at 41 C and 77 W at 28 C,
//   345 MHz), within 10 %;
// - the same power model with one gpu-burn activity reproduces both loaded captures (631 W at
//   63-65 C on the H100, 630 W at 53-54 C on the H200, both at 1980 MHz): leakage and base power
//   carry from one part to the other;
// - 8 H100-class GPUs of one node training nanoGPT (nvidia-smi every ~0.3 s): 38 s idle, 217 s
//   of load at ~689 W (power.draw, a 1 s average), then idle. The real GPUs split into a cool group
//   (the front row) and a hot group (the rear row); a simulated node under the same load, from
//   the same idle start, follows both groups' temperature over time (the die step of the first
//   second, the heatsink's climb over a minute, the cool-down) and the distribution of the power.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>

#include "loaders/sim/power_model.h"
#include "sim_test_support.h"
#include "support/read_file.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

const std::filesystem::path kTelemetry = std::filesystem::path(WATTLINE_TEST_DATA) / "telemetry";

struct DmonRow {
  double powerW, tempC, smClockMhz;
};

// The first block of an `nvidia-smi dmon` capture (idle) and the second (gpu-burn): columns
// gpu pwr gtemp mtemp sm mem enc dec jpg ofa mclk pclk.
std::vector<std::vector<DmonRow>> readDmon(const std::string& name) {
  std::istringstream in(test::readFile(kTelemetry / name));
  std::vector<std::vector<DmonRow>> blocks(1);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      blocks.emplace_back();
      continue;
    }
    if (line[0] == '#') continue;
    std::istringstream ss(line);
    std::vector<double> v;
    double x;
    while (ss >> x)
      v.push_back(x);
    if (v.size() == 12) blocks.back().push_back({v[1], v[2], v[11]});
  }
  return blocks;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? kNaN : s / static_cast<double>(v.size());
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? kNaN : v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// One GPU idling: the samples of the idle lead-in of a one-GPU run.
void expectIdleMatchesCapture(const char* platform, const char* capture, double inletC) {
  const auto blocks = readDmon(capture);
  ASSERT_GE(blocks.size(), 2u);
  std::vector<double> realP, realT;
  for (const DmonRow& r : blocks[0]) {
    ASSERT_EQ(r.smClockMhz, 345);  // idle clock
    realP.push_back(r.powerW);
    realT.push_back(r.tempC);
  }
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.platform = *sim::findProfile(platform);
  c.gpusPerNode = 1, c.dp = 1;
  c.gbs = c.mbs;
  c.durationS = 0, c.iterations = 1;
  c.leadInS = 20;
  c.inletTempC = inletC;
  const auto run = test::simulateAndOpen(c, dir / "idle.h5");
  const test::Series p = test::series(*run, 0, "power_w");
  const test::Series t = test::series(*run, 0, "temp_c");
  const test::Series f = test::series(*run, 0, "sm_clock_mhz");
  std::vector<double> simP, simT;
  for (size_t i = 0; i < p.t.size() && p.t[i] < c.leadInS - 1; ++i) {
    ASSERT_EQ(f.v[i], 345);
    simP.push_back(p.v[i]);
    simT.push_back(t.v[i]);
  }
  ASSERT_GT(simP.size(), 300u);
  // The inlet puts the simulated GPU at the capture's temperature (leakage depends on it).
  EXPECT_NEAR(mean(simT), mean(realT), 2.0) << platform;
  EXPECT_NEAR(mean(simP), mean(realP), 0.10 * mean(realP))
      << platform << ": simulated idle " << mean(simP) << " W, captured " << mean(realP) << " W";
}

TEST(Calibration, IdlePowerOfAnH100AndAnH200IsWithinTenPercentOfTheCaptures) {
  // Captured: H100 69 W at 41 C, H200 77 W at 28 C (dmon, 345 MHz). An idle GPU sits ~7 C
  // above its inlet with the fans at their minimum speed.
  expectIdleMatchesCapture("h100", "nvidia-smi-h100-dmon.txt", 34);
  expectIdleMatchesCapture("h200", "nvidia-smi-h200-dmon.txt", 21);
}

TEST(Calibration, OneGpuBurnActivityReproducesBothLoadedCaptures) {
  // gpu-burn at 1980 MHz: the H100 capture fixes its activity; the H200 (other base power,
  // cooler die) must then come out within 3 % of its own capture.
  const auto h100 = readDmon("nvidia-smi-h100-dmon.txt")[1];
  const auto h200 = readDmon("nvidia-smi-h200-dmon.txt")[1];
  auto avg = [](const std::vector<DmonRow>& rows, double DmonRow::*f) {
    double s = 0;
    for (const DmonRow& r : rows)
      s += r.*f;
    return s / static_cast<double>(rows.size());
  };
  ASSERT_EQ(avg(h100, &DmonRow::smClockMhz), 1980);
  ASSERT_EQ(avg(h200, &DmonRow::smClockMhz), 1980);
  const sim::PowerModel m100(*sim::findProfile("h100"), {1.0});
  const sim::PowerModel m200(*sim::findProfile("h200"), {1.0});
  const double p100 = avg(h100, &DmonRow::powerW), t100 = avg(h100, &DmonRow::tempC);
  // P is linear in the activity at a fixed clock and temperature.
  const double idle = m100.power(0, 1980, t100, 0), full = m100.power(0, 1980, t100, 1);
  const double activity = (p100 - idle) / (full - idle);
  EXPECT_GT(activity, 0.5);
  EXPECT_LT(activity, 0.9);  // a tensor-core GEMM of training is 1
  const double p200 = avg(h200, &DmonRow::powerW), t200 = avg(h200, &DmonRow::tempC);
  EXPECT_NEAR(m200.power(0, 1980, t200, activity), p200, 0.03 * p200);
}

struct RealGpu {
  std::vector<double> t, temp, util, power;
  double maxTemp = -1e9;
};

std::vector<RealGpu> readNanoGpt() {
  std::istringstream in(test::readFile(kTelemetry / "nanogpt-8gpu-h100class-nvidia-smi.csv.gz"));
  std::string line;
  std::getline(in, line);  // timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W
  std::vector<RealGpu> gpus(8);
  double t0 = -1;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string ts, g, temp, util, power;
    std::getline(ss, ts, ',');
    std::getline(ss, g, ',');
    std::getline(ss, temp, ',');
    std::getline(ss, util, ',');
    std::getline(ss, power, ',');
    // 2025-09-24T03:41:43.487Z: only seconds within the day matter (the log spans 266 s).
    const double t = std::stod(ts.substr(11, 2)) * 3600 + std::stod(ts.substr(14, 2)) * 60 +
                     std::stod(ts.substr(17, 6));
    if (t0 < 0) t0 = t;
    RealGpu& r = gpus.at(static_cast<size_t>(std::stoi(g)));
    r.t.push_back(t - t0);
    r.temp.push_back(std::stod(temp));
    r.util.push_back(std::stod(util));
    r.power.push_back(std::stod(power));
    r.maxTemp = std::max(r.maxTemp, r.temp.back());
  }
  return gpus;
}

double interpolate(const std::vector<double>& t, const std::vector<double>& v, double at) {
  const auto it = std::lower_bound(t.begin(), t.end(), at);
  if (it == t.begin()) return v.front();
  if (it == t.end()) return v.back();
  const size_t i = static_cast<size_t>(it - t.begin());
  const double w = (at - t[i - 1]) / (t[i] - t[i - 1]);
  return v[i - 1] + w * (v[i] - v[i - 1]);
}

TEST(Calibration, AnH100NodeUnderSustainedLoadFollowsTheRealFrontAndRearGroups) {
  const std::vector<RealGpu> real = readNanoGpt();
  // The real load: every GPU busy from 38.2 s to 255.4 s (first and last sample at >= 90 %
  // utilization after the start-up burst of GPU 0).
  double loadStart = 1e9, loadEnd = 0;
  for (const RealGpu& r : real)
    for (size_t i = 0; i < r.t.size(); ++i)
      if (r.util[i] >= 90 && r.t[i] > 35) {
        loadStart = std::min(loadStart, r.t[i]);
        loadEnd = std::max(loadEnd, r.t[i]);
      }
  ASSERT_NEAR(loadStart, 38.2, 0.3);
  ASSERT_NEAR(loadEnd, 255.4, 0.3);
  std::vector<size_t> order = {0, 1, 2, 3, 4, 5, 6, 7};
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return real[a].maxTemp < real[b].maxTemp; });

  // nanoGPT: data-parallel training of a small model that keeps every GPU at its power limit with
  // no dips (gradients reduced during the backward pass, a cheap optimizer step). TinyLlama with
  // overlap, four microbatches of 4 x 4096 tokens per GPU and iteration, behaves the same. The
  // cold aisle: 16 C puts the idle GPUs where the real ones idled (23 C front).
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.mbs = 4, c.gbs = 256, c.seqLen = 4096;
  c.overlap = true;
  c.inletTempC = 16;
  c.leadInS = 38.2;
  c.leadOutS = 10.5;
  c.durationS = loadEnd - loadStart;
  c.powerWindowS = 1.0;  // nvidia-smi power.draw: NVML's 1 s average
  const auto run = test::simulateAndOpen(c, dir / "nanogpt.h5");

  struct Point {
    double offsetS;  // after the load starts; negative: idle before it
    double tolFront, tolRear;
  };
  // The real hot group started 6 C warmer than the model's rear row: in the 20 s before the load
  // its GPUs drew ~120 W with their clocks up (the model idles at the idle clock, ~65 W), and one
  // of them idled at 42 C. Its tolerance is wider until the heatsinks have warmed.
  const Point points[] = {{-1, 3, 7},   {0.8, 3, 7},  {1.8, 3, 7},   {6.8, 3, 7},   {21.8, 3, 5},
                          {41.8, 3, 4}, {61.8, 3, 3}, {111.8, 3, 3}, {161.8, 3, 3}, {216.8, 3, 3}};
  const double end = loadEnd - loadStart;
  const Point cooling[] = {{end + 2, 3, 3}, {end + 5, 3, 3}, {end + 9, 3, 3}};
  // Temperatures are compared as window means (+-0.4 s in the first seconds of a transition,
  // +-2 s elsewhere): both the real and the simulated die dip briefly between iterations.
  auto windowMean = [](const std::vector<double>& t, const std::vector<double>& v, double at,
                       double half) {
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] >= at - half && t[i] <= at + half) sum += v[i], ++n;
    return n ? sum / n : interpolate(t, v, at);
  };
  auto check = [&](const Point& p) {
    const double half = std::fabs(p.offsetS) < 10 || std::fabs(p.offsetS - end) < 10 ? 0.4 : 2.0;
    double realCool = 0, realHot = 0, simFront = 0, simRear = 0;
    for (size_t k = 0; k < 8; ++k) {
      const RealGpu& r = real[order[k]];
      (k < 4 ? realCool : realHot) += windowMean(r.t, r.temp, loadStart + p.offsetS, half) / 4;
    }
    for (const GpuInfo& g : run->gpus()) {
      const test::Series s = test::series(*run, g.id, "temp_c");
      (g.slot == 0 ? simFront : simRear) += windowMean(s.t, s.v, c.leadInS + p.offsetS, half) / 4;
    }
    EXPECT_NEAR(simFront, realCool, p.tolFront) << "front row at " << p.offsetS << " s";
    EXPECT_NEAR(simRear, realHot, p.tolRear) << "rear row at " << p.offsetS << " s";
  };
  for (const Point& p : points)
    check(p);
  for (const Point& p : cooling)
    check(p);

  // Power under load (samples at >= 90 % utilization after the first 5 s): the distribution's
  // median within 2 %, its 5th and 95th percentiles within 3 %.
  std::vector<double> realP, simP;
  for (const RealGpu& r : real)
    for (size_t i = 0; i < r.t.size(); ++i)
      if (r.util[i] >= 90 && r.t[i] > loadStart + 5 && r.t[i] < loadEnd)
        realP.push_back(r.power[i]);
  for (const GpuInfo& g : run->gpus()) {
    const test::Series p = test::series(*run, g.id, "power_w");
    const test::Series u = test::series(*run, g.id, "util_pct");
    for (size_t i = 0; i < p.t.size(); ++i)
      if (u.v[i] >= 90 && p.t[i] > c.leadInS + 5 && p.t[i] < c.leadInS + end)
        simP.push_back(p.v[i]);
  }
  ASSERT_GT(simP.size(), 10000u);
  for (auto [q, tol] : {std::pair{0.5, 0.02}, {0.05, 0.03}, {0.95, 0.03}})
    EXPECT_NEAR(quantile(simP, q), quantile(realP, q), tol * quantile(realP, q))
        << "power quantile " << q;
}

}  // namespace
}  // namespace wl
