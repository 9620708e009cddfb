// SPDX-License-Identifier: GPL-3.0-or-later
// The simulator against a real measurement: 8 H100-class GPUs of one node training nanoGPT for
// about 217 s (nvidia-smi every ~0.3 s, tests/data/telemetry). The real GPUs fall into a cool
// group (55-57 C at the end) and a hot group (66-74 C): the front and rear rows of the chassis.
// A simulated node under the same sustained load, with the same cold start, must land on both
// groups and on the power the real GPUs held under their 700 W limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim_test_support.h"
#include "support/read_file.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

struct RealGpu {
  double maxTemp = -1e9;
  std::vector<double> busyPower;  // samples with utilization >= 90 %
};

std::vector<RealGpu> readNanoGpt() {
  std::istringstream in(test::readFile(std::filesystem::path(WATTLINE_TEST_DATA) / "telemetry" /
                                       "nanogpt-8gpu-h100class-nvidia-smi.csv.gz"));
  std::string line;
  std::getline(in, line);  // timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W
  std::vector<RealGpu> gpus(8);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string ts, g, temp, util, power;
    std::getline(ss, ts, ',');
    std::getline(ss, g, ',');
    std::getline(ss, temp, ',');
    std::getline(ss, util, ',');
    std::getline(ss, power, ',');
    RealGpu& r = gpus.at(static_cast<size_t>(std::stoi(g)));
    r.maxTemp = std::max(r.maxTemp, std::stod(temp));
    if (std::stod(util) >= 90) r.busyPower.push_back(std::stod(power));
  }
  return gpus;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

TEST(Calibration, SustainedLoadMatchesARealH100NodeWithinAFewDegrees) {
  const std::vector<RealGpu> real = readNanoGpt();
  std::vector<double> realMax, realPower;
  for (const RealGpu& r : real) {
    ASSERT_GT(r.busyPower.size(), 600u);
    realMax.push_back(r.maxTemp);
    realPower.push_back(median(r.busyPower));
  }
  std::sort(realMax.begin(), realMax.end());
  const double realCool = (realMax[0] + realMax[1] + realMax[2] + realMax[3]) / 4;
  const double realHot = (realMax[4] + realMax[5] + realMax[6] + realMax[7]) / 4;

  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.model = *sim::findModel("Llama3-8B");  // dense compute that keeps the GPUs at the limit
  c.mbs = 2, c.gbs = 64, c.seqLen = 4096;
  c.inletTempC = 20;  // the real GPUs idled at 22-25 C
  c.leadInS = 20;
  c.durationS = 217;  // the real load lasted 217 s
  const auto run = test::simulateAndOpen(c, dir / "calibration.h5");
  double front = 0, rear = 0;
  std::vector<double> simPower;
  for (const GpuInfo& g : run->gpus()) {
    const test::Series t = test::series(*run, g.id, "temp_c");
    const double mx = *std::max_element(t.v.begin(), t.v.end());
    (g.slot == 0 ? front : rear) += mx / 4;
    const test::Series p = test::series(*run, g.id, "power_w");
    const test::Series u = test::series(*run, g.id, "util_pct");
    std::vector<double> busy;
    for (size_t i = 0; i < p.v.size(); ++i)
      if (u.v[i] >= 90) busy.push_back(p.v[i]);
    simPower.push_back(median(busy));
  }
  EXPECT_NEAR(front, realCool, 3.0) << "front row vs the real cool group";
  EXPECT_NEAR(rear, realHot, 3.0) << "rear row vs the real hot group";
  EXPECT_NEAR(median(simPower), median(realPower), 0.02 * median(realPower));
}

}  // namespace
}  // namespace wl
