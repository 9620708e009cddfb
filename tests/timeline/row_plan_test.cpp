// SPDX-License-Identifier: GPL-3.0-or-later
// The row plan without widgets: the window's rows of a run (per node its GPUs with the default
// metrics, then every rank's steps and streams), what the tree state hides, pins and reorders,
// the heatmap mode, a stacked and a paired comparison, and a figure's rows (a GPU's ranks under
// it, ranks without a GPU after the GPUs).
#include <gtest/gtest.h>

#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/timeline/model/row_plan.h"

namespace wl {
namespace {

using Runs = std::vector<std::shared_ptr<const RunFile>>;

// "kind:label" of every row, to compare plans at a glance.
std::vector<std::string> outline(const std::vector<TrackRow>& rows) {
  static const char* kinds[] = {"run", "group", "counter", "kernels", "steps", "heatmap", "diff"};
  std::vector<std::string> out;
  for (const TrackRow& r : rows)
    out.push_back(std::string(kinds[static_cast<int>(r.kind())]) + ":" + r.label.toStdString());
  return out;
}

class RowPlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir();
    // 4 GPUs on 2 nodes (GPU g runs rank g); ranks 0 and 1 have streams 7 and 13, iterations and
    // phase annotations; power, temperature, SM clock and utilization.
    test::writeSyntheticRun(test::makeSyntheticRun(), dir->path() / "run.h5");
    run = RunFile::open(dir->path() / "run.h5");
  }
  static void TearDownTestSuite() {
    run.reset();
    delete dir;
  }
  static std::vector<TrackRow> window(const TreeState& t = {}, const RowPlanOptions& o = {}) {
    return planRows({run}, t, {}, o);
  }
  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};

test::TempDir* RowPlan::dir = nullptr;
std::shared_ptr<const RunFile> RowPlan::run;

TEST_F(RowPlan, WindowShowsEveryGpuWithItsMetricsThenEveryRank) {
  const std::vector<TrackRow> rows = window();
  std::vector<std::string> want = {"run:synthetic [simulated]"};
  for (int g = 0; g < 4; ++g) {
    want.push_back("group:GPU " + std::to_string(g));
    for (const char* m : {"Power", "GPU temperature", "SM clock", "GPU utilization"})
      want.push_back(std::string("counter:") + m);
  }
  for (int rank = 0; rank < 2; ++rank)
    for (const char* r : {"group:Rank ", "steps:Steps", "kernels:Stream 7", "kernels:Stream 13"})
      want.push_back(std::string(r) + (r[0] == 'g' ? std::to_string(rank) : ""));
  ASSERT_EQ(outline(rows), want);
  // What each row draws, its identity and the group it folds under.
  const TrackRow& power2 = rows[1 + 2 * 5 + 1];
  ASSERT_NE(power2.as<CounterRow>(), nullptr);
  EXPECT_EQ(*power2.as<CounterRow>(), (CounterRow{0, 2, metricIndex(*run, "power_w")}));
  EXPECT_EQ(power2.key, QStringLiteral("r0/g2/power_w"));
  EXPECT_EQ(power2.group, QStringLiteral("r0/g2"));
  EXPECT_EQ(power2.detail, QStringLiteral("W"));
  EXPECT_EQ(power2.height, 44);
  EXPECT_EQ(rows[1].detail, QStringLiteral("node 0 · local 0 · slot 0 · rank 0"));
  const TrackRow& stream13 = rows.back();
  EXPECT_EQ(*stream13.as<KernelsRow>(),
            (KernelsRow{0, 1, 3}));  // tracks: r0 s7, r0 s13, r1 s7, r1 s13
  EXPECT_EQ(stream13.key, QStringLiteral("r0/rank1/s13"));
  EXPECT_EQ(stream13.group, QStringLiteral("r0/rank1"));
  // Steps with phase annotations are two lanes high.
  EXPECT_EQ(rows[rows.size() - 3].height, 32);
  EXPECT_EQ(rows[rows.size() - 3].detail, QStringLiteral("phases"));
}

