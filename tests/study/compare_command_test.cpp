// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline compare`: JSON keys, totals equal to `wattline analyze --json`, deltas computed from
// those totals, the CSV table, baselines, filters, folders, exit codes and one-line errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "study_test_util.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir / "sweep" / "more");
    test::writeSyntheticVariant(dir / "sweep" / "a.h5", "run A", 1, 1.0);
    test::writeSyntheticVariant(dir / "sweep" / "b.h5", "run B", 2, 1.2,
                                [](test::SyntheticRun& r) { r.info.config.tp = 4; });
    test::writeSyntheticVariant(dir / "sweep" / "more" / "c.h5", "run C", 4, 0.8);
  }
  json analyzeTotals(const fs::path& run) {
    const auto r = test::runWattline({"analyze", run.string(), "--json"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return json::parse(r.out)["totals"];
  }
  test::TempDir dir;
};

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

TEST_F(CompareCommand, JsonHasRunsTotalsDeltasAndPareto) {
  const auto r = test::runWattline(
      {"compare", (dir / "sweep").string(), "--json", "--baseline", "run A", "--quiet"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  for (const char* k : {"normalization", "baseline", "columns", "runs", "deltas", "pareto"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["baseline"], "run A");
  ASSERT_EQ(j["runs"].size(), 3u);  // the folder's runs, the subfolder's included
  std::map<std::string, json> totals;
  for (const json& run : j["runs"]) {
    for (const char* k : {"name", "config", "platform", "simulated", "valid", "totals"})
      EXPECT_TRUE(run.contains(k)) << k;
    EXPECT_EQ(run["platform"], "H100");
    EXPECT_EQ(run["simulated"], true);
    EXPECT_EQ(run["valid"], true);
    // The same numbers as `wattline analyze --json`, to the last digit.
    EXPECT_EQ(run["totals"], analyzeTotals(run["path"].get<std::string>())) << run["name"];
    totals[run["name"]] = run["totals"];
  }
  EXPECT_EQ(j["runs"][1]["config"]["tp"], 4);
  EXPECT_EQ(j["runs"][1]["config"]["mbs"], 2);
  // Deltas: absolute = value - baseline, relative = that / |baseline|, per totals key.
  ASSERT_EQ(j["deltas"].size(), 3u);
  for (const json& d : j["deltas"]) {
    const json& t = totals[d["name"]];
    const json& base = totals["run A"];
    for (const char* key : {"energy_j", "mean_power_w", "tokens_per_s", "energy_per_token_j"}) {
      const double want = t[key].get<double>() - base[key].get<double>();
      EXPECT_DOUBLE_EQ(d["totals"][key]["absolute"].get<double>(), want) << d["name"] << key;
      EXPECT_DOUBLE_EQ(d["totals"][key]["relative"].get<double>(),
                       want / std::fabs(base[key].get<double>()));
    }
    EXPECT_TRUE(d["totals"]["throttled_by_reason"].is_object());
  }
  EXPECT_EQ(j["deltas"][0]["totals"]["energy_j"]["absolute"], 0.0);
  EXPECT_TRUE(j["pareto"].is_array());
  EXPECT_FALSE(j["pareto"].empty());
}

TEST_F(CompareCommand, CsvIsTheTable) {
  const auto r = test::runWattline({"compare", (dir / "sweep" / "a.h5").string(),
                                    (dir / "sweep" / "b.h5").string(), "--csv", "--baseline",
                                    "b.h5", "--quiet"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].rfind("label,name,path,platform,model,gpus,nodes,tp,pp,dp,ep,mbs,gbs,seq_len,"
                       "recompute,overlap,simulated,valid,invalid_reasons,energy_j,energy_j_delta,"
                       "energy_j_delta_pct,energy_j_rank,",
                       0),
            0u)
      << l[0];
  const size_t fields = static_cast<size_t>(std::count(l[0].begin(), l[0].end(), ',')) + 1;
  for (size_t i = 1; i < l.size(); ++i)
    EXPECT_EQ(static_cast<size_t>(std::count(l[i].begin(), l[i].end(), ',')) + 1, fields);
  EXPECT_EQ(l[1].rfind("run A,run A,", 0), 0u);
  EXPECT_EQ(l[2].rfind("run B,run B,", 0), 0u);
}

TEST_F(CompareCommand, FilterSortAndNormalize) {
  const auto r = test::runWattline({"compare", (dir / "sweep").string(), "--json", "--filter",
                                    "tp=2", "--sort", "-mbs", "--normalize", "gpu", "--quiet"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["normalization"], "gpu");
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["name"], "run C");  // mbs 4 before mbs 1
  EXPECT_EQ(j["runs"][1]["name"], "run A");
  // Per GPU: energy / 4 GPUs; totals stay as analyze prints them.
  for (const json& run : j["runs"])
    EXPECT_DOUBLE_EQ(run["metrics"]["energy_j"].get<double>(),
                     run["totals"]["energy_j"].get<double>() / 4);
  EXPECT_TRUE(j["deltas"].empty());
  EXPECT_TRUE(j["baseline"].is_null());
}

TEST_F(CompareCommand, ErrorsAndExitCodes) {
  const std::string sweep = (dir / "sweep").string();
  auto r = test::runWattline({"compare", sweep, "--baseline", "nope", "--quiet"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("no run 'nope'"), std::string::npos) << r.err;
  r = test::runWattline({"compare", (dir / "missing.h5").string(), "--quiet"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = test::runWattline({"compare", sweep, "--json", "--csv"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"compare", sweep, "--filter", "colour=red"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"compare", sweep, "--sort", "nonsense"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"compare", sweep, "--normalize", "per-watt"});
  EXPECT_EQ(r.exitCode, 2);
  r = test::runWattline({"compare"});
  EXPECT_EQ(r.exitCode, 2);
  fs::create_directories(dir / "empty");
  r = test::runWattline({"compare", (dir / "empty").string()});
  EXPECT_EQ(r.exitCode, 1);
}

// A filter that keeps no run exits 1 and lists the values the runs have for each key (it printed
// an empty table and exited 0).
TEST_F(CompareCommand, AFilterThatKeepsNoRunSaysWhatTheRunsHave) {
  const auto r =
      test::runWattline({"compare", (dir / "sweep").string(), "--filter", "tp=8,mbs=1", "--quiet"});
  EXPECT_EQ(r.exitCode, 1) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // run A: tp 2, mbs 1; run B: tp 4, mbs 2; run C: tp 2, mbs 4.
  EXPECT_NE(r.err.find("--filter tp=8,mbs=1: no run of the 3 matches (the runs have tp: 2, 4; "
                       "mbs: 1, 2, 4)"),
            std::string::npos)
      << r.err;
}

TEST_F(CompareCommand, ABrokenRunIsShownInvalidNotFatal) {
  std::ofstream(dir / "sweep" / "broken.h5") << "not HDF5";
  const auto r = test::runWattline({"compare", (dir / "sweep").string(), "--json", "--quiet"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("broken.h5"), std::string::npos) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 4u);
  const json& broken = j["runs"][2];  // sorted by path: a, b, broken, more/c
  EXPECT_EQ(broken["label"], "broken");
  EXPECT_EQ(broken["valid"], false);
  EXPECT_TRUE(broken["totals"].is_null());
  EXPECT_TRUE(broken["metrics"]["energy_j"].is_null());
  EXPECT_FALSE(broken["invalid_reasons"].empty());
}

TEST_F(CompareCommand, SecondRunReadsTheCache) {
  const std::string sweep = (dir / "sweep").string();
  auto first = test::runWattline({"compare", sweep, "--json", "--quiet"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  auto second = test::runWattline({"compare", sweep, "--json", "--quiet"});
  ASSERT_EQ(second.exitCode, 0) << second.err;
  const json a = json::parse(first.out), b = json::parse(second.out);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a["runs"][i]["source"], "analyzed");
    EXPECT_EQ(b["runs"][i]["source"], "cache");
    EXPECT_EQ(a["runs"][i]["totals"], b["runs"][i]["totals"]);
    EXPECT_EQ(a["runs"][i]["metrics"], b["runs"][i]["metrics"]);
  }
  EXPECT_TRUE(fs::exists(dir / "sweep" / "a.h5.summary.json"));
  auto none = test::runWattline({"compare", sweep, "--json", "--quiet", "--no-cache"});
  EXPECT_EQ(json::parse(none.out)["runs"][0]["source"], "analyzed");
}

// `wattline summarize` writes the same summaries a study would (one job per run on a cluster):
// compare afterwards reads every run from the cache and prints the numbers a fresh analysis gives.
TEST_F(CompareCommand, SummarizeWritesTheCacheThatCompareReads) {
  const std::string sweep = (dir / "sweep").string();
  const auto fresh = test::runWattline({"compare", sweep, "--json", "--quiet", "--no-cache"});
  ASSERT_EQ(fresh.exitCode, 0) << fresh.err;
  const auto s = test::runWattline({"summarize", sweep, "--threads", "2"});
  ASSERT_EQ(s.exitCode, 0) << s.err;
  EXPECT_NE(s.out.find("a.h5: analysed -> "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("/3] "), std::string::npos) << s.out;  // three runs, numbered
  EXPECT_TRUE(fs::exists(dir / "sweep" / "a.h5.summary.json"));
  const auto again = test::runWattline({"summarize", sweep});
  EXPECT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.out.find("a.h5: up to date"), std::string::npos) << again.out;
  const auto forced = test::runWattline({"summarize", sweep, "--force", "--quiet"});
  EXPECT_EQ(forced.exitCode, 0) << forced.err;
  EXPECT_EQ(forced.out, "");
  const auto cached = test::runWattline({"compare", sweep, "--json", "--quiet"});
  ASSERT_EQ(cached.exitCode, 0) << cached.err;
  const json a = json::parse(fresh.out), b = json::parse(cached.out);
  ASSERT_EQ(b["runs"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(b["runs"][i]["source"], "cache");
    EXPECT_EQ(a["runs"][i]["totals"], b["runs"][i]["totals"]);
  }
}

TEST_F(CompareCommand, SummarizeIntoACacheFolderAndFailsOnABrokenRun) {
  const fs::path cache = dir / "cache";
  const auto s = test::runWattline(
      {"summarize", (dir / "sweep" / "a.h5").string(), "--cache-dir", cache.string()});
  ASSERT_EQ(s.exitCode, 0) << s.err;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache))
    files += e.path().string().ends_with(".summary.json");
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(fs::exists(dir / "sweep" / "a.h5.summary.json"));
  std::ofstream(dir / "sweep" / "broken.h5") << "not HDF5";
  const auto b = test::runWattline({"summarize", (dir / "sweep").string(), "--quiet"});
  EXPECT_EQ(b.exitCode, 1);
  EXPECT_NE(b.err.find("broken.h5: unreadable"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("1 of 4 runs failed"), std::string::npos) << b.err;
  EXPECT_EQ(test::runWattline({"summarize"}).exitCode, 2);
}

}  // namespace
}  // namespace wl
