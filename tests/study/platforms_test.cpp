// SPDX-License-Identifier: GPL-3.0-or-later
// A study across platforms: the same small model and layout simulated on 8 H100s, 8 H200s and 8
// MI250 GCDs (4 packages). Every run is valid, has an energy per token and an efficiency and a
// place in the Pareto figure; "per GPU" divides by devices or by power domains as chosen
// (`--per device|package`), and `wattline compare` says which.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/study/study.h"
#include "analysis/study/study_figures.h"
#include "analysis/study/study_report.h"
#include "analysis/study/study_table.h"
#include "loaders/core/error.h"
#include "loaders/sim/simulator.h"
#include "study_test_util.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

class Platforms : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir;
    std::vector<fs::path> paths;
    for (const char* platform : {"h100", "h200", "mi250"}) {
      sim::SimConfig c = test::tinySimConfig();
      c.platform = *sim::findProfile(platform);
      c.tp = 2, c.pp = 2, c.dp = 2;
      c.durationS = 10;
      c.runName = platform;
      paths.push_back(dir->path() / (std::string(platform) + ".h5"));
      sim::simulate(c, paths.back());
    }
    StudyLoadOptions o;
    o.cache.write = false;
    study = new Study(loadStudy(paths, o));
  }
  static void TearDownTestSuite() {
    delete study;
    delete dir;
  }
  static double value(const StudyTable& t, const std::string& run, std::string_view column) {
    const size_t i = study->find(run);
    const auto cols = studyColumns();
    for (const StudyRow& r : t.rows)
      if (r.run == i)
        for (size_t c = 0; c < cols.size(); ++c)
          if (cols[c].id == column) return r.values[c];
    return kNaN;
  }
  static test::TempDir* dir;
  static Study* study;
};

test::TempDir* Platforms::dir = nullptr;
Study* Platforms::study = nullptr;

TEST_F(Platforms, EveryRunIsValidWithEnergyPerTokenAndEfficiency) {
  const StudyTable t = makeStudyTable(*study, {});
  ASSERT_EQ(t.rows.size(), 3u);
  for (const StudyRun& r : study->runs) {
    EXPECT_TRUE(r.summary.valid) << r.label << ": "
                                 << (r.summary.invalid_reasons.empty()
                                         ? std::string()
                                         : r.summary.invalid_reasons.front());
    EXPECT_TRUE(std::isfinite(value(t, r.label, "energy_per_token_j"))) << r.label;
    EXPECT_TRUE(std::isfinite(value(t, r.label, "efficiency_samples_per_s_mj"))) << r.label;
    EXPECT_GT(value(t, r.label, "energy_per_token_j"), 0) << r.label;
  }
  const RunSummary& mi = study->runs[study->find("mi250")].summary;
  EXPECT_EQ(mi.gpu_count, 8);
  EXPECT_EQ(mi.totals.domains, 4u);
  EXPECT_EQ(mi.totals.domain_kind, "package");
  EXPECT_TRUE(std::isfinite(mi.package_temp_skew_c));
  EXPECT_EQ(study->runs[study->find("h100")].summary.totals.domain_kind, "board");
  // Every run has a place in the Pareto figure.
  const ThroughputEnergyScatter s = throughputEnergyScatter(*study, tableRuns(t));
  EXPECT_EQ(s.points.size(), 3u);
  EXPECT_TRUE(s.left_out.empty());
  EXPECT_FALSE(s.front.empty());
}

TEST_F(Platforms, PerDeviceOrPerPackage) {
  StudyTableOptions o;
  o.normalization = Normalization::PerGpu;
  const StudyTable device = makeStudyTable(*study, o);
  o.per = PerUnit::Package;
  const StudyTable package = makeStudyTable(*study, o);
  const RunSummary& mi = study->runs[study->find("mi250")].summary;
  const RunSummary& h = study->runs[study->find("h100")].summary;
  // Energy per GPU: / 8 GCDs or / 4 packages on MI250; / 8 boards either way on H100.
  EXPECT_DOUBLE_EQ(value(device, "mi250", "energy_j"), mi.totals.energy_j / 8);
  EXPECT_DOUBLE_EQ(value(package, "mi250", "energy_j"), mi.totals.energy_j / 4);
  EXPECT_DOUBLE_EQ(value(device, "h100", "energy_j"), h.totals.energy_j / 8);
  EXPECT_DOUBLE_EQ(value(package, "h100", "energy_j"), h.totals.energy_j / 8);
  // Mean power: per GCD is half the mean per package; on boards both are the same.
  EXPECT_NEAR(value(device, "mi250", "mean_power_w"), mi.totals.mean_power_w / 2,
              1e-9 * mi.totals.mean_power_w);
  EXPECT_DOUBLE_EQ(value(package, "mi250", "mean_power_w"), mi.totals.mean_power_w);
  EXPECT_DOUBLE_EQ(value(device, "h100", "mean_power_w"), value(package, "h100", "mean_power_w"));
  EXPECT_EQ(normalizedUnit(*findStudyColumn("energy_j"), Normalization::PerGpu, PerUnit::Package),
            "J/package");
  EXPECT_EQ(parsePerUnit("GCD"), PerUnit::Device);
  EXPECT_EQ(parsePerUnit("board"), PerUnit::Package);
  EXPECT_THROW(parsePerUnit("rack"), Error);
  // The power bars follow the choice.
  const auto bars = configBars(*study, tableRuns(device), PerUnit::Device);
  EXPECT_NEAR(bars[2].power_mean_w, mi.totals.mean_power_w / 2, 1e-9 * mi.totals.mean_power_w);
}