TEST_F(RowPlan, TreeStateHidesPinsAndReorders) {
  TreeState t;
  t.shown[rowkey::gpu(0, 1)] = false;               // GPU 1 and its counters
  t.shown[rowkey::metric(0, 0, "temp_c")] = false;  // one metric of GPU 0
  t.shown[rowkey::stream(0, 0, 13)] = false;        // one stream
  t.shown[rowkey::rank(0, 1)] = false;              // a whole rank
  t.shown[rowkey::node(0, 1)] = false;              // GPUs 2 and 3
  std::vector<std::string> want = {
      "run:synthetic [simulated]", "group:GPU 0",  "counter:Power", "counter:SM clock",
      "counter:GPU utilization",   "group:Rank 0", "steps:Steps",   "kernels:Stream 7"};
  EXPECT_EQ(outline(window(t)), want);

  // Pinned rows come first: a pinned metric names its GPU; a pinned GPU takes its counters along.
  TreeState p;
  p.pinned = {rowkey::metric(0, 3, "temp_c"), rowkey::gpu(0, 1)};
  const std::vector<TrackRow> pinned = window(p);
  want = {"group:GPU 1",
          "counter:Power",
          "counter:GPU temperature",
          "counter:SM clock",
          "counter:GPU utilization",
          "counter:GPU 3 · GPU temperature",
          "run:synthetic [simulated]"};
  const std::vector<std::string> got = outline(pinned);
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + 7), want);
  EXPECT_TRUE(pinned[5].pinned);
  EXPECT_FALSE(pinned[6].pinned);

  // Moved items: GPU 1 before GPU 0, rank 1 before rank 0.
  TreeState o;
  o.order[rowkey::gpu(0, 1)] = -1;
  o.order[rowkey::rank(0, 1)] = -1;
  const std::vector<std::string> moved = outline(window(o));
  EXPECT_EQ(moved[1], "group:GPU 1");
  EXPECT_EQ(moved[6], "group:GPU 0");
  EXPECT_EQ(moved[21], "group:Rank 1");
}

TEST_F(RowPlan, HeatmapModeIsOneRowPerRun) {
  RowPlanOptions o;
  o.heatmap = true;
  o.heatmapMetric = "power_w";
  const std::vector<TrackRow> rows = window({}, o);
  ASSERT_EQ(rows[1].kind(), RowKind::Heatmap);
  EXPECT_EQ(*rows[1].as<HeatmapRow>(), (HeatmapRow{0, metricIndex(*run, "power_w")}));
  EXPECT_EQ(rows[1].label, QStringLiteral("Heatmap: Power"));
  EXPECT_EQ(rows[1].height, 4 * heatmapRowHeight(4));
  EXPECT_EQ(heatmapRowHeight(4), 14);
  EXPECT_EQ(heatmapRowHeight(1024), 2);
  EXPECT_EQ(rows[2].kind(), RowKind::GroupHeader);  // the ranks follow
  EXPECT_EQ(rows.size(), 1u + 1u + 2u * 4u);
}

TEST_F(RowPlan, StackedComparisonIsRunAThenRunBThenTheDifferences) {
  ComparePlan c;
  c.active = true;
  c.runA = 1;  // the second open run is A
  c.runB = 0;
  c.pairs = {{0, 0}, {3, 2}};
  c.differenceMetrics = {"power_w", "no_such_metric", "temp_c"};
  const std::vector<TrackRow> one = window();
  const std::vector<TrackRow> rows = planRows({run, run}, {}, c, {});
  ASSERT_EQ(rows.size(), 2 * one.size() + 1 + 2 * 2);
  EXPECT_EQ(rows[0].run(), 1);
  EXPECT_EQ(rows[one.size()].run(), 0);
  const TrackRow& head = rows[2 * one.size()];
  EXPECT_EQ(head.label, QStringLiteral("A − B"));
  const TrackRow& d = rows.back();
  const int temp = metricIndex(*run, "temp_c");
  EXPECT_EQ(*d.as<DifferenceRow>(), (DifferenceRow{{1, 3, temp}, {0, 2, temp}}));
  EXPECT_EQ(d.label, QStringLiteral("Δ GPU temperature · GPU 3−2"));
  EXPECT_EQ(d.group, head.key);
}

