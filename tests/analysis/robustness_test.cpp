// SPDX-License-Identifier: GPL-3.0-or-later
// Odd runs and scopes analyse without crashing and report unknowns as null: a run without GPUs or
// kernels, all-missing power, a single sample, a range outside the run, an empty range.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/analysis_json.h"
#include "analysis/range_summary.h"
#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

// No NaN or infinity anywhere in the JSON (nlohmann would print them as null, but only the
// library's num() may decide that): check the values are finite or null.
void expectFiniteOrNull(const nlohmann::json& j) {
  if (j.is_number_float()) {
    EXPECT_TRUE(std::isfinite(j.get<double>()));
  }
  if (j.is_structured()) {
    for (const auto& v : j)
      expectFiniteOrNull(v);
  }
}

TEST(Robustness, EmptyRun) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(0, 1.0);
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_TRUE(a.gpus.empty());
  EXPECT_TRUE(std::isnan(a.totals.energy_j));
  const nlohmann::json j = toJson(a);
  EXPECT_TRUE(j["totals"]["energy_j"].is_null());
  EXPECT_TRUE(j["totals"]["throttled_fraction"].is_null());
  expectFiniteOrNull(j);
  const RangeSummary r = summarizeRange(*run, kT0, kT0 + kSec, {}, {});
  EXPECT_TRUE(r.gpus.empty());
}

TEST(Robustness, MissingValuesSingleSamplesAndOddRanges) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(3, 30.0);
  // GPU 0: every power value missing; GPU 1: one sample; GPU 2: normal but no clock.
  s.telemetry.push_back(test::sampled(kT0, kT0 + 30 * kSec, 100 * kMs,
                                      {"power_w", "sm_clock_mhz", "util_pct"},
                                      [](size_t m, int64_t) { return m == 0 ? kNaN : 100.0; }));
  s.telemetry.push_back(test::sampled(kT0, kT0 + 50 * kMs, 100 * kMs, {"power_w"},
                                      [](size_t, int64_t) { return 300.0; }));
  s.telemetry.push_back(test::sampled(kT0, kT0 + 30 * kSec, 100 * kMs, {"power_w", "temp_c"},
                                      [](size_t, int64_t) { return 50.0; }));
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_TRUE(std::isnan(a.gpus[0].energy_j));
  EXPECT_EQ(a.gpus[0].power.samples, 0u);
  EXPECT_EQ(a.gpus[1].power.samples, 1u);
  EXPECT_TRUE(std::isnan(a.gpus[1].power.mean));  // one sample covers no time
  EXPECT_FALSE(a.quality.valid);
  const nlohmann::json j = toJson(a);
  EXPECT_TRUE(j["gpus"][0]["energy_j"].is_null());
  EXPECT_TRUE(j["gpus"][1]["power_w"]["mean"].is_null());
  EXPECT_DOUBLE_EQ(j["gpus"][1]["power_w"]["max"].get<double>(), 300);
  expectFiniteOrNull(j);

  // A range entirely after the run, an empty range and a reversed one.
  for (const TimeRange r :
       {TimeRange{kT0 + 100 * kSec, kT0 + 200 * kSec}, TimeRange{kT0 + 5 * kSec, kT0 + 5 * kSec},
        TimeRange{kT0 + 9 * kSec, kT0 + 3 * kSec}}) {
    const RunAnalysis b = analyzeRun(*run, {r, {}, {}});
    EXPECT_LE(b.duration_s, 0.0);
    expectFiniteOrNull(toJson(b));
    const RangeSummary rs = summarizeRange(*run, r.t0, r.t1, {0, 1, 2}, {0});
    for (const GpuRangeSummary& g : rs.gpus)
      EXPECT_TRUE(std::isnan(g.energy_j));
  }
}

}  // namespace
}  // namespace wl
