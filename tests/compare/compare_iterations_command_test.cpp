// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline compare A.h5 B.h5 --iterations`: JSON keys, delta = a - b, every value equal to
// `wattline analyze --range` over the same step of that run, the CSV, the text table and the
// exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "phased_run.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using nlohmann::json;
constexpr int64_t kS = 1'000'000'000;

const char* const kKeys[] = {"duration_s",   "energy_j",       "energy_per_token_j",
                             "mean_power_w", "peak_power_w",   "peak_temp_c",
                             "throttled_s",  "exposed_comm_s", "bubble_s"};

class CompareIterationsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    test::PhasedRunSpec sa;
    sa.name = "run A";
    sa.stepNs = {3 * kS, 3 * kS, 3 * kS};
    sa.config.mbs = 4, sa.config.gbs = 8, sa.config.seq_len = 1024;
    test::PhasedRunSpec sb = sa;
    sb.name = "run B";
    sb.config.mbs = 1;
    sb.stepNs = {2 * kS, 2 * kS, 2 * kS, 2 * kS};
    sb.sampleNs = 20'000'000;
    sb.phasePowerW = {400, 650, 250, 100};
    test::writePhasedRun(sa, a);
    test::writePhasedRun(sb, b);
  }
  test::TempDir dir;
  std::string a = (dir / "a.h5").string(), b = (dir / "b.h5").string();
};

