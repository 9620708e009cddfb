// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline analyze` and `wattline info` on a simulated MI250 run (two GCDs per package, package
// power reported on the first): no invalidity for package power, and the documented keys of power
// domains, estimated shares and the intra-package skew, beside the keys that were there before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

class AnalyzeDomains : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    path_ = (dir_->path() / "mi250.h5").string();
    const auto r = test::runWattline(
        {"simulate", "--platform", "mi250", "--model", "TinyLlama-1.1B", "--gpus-per-node", "8",
         "--tp", "2", "--pp", "2", "--gbs", "16", "--iterations", "3", "--quiet", "-o", path_});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static test::TempDir* dir_;
  static std::string path_;
};

test::TempDir* AnalyzeDomains::dir_ = nullptr;
std::string AnalyzeDomains::path_;

TEST_F(AnalyzeDomains, Mi250RunIsValidWithPackagesAsPowerDomains) {
  const auto r = test::runWattline({"analyze", path_, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& q = j["data_quality"];
  EXPECT_EQ(q["valid"], true) << q["invalid_reasons"].dump();
  EXPECT_TRUE(q["invalid_reasons"].empty());
  EXPECT_TRUE(q["gpus_without_power"].empty());
  EXPECT_EQ(q["gpus_without_own_power"], nlohmann::json({1, 3, 5, 7}));
  EXPECT_TRUE(q["domains_without_power"].empty());
  EXPECT_EQ(q["has_telemetry"], true);

  const auto& t = j["totals"];
  EXPECT_EQ(t["domains"], 4);
  EXPECT_EQ(t["domain_gpus"], 8);
  EXPECT_EQ(t["domain_kind"], "package");
  ASSERT_TRUE(t["energy_per_token_j"].is_number());
  ASSERT_TRUE(t["efficiency_samples_per_s_mj"].is_number());
  // Mean power over packages, and per GCD: the same sum over twice as many devices.
  EXPECT_NEAR(t["mean_power_per_device_w"].get<double>(), t["mean_power_w"].get<double>() / 2,
              1e-9 * t["mean_power_w"].get<double>());

  ASSERT_EQ(j["domains"].size(), 4u);
  double energy = 0;
  for (size_t i = 0; i < 4; ++i) {
    const auto& d = j["domains"][i];
    EXPECT_EQ(d["id"], i);
    EXPECT_EQ(d["kind"], "package");
    EXPECT_EQ(d["gpus"], nlohmann::json({2 * i, 2 * i + 1}));
    EXPECT_EQ(d["power_gpu"], 2 * i);
    EXPECT_EQ(d["analysed_gpus"].size(), 2u);
    for (const char* k : {"name", "node", "power_limit_w", "energy_j", "power_w", "burstiness",
                          "power_cap_throttle"})
      EXPECT_TRUE(d.contains(k)) << k;
    // The package's energy is what its power GPU's column integrates to.
    EXPECT_DOUBLE_EQ(d["energy_j"].get<double>(), j["gpus"][2 * i]["energy_j"].get<double>());
    energy += d["energy_j"].get<double>();
  }
  EXPECT_NEAR(t["energy_j"].get<double>(), energy, 1e-9 * energy);

  for (size_t g = 0; g < 8; ++g) {
    const auto& gj = j["gpus"][g];
    EXPECT_EQ(gj["domain"], g / 2);
    EXPECT_EQ(gj["package"], g / 2);
    EXPECT_EQ(gj["power_role"], g % 2 ? "none" : "whole");
    EXPECT_EQ(gj["energy_estimate_basis"], "utilization");
    EXPECT_TRUE(gj["energy_estimated_j"].is_number());
    EXPECT_TRUE(gj["mean_power_estimated_w"].is_number());
    EXPECT_TRUE(gj["energy_share_estimated"].is_number());
    EXPECT_TRUE(gj["thermal"]["package_skew_c"].is_number());
    // A GCD without a power series of its own has no burstiness (null, not zero excursions).
    if (g % 2) {
      EXPECT_TRUE(gj["burstiness"]["excursions"].is_null()) << g;
    }
    // Keys that were there before stay.
    for (const char* k : {"energy_j", "power_w", "temp_c", "throttle", "burstiness", "thermal"})
      EXPECT_TRUE(gj.contains(k)) << k;
  }
  // The two estimated shares of a package add up to its energy.
  EXPECT_NEAR(j["gpus"][0]["energy_estimated_j"].get<double>() +
                  j["gpus"][1]["energy_estimated_j"].get<double>(),
              j["domains"][0]["energy_j"].get<double>(), 1e-9 * energy);

  const auto& sp = j["spatial"];
  ASSERT_EQ(sp["packages"].size(), 4u);
  for (const char* k : {"domain", "name", "node", "gpus", "temp_mean_c", "temp_skew_c",
                        "temp_max_skew_c", "clock_skew_mhz", "hottest_gpu"})
    EXPECT_TRUE(sp["packages"][0].contains(k)) << k;
  const auto& p0 = sp["packages"][0];
  EXPECT_NEAR(p0["temp_skew_c"].get<double>(),
              std::fabs(p0["temp_mean_c"][0].get<double>() - p0["temp_mean_c"][1].get<double>()),
              1e-9);
  EXPECT_EQ(sp["package_temp_skew_c"]["n"], 4);
  EXPECT_TRUE(sp.contains("package_clock_skew_mhz"));
}

TEST_F(AnalyzeDomains, TextNamesPackagesAndTheGcdSkew) {
  const auto r = test::runWattline({"analyze", path_});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("data       valid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mean over 4 power domains (packages)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("power domains (4; power and energy per domain)"), std::string::npos);
  EXPECT_NE(r.out.find("(estimated)"), std::string::npos);
  EXPECT_NE(r.out.find("intra-package GCD skew (4 packages)"), std::string::npos);
}

TEST_F(AnalyzeDomains, InfoListsTheDomains) {
  const auto r = test::runWattline({"info", path_, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["domains"].size(), 4u);
  EXPECT_EQ(j["domains"][3]["gpus"], nlohmann::json({6, 7}));
  EXPECT_EQ(j["domains"][3]["power_gpu"], 6);
  EXPECT_EQ(j["domains"][3]["power_limit_w"], 500.0);  // the MI250 OAM package TDP
  EXPECT_EQ(j["gpus"][7]["domain"], 3);
  EXPECT_EQ(j["gpus"][7]["power_role"], "none");
  const auto text = test::runWattline({"info", path_});
  EXPECT_NE(text.out.find("power domains (4)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("power on gpu 6"), std::string::npos) << text.out;
}

// An amd-smi metric CSV of 4 MI250 GCDs sampled every second for 12 s (gfx activity 50 %).
// GCD 0 reports its package's socket power 200 + 10 k W (k = 0..11), GCD 2 300 W; GCDs 1 and 3
// report N/A, or with `duplicated` the same value as the first GCD of their package.
std::string amdSmiCsv(bool duplicated) {
  std::string s = "timestamp,gpu,gfx_activity,socket_power,gfx_0_clk,gfx_0_max_clk,edge\n";
  for (int k = 0; k < 12; ++k) {
    for (int g = 0; g < 4; ++g) {
      const std::string first = std::to_string(g < 2 ? 200 + 10 * k : 300);
      const std::string power = g % 2 == 0 || duplicated ? first : "N/A";
      s += std::to_string(1700000000 + k) + "," + std::to_string(g) + ",50," + power +
           ",1700,1700," + std::to_string(45 + g) + "\n";
    }
    s += "\n";
  }
  return s;
}

// Imports an amd-smi CSV and analyses it: each package is one power domain whose energy is the
// trapezoid of its power, by hand: package 0 = sum over k = 0..10 of (205 + 10 k) = 2805 J,
// package 1 = 300 W x 11 s = 3300 J.
void checkAmdSmiImport(const test::TempDir& dir, bool duplicated) {
  const auto csv = dir / (duplicated ? "dup.csv" : "na.csv");
  const auto run = dir / (duplicated ? "dup.h5" : "na.h5");
  std::ofstream(csv) << amdSmiCsv(duplicated);
  const auto imp = test::runWattline({"import", csv.string(), "-o", run.string()});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  const auto r = test::runWattline({"analyze", run.string(), "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["data_quality"]["valid"], true) << j["data_quality"]["invalid_reasons"].dump();
  EXPECT_EQ(j["data_quality"]["gpus_without_own_power"], nlohmann::json({1, 3}));
  ASSERT_EQ(j["domains"].size(), 2u);
  EXPECT_EQ(j["domains"][0]["kind"], "package");
  EXPECT_EQ(j["domains"][0]["power_gpu"], 0);
  EXPECT_EQ(j["domains"][1]["power_gpu"], 2);
  EXPECT_NEAR(j["domains"][0]["energy_j"].get<double>(), 2805.0, 1e-6);
  EXPECT_NEAR(j["domains"][1]["energy_j"].get<double>(), 3300.0, 1e-6);
  EXPECT_NEAR(j["totals"]["energy_j"].get<double>(), 6105.0, 1e-6);
  bool paired = false;
  for (const auto& n : j["data_quality"]["notes"])
    if (n["code"] == "gcd_pairs")
      paired = !duplicated ||
               n["message"].get<std::string>().find("same board power") != std::string::npos;
  EXPECT_TRUE(paired) << j["data_quality"]["notes"].dump();
}

TEST(AnalyzeDomainsImport, AmdSmiPackagePowerOnOneGcd) {
  test::TempDir dir;
  checkAmdSmiImport(dir, false);
}

TEST(AnalyzeDomainsImport, AmdSmiDuplicatedPackagePowerIsCountedOnce) {
  test::TempDir dir;
  checkAmdSmiImport(dir, true);
}

}  // namespace
}  // namespace wl
