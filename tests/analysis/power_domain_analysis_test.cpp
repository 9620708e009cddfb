// SPDX-License-Identifier: GPL-3.0-or-later
// Analyses per power domain on small runs computed by hand: the package energy is the trapezoid
// of the package power, totals count each package once, a GCD without power of its own is not a
// missing GPU, power-cap throttling of that GCD is judged on the package's power and cap, the
// estimated energy shares, the intra-package skew, and a partial selection of a package.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/run_analysis.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kSec;
using test::kT0;

// Four MI250-like GCDs in two packages (0-1, 2-3), cap 560 W each, sampled every 1 s for 11
// samples (0..10 s). Package power is on the first GCD of each pair, NaN on the second:
//   GPU 0: 100 + 10 i W (i = 0..10)    GPU 2: 300 W at even i, 500 W at odd i.
// Utilization: GPU 0 60 %, GPU 1 20 %, GPU 2 50 %, GPU 3 unknown. Temperatures: 50, 56, 60, 61 C.
test::RunSpec packageRun() {
  test::RunSpec s = test::baseRun(4, 11.0);
  s.info.platform = "MI250";
  s.info.sample_interval_s = 1.0;
  const double temp[] = {50, 56, 60, 61};
  const double util[] = {60, 20, 50, kNaN};
  for (int g = 0; g < 4; ++g) {
    s.gpus[static_cast<size_t>(g)].package = g / 2;
    s.gpus[static_cast<size_t>(g)].power_limit_w = 560;
    s.telemetry.push_back(test::sampled(kT0, kT0 + 11 * kSec, kSec,
                                        {"power_w", "temp_c", "sm_clock_mhz", "util_pct"},
                                        [&, g](size_t m, int64_t t) {
                                          const auto i = static_cast<int>((t - kT0) / kSec);
                                          switch (m) {
                                            case 0:
                                              if (g == 0) return 100.0 + 10 * i;
                                              if (g == 2) return i % 2 ? 500.0 : 300.0;
                                              return kNaN;
                                            case 1:
                                              return temp[g];
                                            case 2:
                                              return 1700.0 - 20 * g;
                                            default:
                                              return util[g];
                                          }
                                        }));
  }
  return s;
}

TEST(PowerDomainAnalysis, PackageEnergyIsTheTrapezoidOfThePackagePower) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(packageRun(), dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  ASSERT_EQ(a.domains.size(), 2u);
  // By hand: package 0 = sum over i = 0..9 of (p_i + p_i+1) / 2 = sum (105 + 10 i) = 1500 J;
  // package 1 = ten segments averaging (300 + 500) / 2 = 4000 J.
  EXPECT_NEAR(a.domains[0].energy_j, 1500.0, 1e-9);
  EXPECT_NEAR(a.domains[1].energy_j, 4000.0, 1e-9);
  EXPECT_EQ(a.domains[0].domain.power_gpu, 0);
  EXPECT_EQ(a.domains[1].analysed_gpus, (std::vector<int>{2, 3}));
  // Time-weighted means (left Riemann): (100 + ... + 190) / 10 = 145 W and 400 W.
  EXPECT_NEAR(a.domains[0].power.mean, 145.0, 1e-9);
  EXPECT_NEAR(a.domains[1].power.mean, 400.0, 1e-9);
  EXPECT_DOUBLE_EQ(a.domains[0].power.max, 200.0);
  EXPECT_DOUBLE_EQ(a.domains[1].power.max, 500.0);

  const RunTotals& t = a.totals;
  EXPECT_NEAR(t.energy_j, 5500.0, 1e-9);
  EXPECT_NEAR(t.mean_power_w, (145.0 + 400.0) / 2, 1e-9);  // mean over the two packages
  EXPECT_NEAR(t.mean_power_per_device_w, (145.0 + 400.0) / 4, 1e-9);
  EXPECT_DOUBLE_EQ(t.peak_power_w, 500.0);
  EXPECT_EQ(t.domains, 2u);
  EXPECT_EQ(t.domain_gpus, 4u);
  EXPECT_EQ(t.domain_kind, "package");

  // GPUs 1 and 3 have no power of their own: expected, the run is valid.
  EXPECT_TRUE(a.quality.valid) << (a.quality.invalid_reasons.empty()
                                       ? std::string()
                                       : a.quality.invalid_reasons.front());
  EXPECT_TRUE(a.quality.gpus_without_power.empty());
  EXPECT_EQ(a.quality.gpus_without_own_power, (std::vector<int>{1, 3}));
  EXPECT_TRUE(a.quality.domains_without_power.empty());
  bool noted = false;
  for (const QualityNote& n : a.quality.notes)
    noted = noted || n.code == "power_domain";
  EXPECT_TRUE(noted);
}