TEST_F(RowPlan, PairedComparisonInterleavesAAndBPerMetric) {
  ComparePlan c;
  c.active = true;
  c.layout = CompareLayout::Paired;
  c.pairs = {{1, 2}};
  c.differenceMetrics = {"power_w"};
  TreeState t;
  t.shown[rowkey::metric(0, 1, "util_pct")] = false;
  t.shown[rowkey::metric(0, 1, "sm_clock_mhz")] = false;
  const std::vector<TrackRow> rows = planRows({run, run}, t, c, {});
  EXPECT_EQ(outline(rows), (std::vector<std::string>{
                               "group:GPU 1 (A) · GPU 2 (B)", "counter:A · Power",
                               "counter:B · Power", "diff:A − B · Power (W, zero in the middle)",
                               "counter:A · GPU temperature", "counter:B · GPU temperature",
                               // then the steps and streams of the ranks that drove each GPU
                               // (GPU 2 of this run has no traced rank)
                               "steps:A · rank 1 · Steps", "kernels:A · rank 1 · Stream 7",
                               "kernels:A · rank 1 · Stream 13"}));
  EXPECT_EQ(*rows[2].as<CounterRow>(), (CounterRow{1, 2, metricIndex(*run, "power_w")}));
  EXPECT_EQ(rows.back().group, rows[0].key);  // they fold with the pair
  EXPECT_EQ(*rows[0].as<GroupHeaderRow>(), (GroupHeaderRow{0, 1, -1, 1, 2}));
}

TEST_F(RowPlan, FigureRowsPutAGpusRanksUnderIt) {
  RowPlanOptions o;
  o.style = RowStyle::Figure;
  o.counterHeight = 56;
  o.kernelHeight = 22;
  const FigureSelection sel{{1, 0}, {"temp_c", "power_w"}, true, true};
  const std::vector<TrackRow> rows = planRows({run}, figureTreeState(*run, 0, sel), {}, o);
  EXPECT_EQ(outline(rows),
            (std::vector<std::string>{
                "group:GPU 1", "counter:GPU temperature", "counter:Power", "steps:Rank 1 steps",
                "kernels:Rank 1 stream 7", "kernels:Rank 1 stream 13", "group:GPU 0",
                "counter:GPU temperature", "counter:Power", "steps:Rank 0 steps",
                "kernels:Rank 0 stream 7", "kernels:Rank 0 stream 13"}));
  EXPECT_EQ(rows[0].height, 18);
  EXPECT_EQ(rows[1].height, 56);
  EXPECT_EQ(rows[3].height, 18);
  EXPECT_EQ(rows[4].height, 22);
  EXPECT_TRUE(rows[4].group.isEmpty());
  // Without kernels and steps: the counters only.
  const FigureSelection counters{{0}, {"power_w"}, false, false};
  EXPECT_EQ(outline(planRows({run}, figureTreeState(*run, 0, counters), {}, o)),
            (std::vector<std::string>{"group:GPU 0", "counter:Power"}));
}

TEST_F(RowPlan, FigureShowsRanksWithoutAGpuAfterEveryGpu) {
  test::SyntheticRun s = test::makeSyntheticRun(2);
  s.gpus[1].rank = -1;
  s.ranks[1].gpu = -1;  // rank 1 ran on no known GPU
  test::writeSyntheticRun(s, dir->path() / "orphan.h5");
  const auto orphan = RunFile::open(dir->path() / "orphan.h5");
  RowPlanOptions o;
  o.style = RowStyle::Figure;
  const FigureSelection all{{0, 1}, {"power_w"}, true, false};
  EXPECT_EQ(outline(planRows({orphan}, figureTreeState(*orphan, 0, all), {}, o)),
            (std::vector<std::string>{"group:GPU 0", "counter:Power", "kernels:Rank 0 stream 7",
                                      "kernels:Rank 0 stream 13", "group:GPU 1", "counter:Power",
                                      "group:Rank 1", "kernels:Rank 1 stream 7",
                                      "kernels:Rank 1 stream 13"}));
  // With only some GPUs shown, ranks of the others stay out.
  const FigureSelection some{{1}, {"power_w"}, true, false};
  EXPECT_EQ(outline(planRows({orphan}, figureTreeState(*orphan, 0, some), {}, o)),
            (std::vector<std::string>{"group:GPU 1", "counter:Power"}));
}

TEST(RowKeys, NameTheTreeItems) {
  EXPECT_EQ(rowkey::metric(1, 3, "power_w"), QStringLiteral("r1/g3/power_w"));
  EXPECT_EQ(rowkey::stream(0, 2, 7), QStringLiteral("r0/rank2/s7"));
  EXPECT_EQ(rowkey::steps(0, 2), QStringLiteral("r0/rank2/steps"));
  TreeState t;
  EXPECT_TRUE(t.isShown(QStringLiteral("anything")));
  EXPECT_FALSE(t.isShown(QStringLiteral("a non-default metric"), false));
  t.shown[QStringLiteral("x")] = true;
  EXPECT_TRUE(t.isShown(QStringLiteral("x"), false));
}

}  // namespace
}  // namespace wl
