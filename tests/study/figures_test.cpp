// SPDX-License-Identifier: GPL-3.0-or-later
// Figure data on hand-made runs: the Pareto front (ties, duplicates, one point, unknown values),
// the efficiency line normalized per model, heatmaps with node separators and the mean row,
// kernel-category stacks per configuration and per pipeline stage, scale-up vs scale-out.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/study/study_figures.h"
#include "study_test_util.h"

namespace wl {
namespace {

std::vector<bool> front(std::vector<ParetoPoint> p) {
  return paretoFront(p);
}

TEST(ParetoFront, HandMadePoints) {
  using V = std::vector<bool>;
  EXPECT_EQ(front({}), V{});
  EXPECT_EQ(front({{10, 1}}), V{true});  // a single point is the front
  // A trade-off: every point is on the front.
  EXPECT_EQ(front({{1, 1}, {2, 2}, {3, 3}}), (V{true, true, true}));
  // (2, 1) beats (1, 2) on both; (3, 3) trades throughput for energy.
  EXPECT_EQ(front({{1, 2}, {2, 1}, {3, 3}}), (V{false, true, true}));
  // Duplicates: neither is strictly worse, both are on the front.
  EXPECT_EQ(front({{10, 1}, {10, 1}}), (V{true, true}));
  // Ties on one axis: equal throughput, more energy -> dominated; equal energy, less throughput ->
  // dominated.
  EXPECT_EQ(front({{10, 1}, {10, 2}}), (V{true, false}));
  EXPECT_EQ(front({{10, 1}, {12, 1}}), (V{false, true}));
  // A duplicate of a dominated point stays dominated.
  EXPECT_EQ(front({{5, 5}, {5, 5}, {6, 4}}), (V{false, false, true}));
  // Unknown values are never on the front and dominate nothing.
  EXPECT_EQ(front({{kNaN, 0.1}, {10, 1}, {20, kNaN}}), (V{false, true, false}));
}

TEST(ParetoFront, ScatterOfAStudyLeavesInvalidRunsOut) {
  Study s;
  auto add = [&](const char* name, double tps, double ept, bool valid = true) {
    StudyRun r = test::handRun(name);
    r.summary.totals.tokens_per_s = tps;
    r.summary.totals.energy_per_token_j = ept;
    r.summary.valid = valid;
    s.runs.push_back(r);
  };
  add("slow-cheap", 100, 1.0);
  add("fast-dear", 300, 3.0);
  add("dominated", 90, 2.0);
  add("middle", 200, 1.5);
  add("oom", 1000, 0.01, false);  // would dominate everything, but it is invalid
  add("untimed", kNaN, 1.0);
  const ThroughputEnergyScatter sc = throughputEnergyScatter(s, {0, 1, 2, 3, 4, 5});
  ASSERT_EQ(sc.points.size(), 4u);
  EXPECT_EQ(sc.left_out, (std::vector<std::string>{"oom", "untimed"}));
  std::vector<std::string> f;
  for (size_t k : sc.front)
    f.push_back(sc.points[k].label);
  // By increasing throughput.
  EXPECT_EQ(f, (std::vector<std::string>{"slow-cheap", "middle", "fast-dear"}));
  EXPECT_FALSE(sc.points[2].on_front);
}

TEST(StudyFigures, EfficiencyIsNormalizedPerModelToTheBest) {
  Study s;
  auto add = [&](const char* name, const char* model, double eff, bool valid = true) {
    StudyRun r = test::handRun(name, model);
    r.summary.totals.efficiency_samples_per_s_mj = eff;
    r.summary.totals.mean_power_w = 500;
    r.summary.temp_mean_c = 60;
    r.summary.valid = valid;
    s.runs.push_back(r);
  };
  add("x1", "GPT3-175B", 10);
  add("x2", "gpt3-175b", 5);
  add("y1", "Llama3-70B", 3);
  add("x3", "GPT3-175B", 50, false);  // invalid: neither normalized nor the best
  const std::vector<ConfigBar> b = configBars(s, {0, 1, 2, 3});
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].efficiency_normalized, 1.0);
  EXPECT_EQ(b[1].efficiency_normalized, 0.5);
  EXPECT_EQ(b[2].efficiency_normalized, 1.0);
  EXPECT_TRUE(std::isnan(b[3].efficiency_normalized));
  EXPECT_TRUE(std::isnan(b[3].power_mean_w));  // never plotted as a number
  EXPECT_EQ(b[0].power_mean_w, 500);
  EXPECT_EQ(b[0].temp_mean_c, 60);
  EXPECT_TRUE(b[0].efficiency_comparable);
  // Runs of one model with different numbers of iterations do not compare.
  s.runs[1].summary.totals.iterations = 7;
  const std::vector<ConfigBar> mixed = configBars(s, {0, 1, 2});
  EXPECT_FALSE(mixed[0].efficiency_comparable);
  EXPECT_FALSE(mixed[1].efficiency_comparable);
  EXPECT_TRUE(mixed[2].efficiency_comparable);
}

