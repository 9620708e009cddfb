// SPDX-License-Identifier: GPL-3.0-or-later
// The What-if panel shows the library's numbers: on the bundled samples its calibration is
// calibrateRun's, its projection of the sliders' setting is projectRun's for that setting, its
// sweep and Pareto front are projectRun's sweep and paretoFront's, and the chart holds the
// measured point, the front and the setting. Slider moves supersede each other (one result), the
// run is calibrated once, unknown values show as "—", and a run that cannot be calibrated or
// projected shows its one-line reason in the panel (no dialog).
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QScatterSeries>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QTableWidget>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <optional>

#include "analysis/calibration.h"
#include "analysis/projected_run.h"
#include "analysis/whatif.h"
#include "analysis/whatif_pareto.h"
#include "app/gui/main_window.h"
#include "app/gui/run_session.h"
#include "loaders/core/metrics.h"
#include "support/missing.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/panels/compare_panel.h"
#include "widgets/panels/whatif_panel.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/view/timeline_page.h"

using namespace wl;  // NOLINT: test file

namespace {

std::filesystem::path sample(const QString& name) {
  return std::filesystem::path(WATTLINE_SOURCE_DIR) / "resources" / "samples" / name.toStdString();
}

// Equal, or both unknown.
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

bool sameOutcome(const WhatifOutcome& a, const WhatifOutcome& b) {
  return same(a.step_s, b.step_s) && same(a.tokens_per_s, b.tokens_per_s) &&
         same(a.energy_per_token_j, b.energy_per_token_j) && same(a.peak_temp_c, b.peak_temp_c) &&
         same(a.throttled_fraction, b.throttled_fraction);
}

bool sameRow(const WhatifRow& a, const WhatifRow& b) {
  return same(a.power_limit_w, b.power_limit_w) && same(a.inlet_temp_c, b.inlet_temp_c) &&
         sameOutcome(a.value, b.value) && sameOutcome(a.uncertainty, b.uncertainty);
}

QScatterSeries* series(WhatifPanel& panel, const char* id) {
  for (QAbstractSeries* s : panel.chartView()->chart()->series())
    if (s->objectName() == QLatin1String(id)) return qobject_cast<QScatterSeries*>(s);
  return nullptr;
}

std::optional<double> given(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

// The panel shown with `run`, its first projection finished (or failed).
bool openAndWait(WhatifPanel& panel, std::shared_ptr<const RunFile> run) {
  panel.resize(700, 900);
  panel.show();
  QSignalSpy ready(&panel, &WhatifPanel::projectionReady);
  QSignalSpy failed(&panel, &WhatifPanel::projectionFailed);
  panel.setRun(std::move(run));
  return QTest::qWaitFor([&] { return ready.count() + failed.count() > 0; }, 60000);
}

}  // namespace

class WhatifPanelTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineWhatifTest");
    QSettings().clear();
  }

  void projectionEqualsTheLibrary_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("limitW");  // NaN: the slider stays at the measured limit
    QTest::addColumn<double>("inletC");  // NaN: the calibrated inlet
    const double nan = std::nan("");
    QTest::newRow("h200 real, 550 W") << "h200-gpt-1.3b-real.h5" << 550.0 << nan;
    QTest::newRow("h200 real, inlet 25 C") << "h200-gpt-1.3b-real.h5" << nan << 25.0;
    QTest::newRow("llama3 h100x8 mbs4, 500 W at 30 C")
        << "llama3-8b-h100x8-mbs4.h5" << 500.0 << 30.0;
  }

  void projectionEqualsTheLibrary() {
    QFETCH(QString, file);
    QFETCH(double, limitW);
    QFETCH(double, inletC);
    if (!std::filesystem::exists(sample(file)))
      WL_QSKIP_OR_FAIL_MISSING("a bundled sample is missing (resources/samples)");
    const auto run = RunFile::open(sample(file));
    WhatifPanel panel;
    QVERIFY(openAndWait(panel, run));
    QVERIFY2(panel.state(), qPrintable(panel.error()));

    // The calibration is calibrateRun's; the first projection is the measured setting's.
    const Calibration cal = calibrateRun(*run);
    QCOMPARE(toJson(*panel.state()->calibration).dump(), toJson(cal).dump());
    const WhatifProjection atMeasured = projectRun(*run, cal, {});
    QVERIFY(sameRow(panel.state()->measured, atMeasured.rows.at(0)));
    QVERIFY(sameRow(panel.state()->model, atMeasured.rows.at(1)));
    QVERIFY(sameOutcome(panel.state()->current.value, atMeasured.rows.at(1).value));
    QVERIFY(!panel.sliderSetting().power_limit_w && !panel.sliderSetting().inlet_temp_c);
    QCOMPARE(panel.powerSlider()->maximum(),
             static_cast<int>(std::lround(atMeasured.rows[0].power_limit_w)));

    // Move the sliders: the projection is projectRun's for the same setting.
    QSignalSpy ready(&panel, &WhatifPanel::projectionReady);
    if (!std::isnan(limitW)) panel.setPowerLimit(limitW);
    if (!std::isnan(inletC)) panel.setInletTemp(inletC);
    panel.projectNow();
    QVERIFY(ready.wait(60000));
    const WhatifSetting s = panel.state()->setting;
    QVERIFY(s.power_limit_w == given(limitW));
    QVERIFY(s.inlet_temp_c == given(inletC));
    const WhatifProjection want = projectRun(*run, cal, {s});
    QVERIFY(sameRow(panel.state()->current, want.rows.at(2)));
    QVERIFY(sameRow(panel.state()->measured, want.rows.at(0)));
    // The table's projected column holds the same numbers.
    const WhatifOutcome& v = want.rows[2].value;
    const double column[] = {v.step_s, v.tokens_per_s, v.energy_per_token_j, v.peak_temp_c,
                             v.throttled_fraction};
    for (int r = 0; r < WhatifPanel::RowCount; ++r)
      QVERIFY(same(panel.table()->item(r, 2)->data(Qt::UserRole).toDouble(), column[r]));

    // The sweep: 15 limits from half the limit to the limit at the chosen inlet; its front is
    // paretoFront's of projectRun's values.
    std::vector<WhatifSetting> sweep;
    for (double w : powerLimitSweep(atMeasured.rows[0].power_limit_w))
      sweep.push_back({w, given(inletC), {}});
    const WhatifProjection swept = projectRun(*run, cal, sweep);
    QCOMPARE(panel.state()->sweep.size(), sweep.size());
    std::vector<TradeoffPoint> pts;
    for (size_t i = 0; i < sweep.size(); ++i) {
      QVERIFY(sameRow(panel.state()->sweep[i], swept.rows.at(i + 2)));
      pts.push_back({swept.rows[i + 2].value.step_s, swept.rows[i + 2].value.energy_per_token_j});
    }
    const std::vector<size_t> front = paretoFront(pts);
    QVERIFY(!front.empty());
    QCOMPARE(panel.state()->pareto, front);

    // The chart: the measured point, the front, the setting.
    QScatterSeries* measured = series(panel, "measured");
    QVERIFY(measured);
    QCOMPARE(measured->count(), 1);
    QCOMPARE(measured->at(0),
             QPointF(atMeasured.rows[0].value.step_s, atMeasured.rows[0].value.energy_per_token_j));
    QScatterSeries* pareto = series(panel, "pareto");
    QVERIFY(pareto);
    QCOMPARE(pareto->count(), static_cast<int>(front.size()));
    for (size_t i = 0; i < front.size(); ++i)
      QCOMPARE(pareto->at(static_cast<int>(i)),
               QPointF(pts[front[i]].step_s, pts[front[i]].energy_per_token_j));
    QScatterSeries* current = series(panel, "current");
    QVERIFY(current);
    QCOMPARE(current->count(), 1);
    QCOMPARE(current->at(0), QPointF(v.step_s, v.energy_per_token_j));
  }

  // Slider moves supersede each other: one result, for the last setting; the calibration is
  // the same object throughout (calibrated once per run).
  void slidersSupersedeAndCalibrateOnce() {
    if (!std::filesystem::exists(sample("h200-gpt-1.3b-real.h5")))
      WL_QSKIP_OR_FAIL_MISSING("a bundled sample is missing (resources/samples)");
    WhatifPanel panel;
    QVERIFY(openAndWait(panel, RunFile::open(sample("h200-gpt-1.3b-real.h5"))));
    QVERIFY(panel.state());
    const Calibration* cal = panel.state()->calibration.get();
    QSignalSpy ready(&panel, &WhatifPanel::projectionReady);
    for (double w : {400.0, 450.0, 500.0}) {
      panel.setPowerLimit(w);
      panel.projectNow();
    }
    QVERIFY(ready.wait(60000));
    QCOMPARE(*panel.state()->setting.power_limit_w, 500.0);
    // Dragging (no projectNow): one projection after the pause, for where the slider stopped.
    for (int w = 600; w <= 650; w += 10)
      panel.powerSlider()->setValue(w);
    QVERIFY(QTest::qWaitFor([&] { return ready.count() == 2; }, 60000));
    QTest::qWait(400);
    QCOMPARE(ready.count(), 2);
    QCOMPARE(*panel.state()->setting.power_limit_w, 650.0);
    QCOMPARE(panel.state()->calibration.get(), cal);
    QVERIFY(panel.statusLabel()->text().contains(QLatin1String("whole iterations")));
  }

  // Open as B writes the projected run of the shown setting off the UI thread and asks for it to
  // be opened: a run marked projected whose measured step and energy are the panel's projection.
  void openAsBWritesTheProjection() {
    if (!std::filesystem::exists(sample("llama3-8b-h100x8-mbs4.h5")))
      WL_QSKIP_OR_FAIL_MISSING("a bundled sample is missing (resources/samples)");
    WhatifPanel panel;
    QVERIFY(openAndWait(panel, RunFile::open(sample("llama3-8b-h100x8-mbs4.h5"))));
    QVERIFY(panel.openAsBButton()->isEnabled());
    QSignalSpy ready(&panel, &WhatifPanel::projectionReady);
    panel.setPowerLimit(500);
    panel.projectNow();
    QVERIFY(!panel.openAsBButton()->isEnabled());  // not while the setting is being projected
    QVERIFY(ready.wait(60000));
    QSignalSpy opened(&panel, &WhatifPanel::openRunRequested);
    QTest::mouseClick(panel.openAsBButton(), Qt::LeftButton);
    QVERIFY(!panel.openAsBButton()->isEnabled());  // one file at a time
    QVERIFY(opened.wait(60000));
    const auto written = RunFile::open(opened.at(0).at(0).toString().toStdString());
    QVERIFY(isProjectedRun(written->info()));
    const WhatifOutcome got = measureRun(*written);
    const WhatifOutcome& want = panel.state()->current.value;
    QCOMPARE(*panel.state()->setting.power_limit_w, 500.0);
    QVERIFY(std::fabs(got.step_s - want.step_s) <= 1e-6 * want.step_s);
    QVERIFY(std::fabs(got.energy_per_token_j - want.energy_per_token_j) <=
            1e-6 * want.energy_per_token_j);
    QVERIFY(panel.openAsBButton()->isEnabled());
  }

  // A run without a batch size has no tokens: tokens per second and energy per token are
  // unknown ("—"), never 0, and the chart says why it has no curve.
  void unknownShownAsDash() {
    test::TempDir dir;
    test::SyntheticRun r = test::makeSyntheticRun();
    r.info.config.gbs.reset();
    test::writeSyntheticRun(r, dir.path() / "nobatch.h5");
    WhatifPanel panel;
    QVERIFY(openAndWait(panel, RunFile::open(dir.path() / "nobatch.h5")));
    QVERIFY2(panel.state(), qPrintable(panel.error()));
    for (int c = 0; c < 3; ++c) {
      QCOMPARE(panel.table()->item(WhatifPanel::TokensRow, c)->text(), QStringLiteral("—"));
      QCOMPARE(panel.table()->item(WhatifPanel::EnergyRow, c)->text(), QStringLiteral("—"));
      QVERIFY(std::isnan(
          panel.table()->item(WhatifPanel::EnergyRow, c)->data(Qt::UserRole).toDouble()));
    }
    QVERIFY(panel.table()->item(WhatifPanel::StepRow, 0)->text() != QStringLiteral("—"));
    QCOMPARE(series(panel, "pareto")->count(), 0);
    QVERIFY(panel.chartView()->chart()->title().contains(QLatin1String("No energy per token")));
  }

  void failureShowsTheReason_data() {
    QTest::addColumn<QString>("strip");
    QTest::addColumn<QString>("reason");
    QTest::newRow("no kernel traces") << "traces"
                                      << "cannot calibrate: the run has no kernel traces";
    QTest::newRow("no SM clock") << "clock"
                                 << "no sm_clock_mhz telemetry";
    QTest::newRow("no whole iteration") << "iterations"
                                        << "cannot project: the run has no whole";
  }

  void failureShowsTheReason() {
    QFETCH(QString, strip);
    QFETCH(QString, reason);
    test::TempDir dir;
    test::SyntheticRun r = test::makeSyntheticRun();
    if (strip == QLatin1String("traces")) {
      r.tracks.clear();
    } else if (strip == QLatin1String("clock")) {
      for (TelemetryTable& t : r.telemetry)
        std::erase_if(t.columns,
                      [](const TelemetryColumn& c) { return c.metric == metric::kSmClock; });
    } else {
      r.iterations.clear();
      r.annotations.clear();
    }
    test::writeSyntheticRun(r, dir.path() / "run.h5");
    WhatifPanel panel;
    QSignalSpy failed(&panel, &WhatifPanel::projectionFailed);
    QVERIFY(openAndWait(panel, RunFile::open(dir.path() / "run.h5")));
    QCOMPARE(failed.count(), 1);
    QVERIFY(!panel.state());
    QVERIFY2(panel.error().contains(reason), qPrintable(panel.error()));
    QVERIFY(!panel.error().contains(QLatin1Char('\n')));
    QCOMPARE(panel.statusLabel()->text(), panel.error());
    QVERIFY(!panel.powerSlider()->isEnabled());
    QVERIFY(!QApplication::activeModalWidget());  // no dialog
    QCOMPARE(panel.table()->item(0, 0), nullptr);
  }

  // A hidden panel (a dock tab behind another) calibrates nothing until it is shown.
  void calibratesOnlyWhenShown() {
    if (!std::filesystem::exists(sample("h200-gpt-1.3b-real.h5")))
      WL_QSKIP_OR_FAIL_MISSING("a bundled sample is missing (resources/samples)");
    WhatifPanel panel;
    QSignalSpy ready(&panel, &WhatifPanel::projectionReady);
    panel.setRun(RunFile::open(sample("h200-gpt-1.3b-real.h5")));
    QTest::qWait(300);
    QVERIFY(!panel.busy());
    QCOMPARE(ready.count(), 0);
    QVERIFY(!panel.state());
    panel.show();
    QVERIFY(ready.wait(60000));
    QVERIFY(panel.state() && panel.state()->calibration);
  }

  // In the main window, Open as B twice: each projection becomes B against the measured run (run
  // 0) as A, the latest one after the second; neither temporary file enters File > Open Recent;
  // Save Projection As copies B's file (a projected run) and lists the copy there.
  void mainWindowComparesTheLatestProjection() {
    const std::filesystem::path measured = sample("llama3-8b-h100x8-mbs4.h5");
    if (!std::filesystem::exists(measured))
      WL_QSKIP_OR_FAIL_MISSING("a bundled sample is missing (resources/samples)");
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    auto* session = w.findChild<RunSession*>();
    auto* panel = w.findChild<WhatifPanel*>();
    auto* compare = w.findChild<ComparePanel*>();
    QVERIFY(session && panel && compare);
    QSignalSpy opened(session, &RunSession::runOpened);
    QSignalSpy ready(panel, &WhatifPanel::projectionReady);
    w.openRun(QString::fromStdString(measured.string()));
    QVERIFY(opened.wait(20000));
    QVERIFY(!panel->saveProjectionButton()->isEnabled());              // one run: nothing compared
    w.findChild<QDockWidget*>(QStringLiteral("whatifDock"))->raise();  // calibrates when shown
    QVERIFY(ready.wait(60000));
    QSignalSpy requested(panel, &WhatifPanel::openRunRequested);
    for (int watts : {500, 450}) {
      panel->setPowerLimit(watts);
      panel->projectNow();
      QVERIFY(ready.wait(60000));
      QVERIFY(panel->openAsBButton()->isEnabled());
      panel->openAsB();
      QVERIFY(requested.wait(60000));
      QVERIFY(opened.wait(20000));
    }
    QCOMPARE(opened.count(), 3);
    QCOMPARE(requested.count(), 2);
    QCOMPARE(compare->settings().runA, 0);
    QCOMPARE(compare->settings().runB, 2);
    const auto& runs = w.timeline()->store()->runs();
    QCOMPARE(runs.size(), size_t{3});
    const QString latest = requested.at(1).at(0).toString();
    QCOMPARE(QString::fromStdString(runs[2]->path().string()), latest);
    QVERIFY(isProjectedRun(runs[2]->info()));
    QCOMPARE(w.projectionOfB(), QFileInfo(latest).absoluteFilePath());
    QVERIFY(panel->saveProjectionButton()->isEnabled());

    const QStringList recent = QSettings().value("recentFiles").toStringList();
    QVERIFY(recent.contains(QString::fromStdString(measured.string())));
    for (const QList<QVariant>& r : requested) {
      const QString temp = r.at(0).toString();
      QVERIFY2(!recent.contains(temp) && !recent.contains(QFileInfo(temp).absoluteFilePath()),
               qPrintable(temp));
    }

    test::TempDir dir;
    const QString kept = QString::fromStdString((dir / "kept.h5").string());
    QVERIFY(w.saveProjectionTo(kept));
    const auto copy = RunFile::open(kept.toStdString());
    QVERIFY(isProjectedRun(copy->info()));
    QCOMPARE(copy->info().name, runs[2]->info().name);
    QVERIFY(QSettings().value("recentFiles").toStringList().contains(kept));
    // B measured: nothing to save.
    compare->setRunPair(2, 0);
    QVERIFY(w.projectionOfB().isEmpty());
    QVERIFY(!panel->saveProjectionButton()->isEnabled());
    QVERIFY(!w.saveProjectionTo(kept));
  }

  void saysItIsAProjection() {
    WhatifPanel panel;
    bool found = false;
    for (QLabel* l : panel.findChildren<QLabel*>())
      found = found || l->text().contains(QLatin1String("not a measurement"));
    QVERIFY(found);
  }
};

QTEST_MAIN(WhatifPanelTest)
#include "whatif_panel_test.moc"
