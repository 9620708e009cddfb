// SPDX-License-Identifier: GPL-3.0-or-later
// The study view shows the library's numbers: table cells equal analyzeRun() on each run, a new
// baseline updates the deltas, filters and header clicks re-form the table, invalid runs are
// greyed with their reasons, double-clicking emits the run's path, and every study chart builds
// with the expected series.
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QStackedBarSeries>
#include <QTableView>
#include <QtTest>

#include <cmath>
#include <fstream>

#include "analysis/run_analysis.h"
#include "loaders/format/run_file.h"
#include "study_test_util.h"
#include "support/temp_dir.h"
#include "widgets/charts/heatmap_chart.h"
#include "widgets/charts/study_charts.h"
#include "widgets/study/study_view.h"

using namespace wl;  // NOLINT: test file

namespace {

int rowOf(StudyTableModel* m, const QString& label) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, StudyTableModel::ColRun).data().toString() == label) return r;
  return -1;
}

double cell(StudyTableModel* m, int row, std::string_view metric, int role = Qt::UserRole) {
  return m->index(row, StudyTableModel::columnOf(metric)).data(role).toDouble();
}

bool same(double got, double want) {
  return std::isnan(want) ? std::isnan(got) : got == want;
}

template <class T>
int countSeries(QChart* c) {
  int n = 0;
  for (QAbstractSeries* s : c->series())
    n += qobject_cast<T*>(s) != nullptr;
  return n;
}

}  // namespace

class StudyViewTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::writeSyntheticVariant(dir.path() / "a.h5", "run A", 1, 1.0);
    test::writeSyntheticVariant(dir.path() / "b.h5", "run B", 2, 1.25,
                                [](test::SyntheticRun& r) { r.info.config.tp = 4; });
    test::writeSyntheticVariant(dir.path() / "c.h5", "run C", 4, 0.8,
                                [](test::SyntheticRun& r) { r.info.platform = "H200"; });
    test::SyntheticRun bad = test::makeSyntheticRun(4, 0.4);  // 8 samples per GPU: invalid
    bad.info.name = "run OOM";
    test::writeSyntheticRun(bad, dir.path() / "oom.h5");
    for (const char* f : {"a.h5", "b.h5", "c.h5"})
      analyses[f] = analyzeRun(*RunFile::open(dir.path() / f));
  }

  void tableCellsEqualTheLibrary() {
    StudyView view;
    view.resize(1200, 800);
    view.show();
    QSignalSpy done(&view, &StudyView::loadingFinished);
    view.addRuns({QString::fromStdString(dir.path().string())});
    QVERIFY(done.wait(30000));
    StudyTableModel* m = view.tableModel();
    QCOMPARE(m->rowCount(), 4);
    const std::map<std::string, QString> labels = {
        {"a.h5", "run A"}, {"b.h5", "run B"}, {"c.h5", "run C"}};
    for (const auto& [file, label] : labels) {
      const int r = rowOf(m, label);
      QVERIFY(r >= 0);
      const RunAnalysis& a = analyses[file];
      QVERIFY(same(cell(m, r, "energy_j"), a.totals.energy_j));
      QVERIFY(same(cell(m, r, "mean_power_w"), a.totals.mean_power_w));
      QVERIFY(same(cell(m, r, "peak_power_w"), a.totals.peak_power_w));
      QVERIFY(same(cell(m, r, "tokens_per_s"), a.totals.tokens_per_s));
      QVERIFY(same(cell(m, r, "energy_per_token_j"), a.totals.energy_per_token_j));
      QVERIFY(same(cell(m, r, "throttled_fraction"), a.totals.throttled_fraction));
      double tmax = -INFINITY;
      for (const GpuAnalysis& g : a.gpus)
        tmax = std::max(tmax, g.temp.max);
      QVERIFY(same(cell(m, r, "temp_max_c"), tmax));
      QCOMPARE(m->index(r, StudyTableModel::ColValid).data().toString(), QString("yes"));
    }
    // The invalid run: greyed, its reasons in the tooltip, no rank.
    const int oom = rowOf(m, "run OOM");
    QVERIFY(oom >= 0);
    QCOMPARE(m->index(oom, StudyTableModel::ColValid).data().toString(), QString("invalid"));
    QVERIFY(m->index(oom, 0).data(Qt::ForegroundRole).isValid());
    QVERIFY(m->index(oom, StudyTableModel::columnOf("energy_j"))
                .data(Qt::ToolTipRole)
                .toString()
                .contains("fewer than 10"));
    QCOMPARE(m->index(oom, StudyTableModel::columnOf("energy_j"))
                 .data(StudyTableModel::RankRole)
                 .toInt(),
             0);
    QVERIFY(view.statusText().contains("4 runs"));
  }

  void baselineChangeUpdatesDeltas() {
    StudyView view;
    QSignalSpy done(&view, &StudyView::loadingFinished);
    view.addRuns({QString::fromStdString((dir.path() / "a.h5").string()),
                  QString::fromStdString((dir.path() / "b.h5").string()),
                  QString::fromStdString((dir.path() / "c.h5").string())});
    QVERIFY(done.wait(30000));
    StudyTableModel* m = view.tableModel();
    const double eA = analyses["a.h5"].totals.energy_j, eB = analyses["b.h5"].totals.energy_j,
                 eC = analyses["c.h5"].totals.energy_j;
    QVERIFY(view.setBaseline("run A"));
    QCOMPARE(view.baseline(), QString("run A"));
    view.setDisplayMode(StudyTableModel::DisplayMode::Delta);
    QCOMPARE(cell(m, rowOf(m, "run B"), "energy_j"), eB - eA);
    QCOMPARE(cell(m, rowOf(m, "run C"), "energy_j"), eC - eA);
    QCOMPARE(cell(m, rowOf(m, "run A"), "energy_j"), 0.0);
    QSignalSpy changed(&view, &StudyView::baselineChanged);
    QVERIFY(view.setBaseline("c.h5"));  // by file name
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toString(), QString("run C"));
    QCOMPARE(cell(m, rowOf(m, "run B"), "energy_j"), eB - eC);
    QCOMPARE(cell(m, rowOf(m, "run A"), "energy_j"), eA - eC);
    view.setDisplayMode(StudyTableModel::DisplayMode::RelativeDelta);
    QCOMPARE(cell(m, rowOf(m, "run B"), "energy_j"), (eB - eC) / std::fabs(eC));
    // An unknown baseline leaves the current one and says why.
    QVERIFY(!view.setBaseline("no such run"));
    QCOMPARE(view.baseline(), QString("run C"));
    QVERIFY(view.statusText().contains("no such run"));

    // Per GPU: each run has 4 GPUs.
    view.setDisplayMode(StudyTableModel::DisplayMode::Value);
    view.setNormalization(Normalization::PerGpu);
    QCOMPARE(cell(m, rowOf(m, "run B"), "energy_j"), eB / 4);

    // Filter and header sort go through the library's table.
    view.setFilter("tp=2");
    QCOMPARE(m->rowCount(), 2);
    QVERIFY(rowOf(m, "run B") < 0);
    view.setFilter("tp=");  // bad: keeps the table, shows the error
    QCOMPARE(m->rowCount(), 2);
    view.setFilter("");
    QCOMPARE(m->rowCount(), 3);
    view.tableView()->sortByColumn(StudyTableModel::columnOf("energy_j"), Qt::DescendingOrder);
    QVERIFY(cell(m, 0, "energy_j") >= cell(m, 1, "energy_j"));
    QVERIFY(cell(m, 1, "energy_j") >= cell(m, 2, "energy_j"));

    // Double-clicking a row names the run's file.
    view.resize(1200, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy activated(&view, &StudyView::runActivated);
    QTableView* t = view.tableView();
    const int r = rowOf(m, "run B");
    const QRect rect = t->visualRect(m->index(r, StudyTableModel::ColRun));
    // A press selects the row first, as a real double click does.
    QTest::mouseClick(t->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(t->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.at(0).at(0).toString(),
             QString::fromStdString((dir.path() / "b.h5").string()));
  }

  void chartsBuildWithTheExpectedSeries() {
    StudyLoadOptions o;
    o.cache.write = false;
    const Study s = loadStudy(
        {dir.path() / "a.h5", dir.path() / "b.h5", dir.path() / "c.h5", dir.path() / "oom.h5"}, o);
    const std::vector<size_t> runs = {0, 1, 2, 3};

    // Bars: one bar series with mean and peak; the efficiency line stops at the invalid run.
    std::unique_ptr<QChart> bars(makeStudyChart(s, runs, StudyChart::TemperatureBars));
    QCOMPARE(countSeries<QBarSeries>(bars.get()), 1);
    auto* bs = qobject_cast<QBarSeries*>(bars->series().at(0));
    QCOMPARE(bs->count(), 2);
    QCOMPARE(bs->barSets().at(0)->count(), 4);
    QCOMPARE(countSeries<QLineSeries>(bars.get()), 1);  // runs 0-2 valid, run 3 not
    const std::vector<ConfigBar> cb = configBars(s, runs);
    QCOMPARE(bs->barSets().at(1)->at(1), cb[1].temp_max_c);
    QCOMPARE(bs->barSets().at(1)->at(3), 0.0);  // the invalid run: no bar
    auto* line = qobject_cast<QLineSeries*>(bars->series().at(1));
    QCOMPARE(line->count(), 3);
    for (int i = 0; i < 3; ++i)
      QCOMPARE(line->at(i).y(), cb[static_cast<size_t>(i)].efficiency_normalized);

    // Heatmap: the anchor series only; cells are the chart's own item.
    std::unique_ptr<QChart> heat(makeStudyChart(s, runs, StudyChart::Heatmap));
    auto* hc = dynamic_cast<HeatmapChart*>(heat.get());
    QVERIFY(hc);
    QCOMPARE(heat->series().size(), 1);
    QCOMPARE(hc->data().configs.size(), size_t{4});
    QCOMPARE(hc->data().gpus.size(), size_t{4});
    QCOMPARE(hc->data().node_starts, std::vector<int>{2});  // the synthetic run: 2 nodes of 2

    // Kernel categories: one stacked series, one set per category present.
    std::unique_ptr<QChart> cats(makeStudyChart(s, runs, StudyChart::CategoriesByConfig));
    QCOMPARE(countSeries<QStackedBarSeries>(cats.get()), 1);
    const CategoryStack stack = categoriesByConfig(s, runs, CategoryOrder::SeedPaper);
    QVERIFY(!stack.categories.empty());
    QCOMPARE(qobject_cast<QStackedBarSeries*>(cats->series().at(0))->count(),
             static_cast<int>(stack.categories.size()));
    std::unique_ptr<QChart> stages(makeStudyChart(s, runs, StudyChart::CategoriesByStage));
    QCOMPARE(countSeries<QStackedBarSeries>(stages.get()), 1);

    // Pareto: points off the front, points on it, and the front's line.
    std::unique_ptr<QChart> pareto(makeStudyChart(s, runs, StudyChart::Pareto));
    QCOMPARE(countSeries<QScatterSeries>(pareto.get()), 2);
    QCOMPARE(countSeries<QLineSeries>(pareto.get()), 1);
    const ThroughputEnergyScatter sc = throughputEnergyScatter(s, runs);
    int onFront = 0;
    for (QAbstractSeries* a : pareto->series())
      if (auto* x = qobject_cast<QScatterSeries*>(a); x && x->name() == "Pareto front")
        onFront = x->count();
    QCOMPARE(onFront, static_cast<int>(sc.front.size()));

    // Scale-up vs scale-out: run C is on H200 (141 GB) but with as many GPUs as the H100 runs,
    // so there is no scale-up pair here: the chart says so.
    std::unique_ptr<QChart> scale(makeStudyChart(s, runs, StudyChart::ScaleUpVsOut));
    QCOMPARE(countSeries<QBarSeries>(scale.get()), 1);
    QVERIFY(scale->title().contains("no model"));
  }

  void cancelKeepsWhatWasLoaded() {
    StudyView view;
    QSignalSpy done(&view, &StudyView::loadingFinished);
    StudyLoadOptions o;
    o.threads = 1;
    o.cache.write = false;
    view.setLoadOptions(o);
    view.addRuns({QString::fromStdString(dir.path().string())});
    view.cancelLoading();
    QVERIFY(done.wait(30000));
    QVERIFY(!view.busy());
    QVERIFY(view.study().runs.size() <= 4);
    QCOMPARE(view.tableModel()->rowCount(), static_cast<int>(view.study().runs.size()));
  }

 private:
  test::TempDir dir;
  std::map<std::string, RunAnalysis> analyses;
};

QTEST_MAIN(StudyViewTest)
#include "study_view_test.moc"