TEST(StudyFigures, HeatmapHasNodeSeparatorsAndAMeanRow) {
  Study s;
  auto add = [&](const char* name, int gpus, double base, bool valid = true) {
    StudyRun r = test::handRun(name, "M", "H100", gpus);
    for (int g = 0; g < gpus; ++g) {
      GpuSummary gs;
      gs.id = g;
      gs.node = g / 4;
      gs.temp_mean_c = base + g;
      r.summary.gpus.push_back(gs);
    }
    r.summary.valid = valid;
    s.runs.push_back(r);
  };
  add("eight", 8, 50);
  add("four", 4, 60);
  add("bad", 8, 0, false);
  const GpuHeatmap h = gpuHeatmap(s, {0, 1, 2}, HeatmapMetric::TempMean);
  ASSERT_EQ(h.gpus.size(), 8u);
  EXPECT_EQ(h.node_starts, std::vector<int>{4});
  EXPECT_EQ(h.configs, (std::vector<std::string>{"eight", "four", "bad"}));
  EXPECT_EQ(h.values[7][0], 57);
  EXPECT_EQ(h.values[3][1], 63);
  EXPECT_TRUE(std::isnan(h.values[5][1]));  // "four" has no GPU 5
  EXPECT_TRUE(std::isnan(h.values[0][2]));  // invalid run: no values
  EXPECT_FALSE(h.config_valid[2]);
  EXPECT_EQ(h.average[0], 53.5);  // mean of 50..57
  EXPECT_EQ(h.average[1], 61.5);  // mean of 60..63
  EXPECT_TRUE(std::isnan(h.average[2]));
  EXPECT_EQ(h.min, 50);
  EXPECT_EQ(h.max, 63);
}

TEST(StudyFigures, KernelCategoriesPerConfigurationAndPerStage) {
  Study s;
  StudyRun r = test::handRun("pp2");
  auto rank = [](int id, int stage, int64_t matmulNs, int64_t allreduceNs) {
    RankSummary x;
    x.rank = id;
    x.stage = stage;
    x.seed_categories[static_cast<size_t>(KernelCategory::MatMul)] = matmulNs;
    x.seed_categories[static_cast<size_t>(KernelCategory::AllReduce)] = allreduceNs;
    x.corrected_categories[static_cast<size_t>(KernelCategory::Attention)] = matmulNs;
    return x;
  };
  r.summary.ranks = {rank(0, 0, 4'000'000'000, 1'000'000'000), rank(1, 0, 2'000'000'000, 0),
                     rank(4, 1, 6'000'000'000, 3'000'000'000)};
  s.runs.push_back(r);
  s.runs.push_back(test::handRun("untraced"));
  const CategoryStack c = categoriesByConfig(s, {0, 1}, CategoryOrder::SeedPaper);
  ASSERT_EQ(c.categories.size(), 2u);
  EXPECT_EQ(c.categories[0], KernelCategory::AllReduce);
  EXPECT_EQ(c.categories[1], KernelCategory::MatMul);
  EXPECT_EQ(c.seconds[1][0], 4.0);  // (4 + 2 + 6) / 3 ranks
  EXPECT_EQ(c.seconds[0][0], 4.0 / 3);
  EXPECT_FALSE(c.bar_has_data[1]);
  EXPECT_TRUE(std::isnan(c.seconds[1][1]));
  const CategoryStack st = categoriesByStage(s, {0, 1}, CategoryOrder::SeedPaper);
  EXPECT_EQ(st.bars, (std::vector<std::string>{"pp2 / PP 0", "pp2 / PP 1", "untraced"}));
  EXPECT_EQ(st.seconds[1][0], 3.0);  // stage 0: (4 + 2) / 2
  EXPECT_EQ(st.seconds[1][1], 6.0);
  EXPECT_EQ(st.seconds[0][0], 0.5);
  const CategoryStack corrected = categoriesByConfig(s, {0}, CategoryOrder::Corrected);
  ASSERT_EQ(corrected.categories.size(), 1u);
  EXPECT_EQ(corrected.categories[0], KernelCategory::Attention);
  // The stage of a rank under Megatron's order: rank / (world / pp).
  ParallelConfig cfg;
  cfg.pp = 4;
  EXPECT_EQ(pipelineStage(7, cfg, 32), 0);
  EXPECT_EQ(pipelineStage(8, cfg, 32), 1);
  EXPECT_EQ(pipelineStage(31, cfg, 32), 3);
  cfg.pp = 3;
  EXPECT_EQ(pipelineStage(5, cfg, 32), -1);  // 3 does not divide 32
}

TEST(StudyFigures, ScaleUpVersusScaleOutPerToken) {
  Study s;
  auto add = [&](const char* name, const char* platform, int gpus, double ept, double tps,
                 const char* model = "GPT3-175B") {
    StudyRun r = test::handRun(name, model, platform, gpus);
    r.summary.totals.energy_per_token_j = ept;
    r.summary.totals.tokens_per_s = tps;
    s.runs.push_back(r);
  };
  add("h200-a", "H200", 32, 2.0, 3000);
  add("h200-b", "H200", 32, 1.5, 2000);
  add("h100-a", "H100", 64, 1.8, 4000);
  add("llama-h100", "H100", 64, 1.0, 100, "Llama3-70B");  // one platform only: no comparison
  const std::vector<ScaleComparison> c = scaleUpVsOut(s, {0, 1, 2, 3});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].model, "GPT3-175B");
  EXPECT_EQ(c[0].up.platform, "H200");
  EXPECT_EQ(c[0].up.memory_gb, 141);
  EXPECT_EQ(c[0].up.runs, 2u);
  EXPECT_EQ(c[0].up.best_label, "h200-b");  // lowest energy per token
  EXPECT_EQ(c[0].up.best_tokens_per_s, 3000);
  EXPECT_EQ(c[0].up.tokens_per_s_per_gpu, 2000.0 / 32);
  EXPECT_EQ(c[0].up.gpu_seconds_per_token, 32.0 / 2000);
  EXPECT_EQ(c[0].out.platform, "H100");
  EXPECT_EQ(c[0].out.memory_gb, 80);
  EXPECT_EQ(c[0].energy_per_token_ratio, 1.5 / 1.8);
  EXPECT_EQ(c[0].tokens_per_s_ratio, 2000.0 / 4000);
  EXPECT_EQ(gpuMemoryGb("H100", "NVIDIA H100 80GB HBM3"), 80);
  EXPECT_EQ(gpuMemoryGb("", "NVIDIA A100-SXM4-40GB"), 40);
  EXPECT_EQ(gpuMemoryGb("H200", "NVIDIA H200"), 141);
  EXPECT_TRUE(std::isnan(gpuMemoryGb("TPU", "")));
}

}  // namespace
}  // namespace wl

