// SPDX-License-Identifier: GPL-3.0-or-later
// The analysis panel shows the library's numbers: every table cell equals analyzeRun() on the same
// run and scope; clicks on a GPU row and on a throttle interval emit the documented signals; a
// selection range re-scopes the analysis; every chart builds.
#include <QChartView>
#include <QComboBox>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QTextBrowser>
#include <QtTest>

#include <cmath>

#include "analysis/run_analysis.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/charts/analysis_charts.h"
#include "widgets/panels/analysis_panel.h"

using namespace wl;  // NOLINT: test file

namespace {

double at(QStandardItemModel* m, int row, int col) {
  return m->item(row, col)->data(Qt::UserRole).toDouble();
}

// The table view that shows `model` (through its sort proxy).
QTableView* viewOf(AnalysisPanel& panel, QStandardItemModel* model) {
  for (QTableView* v : panel.findChildren<QTableView*>()) {
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(v->model());
    if (proxy && proxy->sourceModel() == model) return v;
  }
  return nullptr;
}

bool same(double table, double library) {
  if (!std::isfinite(library)) return std::isinf(table) && table < 0;  // "–" sorts first
  return table == library;
}

}  // namespace

class AnalysisPanelTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    test::writeSyntheticRun(test::makeSyntheticRun(), dir.path() / "run.h5");
    run = RunFile::open(dir.path() / "run.h5");
  }

  void tablesEqualTheLibrary() {
    AnalysisPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QSignalSpy done(&panel, &AnalysisPanel::analysisFinished);
    panel.setRun(run);
    QVERIFY(done.wait(20000));
    const RunAnalysis want = analyzeRun(*run);
    QStandardItemModel* g = panel.gpuTable();
    QCOMPARE(g->rowCount(), static_cast<int>(want.gpus.size()));
    for (int r = 0; r < g->rowCount(); ++r) {
      const GpuAnalysis& w = want.gpus[static_cast<size_t>(r)];
      QCOMPARE(at(g, r, AnalysisPanel::GpuId), static_cast<double>(w.info.id));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuEnergyKj), w.energy_j * 1e-3));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuPowerMean), w.power.mean));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuPowerMax), w.power.max));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuTempMean), w.temp.mean));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuTempMax), w.temp.max));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuClockMean), w.sm_clock.mean));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuThrottledPct), w.throttle.fraction() * 100));
      QVERIFY(same(at(g, r, AnalysisPanel::GpuPeakToAverage), w.burstiness.peak_to_average));
    }
    // GPU 0 is throttled from 5 s to 6 s (SW power cap): one interval.
    QStandardItemModel* t = panel.throttleTable();
    QCOMPARE(t->rowCount(), 1);
    const ThrottleInterval& iv = want.gpus[0].throttle.intervals.at(0);
    QCOMPARE(t->item(0, 0)->data(AnalysisPanel::StartRole).toLongLong(), iv.start_ns);
    QCOMPARE(t->item(0, 0)->data(AnalysisPanel::EndRole).toLongLong(), iv.end_ns);
    QCOMPARE(at(t, 0, AnalysisPanel::ThrMinClock), 1500.0);
    QCOMPARE(t->item(0, AnalysisPanel::ThrCause)->text(), QString("SW power cap"));
    // Kernel tables.
    QStandardItemModel* rk = panel.rankTable();
    QCOMPARE(rk->rowCount(), static_cast<int>(want.ranks.size()));
    for (int r = 0; r < rk->rowCount(); ++r) {
      const RankBreakdown& b = want.ranks[static_cast<size_t>(r)].breakdown;
      QCOMPARE(at(rk, r, AnalysisPanel::RankId), static_cast<double>(b.rank));
      QCOMPARE(at(rk, r, AnalysisPanel::RankComputeMs), b.compute_ns * 1e-6);
      QCOMPARE(at(rk, r, AnalysisPanel::RankExposedCommMs), b.exposed_comm_ns * 1e-6);
      QCOMPARE(at(rk, r, AnalysisPanel::RankIdleMs), b.idle_ns * 1e-6);
      QVERIFY(same(at(rk, r, AnalysisPanel::RankOverlapPct), b.overlap_ratio * 100));
    }
    QStandardItemModel* k = panel.kernelTable();
    QCOMPARE(k->rowCount(), static_cast<int>(want.top_kernels.size()));
    QCOMPARE(k->item(0, AnalysisPanel::KerName)->text(),
             QString::fromStdString(want.top_kernels[0].name_text));
    QCOMPARE(at(k, 0, AnalysisPanel::KerTotalMs), want.top_kernels[0].total_ns * 1e-6);
    // The summary says which steps are traced and ends with the verdict of `wattline explain`.
    auto* summary = panel.findChild<QTextBrowser*>();
    QVERIFY(summary);
    const QString text = summary->toPlainText();
    QVERIFY(text.contains("Kernel traces") && text.contains("no iteration traced on every rank"));
    QVERIFY(!explainCost(want.cost).empty());
    for (const std::string& sentence : explainCost(want.cost))
      QVERIFY2(text.contains(QString::fromStdString(sentence)), sentence.c_str());
  }

  void clicksEmitGpuAndRange() {
    AnalysisPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy done(&panel, &AnalysisPanel::analysisFinished);
    panel.setRun(run);
    QVERIFY(done.wait(20000));
    QTableView* gv = viewOf(panel, panel.gpuTable());
    QVERIFY(gv);
    // Sort by energy, descending: the top row is the GPU with the most energy.
    gv->sortByColumn(AnalysisPanel::GpuEnergyKj, Qt::DescendingOrder);
    const RunAnalysis* a = panel.analysis();
    int best = 0;
    for (const GpuAnalysis& x : a->gpus)
      if (x.energy_j > a->gpus[static_cast<size_t>(best)].energy_j) best = x.info.id;
    QSignalSpy gpu(&panel, &AnalysisPanel::gpuActivated);
    auto* tabs = panel.findChild<QTabWidget*>();
    tabs->setCurrentWidget(gv);
    QTest::mouseClick(gv->viewport(), Qt::LeftButton, {},
                      gv->visualRect(gv->model()->index(0, 1)).center());
    QCOMPARE(gpu.count(), 1);
    QCOMPARE(gpu.at(0).at(0).toInt(), best);

    QTableView* tv = viewOf(panel, panel.throttleTable());
    tabs->setCurrentWidget(tv);
    QSignalSpy range(&panel, &AnalysisPanel::rangeActivated);
    QTest::mouseClick(tv->viewport(), Qt::LeftButton, {},
                      tv->visualRect(tv->model()->index(0, 2)).center());
    QCOMPARE(range.count(), 1);
    const ThrottleInterval& iv = a->gpus[0].throttle.intervals.at(0);
    QCOMPARE(range.at(0).at(0).toLongLong(), iv.start_ns);
    QCOMPARE(range.at(0).at(1).toLongLong(), iv.end_ns);
  }

  void rangeAndSelectionRescope() {
    AnalysisPanel panel;
    QSignalSpy done(&panel, &AnalysisPanel::analysisFinished);
    panel.setRun(run);
    QVERIFY(done.wait(20000));
    const int64_t t0 = run->info().start_ns;
    // Several quick changes (a drag) end in one analysis of the last range and selection.
    panel.setRange(t0 + 1'000'000'000, t0 + 3'000'000'000);
    panel.setRange(t0 + 2'000'000'000, t0 + 7'000'000'000);
    panel.setSelection({0, 2}, {0});
    QVERIFY(done.wait(20000));
    QCOMPARE(done.count(), 2);
    AnalysisScope scope;
    scope.range = {t0 + 2'000'000'000, t0 + 7'000'000'000};
    scope.gpus = {0, 2};
    scope.ranks = {0};
    const RunAnalysis want = analyzeRun(*run, scope);
    QStandardItemModel* g = panel.gpuTable();
    QCOMPARE(g->rowCount(), 2);
    for (int r = 0; r < 2; ++r) {
      QVERIFY(same(at(g, r, AnalysisPanel::GpuEnergyKj), want.gpus[r].energy_j * 1e-3));
      QVERIFY(
          same(at(g, r, AnalysisPanel::GpuThrottledPct), want.gpus[r].throttle.fraction() * 100));
    }
    QCOMPARE(panel.rankTable()->rowCount(), 1);
    QCOMPARE(at(panel.rankTable(), 0, AnalysisPanel::RankSpanMs),
             want.ranks[0].breakdown.span_ns * 1e-6);
    panel.clearRange();
    QVERIFY(done.wait(20000));
    QVERIFY(!panel.range());
  }

  // One row per chart of the panel's picker, named by its title.
  void everyChartBuilds_data() {
    QTest::addColumn<int>("chart");
    for (int c = 0; c < kAnalysisChartCount; ++c)
      QTest::newRow(qPrintable(analysisChartTitle(static_cast<AnalysisChart>(c)))) << c;
  }

  void everyChartBuilds() {
    QFETCH(int, chart);
    const RunAnalysis a = analyzeRun(*run);
    std::unique_ptr<QChart> built(makeAnalysisChart(a, static_cast<AnalysisChart>(chart)));
    QVERIFY(!built->series().isEmpty());
    QVERIFY(!built->axes().isEmpty());
    // The panel shows the same chart when it is picked.
    AnalysisPanel panel;
    QSignalSpy done(&panel, &AnalysisPanel::analysisFinished);
    panel.setRun(run);
    QVERIFY(done.wait(20000));
    auto* picker = panel.findChild<QComboBox*>();
    auto* view = panel.findChild<QChartView*>();
    picker->setCurrentIndex(chart);
    QCOMPARE(view->chart()->title().left(10),
             analysisChartTitle(static_cast<AnalysisChart>(chart)).left(10));
  }

  void badRunSaysSoAndNoRunClears() {
    AnalysisPanel panel;
    QSignalSpy done(&panel, &AnalysisPanel::analysisFinished);
    QSignalSpy failed(&panel, &AnalysisPanel::analysisFailed);
    panel.setRun(run);
    QVERIFY(done.wait(20000));
    panel.setSelection({99}, {});  // no such GPU: one message, nothing crashes
    QVERIFY(failed.wait(20000));
    QVERIFY(failed.at(0).at(0).toString().contains("no GPU 99"));
    panel.setRun(nullptr);
    QCOMPARE(panel.gpuTable()->rowCount(), 0);
    QVERIFY(!panel.analysis());
  }

 private:
  test::TempDir dir;
  std::shared_ptr<const RunFile> run;
};

QTEST_MAIN(AnalysisPanelTest)
#include "analysis_panel_test.moc"
