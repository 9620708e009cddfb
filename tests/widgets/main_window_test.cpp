// SPDX-License-Identifier: GPL-3.0-or-later
// The main window opens a run given to it, fills the track tree and the summary, and shows a
// clear error for a bad file.
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QTextBrowser>
#include <QTimer>
#include <QtTest>

#include "app/gui/main_window.h"
#include "app/gui/run_session.h"
#include "app/gui/study_window.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/panels/run_summary_view.h"
#include "widgets/study/study_view.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/timeline/view/timeline_view.h"
#include "widgets/track_tree.h"

using namespace wl;  // NOLINT: test file

class MainWindowTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineTest");
    test::writeSyntheticRun(test::makeSyntheticRun(), dir.path() / "run.h5");
  }

  void opensARunIntoTheTreeAndSummary() {
    MainWindow w;
    auto* session = w.findChild<RunSession*>();
    QVERIFY(session);
    QSignalSpy opened(session, &RunSession::runOpened);
    w.openRun(QString::fromStdString((dir.path() / "run.h5").string()));
    QVERIFY(opened.wait(10000));
    auto* tree = w.findChild<TrackTree*>();
    QVERIFY(tree);
    QStandardItemModel* m = tree->trackModel();
    QCOMPARE(m->rowCount(), 1);
    QStandardItem* run = m->item(0);
    QVERIFY(run->text().startsWith("synthetic"));
    QVERIFY(run->text().contains("simulated"));
    // GPU telemetry > 2 nodes > 2 GPUs each > 4 metrics.
    QStandardItem* tel = run->child(0);
    QCOMPARE(tel->text(), QString("GPU telemetry"));
    QCOMPARE(tel->rowCount(), 2);
    QCOMPARE(tel->child(1)->rowCount(), 2);
    QCOMPARE(tel->child(1)->child(0)->text(), QString("GPU 2"));
    QCOMPARE(tel->child(1)->child(0)->rowCount(), 4);
    QCOMPARE(tel->child(1)->child(0)->child(0)->text(), QString("Power"));
    // Kernels > 2 ranks > steps + 2 streams.
    QStandardItem* kern = run->child(1);
    QCOMPARE(kern->text(), QString("Kernels"));
    QCOMPARE(kern->rowCount(), 2);
    QCOMPARE(kern->child(0)->rowCount(), 3);
    QCOMPARE(kern->child(0)->child(0)->text(), QString("Steps & phases"));
    QCOMPARE(kern->child(0)->child(2)->text(), QString("Stream 13"));
    auto* summary = w.findChild<RunSummaryView*>();
    // The summary's numbers are read off the UI thread.
    QTRY_VERIFY(summary->toPlainText().contains("Simulated run"));
    QVERIFY(summary->toPlainText().contains("TP=2"));
  }

  // View > Compare Layout: paired by default, overlay puts A and B in one row, the choice is
  // remembered for the next window.
  void compareLayoutMenuRearrangesRowsAndIsRemembered() {
    QSettings().remove("compare/layout");
    const auto second = dirB.path() / "run-b.h5";  // not in dir: the study test loads dir
    std::filesystem::copy_file(dir.path() / "run.h5", second,
                               std::filesystem::copy_options::overwrite_existing);
    auto countKind = [](const std::vector<TrackRow>& rows, RowKind k) {
      return std::count_if(rows.begin(), rows.end(),
                           [k](const TrackRow& r) { return r.kind() == k; });
    };
    {
      MainWindow w;
      auto* session = w.findChild<RunSession*>();
      QSignalSpy opened(session, &RunSession::runOpened);
      w.openRun(QString::fromStdString((dir.path() / "run.h5").string()));
      QVERIFY(opened.wait(10000));
      w.openRun(QString::fromStdString(second.string()));
      QVERIFY(opened.wait(10000));
      const std::vector<TrackRow>& paired = w.timeline()->view()->rows();
      QVERIFY(!paired.empty());
      QCOMPARE(paired.front().label, QStringLiteral("GPU 0 (A) · GPU 0 (B)"));
      const auto counters = countKind(paired, RowKind::Counter);
      QVERIFY(counters > 0);
      QCOMPARE(countKind(paired, RowKind::Overlay), 0);
      auto* overlay = w.findChild<QAction*>("compareLayout_overlay");
      QVERIFY(overlay);
      overlay->trigger();
      const std::vector<TrackRow>& over = w.timeline()->view()->rows();
      QCOMPARE(countKind(over, RowKind::Counter), 0);
      QCOMPARE(countKind(over, RowKind::Overlay) * 2, counters);  // A and B rows become one
      QCOMPARE(QSettings().value("compare/layout").toString(), QStringLiteral("overlay"));
      w.findChild<QAction*>("compareLayout_stacked")->trigger();
      QCOMPARE(w.timeline()->view()->rows().front().kind(), RowKind::RunHeader);
      w.findChild<QAction*>("compareLayout_overlay")->trigger();
    }
    MainWindow again;
    QVERIFY(again.findChild<QAction*>("compareLayout_overlay")->isChecked());
    QVERIFY(!again.findChild<QAction*>("compareLayout_paired")->isChecked());
    QSettings().remove("compare/layout");
  }

  void badFileShowsOneMessage() {
    MainWindow w;
    auto* session = w.findChild<RunSession*>();
    QSignalSpy failed(session, &RunSession::openFailed);
    // Close the error dialog as soon as it shows.
    QString shown;
    QTimer::singleShot(0, this, [&] { closeBoxLater(&shown); });
    w.openRun(QString::fromStdString((dir.path() / "missing.h5").string()));
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.at(0).at(1).toString().contains("missing.h5: no such file"));
  }

  // File > Export Timeline… and Copy Timeline Image are there with their shortcuts; the copy puts
  // the timeline on the clipboard as an image of the view's size and as SVG.
  void exportAndCopyActions() {
    MainWindow w;
    w.resize(1000, 700);
    w.show();
    QAction* exp = action(w, "&Export Timeline…");
    QVERIFY(exp);
    QCOMPARE(exp->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* copy = action(w, "&Copy Timeline Image");
    QVERIFY(copy);
    auto* session = w.findChild<RunSession*>();
    QSignalSpy opened(session, &RunSession::runOpened);
    w.openRun(QString::fromStdString((dir.path() / "run.h5").string()));
    QVERIFY(opened.wait(10000));
    QApplication::clipboard()->clear();
    copy->trigger();
    const QMimeData* mime = QApplication::clipboard()->mimeData();
    QVERIFY(mime);
    QVERIFY(mime->hasImage());
    QVERIFY(mime->data("image/svg+xml").startsWith("<?xml"));
    const QImage img = qvariant_cast<QImage>(mime->imageData());
    QCOMPARE(img.width(), w.timeline()->view()->width());  // what is on screen, at its size
  }

  // File > Open Study (here: a folder given to openStudy) opens a study window that loads the
  // folder's runs into its table.
  void openStudyLoadsTheFolder() {
    MainWindow w;
    QVERIFY(action(w, "Open &Study of Many Runs…"));
    w.openStudy({QString::fromStdString(dir.path().string())});
    auto* sw = w.findChild<StudyWindow*>();
    QVERIFY(sw);
    QVERIFY(sw->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!sw->view()->busy(), 20000);
    QCOMPARE(sw->view()->study().runs.size(), size_t{1});
    sw->close();
  }

 private:
  static QAction* action(QMainWindow& w, const QString& text) {
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == text) return a;
    return nullptr;
  }
  void closeBoxLater(QString* text) {
    for (QWidget* wdg : QApplication::topLevelWidgets()) {
      if (auto* box = qobject_cast<QMessageBox*>(wdg); box && box->isVisible()) {
        *text = box->text();
        box->accept();
        return;
      }
    }
    QTimer::singleShot(20, this, [this, text] { closeBoxLater(text); });
  }
  test::TempDir dir;
  test::TempDir dirB;
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