namespace wl {
namespace {

// Figure axes name runs by what differs: parts equal in every run, or following from the parts
// before them, are left out, and runs whose parts still repeat get their file name.
TEST(StudyLabels, ShortLabelsKeepOnlyWhatDiffers) {
  std::vector<StudyRun> runs;
  auto add = [&](const char* name, const char* platform, int mbs, bool overlap) {
    StudyRun r = test::handRun(name, "Llama3-8B", platform, 8);
    r.summary.config.tp = 2;
    r.summary.config.mbs = mbs;
    r.summary.config.gbs = 8 * mbs;  // follows from mbs: never named
    r.summary.config.overlap = overlap;
    runs.push_back(r);
  };
  add("a", "H100", 1, false);
  add("b", "H100", 4, true);
  add("c", "H200", 4, true);
  add("d", "H200", 4, true);  // the same configuration as c
  add("e", "H100", 4, false);
  assignLabels(runs);
  EXPECT_EQ(runs[0].short_label, "H100 mbs1 no-ov");
  EXPECT_EQ(runs[1].short_label, "H100 mbs4 ov");
  EXPECT_EQ(runs[2].short_label, "H200 mbs4 ov (c)");
  EXPECT_EQ(runs[3].short_label, "H200 mbs4 ov (d)");
  EXPECT_EQ(runs[4].short_label, "H100 mbs4 no-ov");
  // Without run e, overlap follows from mbs and the platform: it is not named.
  std::vector<StudyRun> four(runs.begin(), runs.begin() + 4);
  assignLabels(four);
  EXPECT_EQ(four[0].short_label, "H100 mbs1");
  EXPECT_EQ(four[1].short_label, "H100 mbs4");
  EXPECT_EQ(runs[0].label, "a");  // the unique label stays the run name
  // Figures use the short labels.
  Study s;
  s.runs = runs;
  const std::vector<ConfigBar> bars = configBars(s, {0, 1});
  EXPECT_EQ(bars[0].label, "H100 mbs1 no-ov");
  // One run: nothing differs, the label is the name.
  std::vector<StudyRun> one = {runs[0]};
  assignLabels(one);
  EXPECT_EQ(one[0].short_label, "");
}

}  // namespace
}  // namespace wl
