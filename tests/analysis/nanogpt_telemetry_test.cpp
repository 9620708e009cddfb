// SPDX-License-Identifier: GPL-3.0-or-later
// Real telemetry: the nanoGPT 8-GPU nvidia-smi log (tests/data/telemetry), written with RunWriter
// and analysed; energy and time-weighted mean power per GPU are recomputed independently with
// numpy the way the seed paper's scripts do (telemetry_reference.py, numpy.trapz).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/gaps.h"
#include "analysis/run_analysis.h"
#include "analysis/telemetry_stats.h"
#include "analysis_test_util.h"
#include "support/missing.h"
#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

const std::string kCsv =
    std::string(WATTLINE_TEST_DATA) + "/telemetry/nanogpt-8gpu-h100class-nvidia-smi.csv.gz";

// "2025-09-24T03:41:43.487Z" -> ns since the epoch.
int64_t parseIso(const std::string& s) {
  std::tm tm{};
  int frac = 0, digits = 0;
  const size_t dot = s.find('.');
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    throw std::runtime_error("bad time " + s);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  if (dot != std::string::npos)
    for (size_t i = dot + 1; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i)
      frac = frac * 10 + (s[i] - '0'), ++digits;
  int64_t ns = frac;
  for (int d = digits; d < 9; ++d)
    ns *= 10;
  return static_cast<int64_t>(timegm(&tm)) * 1'000'000'000 + ns;
}

test::RunSpec nanoGptRun() {
  std::istringstream in(test::readFile(kCsv));
  std::string line;
  std::getline(in, line);  // header
  std::map<int, TelemetryTable> byGpu;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string ts, gpu, temp, util, power;
    std::getline(ss, ts, ',');
    std::getline(ss, gpu, ',');
    std::getline(ss, temp, ',');
    std::getline(ss, util, ',');
    std::getline(ss, power, ',');
    TelemetryTable& t = byGpu[std::stoi(gpu)];
    if (t.columns.empty()) t.columns = {{"power_w", {}}, {"temp_c", {}}, {"util_pct", {}}};
    t.t_ns.push_back(parseIso(ts));
    t.columns[0].values.push_back(std::stod(power));
    t.columns[1].values.push_back(std::stod(temp));
    t.columns[2].values.push_back(std::stod(util));
  }
  test::RunSpec s = test::baseRun(static_cast<int>(byGpu.size()), 1.0);
  s.info.name = "nanogpt-8gpu";
  s.info.simulated = false;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (auto& [g, t] : byGpu) {
    lo = std::min(lo, t.t_ns.front());
    hi = std::max(hi, t.t_ns.back());
    s.telemetry.push_back(t);
  }
  s.info.start_ns = lo;
  s.info.end_ns = hi;
  return s;
}

TEST(NanoGptTelemetry, EnergyAndMeanPowerMatchNumpy) {
  if (!test::havePythonNumpy())
    WL_SKIP_OR_FAIL_MISSING("/usr/bin/python3 with numpy not available");
  const auto ref =
      test::runProcess("/usr/bin/python3",
                       {std::string(WATTLINE_ANALYSIS_TEST_DIR) + "/telemetry_reference.py", kCsv});
  ASSERT_EQ(ref.exitCode, 0) << ref.err;
  const auto want = nlohmann::json::parse(ref.out);
  test::TempDir dir;
  const test::RunSpec spec = nanoGptRun();
  ASSERT_EQ(spec.telemetry.size(), 8u);
  const auto run = test::writeAndOpen(spec, dir / "nanogpt.h5");
  std::vector<int> gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto st = metricStats(*run, "power_w", gpus, TimeRange{});
  const auto gaps = findGaps(*run, "power_w", gpus);
  double total = 0;
  for (int g : gpus) {
    const auto& w = want[std::to_string(g)];
    SCOPED_TRACE(testing::Message() << "gpu " << g);
    const double e = w["energy_j"].get<double>();
    EXPECT_NEAR(st[g].integral, e, 1e-9 * e);
    EXPECT_NEAR(st[g].mean, w["mean_w"].get<double>(), 1e-9 * w["mean_w"].get<double>());
    // The seed paper's plain numpy.trapz integrates across the gaps; the difference is exactly the
    // energy of the gap segments.
    EXPECT_NEAR(w["trapz_all_j"].get<double>() - st[g].integral, w["gap_energy_j"].get<double>(),
                1e-6 * e);
    EXPECT_NEAR(st[g].max, w["max_w"].get<double>(), 1e-4);
    EXPECT_NEAR(st[g].min, w["min_w"].get<double>(), 1e-4);
    EXPECT_EQ(std::count_if(gaps.begin(), gaps.end(), [&](const Gap& x) { return x.gpu == g; }),
              w["gaps"].get<int>());
    total += e;
  }
  // The whole report says the same.
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_NEAR(a.totals.energy_j, total, 1e-9 * total);
  EXPECT_EQ(a.quality.gaps.size(), gaps.size());
  EXPECT_TRUE(a.quality.valid);
  EXPECT_NEAR(a.gpus[3].power.mean, want["3"]["mean_w"].get<double>(), 1e-6);
}

}  // namespace
}  // namespace wl
