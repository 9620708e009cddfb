// SPDX-License-Identifier: GPL-3.0-or-later
// The analysis views (summary, breakdown, throttle, histogram): their charts hold the numbers
// worked out by hand from the test run's definition (export_test_run.h), and their SVGs keep axis
// titles with units, legends and one bar per GPU and series.
#include <gtest/gtest.h>

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QLineSeries>
#include <QXYSeries>

#include <cmath>

#include "analysis/study/study.h"
#include "export_test_run.h"
#include "loaders/core/error.h"
#include "support/temp_dir.h"
#include "svg_util.h"
#include "widgets/export/chart_figure.h"
#include "widgets/export/export_views.h"
#include "widgets/export/timeline_figure.h"

namespace wl {
namespace {

using test::kExportT0;
using test::kSecond;

class ChartViews : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::ensureApp();
    dir = new test::TempDir();
    test::writeExportTestRun(dir->path() / "run.h5");
    run = RunFile::open(dir->path() / "run.h5");
  }
  static void TearDownTestSuite() {
    run.reset();
    delete dir;
  }
  static ExportRequest request() {
    ExportRequest rq;
    rq.run = run;
    return rq;
  }
  // The bar sets of a chart by label.
  static std::map<QString, QList<qreal>> bars(const QChart* chart) {
    std::map<QString, QList<qreal>> out;
    for (QAbstractSeries* s : chart->series())
      if (auto* b = qobject_cast<QAbstractBarSeries*>(s))
        for (QBarSet* set : b->barSets()) {
          QList<qreal> v;
          for (int i = 0; i < set->count(); ++i)
            v << set->at(i);
          out[set->label()] = v;
        }
    return out;
  }
  static test::SvgDocument svgOf(Figure& f) {
    FigureOptions o;
    o.format = FigureFormat::Svg;
    o.size = FigureSize{1200, 900, SizeUnit::Pixels, 96};
    return test::parseSvg(renderFigureBytes(f, o));
  }
  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};

test::TempDir* ChartViews::dir = nullptr;
std::shared_ptr<const RunFile> ChartViews::run;

TEST_F(ChartViews, SummaryBarsAreTheTimeWeightedMeansAndExtremes) {
  auto fig = makeSummaryFigure(request());
  auto* cf = dynamic_cast<ChartFigure*>(fig.get());
  ASSERT_NE(cf, nullptr);
  ASSERT_EQ(cf->charts().size(), 3u);
  // Power: GPU 0 is 300 W throughout; GPU 1 holds 950 W for one 50 ms segment of 3600 s.
  const auto power = bars(cf->charts()[0]);
  ASSERT_EQ(power.at("mean").size(), 2);
  EXPECT_NEAR(power.at("mean")[0], 300.0, 1e-6);
  EXPECT_NEAR(power.at("mean")[1], 300.0 + 650.0 * 0.05 / 3600.0, 1e-6);
  EXPECT_NEAR(power.at("peak")[1], 950.0, 1e-6);
  // Temperature 50 and 55 C; SM clock of GPU 0: 1500 MHz for 300 s of 3600 s.
  const auto temp = bars(cf->charts()[1]);
  EXPECT_NEAR(temp.at("mean")[0], 50.0, 1e-9);
  EXPECT_NEAR(temp.at("max")[1], 55.0, 1e-9);
  const auto clock = bars(cf->charts()[2]);
  EXPECT_NEAR(clock.at("mean")[0], (1980.0 * 3300 + 1500.0 * 300) / 3600, 1e-6);
  EXPECT_NEAR(clock.at("min")[0], 1500.0, 1e-9);
  EXPECT_NEAR(clock.at("min")[1], 1980.0, 1e-9);

  const test::SvgDocument svg = svgOf(*fig);
  ASSERT_TRUE(svg.ok);
  for (const char* t : {"Power (W)", "Temperature (°C)", "SM clock (MHz)", "GPU", "mean", "peak",
                        "Power per GPU", "export-test"})
    EXPECT_TRUE(svg.hasText(QString::fromUtf8(t))) << t;
  // One rect per GPU and bar set in each colour: 2 GPUs.
  const QString orange = Theme::publication().metricColor("power_w").name();
  size_t powerMeanBars = 0;
  for (const auto& e : svg.elements)
    powerMeanBars += e.name == QLatin1String("rect") && e.fill == orange;
  EXPECT_EQ(powerMeanBars, 2u + 1u);  // two bars and the legend marker
}