TEST(PowerDomainAnalysis, EstimatedSharesFollowUtilization) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(packageRun(), dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  // Package 0: utilization integrals 60 x 10 s and 20 x 10 s: shares 3/4 and 1/4 of 1500 J.
  const GpuAnalysis* g0 = a.gpu(0);
  const GpuAnalysis* g1 = a.gpu(1);
  ASSERT_TRUE(g0 && g1);
  EXPECT_EQ(g0->power_role, PowerRole::Whole);
  EXPECT_EQ(g1->power_role, PowerRole::None);
  EXPECT_EQ(g1->domain, 0);
  EXPECT_EQ(g0->energy_share.basis, ShareBasis::Utilization);
  EXPECT_NEAR(g0->energy_share.share, 0.75, 1e-12);
  EXPECT_NEAR(g0->energy_share.energy_j, 1125.0, 1e-9);
  EXPECT_NEAR(g1->energy_share.energy_j, 375.0, 1e-9);
  EXPECT_NEAR(g1->energy_share.mean_power_w, 145.0 / 4, 1e-9);
  // Package 1: GPU 3's utilization is unknown: split equally.
  EXPECT_EQ(a.gpu(3)->energy_share.basis, ShareBasis::Equal);
  EXPECT_NEAR(a.gpu(2)->energy_share.energy_j, 2000.0, 1e-9);
  EXPECT_NEAR(a.gpu(3)->energy_share.energy_j, 2000.0, 1e-9);
}

TEST(PowerDomainAnalysis, IntraPackageSkew) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(packageRun(), dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  ASSERT_EQ(a.spatial.packages.size(), 2u);
  const PackageSkew& p0 = a.spatial.packages[0];
  EXPECT_EQ(p0.gpus, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(p0.temp_skew_c, 6.0);
  EXPECT_DOUBLE_EQ(p0.temp_max_skew_c, 6.0);
  EXPECT_DOUBLE_EQ(p0.clock_skew_mhz, 20.0);
  EXPECT_EQ(p0.hottest_gpu, 1);
  EXPECT_DOUBLE_EQ(a.spatial.packages[1].temp_skew_c, 1.0);
  EXPECT_DOUBLE_EQ(a.spatial.package_temp_skew_c.mean, 3.5);
  EXPECT_DOUBLE_EQ(a.spatial.package_temp_skew_c.max, 6.0);
  EXPECT_DOUBLE_EQ(a.gpu(1)->package_skew_c, 6.0);
  EXPECT_DOUBLE_EQ(a.gpu(0)->package_skew_c, -6.0);
}

TEST(PowerDomainAnalysis, BoardsAreOneDomainPerGpu) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(2, 5.0);
  for (int g = 0; g < 2; ++g)
    s.telemetry.push_back(test::sampled(kT0, kT0 + 5 * kSec, kSec / 4, {"power_w"},
                                        [g](size_t, int64_t) { return g ? 600.0 : 400.0; }));
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  ASSERT_EQ(a.domains.size(), 2u);
  EXPECT_EQ(a.totals.domain_kind, "board");
  EXPECT_NEAR(a.totals.mean_power_w, 500.0, 1e-9);
  EXPECT_NEAR(a.totals.mean_power_per_device_w, 500.0, 1e-9);
  EXPECT_EQ(a.gpu(1)->energy_share.basis, ShareBasis::Measured);
  EXPECT_DOUBLE_EQ(a.gpu(1)->energy_share.energy_j, a.gpu(1)->energy_j);
  EXPECT_TRUE(a.spatial.packages.empty());
}

TEST(PowerDomainAnalysis, PackageWithoutPowerIsInvalid) {
  test::TempDir dir;
  test::RunSpec s = packageRun();
  for (double& v : s.telemetry[2].columns[0].values)
    v = kNaN;  // package 1 reports nothing
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_FALSE(a.quality.valid);
  EXPECT_EQ(a.quality.domains_without_power, (std::vector<int>{1}));
  // Neither GCD reports power: the package is summed over both, and both lack it.
  EXPECT_EQ(a.quality.gpus_without_power, (std::vector<int>{2, 3}));
  ASSERT_FALSE(a.quality.invalid_reasons.empty());
  EXPECT_EQ(a.quality.invalid_reasons.back(), "package 1 (gpus 2, 3) has no power samples");
}

