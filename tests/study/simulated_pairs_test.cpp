// SPDX-License-Identifier: GPL-3.0-or-later
// Simulated pairs of runs that differ in one known way (fixed seeds, TinyLlama on one 8-GPU node),
// compared through the study table: the direction of each difference is the one the simulator
// models (docs/simulator.md) and the seed paper reports.
#include <gtest/gtest.h>

#include "analysis/study/study.h"
#include "analysis/study/study_figures.h"
#include "analysis/study/study_table.h"
#include "loaders/sim/simulator.h"
#include "study_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

class SimulatedPairs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir;
    auto sim = [](sim::SimConfig c, const std::string& name) {
      c.runName = name;
      sim::simulate(c, dir->path() / (name + ".h5"));
      return dir->path() / (name + ".h5");
    };
    // Microbatch 1 vs 4 (pipeline of 2 stages, 4 data-parallel replicas).
    sim::SimConfig c = test::tinySimConfig();
    std::vector<fs::path> paths;
    c.mbs = 1;
    paths.push_back(sim(c, "mbs1"));
    c.mbs = 4;
    paths.push_back(sim(c, "mbs4"));
    // Overlap off vs on (tensor parallel 2 x data parallel 4), long enough to heat up.
    c = test::tinySimConfig();
    c.tp = 2, c.pp = 1, c.dp = 4, c.mbs = 2;
    c.durationS = 60;
    paths.push_back(sim(c, "plain"));
    c.overlap = true;
    paths.push_back(sim(c, "overlap"));
    // The same configuration on H100 and H200.
    c = test::tinySimConfig();
    c.tp = 2, c.pp = 1, c.dp = 4, c.mbs = 2;
    paths.push_back(sim(c, "h100"));
    c.platform = *sim::findProfile("h200");
    paths.push_back(sim(c, "h200"));
    StudyLoadOptions o;
    o.cache.write = false;
    study = new Study(loadStudy(paths, o));
    table = new StudyTable(makeStudyTable(*study, {}));
  }
  static void TearDownTestSuite() {
    delete table;
    delete study;
    delete dir;
  }

  static double v(const std::string& run, std::string_view column) {
    const size_t i = study->find(run);
    const auto cols = studyColumns();
    for (const StudyRow& r : table->rows)
      if (r.run == i)
        for (size_t c = 0; c < cols.size(); ++c)
          if (cols[c].id == column) return r.values[c];
    return kNaN;
  }

  static test::TempDir* dir;
  static Study* study;
  static StudyTable* table;
};

test::TempDir* SimulatedPairs::dir = nullptr;
Study* SimulatedPairs::study = nullptr;
StudyTable* SimulatedPairs::table = nullptr;

TEST_F(SimulatedPairs, AllRunsAreValid) {
  for (const StudyRun& r : study->runs)
    EXPECT_TRUE(r.summary.valid) << r.label;
}

TEST_F(SimulatedPairs, LargerMicrobatchRaisesPeakToAveragePower) {
  EXPECT_GT(v("mbs4", "peak_to_average"), v("mbs1", "peak_to_average") + 0.05)
      << v("mbs1", "peak_to_average") << " vs " << v("mbs4", "peak_to_average");
  EXPECT_GT(v("mbs4", "peak_power_w"), v("mbs1", "peak_power_w"));
}

TEST_F(SimulatedPairs, OverlapRaisesPeakTemperature) {
  EXPECT_GE(v("overlap", "temp_max_c"), v("plain", "temp_max_c") + 2.0)
      << v("plain", "temp_max_c") << " C without overlap, " << v("overlap", "temp_max_c")
      << " C with";
  // ...because the hidden communication runs beside the compute: faster and denser.
  EXPECT_GT(v("overlap", "tokens_per_s"), v("plain", "tokens_per_s"));
  EXPECT_GT(v("overlap", "mean_power_w"), v("plain", "mean_power_w"));
}

TEST_F(SimulatedPairs, H200IsFasterThanH100OnTheSameConfiguration) {
  // H200: the same compute with 4.8 instead of 3.35 TB/s of HBM (memory-bound kernels finish
  // sooner) and a higher idle floor (64 vs 57 W).
  EXPECT_GT(v("h200", "tokens_per_s"), v("h100", "tokens_per_s"));
  EXPECT_LT(v("h200", "iteration_time_s"), v("h100", "iteration_time_s"));
  EXPECT_GT(v("h200", "mean_power_w"), v("h100", "mean_power_w"));
  // Per token the two platforms' relative numbers are what the deltas say.
  StudyTableOptions o;
  o.baseline = "h100";
  const StudyTable t = makeStudyTable(*study, o);
  const size_t h200 = study->find("h200");
  const auto cols = studyColumns();
  for (const StudyRow& r : t.rows) {
    if (r.run != h200) continue;
    for (size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].id != "tokens_per_s") continue;
      const double a = v("h200", "tokens_per_s"), b = v("h100", "tokens_per_s");
      EXPECT_EQ(r.deltas[c].absolute, a - b);
      EXPECT_EQ(r.deltas[c].relative, (a - b) / b);
    }
  }
}

TEST_F(SimulatedPairs, ParetoFrontHasOnlyUndominatedRuns) {
  const ThroughputEnergyScatter s = throughputEnergyScatter(*study, tableRuns(*table));
  ASSERT_EQ(s.points.size(), study->runs.size());
  ASSERT_FALSE(s.front.empty());
  // Independently: a run is on the front iff no run is at least as good on both axes and
  // better on one.
  for (const ScatterPoint& p : s.points) {
    bool dominated = false;
    for (const ScatterPoint& q : s.points)
      dominated |= q.tokens_per_s >= p.tokens_per_s &&
                   q.energy_per_token_j <= p.energy_per_token_j &&
                   (q.tokens_per_s > p.tokens_per_s || q.energy_per_token_j < p.energy_per_token_j);
    EXPECT_EQ(p.on_front, !dominated) << p.label;
  }
}

}  // namespace
}  // namespace wl