TEST_F(ChartViews, BreakdownFollowsHtaDefinitionsByHand) {
  auto fig = makeBreakdownFigure(request());
  auto* cf = dynamic_cast<ChartFigure*>(fig.get());
  ASSERT_NE(cf, nullptr);
  const auto b = bars(cf->charts()[0]);
  // Rank 0: compute [10, 20) + [100, 102) = 12 s, communication [15, 25): exposed [20, 25) = 5 s;
  // span 10 -> 102 s = 92 s, busy union 17 s, idle 75 s; nothing else.
  // Rank 1: one 1 s compute kernel.
  EXPECT_NEAR(b.at("compute")[0], 12000.0, 1e-6);
  EXPECT_NEAR(b.at("exposed communication")[0], 5000.0, 1e-6);
  EXPECT_NEAR(b.at("exposed memory / other")[0], 0.0, 1e-6);
  EXPECT_NEAR(b.at("idle")[0], 75000.0, 1e-6);
  EXPECT_NEAR(b.at("compute")[1], 1000.0, 1e-6);
  EXPECT_NEAR(b.at("idle")[1], 0.0, 1e-6);
  const test::SvgDocument svg = svgOf(*fig);
  for (const char* t : {"Time (ms)", "Rank", "compute", "exposed communication", "idle"})
    EXPECT_TRUE(svg.hasText(QString::fromUtf8(t))) << t;

  // --gpus selects the ranks on those GPUs.
  ExportRequest rq = request();
  rq.gpus = {1};
  auto one = makeBreakdownFigure(rq);
  const auto b1 = bars(dynamic_cast<ChartFigure*>(one.get())->charts()[0]);
  ASSERT_EQ(b1.at("compute").size(), 1);
  EXPECT_NEAR(b1.at("compute")[0], 1000.0, 1e-6);
  // A range clips the events: [0, 18 s) holds compute [10, 18) and communication [15, 18).
  rq = request();
  rq.range = TimeRange{kExportT0, kExportT0 + 18 * kSecond};
  auto clipped = makeBreakdownFigure(rq);
  const auto b2 = bars(dynamic_cast<ChartFigure*>(clipped.get())->charts()[0]);
  EXPECT_NEAR(b2.at("compute")[0], 8000.0, 1e-6);
  EXPECT_NEAR(b2.at("exposed communication")[0], 0.0, 1e-6);
}

TEST_F(ChartViews, ThrottleShareIsThrottledKernelTimeByCause) {
  auto fig = makeThrottleFigure(request());
  const auto b = bars(dynamic_cast<ChartFigure*>(fig.get())->charts()[0]);
  // GPU 0: busy all hour (util 100 %), 1500 MHz < 0.95 x 1980 MHz for [600 s, 900 s) with the
  // SW power cap bit: 300 s / 3600 s. GPU 1 never throttles.
  ASSERT_EQ(b.size(), 1u);
  ASSERT_TRUE(b.count("SW power cap"));
  EXPECT_NEAR(b.at("SW power cap")[0], 100.0 * 300.0 / 3600.0, 1e-6);
  EXPECT_NEAR(b.at("SW power cap")[1], 0.0, 1e-12);
  const test::SvgDocument svg = svgOf(*fig);
  EXPECT_TRUE(svg.hasText(QStringLiteral("Throttled (% of kernel time)")));
  EXPECT_TRUE(svg.hasText(QStringLiteral("SW power cap")));
}

// The points of a histogram's step line at the left edge of each bin: (edge, value).
std::map<double, double> binsOf(const QChart* chart) {
  std::map<double, double> out;
  auto* line = qobject_cast<QLineSeries*>(chart->series().front());
  const auto pts = line->points();
  for (qsizetype i = 0; i + 1 < pts.size(); i += 2)
    out[pts[i].x()] = pts[i].y();
  return out;
}

