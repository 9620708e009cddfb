// SPDX-License-Identifier: GPL-3.0-or-later
// The selection summary shows the analysis library's numbers for the selected range, and the main
// window feeds it the timeline's selection.
#include <QApplication>
#include <QSignalSpy>
#include <QTreeWidget>
#include <QtTest>

#include "analysis/range_summary.h"
#include "app/gui/main_window.h"
#include "loaders/core/metrics.h"
#include "loaders/core/time_format.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/panels/selection_summary_view.h"
#include "widgets/timeline/view/timeline_page.h"

using namespace wl;  // NOLINT: test file

class SelectionSummaryTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineSelectionTest");
    src = test::makeSyntheticRun();
    test::writeSyntheticRun(src, dir.path() / "run.h5");
    run = RunFile::open(dir.path() / "run.h5");
  }

  void cellsEqualTheLibrary() {
    SelectionSummaryView v;
    v.setRun(run);
    const TimeRange r{src.info.start_ns + 4'000'000'000, src.info.start_ns + 7'500'000'000};
    v.setRange(r);
    v.summarizeNow();
    const RangeSummary want = summarizeRange(*run, r.t0, r.t1, {0, 1, 2, 3}, {0, 1});
    QTreeWidget* t = v.tree();
    QCOMPARE(t->topLevelItemCount(), 4 + 2);
    for (int g = 0; g < 4; ++g) {
      QTreeWidgetItem* gi = t->topLevelItem(g);
      const GpuRangeSummary& w = want.gpus[static_cast<size_t>(g)];
      QCOMPARE(gi->data(0, Qt::UserRole).toInt(), g);
      // First child: power (the first metric), mean / min / max as the library computed them.
      QTreeWidgetItem* power = gi->child(0);
      QCOMPARE(power->text(0), QString("Power"));
      const MetricStats* p = w.metric("power_w");
      QVERIFY(p);
      QCOMPARE(power->text(1), summaryValueText(p->mean, "W"));
      QCOMPARE(power->text(2), summaryValueText(p->min, "W"));
      QCOMPARE(power->text(3), summaryValueText(p->max, "W"));
      // Energy row.
      bool found = false;
      for (int c = 0; c < gi->childCount(); ++c)
        if (gi->child(c)->text(0) == "Energy") {
          QCOMPARE(gi->child(c)->text(1), summaryValueText(w.energy_j, "J"));
          found = true;
        }
      QVERIFY(found);
    }
    // GPU 0 is power capped from 5 s to 6 s: the selection holds that second of throttling.
    QVERIFY(want.gpus[0].throttled_fraction > 0.2);
    QVERIFY(t->topLevelItem(0)->text(0).contains("throttled"));
    // GPU 2 has no samples from 4 s to 7 s: its statistics cover only what is left.
    QCOMPARE(want.gpus[2].metric("power_w")->samples, uint64_t{10});  // 7.0 .. 7.45 s at 20 Hz
    // Ranks: kernel time by class equals the library's.
    QTreeWidgetItem* r0 = t->topLevelItem(4);
    QVERIFY(r0->text(0).startsWith("Rank 0"));
    QCOMPARE(r0->child(1)->text(1),
             QString::fromStdString(formatDuration(want.ranks[0].stream_busy_ns[1])));
  }

  void mainWindowFeedsTheSelection() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy bounds(w.timeline()->viewport(), &Viewport::boundsChanged);
    w.openRun(QString::fromStdString((dir.path() / "run.h5").string()));
    QVERIFY(bounds.wait(10000));
    auto* view = w.findChild<SelectionSummaryView*>();
    QVERIFY(view);
    QSignalSpy ready(view, &SelectionSummaryView::summaryReady);
    const TimeRange r{src.info.start_ns + 1'000'000'000, src.info.start_ns + 2'000'000'000};
    w.timeline()->viewport()->setSelection(r);
    QVERIFY(ready.wait(10000));
    QVERIFY(view->summary());
    QCOMPARE(view->summary()->range, r);
    const RangeSummary want = summarizeRange(*run, r.t0, r.t1, {0, 1, 2, 3}, {0, 1});
    QCOMPARE(view->summary()->gpus[1].metric("power_w")->mean,
             want.gpus[1].metric("power_w")->mean);
  }

 private:
  test::TempDir dir;
  test::SyntheticRun src;
  std::shared_ptr<const RunFile> run;
};

QTEST_MAIN(SelectionSummaryTest)
#include "selection_summary_test.moc"