// Each GCD of a package reports its own share (power on both): the package's power is their sum.
TEST(PowerDomainAnalysis, PackageOfSharesIsTheirSum) {
  test::TempDir dir;
  test::RunSpec s = packageRun();
  for (double& v : s.telemetry[1].columns[0].values)
    v = 50.0;  // GPU 1 reports 50 W of package 0
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  ASSERT_EQ(run->domains()[0].power_gpu, -1);
  const RunAnalysis a = analyzeRun(*run);
  EXPECT_NEAR(a.domains[0].energy_j, 1500.0 + 50.0 * 10, 1e-9);
  EXPECT_NEAR(a.domains[0].power.mean, 145.0 + 50.0, 1e-9);
  EXPECT_TRUE(std::isnan(a.domains[0].power.max));  // not simultaneous: unknown
  EXPECT_TRUE(std::isnan(a.domains[0].burstiness.peak_to_average));
  EXPECT_EQ(a.gpu(1)->power_role, PowerRole::Share);
  EXPECT_EQ(a.gpu(1)->energy_share.basis, ShareBasis::Measured);
  EXPECT_NEAR(a.gpu(1)->energy_share.energy_j, 500.0, 1e-9);
  EXPECT_NEAR(a.totals.energy_j, 2000.0 + 4000.0, 1e-9);
  EXPECT_TRUE(a.quality.valid);
  EXPECT_EQ(a.quality.gpus_without_own_power, (std::vector<int>{3}));
}

TEST(PowerDomainAnalysis, SelectingOneGcdAnalysesItsWholePackage) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(packageRun(), dir / "run.h5");
  AnalysisScope scope;
  scope.gpus = {1};
  const RunAnalysis a = analyzeRun(*run, scope);
  ASSERT_EQ(a.domains.size(), 1u);
  EXPECT_NEAR(a.totals.energy_j, 1500.0, 1e-9);  // the package's, read from GPU 0
  EXPECT_EQ(a.domains[0].analysed_gpus, (std::vector<int>{1}));
  EXPECT_TRUE(a.quality.valid);
  EXPECT_NEAR(a.gpu(1)->energy_share.energy_j, 375.0, 1e-9);
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes.back().find("part of package 0"), std::string::npos) << a.notes.back();
}

// Two GCDs of one package, cap 560 W: GPU 0 reports the package's 550 W (>= 98 % of the cap) and
// runs at full clock; GPU 1 has no power column and drops to 1500 MHz from 5 s to 8 s, busy,
// with no throttle reasons recorded. Its throttling is inferred from the package power and cap.
TEST(PowerDomainAnalysis, GcdPowerCapThrottlingUsesThePackagePowerAndCap) {
  test::TempDir dir;
  test::RunSpec s = test::baseRun(2, 10.0);
  for (int g = 0; g < 2; ++g) {
    s.gpus[static_cast<size_t>(g)].package = 0;
    s.gpus[static_cast<size_t>(g)].power_limit_w = 560;
    s.telemetry.push_back(test::sampled(kT0, kT0 + 10 * kSec, kSec,
                                        {"power_w", "sm_clock_mhz", "util_pct"},
                                        [g](size_t m, int64_t t) {
                                          const auto i = (t - kT0) / kSec;
                                          if (m == 0) return g == 0 ? 550.0 : kNaN;
                                          if (m == 1)
                                            return g == 1 && i >= 5 && i < 8 ? 1500.0 : 1980.0;
                                          return 100.0;
                                        }));
  }
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const RunAnalysis a = analyzeRun(*run);
  const GpuThrottle& t1 = a.gpu(1)->throttle;
  EXPECT_NEAR(t1.throttled_s, 3.0, 1e-9);
  EXPECT_NEAR(t1.by_cause_s[static_cast<size_t>(ThrottleCause::PowerCapInferred)], 3.0, 1e-9);
  EXPECT_NEAR(t1.power_throttled_s, 3.0, 1e-9);
  ASSERT_EQ(a.domains.size(), 1u);
  EXPECT_NEAR(a.domains[0].power_cap_throttled_s, 3.0, 1e-9);
  EXPECT_NEAR(a.domains[0].busy_s, 18.0, 1e-9);  // 9 covered seconds on each GCD, fully busy
  EXPECT_NEAR(a.domains[0].powerCapFraction(), 3.0 / 18.0, 1e-12);
}

}  // namespace
}  // namespace wl