TEST_F(ChartViews, HistogramCountsEverySecondOfPower) {
  auto fig = makeHistogramFigure(request());
  auto* cf = dynamic_cast<ChartFigure*>(fig.get());
  ASSERT_EQ(cf->charts().size(), 1u);  // power only unless |dP/dt| is asked for
  // 10 W bins: [300, 310) holds 2 x 3600 s minus the spike's 50 ms; [950, 960) those 50 ms.
  const auto power = binsOf(cf->charts()[0]);
  EXPECT_NEAR(power.at(300.0), 7200.0 - 0.05, 1e-6);
  EXPECT_NEAR(power.at(950.0), 0.05, 1e-6);
  EXPECT_NEAR(power.at(290.0), 0.0, 1e-12);

  ExportRequest rq = request();
  rq.metrics = {"power_w", "dpdt"};
  auto both = makeHistogramFigure(rq);
  auto* bf = dynamic_cast<ChartFigure*>(both.get());
  ASSERT_EQ(bf->charts().size(), 2u);
  // |dP/dt| per 50 ms segment: 0 everywhere (counted in the first bin, [1, 10^0.1) W/s) except
  // the two segments into and out of GPU 1's spike, 650 W / 0.05 s = 13,000 W/s, in the bin
  // starting at 10^4.1 (log10 13000 = 4.11). 2 x 72,000 segments in all.
  const auto ramp = binsOf(bf->charts()[1]);
  EXPECT_NEAR(ramp.at(1.0), 2 * 72000.0 - 2, 1e-9);
  EXPECT_NEAR(ramp.at(std::pow(10.0, 4.1)), 2.0, 1e-9);
  const test::SvgDocument svg = svgOf(*both);
  EXPECT_TRUE(svg.hasText(QStringLiteral("Power (W)")));
  EXPECT_TRUE(svg.hasText(QStringLiteral("|dP/dt| (W/s)")));
  rq.metrics = {"temp_c"};
  EXPECT_THROW(makeHistogramFigure(rq), Error);
}

// The comparison view of a run against itself: per GPU pair a header, then for each metric A's
// row, B's row and A - B; identical runs align through the identity.
TEST_F(ChartViews, CompareStacksBothRunsAndTheirDifferencePerGpuPair) {
  const ExportView* v = findExportView("compare");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->uses & ExportView::kNeedsCompare);
  ExportRequest rq = request();
  rq.compare = run;
  rq.metrics = {"power_w", "temp_c"};
  auto fig = v->make(rq);
  auto* tf = dynamic_cast<TimelineFigure*>(fig.get());
  ASSERT_NE(tf, nullptr);
  const auto& spec = tf->spec();
  ASSERT_EQ(spec.runWarps.size(), 1u);
  EXPECT_EQ(spec.runWarps[0].first, 1);
  for (int64_t t : {run->info().start_ns, run->info().end_ns, run->info().start_ns + 12345})
    EXPECT_EQ(spec.runWarps[0].second.toA(t), t);  // the same run: the identity
  const size_t pairs = run->gpus().size();
  ASSERT_EQ(spec.rows.size(), pairs * (1 + 2 * 3));
  std::vector<RowKind> kinds;
  for (size_t k = 0; k < 7; ++k)
    kinds.push_back(spec.rows[k].kind());
  EXPECT_EQ(kinds, (std::vector<RowKind>{RowKind::GroupHeader, RowKind::Counter, RowKind::Counter,
                                         RowKind::Difference, RowKind::Counter, RowKind::Counter,
                                         RowKind::Difference}));
  EXPECT_EQ(spec.rows[1].run(), 0);
  EXPECT_EQ(spec.rows[2].run(), 1);
  EXPECT_EQ(std::get<DifferenceRow>(spec.rows[3].content).b.run, 1);
  // A metric one of the runs lacks is one clear error.
  rq.metrics = {"no_such_metric"};
  EXPECT_THROW(v->make(rq), Error);
  // The SVG names the rows.
  rq.metrics = {"power_w"};
  auto one = v->make(rq);
  const test::SvgDocument svg = svgOf(*one);
  EXPECT_TRUE(svg.hasText(QStringLiteral("A · Power (W)")));
  EXPECT_TRUE(svg.hasText(QStringLiteral("B · Power (W)")));
}

// The Pareto view: one scatter of the two runs' throughput against energy per token, the numbers
// of their summaries (the ones `wattline compare` prints).
TEST_F(ChartViews, ParetoPlotsTheRunsSummaries) {
  ExportRequest rq = request();
  rq.compare = run;
  auto fig = findExportView("pareto")->make(rq);
  auto* cf = dynamic_cast<ChartFigure*>(fig.get());
  ASSERT_NE(cf, nullptr);
  ASSERT_EQ(cf->charts().size(), 1u);
  StudyLoadOptions o;
  o.cache.read = o.cache.write = false;
  const StudyRun s = loadRunSummary(run->path(), o);
  const bool plotted = std::isfinite(s.summary.totals.tokens_per_s) &&
                       std::isfinite(s.summary.totals.energy_per_token_j);
  size_t points = 0;
  for (QAbstractSeries* series : cf->charts()[0]->series())
    if (auto* xy = qobject_cast<QXYSeries*>(series)) points += static_cast<size_t>(xy->count());
  if (plotted)
    EXPECT_GE(points, 2u);
  else
    EXPECT_EQ(points, 0u);  // a run without a known batch has no tokens: nothing to plot
}

}  // namespace
}  // namespace wl