json run(const std::vector<std::string>& args) {
  const auto r = test::runWattline(args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return json::parse(r.out);
}

TEST_F(CompareIterationsCommand, JsonKeysAndDeltas) {
  const json j = run({"compare", a, b, "--iterations", "--json", "--quiet"});
  for (const char* k :
       {"a", "b", "differences", "warnings", "alignment", "columns", "iterations", "summary"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["a"]["label"], "mbs4");
  EXPECT_EQ(j["b"]["label"], "mbs1");
  EXPECT_EQ(j["differences"]["config"][0]["key"], "mbs");
  EXPECT_EQ(j["alignment"]["mode"], "warp");
  EXPECT_EQ(j["alignment"]["shift_step"], 1);
  // Backward draws 650 W in B: under the warp, |A - B| is 50 W in backward only; under the shift
  // the phases drift apart.
  const json& pd = j["alignment"]["power_difference"];
  EXPECT_NEAR(pd["warp"]["mean_abs_w"].get<double>(), 25.0, 1e-9);
  EXPECT_GT(pd["shift"]["mean_abs_w"].get<double>(), 50.0);
  ASSERT_EQ(j["iterations"].size(), 3u);  // the common steps 0, 1, 2
  for (size_t k = 0; k < 3; ++k) {
    const json& it = j["iterations"][k];
    EXPECT_EQ(it["step"], k);
    for (const char* key : kKeys) {
      SCOPED_TRACE(key);
      ASSERT_TRUE(it["a"][key].is_number());
      ASSERT_TRUE(it["b"][key].is_number());
      const double x = it["a"][key], y = it["b"][key];
      EXPECT_EQ(it["delta"][key].get<double>(), x - y);
      if (y != 0) {
        EXPECT_NEAR(it["delta_pct"][key].get<double>(), 100 * (x - y) / std::fabs(y), 1e-9);
      }
    }
    EXPECT_TRUE(it["a"]["throttled_by_reason_s"].contains("sw_power_cap"));
  }
  EXPECT_NEAR(j["iterations"][1]["delta"]["throttled_s"].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(j["summary"]["steps"], 3);
  EXPECT_NEAR(j["summary"]["a"]["duration_s"]["mean"].get<double>(), 3.0, 1e-12);
  EXPECT_NEAR(j["summary"]["delta"]["duration_s"]["stddev"].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(j["summary"]["delta_pct"]["duration_s"].get<double>(), 50.0, 1e-9);
}

TEST_F(CompareIterationsCommand, EveryValueEqualsAnalyzeOverThatStep) {
  const json j = run({"compare", a, b, "--iterations", "--json", "--quiet"});
  for (const auto& [side, path] : {std::pair{"a", a}, std::pair{"b", b}}) {
    const json whole = run({"analyze", path, "--json"});
    for (size_t k = 0; k < j["iterations"].size(); ++k) {
      SCOPED_TRACE(std::string(side) + " step " + std::to_string(k));
      const json& v = j["iterations"][k][side];
      const json& step = whole["iterations"]["steps"][k];
      EXPECT_EQ(v["duration_s"], step["duration_s"]);
      const int64_t s = v["start_ns"], e = v["end_ns"];
      EXPECT_EQ(s, step["start_ns"].get<int64_t>());
      EXPECT_EQ(e, step["end_ns"].get<int64_t>());
      const json r =
          run({"analyze", path, "--json", "--range", std::to_string(s) + ":" + std::to_string(e)});
      const json& t = r["totals"];
      EXPECT_EQ(v["energy_j"], t["energy_j"]);
      EXPECT_EQ(v["energy_per_token_j"].get<double>(), t["energy_j"].get<double>() / 8192);
      EXPECT_EQ(v["mean_power_w"], t["mean_power_w"]);
      EXPECT_EQ(v["peak_power_w"], t["peak_power_w"]);
      EXPECT_EQ(v["throttled_s"], t["throttled_s"]);
      EXPECT_NEAR(
          v["throttled_by_reason_s"]["sw_power_cap"].get<double>(),
          t["throttled_by_reason"]["sw_power_cap"].get<double>() * t["busy_s"].get<double>(), 1e-9);
      double peakTemp = -1e300, exposed = 0, bubble = 0;
      for (const json& g : r["gpus"])
        peakTemp = std::max(peakTemp, g["thermal"]["max_c"].get<double>());
      EXPECT_EQ(v["peak_temp_c"].get<double>(), peakTemp);
      size_t traced = 0;
      for (const json& rank : r["ranks"])
        if (rank["kernels"].get<int64_t>() > 0) {
          ++traced;
          exposed += rank["exposed_comm_ns"].get<int64_t>() * 1e-9;
          bubble += (e - s - rank["compute_ns"].get<int64_t>()) * 1e-9;
        }
      ASSERT_EQ(traced, 2u);
      EXPECT_NEAR(v["exposed_comm_s"].get<double>(), exposed / 2, 1e-12);
      EXPECT_NEAR(v["bubble_s"].get<double>(), bubble / 2, 1e-12);
    }
  }
}

TEST_F(CompareIterationsCommand, CsvAndText) {
  const auto csv = test::runWattline({"compare", a, b, "--iterations", "--csv", "--quiet"});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  std::istringstream in(csv.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u);  // header + 3 steps
  EXPECT_EQ(lines[0].rfind("step,a_start_ns,a_end_ns,b_start_ns,b_end_ns,a_duration_s,b_duration_s,"
                           "delta_duration_s,delta_pct_duration_s,a_energy_j,",
                           0),
            0u);
  const size_t columns = static_cast<size_t>(std::count(lines[0].begin(), lines[0].end(), ',')) + 1;
  EXPECT_EQ(columns, 5u + 10 * 4 + 8 * 3 + 4 * 8);  // ... throttle causes, ledger parts
  for (size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(static_cast<size_t>(std::count(lines[i].begin(), lines[i].end(), ',')) + 1, columns);
  EXPECT_EQ(lines[2].substr(0, 2), "1,");
  EXPECT_NE(lines[1].find(",3,2,1,50,"), std::string::npos);  // duration a, b, delta, delta %

  const auto text = test::runWattline({"compare", a, b, "--iterations", "--quiet"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  for (const char* part : {"A: mbs4", "B: mbs1", "microbatch: 4 vs 1", "step time", "bubble",
                           "mean |A - B| power", "over 3 steps", "A-B %"})
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
}

// With stderr not a terminal (a log), progress is a few lines, each naming a different moment,
// and "done" once, at the end (it once printed "compare: NN% done" nine times).
TEST_F(CompareIterationsCommand, ProgressInALogSaysDoneOnce) {
  const auto r = test::runWattline({"compare", a, b, "--iterations", "--csv"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream in(r.err);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (l.rfind("compare: ", 0) == 0) lines.push_back(l);
  ASSERT_FALSE(lines.empty()) << r.err;
  EXPECT_LE(lines.size(), 11u) << r.err;
  size_t done = 0;
  for (const std::string& l : lines)
    done += l.size() >= 5 && l.compare(l.size() - 5, 5, " done") == 0 ? 1 : 0;
  EXPECT_EQ(done, 1u) << r.err;
  EXPECT_EQ(lines.back(), "compare: 100% done") << r.err;
}

TEST_F(CompareIterationsCommand, ExitCodes) {
  auto code = [](const std::vector<std::string>& args) {
    const auto r = test::runWattline(args);
    if (r.exitCode != 0) {
      EXPECT_FALSE(r.err.empty());
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n') >= 1, true);
    }
    return r;
  };
  const auto one = code({"compare", a, "--iterations"});
  EXPECT_EQ(one.exitCode, 2);
  EXPECT_NE(one.err.find("exactly two runs"), std::string::npos) << one.err;
  EXPECT_EQ(code({"compare", a, b, a, "--iterations"}).exitCode, 2);
  EXPECT_EQ(code({"compare", dir.path().string(), b, "--iterations"}).exitCode, 2);
  const auto baseline = code({"compare", a, b, "--iterations", "--baseline", "run A"});
  EXPECT_EQ(baseline.exitCode, 2);
  EXPECT_NE(baseline.err.find("--baseline"), std::string::npos) << baseline.err;
  EXPECT_EQ(code({"compare", a, b, "--iterations", "--json", "--csv"}).exitCode, 2);
  EXPECT_EQ(code({"compare", a, (dir / "missing.h5").string(), "--iterations"}).exitCode, 1);
}

}  // namespace
}  // namespace wl
