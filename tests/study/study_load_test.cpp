// SPDX-License-Identifier: GPL-3.0-or-later
// Loading a study: the table's numbers are analyzeRun()'s for every run (cold and from the cache),
// the summary cache is used only while its key matches (size, time, versions, options) and then
// reads nothing of the run, and invalid or unreadable runs are flagged with their reasons.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "analysis/analysis_json.h"
#include "analysis/run_analysis.h"
#include "analysis/study/study.h"
#include "analysis/study/study_table.h"
#include "loaders/core/metrics.h"
#include "loaders/format/run_file.h"
#include "study_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

namespace fs = std::filesystem;

double meanOver(const RunAnalysis& a, double (*get)(const GpuAnalysis&)) {
  double sum = 0;
  size_t n = 0;
  for (const GpuAnalysis& g : a.gpus)
    if (std::isfinite(get(g))) sum += get(g), ++n;
  return n ? sum / static_cast<double>(n) : kNaN;
}

double maxOver(const RunAnalysis& a, double (*get)(const GpuAnalysis&)) {
  double m = -INFINITY;
  for (const GpuAnalysis& g : a.gpus)
    if (std::isfinite(get(g))) m = std::max(m, get(g));
  return m;
}

double value(const StudyTable& t, size_t run, std::string_view id) {
  const auto cols = studyColumns();
  for (const StudyRow& r : t.rows)
    if (r.run == run)
      for (size_t c = 0; c < cols.size(); ++c)
        if (cols[c].id == id) return r.values[c];
  ADD_FAILURE() << "no value " << id;
  return kNaN;
}

// Exact equality, unknown == unknown.
void expectSame(double got, double want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": " << got;
  } else {
    EXPECT_EQ(got, want) << what;
  }
}

class StudyLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    test::writeSyntheticVariant(dir / "a.h5", "run A", 1, 1.0);
    test::writeSyntheticVariant(dir / "b.h5", "run B", 2, 1.2);
    test::writeSyntheticVariant(dir / "c.h5", "run C", 4, 0.8);
    paths = {dir / "a.h5", dir / "b.h5", dir / "c.h5"};
    options.threads = 2;
  }
  test::TempDir dir;
  std::vector<fs::path> paths;
  StudyLoadOptions options;
};

TEST_F(StudyLoad, TableNumbersAreAnalyzeRunsNumbersColdAndFromTheCache) {
  const Study cold = loadStudy(paths, options);
  ASSERT_EQ(cold.runs.size(), 3u);
  EXPECT_EQ(cold.count(SummarySource::Analyzed), 3u);
  const Study warm = loadStudy(paths, options);
  EXPECT_EQ(warm.count(SummarySource::Cache), 3u);
  for (const Study* study : {&cold, &warm}) {
    const StudyTable t = makeStudyTable(*study, {});
    for (size_t i = 0; i < paths.size(); ++i) {
      const auto run = RunFile::open(paths[i]);
      const RunAnalysis a = analyzeRun(*run);
      const RunSummary& s = study->runs[i].summary;
      EXPECT_EQ(s.name, a.info.name);
      EXPECT_EQ(s.valid, a.quality.valid);
      // `totals` exactly as `wattline analyze --json` prints them.
      EXPECT_EQ(toJson(s.totals), toJson(a)["totals"]);
      const RunTotals& w = a.totals;
      expectSame(value(t, i, "energy_j"), w.energy_j, "energy");
      expectSame(value(t, i, "mean_power_w"), w.mean_power_w, "mean power");
      expectSame(value(t, i, "peak_power_w"), w.peak_power_w, "peak power");
      expectSame(value(t, i, "throttled_fraction"), w.throttled_fraction, "throttled");
      expectSame(value(t, i, "iteration_time_s"), w.iteration_time_s, "iteration time");
      expectSame(value(t, i, "tokens_per_s"), w.tokens_per_s, "tokens/s");
      expectSame(value(t, i, "energy_per_token_j"), w.energy_per_token_j, "J/token");
      expectSame(value(t, i, "efficiency_samples_per_s_mj"), w.efficiency_samples_per_s_mj,
                 "efficiency");
      expectSame(value(t, i, "temp_max_c"),
                 maxOver(a, [](const GpuAnalysis& g) { return g.temp.max; }), "T max");
      expectSame(value(t, i, "temp_mean_c"),
                 meanOver(a, [](const GpuAnalysis& g) { return g.temp.mean; }), "T mean");
      expectSame(value(t, i, "clock_mean_mhz"),
                 meanOver(a, [](const GpuAnalysis& g) { return g.sm_clock.mean; }), "clock");
      expectSame(value(t, i, "peak_to_average"),
                 meanOver(a, [](const GpuAnalysis& g) { return g.burstiness.peak_to_average; }),
                 "P2A");
      expectSame(value(t, i, "iteration_cv"), a.iterations.step_s.cv, "iteration cv");
      expectSame(value(t, i, "temp_spread_c"), a.spatial.temp_mean_c.spread, "spread");
      double comm = 0;
      size_t ranks = 0;
      for (const RankAnalysis& r : a.ranks)
        if (r.breakdown.kernels > 0) comm += r.breakdown.exposed_comm_ns * 1e-9, ++ranks;
      ASSERT_GT(ranks, 0u);
      expectSame(value(t, i, "exposed_comm_s"), comm / static_cast<double>(ranks), "comm");
      ASSERT_EQ(s.gpus.size(), a.gpus.size());
      for (size_t g = 0; g < a.gpus.size(); ++g) {
        expectSame(s.gpus[g].temp_mean_c, a.gpus[g].temp.mean, "gpu T mean");
        expectSame(s.gpus[g].power_max_w, a.gpus[g].power.max, "gpu P max");
      }
    }
  }
  // The cache round trip is exact: the summaries print the same JSON.
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(toJson(cold.runs[i].summary), toJson(warm.runs[i].summary));
}