TEST_F(Platforms, CompareSaysWhatPerGpuMeans) {
  const std::string folder = dir->path().string();
  const auto text = test::runWattline({"compare", folder, "--quiet", "--no-cache"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("mean power and \"per GPU\": per device (GPU; one GCD on MI250)"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("INVALID"), std::string::npos) << text.out;
  const auto pkg = test::runWattline({"compare", folder, "--quiet", "--no-cache", "--per",
                                      "package", "--normalize", "gpu", "--json"});
  ASSERT_EQ(pkg.exitCode, 0) << pkg.err;
  const auto j = nlohmann::json::parse(pkg.out);
  EXPECT_EQ(j["per"], "package");
  EXPECT_EQ(j["columns"][0]["unit"], "J/package");
  ASSERT_EQ(j["runs"].size(), 3u);
  for (const auto& r : j["runs"]) {
    EXPECT_TRUE(r["valid"].get<bool>()) << r["label"];
    EXPECT_TRUE(r["metrics"]["energy_per_token_j"].is_number()) << r["label"];
    EXPECT_TRUE(r.contains("domains"));
  }
  EXPECT_EQ(j["runs"][2]["domains"], 4);
  EXPECT_EQ(j["runs"][2]["domain_kind"], "package");
  EXPECT_FALSE(j["pareto"].empty());
  const auto bad = test::runWattline({"compare", folder, "--quiet", "--per", "rack"});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
}

// The study as a new user makes it: one small model, three TP x PP layouts on each
// platform, `wattline simulate` defaults (ten iterations of tens of milliseconds, 20 Hz telemetry:
// the TP 2 windows of H100 and H200, 0.2-0.6 s, hold no whole pyramid bucket of 0.54 s, and had
// no energy per token before windowMeans read their raw samples). Every row has an energy per
// token, an efficiency and a place in the Pareto figure.
TEST(PlatformLayouts, EveryLayoutOfEveryPlatformIsOnTheParetoFigure) {
  test::TempDir dir;
  std::vector<fs::path> paths;
  for (const char* platform : {"h100", "h200", "mi250"})
    for (const auto& [tp, pp] : {std::pair{2, 1}, std::pair{1, 2}, std::pair{2, 2}}) {
      sim::SimConfig c = test::tinySimConfig();
      c.platform = *sim::findProfile(platform);
      c.tp = tp, c.pp = pp, c.dp = 8 / (tp * pp);
      c.gbs = c.dp * c.mbs * 2 * pp;  // the simulate command's defaults
      c.seed = 1;
      c.durationS = 0;
      c.iterations = 10;
      c.runName = std::string(platform) + "-tp" + std::to_string(tp) + "pp" + std::to_string(pp);
      paths.push_back(dir.path() / (c.runName + ".h5"));
      sim::simulate(c, paths.back());
    }
  StudyLoadOptions o;
  o.cache.write = false;
  const Study study = loadStudy(paths, o);
  const StudyTable t = makeStudyTable(study, {});
  ASSERT_EQ(t.rows.size(), 9u);
  for (const StudyRow& r : t.rows) {
    const RunSummary& s = study.runs[r.run].summary;
    EXPECT_TRUE(s.valid) << s.name;
    EXPECT_GT(s.totals.energy_per_token_j, 0) << s.name;
    EXPECT_GT(s.totals.efficiency_samples_per_s_mj, 0) << s.name;
  }
  const ThroughputEnergyScatter scatter = throughputEnergyScatter(study, tableRuns(t));
  EXPECT_EQ(scatter.points.size(), 9u);
  EXPECT_TRUE(scatter.left_out.empty());
  EXPECT_FALSE(scatter.front.empty());
}

}  // namespace
}  // namespace wl