TEST_F(StudyLoad, CachedSummaryReadsNothingOfTheRunAndAModifiedRunIsAnalysedAgain) {
  const fs::path run = paths[0];
  StudyRun first = loadRunSummary(run, options);
  EXPECT_EQ(first.source, SummarySource::Analyzed);
  EXPECT_TRUE(first.cache_error.empty()) << first.cache_error;
  ASSERT_TRUE(fs::exists(run.string() + ".summary.json"));
  EXPECT_EQ(loadRunSummary(run, options).source, SummarySource::Cache);

  // Replace the run with garbage of the same size and time: the cache still answers, which shows
  // that a cached load does not open the file (it is no longer HDF5).
  const auto size = fs::file_size(run);
  const auto mtime = fs::last_write_time(run);
  fs::copy_file(run, dir / "saved.h5");
  {
    std::ofstream out(run, std::ios::binary | std::ios::trunc);
    out << std::string(size, 'x');
  }
  fs::last_write_time(run, mtime);
  const StudyRun garbage = loadRunSummary(run, options);
  EXPECT_EQ(garbage.source, SummarySource::Cache);
  EXPECT_EQ(toJson(garbage.summary), toJson(first.summary));
  // Touched (same size, new time): analysed again, and now it is not a run.
  fs::last_write_time(run, mtime + std::chrono::seconds(5));
  const StudyRun touched = loadRunSummary(run, options);
  EXPECT_EQ(touched.source, SummarySource::Unreadable);
  EXPECT_FALSE(touched.summary.valid);
  fs::copy_file(dir / "saved.h5", run, fs::copy_options::overwrite_existing);
  EXPECT_EQ(loadRunSummary(run, options).source, SummarySource::Analyzed);

  // Rewritten with other numbers: analysed again; the new energy is analyzeRun's.
  test::writeSyntheticVariant(run, "run A", 1, 1.5);
  const StudyRun changed = loadRunSummary(run, options);
  EXPECT_EQ(changed.source, SummarySource::Analyzed);
  EXPECT_EQ(changed.summary.totals.energy_j, analyzeRun(*RunFile::open(run)).totals.energy_j);
  EXPECT_NE(changed.summary.totals.energy_j, first.summary.totals.energy_j);
  EXPECT_EQ(loadRunSummary(run, options).source, SummarySource::Cache);

  // Other analysis options make another key.
  StudyLoadOptions other = options;
  other.analysis.clockThresholdFraction = 0.9;
  EXPECT_EQ(loadRunSummary(run, other).source, SummarySource::Analyzed);

  // A damaged cache file is a miss, and is replaced.
  {
    std::ofstream out(run.string() + ".summary.json", std::ios::trunc);
    out << "{\"wattline_run_summary\": 1, \"key\": ";
  }
  EXPECT_EQ(loadRunSummary(run, options).source, SummarySource::Analyzed);
  EXPECT_EQ(loadRunSummary(run, options).source, SummarySource::Cache);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST_F(StudyLoad, CacheFolderNoCacheAndAnUnwritableCache) {
  StudyLoadOptions o = options;
  o.cache.dir = dir / "cache";
  EXPECT_EQ(loadRunSummary(paths[1], o).source, SummarySource::Analyzed);
  EXPECT_FALSE(fs::exists(paths[1].string() + ".summary.json"));
  EXPECT_TRUE(fs::exists(summaryCachePath(paths[1], o.cache)));
  EXPECT_EQ(summaryCachePath(paths[1], o.cache).parent_path(), dir / "cache");
  EXPECT_EQ(loadRunSummary(paths[1], o).source, SummarySource::Cache);

  StudyLoadOptions none = options;
  none.cache.read = none.cache.write = false;
  EXPECT_EQ(loadRunSummary(paths[2], none).source, SummarySource::Analyzed);
  EXPECT_FALSE(fs::exists(paths[2].string() + ".summary.json"));

  // A cache "folder" that is a file: the run still loads, the reason is reported.
  std::ofstream(dir / "not-a-folder") << "x";
  StudyLoadOptions bad = options;
  bad.cache.dir = dir / "not-a-folder";
  const StudyRun r = loadRunSummary(paths[2], bad);
  EXPECT_EQ(r.source, SummarySource::Analyzed);
  EXPECT_TRUE(r.summary.valid);
  EXPECT_NE(r.cache_error.find("cannot write the summary cache"), std::string::npos)
      << r.cache_error;
}

TEST_F(StudyLoad, InvalidAndUnreadableRunsAreFlaggedNotZero) {
  // GPU 3 without power; a run of 0.4 s (8 samples per GPU); a file that is not a run.
  test::writeSyntheticVariant(dir / "nopower.h5", "no power", 1, 1.0, [](test::SyntheticRun& r) {
    for (TelemetryColumn& c : r.telemetry[3].columns)
      if (c.metric == metric::kPower) c.values.assign(c.values.size(), kNaN);
  });
  test::SyntheticRun shortRun = test::makeSyntheticRun(4, 0.4);
  shortRun.info.name = "too short";
  test::writeSyntheticRun(shortRun, dir / "short.h5");
  std::ofstream(dir / "broken.h5") << "not an HDF5 file";
  const Study s =
      loadStudy({dir / "a.h5", dir / "nopower.h5", dir / "short.h5", dir / "broken.h5"}, options);
  ASSERT_EQ(s.runs.size(), 4u);
  EXPECT_TRUE(s.runs[0].summary.valid);
  auto reasons = [&](size_t i) {
    std::string all;
    for (const std::string& r : s.runs[i].summary.invalid_reasons)
      all += r + "; ";
    return all;
  };
  EXPECT_FALSE(s.runs[1].summary.valid);
  EXPECT_NE(reasons(1).find("gpu 3 has no power samples"), std::string::npos) << reasons(1);
  EXPECT_FALSE(s.runs[2].summary.valid);
  EXPECT_NE(reasons(2).find("fewer than 10"), std::string::npos) << reasons(2);
  EXPECT_EQ(s.runs[3].source, SummarySource::Unreadable);
  EXPECT_FALSE(s.runs[3].summary.valid);
  EXPECT_NE(reasons(3).find("broken.h5"), std::string::npos) << reasons(3);
  EXPECT_EQ(s.runs[3].label, "broken");

  StudyTableOptions o;
  o.baseline = "run A";
  const StudyTable t = makeStudyTable(s, o);
  const size_t e =
      static_cast<size_t>(std::find_if(studyColumns().begin(), studyColumns().end(),
                                       [](const StudyColumn& c) { return c.id == "energy_j"; }) -
                          studyColumns().begin());
  for (const StudyRow& r : t.rows) {
    if (r.run == 0) continue;
    EXPECT_EQ(r.ranks[e], 0);
    EXPECT_TRUE(std::isnan(r.deltas[e].absolute));
  }
  // The unreadable file has no numbers at all (not zeros).
  EXPECT_TRUE(std::isnan(value(t, 3, "energy_j")));
  EXPECT_TRUE(std::isnan(value(t, 3, "mean_power_w")));
  // A damaged file is not cached: the next load tries it again.
  EXPECT_FALSE(fs::exists(dir / "broken.h5.summary.json"));
}

TEST_F(StudyLoad, FoldersAreSearchedRecursively) {
  fs::create_directories(dir / "sub" / "deeper");
  fs::copy_file(paths[0], dir / "sub" / "deeper" / "z.h5");
  std::ofstream(dir / "sub" / "notes.txt") << "not a run";
  const std::vector<fs::path> found = expandRunPaths({dir / "sub", dir.path(), paths[0]});
  // The folder's runs once each, in the order given, sorted inside each folder.
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0], dir / "sub" / "deeper" / "z.h5");
  EXPECT_EQ(found[1], dir / "a.h5");
  EXPECT_EQ(found[2], dir / "b.h5");
  EXPECT_EQ(found[3], dir / "c.h5");
  EXPECT_THROW(expandRunPaths({dir / "missing"}), Error);
}

TEST_F(StudyLoad, CancellingStops) {
  const Progress stop([](double f, std::string_view) { return f < 0.3; });
  StudyLoadOptions o = options;
  o.threads = 1;
  EXPECT_THROW(loadStudy(paths, o, stop), Cancelled);
}

}  // namespace
}  // namespace wl
