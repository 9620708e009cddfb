// SPDX-License-Identifier: GPL-3.0-or-later
// View files (issue 33, item 1): a view's JSON round trip, every kind of bad file named with its
// JSON path, missing and changed runs, and the window's view saved, the folder with the runs
// moved, and the view reopened in a new window: the same state and the same pixels.
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest>

#include <cmath>
#include <filesystem>

#include "app/gui/main_window.h"
#include "app/gui/run_session.h"
#include "app/gui/view_controller.h"
#include "loaders/core/error.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "widgets/export/export_dialog.h"
#include "widgets/export/figure_view.h"
#include "widgets/panels/compare_panel.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/track_tree.h"
#include "widgets/viewfile/view_runs.h"
#include "widgets/viewfile/view_scene.h"
#include "widgets/viewfile/view_state.h"

using namespace wl;  // NOLINT: test file

namespace {

const std::filesystem::path kSamples = WATTLINE_SOURCE_DIR "/resources/samples";
const QString kHash = QStringLiteral("sha256:") + QString(64, QLatin1Char('a'));

// Paints until no tile is pending, then until two paintings in a row are the same image. The
// docks are hidden first: their widths follow their contents, the timeline's the window's.
QImage settledImage(MainWindow& w) {
  for (QDockWidget* d : w.findChildren<QDockWidget*>())
    d->hide();
  TimelinePage* page = w.timeline();
  // The throttle strips come from each run's throttle analysis, computed off the UI thread.
  auto analysed = [page] {
    for (size_t i = 0; i < page->store()->runs().size(); ++i)
      if (!page->view()->renderer().displays().sharedThrottleView(static_cast<int>(i)))
        return false;
    return true;
  };
  QElapsedTimer clock;
  clock.start();
  QImage last;
  while (clock.elapsed() < 60'000) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    page->view()->viewport()->repaint();
    if (page->store()->pending() == 0 && analysed()) {
      QTest::qWait(200);
      const QImage now = page->view()->viewport()->grab().toImage();
      if (page->store()->pending() == 0 && now == last) return now;
      last = now;
    }
    QTest::qWait(10);
  }
  return last;
}

// JSON written with single quotes (moc cannot read raw string literals).
QByteArray j(const char* text) {
  return QByteArray(text).replace('\'', '"');
}

// "SOURCE: $.path: ..." of a bad view.
QString errorOf(const QByteArray& json) {
  try {
    viewFromJson(json, QStringLiteral("bad.json"));
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class ViewFileTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineViewFileTest");
    QSettings().clear();
  }

  void everyFieldSurvivesJson() {
    ViewState v;
    v.runs = {{"a/run.h5", kHash}, {"/abs/b.h5", kHash}};
    v.range = {1'000, 123'456'789'012};
    v.selection = TimeRange{2'000, 3'000};
    v.kernel = ViewKernel{1, 4, 77, 5'000};
    v.tracks.shown = {{"r0/g1", false}, {"r0/g0/util_pct", true}};
    v.tracks.pinned = {"r0/rank1"};
    v.tracks.order = {{"r0/g3", 0}};
    v.folded = {"r0/g2"};
    v.scroll = 120;
    v.heatmap = true;
    v.heatmapMetric = kThrottleHeatmapMetric;
    v.compare = ViewCompare{1,
                            0,
                            AlignMode::Event,
                            3,
                            -4'000'000'000'000,
                            PairBy::Slot,
                            {"power_w"},
                            CompareLayout::Overlay};
    v.yMode = YMode::PerTrack;
    v.throttleBands = true;
    v.theme = QStringLiteral("dark");
    QCOMPARE(viewFromJson(viewToJson(v), "x"), v);
    const QByteArray line = viewToJson(v, true);
    QVERIFY(!line.contains('\n'));
    QCOMPARE(viewFromJson(line, "x"), v);
    // A later version's fields are ignored ("notes" is read: tests/widgets/notes_test.cpp).
    QByteArray later = line;
    later.insert(1, j("'bookmarks': [{'text': 'later'}], "));
    QCOMPARE(viewFromJson(later, "x"), v);
  }

  void badFilesNameTheJsonPath_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("message");
    const QByteArray ok = j("'format': 'wattline-view', 'version': 1, 'range_ns': [0, 10]");
    const QByteArray run =
        j("'runs': [{'path': 'r.h5', 'hash': 'sha256:") + QByteArray(64, 'a') + j("'}]");
    QTest::newRow("not JSON") << QByteArray("{") << "bad.json: not JSON at byte";
    QTest::newRow("not an object") << QByteArray("[1]")
                                   << "bad.json: $: expected an object, "
                                      "got an array";
    QTest::newRow("not a view") << QByteArray(j("{'format': 'perfetto'}"))
                                << QString::fromUtf8(
                                       j("bad.json: $.format: expected 'wattline-view'"));
    QTest::newRow("unknown version")
        << QByteArray(j("{'format': 'wattline-view', 'version': 2}"))
        << "bad.json: $.version: expected version 1, got 2: written by a newer Wattline";
    QTest::newRow("missing runs") << "{" + ok + "}"
                                  << "bad.json: $.runs: expected an array, got no such field";
    QTest::newRow("missing path")
        << "{" + ok + j(", 'runs': [{'hash': 'sha256:x'}]}")
        << "bad.json: $.runs[0].path: expected a string, got no such field";
    QTest::newRow("path of wrong type")
        << "{" + ok + j(", 'runs': [{'path': 3, 'hash': 'sha256:x'}]}")
        << "bad.json: $.runs[0].path: expected a string, got a number";
    QTest::newRow("bad hash") << "{" + ok + j(", 'runs': [{'path': 'r.h5', 'hash': 'md5:x'}]}")
                              << QString::fromUtf8(
                                     j("bad.json: $.runs[0].hash: expected 'sha256:' and 64 hex"));
    QTest::newRow("range of strings")
        << j("{'format': 'wattline-view', 'version': 1, 'range_ns': ['0', 1], ") + run + "}"
        << "bad.json: $.range_ns[0]: expected an integer";
    QTest::newRow("empty range")
        << j("{'format': 'wattline-view', 'version': 1, 'range_ns': [5, 5], ") + run + "}"
        << "bad.json: $.range_ns: expected start < end, got [5, 5]";
    QTest::newRow("compare of one run")
        << "{" + ok + ", " + run + j(", 'compare': {'a': 0, 'b': 1, 'align': 'warp'}}")
        << "bad.json: $.compare.b: expected an integer from 0 to 0, got a number";
    QTest::newRow("same run twice")
        << "{" + ok + ", " + run + j(", 'compare': {'a': 0, 'b': 0, 'align': 'warp'}}")
        << "bad.json: $.compare.b: expected a run other than a (0)";
    const QByteArray runs = j("'runs': [{'path': 'r.h5', 'hash': 'sha256:") + QByteArray(64, 'a') +
                            j("'}, {'path': 's.h5', 'hash': 'sha256:") + QByteArray(64, 'b') +
                            j("'}]");
    QTest::newRow("unknown alignment")
        << "{" + ok + ", " + runs + j(", 'compare': {'a': 0, 'b': 1, 'align': 'x'}}")
        << QString::fromUtf8(j("bad.json: $.compare.align: expected one of warp, iteration, start, "
                               "absolute, event, got 'x'"));
    QTest::newRow("unknown y mode")
        << "{" + ok + ", " + run + j(", 'y_axis': {'mode': 'log'}}")
        << QString::fromUtf8(j("bad.json: $.y_axis.mode: expected one of shared-fitted, shared, "
                               "per-track, fit-visible, got 'log'"));
    QTest::newRow("heatmap flag of wrong type")
        << "{" + ok + ", " + run + j(", 'heatmap': {'on': 'yes'}}")
        << "bad.json: $.heatmap.on: expected true or false, got a string";
    QTest::newRow("unknown theme") << "{" + ok + ", " + run + j(", 'theme': 'blue'}")
                                   << QString("bad.json: $.theme: expected system, light or dark");
    QTest::newRow("order of wrong type")
        << "{" + ok + ", " + run + j(", 'tracks': {'order': {'r0/g1': 'first'}}}")
        << QString::fromUtf8(j("bad.json: $.tracks.order['r0/g1']: expected an integer from 0 to "
                               "1000000, got a string"));
  }
  void badFilesNameTheJsonPath() {
    QFETCH(QByteArray, json);
    QFETCH(QString, message);
    const QString got = errorOf(json);
    QVERIFY2(got.startsWith(message), qPrintable(got));
  }

  // The hash: SHA-256 of "SIZE\n", the first MiB and the last; a run that is not there, or not
  // the same, is named with the view's JSON path and where it was looked for.
  void missingAndChangedRunsAreNamed() {
    test::TempDir dir;
    const QString run = QString::fromStdString((dir.path() / "run.h5").string());
    {
      QFile f(run);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray(3 << 20, 'x'));  // 3 MiB: first and last MiB, not the middle
    }
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(QByteArray("3145728\n") + QByteArray(2 << 20, 'x'));
    QCOMPARE(runContentHash(run), "sha256:" + QString::fromLatin1(h.result().toHex()));
    const QString base = QString::fromStdString(dir.path().string());
    ViewState v;
    v.runs = {{"run.h5", runContentHash(run)}, {"gone/b.h5", kHash}, {"run.h5", kHash}};
    const auto found = resolveViewRuns(v, base);
    QCOMPARE(found.size(), size_t{3});
    QCOMPARE(found[0].status, ResolvedRun::Status::Found);
    QCOMPARE(resolveProblem(found[0], "v.json"), QString());
    QCOMPARE(found[1].status, ResolvedRun::Status::Missing);
    QCOMPARE(resolveProblem(found[1], "v.json"),
             QStringLiteral("v.json: $.runs[1].path: run \"gone/b.h5\" not found (looked for "
                            "%1/gone/b.h5)")
                 .arg(base));
    QCOMPARE(found[2].status, ResolvedRun::Status::HashDiffers);
    QVERIFY(resolveProblem(found[2], "v.json")
                .startsWith(QStringLiteral("v.json: $.runs[2].path: run %1 is not the run the "
                                           "view was saved with")
                                .arg(run)));
    QCOMPARE(viewRunPath(run, base), QStringLiteral("run.h5"));
    QCOMPARE(viewRunPath(run, QString()), run);
  }

  // The "done when": save a view of two compared runs, move the folder with the runs
  // and the view, reopen it in a new window: the same state, the same pixels.
  void savedViewReopensIdenticallyAfterTheFolderMoved() {
    test::TempDir dir;
    const auto before = dir.path() / "before", after = dir.path() / "after";
    std::filesystem::create_directories(before);
    for (const char* name : {"llama3-8b-h100x8-mbs1.h5", "llama3-8b-h100x8-mbs4.h5"})
      std::filesystem::copy_file(kSamples / name, before / name);
    const QString viewFile = QString::fromStdString((before / "view.json").string());

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    openRuns(w, {before / "llama3-8b-h100x8-mbs1.h5", before / "llama3-8b-h100x8-mbs4.h5"});
    // A view worth checking: GPU 2 of A hidden, rank 1 pinned, overlay layout aligned at the
    // starts, power A - B only, per-track y axes, a range and a selection, the light theme.
    auto* tree = w.findChild<TrackTree*>();
    TreeState changes;
    changes.shown[rowkey::gpu(0, 2)] = false;
    changes.pinned.insert(rowkey::rank(0, 1));
    tree->applyState(changes);
    w.findChild<QAction*>("compareLayout_overlay")->trigger();
    auto* compare = w.findChild<ComparePanel*>();
    compare->setDifferenceMetrics({"power_w"});
    compare->setAlignment(AlignMode::Start);
    w.findChild<QAction*>("yMode_per-track")->trigger();
    w.findChild<QAction*>("theme_light")->trigger();
    TimelinePage* page = w.timeline();
    const int64_t t0 = page->store()->run(0).info().start_ns;
    page->viewport()->setRange({t0 + 20'000'000'000, t0 + 35'000'000'000});
    page->viewport()->setSelection(TimeRange{t0 + 25'000'000'000, t0 + 26'000'000'000});
    QVERIFY(w.views()->saveTo(viewFile));
    const ViewState saved = readViewFile(viewFile);
    QCOMPARE(saved.runs.size(), size_t{2});
    QCOMPARE(saved.runs[0].path, QStringLiteral("llama3-8b-h100x8-mbs1.h5"));
    QCOMPARE(saved.range, (TimeRange{20'000'000'000, 35'000'000'000}));
    QCOMPARE(saved.tracks.shown.at(rowkey::gpu(0, 2)), false);
    QVERIFY(saved.compare);
    QCOMPARE(saved.compare->layout, CompareLayout::Overlay);
    QCOMPARE(saved.compare->align, AlignMode::Start);
    QCOMPARE(saved.yMode, YMode::PerTrack);
    const QImage shot = settledImage(w);

    std::filesystem::rename(before, after);  // another machine, another folder
    MainWindow w2;
    w2.resize(1400, 900);
    w2.show();
    QSignalSpy applied(w2.views(), &ViewController::viewApplied);
    w2.openRun(QString::fromStdString((after / "view.json").string()));
    QVERIFY(applied.wait(60'000));
    const ViewState reopened = w2.views()->capture(QString::fromStdString(after.string()));
    QCOMPARE(reopened, saved);
    const QImage again = settledImage(w2);
    QCOMPARE(again.size(), shot.size());
    QVERIFY(again == shot);

    // File > Export Timeline of the reopened window (every row) is what `wattline export
    // --view-file` draws, in process and as the command.
    const auto windowFigure = timelineFigure(*w2.timeline(), false);
    const QString viewAfter = QString::fromStdString((after / "view.json").string());
    const OpenRuns runs = {w2.timeline()->store()->runs()[0], w2.timeline()->store()->runs()[1]};
    ViewFigure headless(runs, readViewFile(viewAfter));
    FigureOptions o;
    o.format = FigureFormat::Png;
    o.size = FigureSize{1600, std::ceil(headless.figure().preferredSize(1600).height()),
                        SizeUnit::Pixels, 96};
    const QImage fromWindow = renderFigureImage(*windowFigure, o);
    const QImage fromView = renderFigureImage(headless.figure(), o);
    QVERIFY(!fromWindow.isNull());
    QVERIFY(fromWindow == fromView);
    const std::string png = (after / "fig.png").string();
    const auto r = test::runWattline({"export", "--view-file", viewAfter.toStdString(), "-o", png});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    const QImage fromCommand(QString::fromStdString(png));
    QCOMPARE(fromCommand.size(), fromView.size());
    QVERIFY(fromCommand.convertToFormat(QImage::Format_ARGB32) ==
            fromView.convertToFormat(QImage::Format_ARGB32));
  }

  // A view of the window drawn headless (export --view-file) is the figure File > Export
  // Timeline draws of the window showing that view.
  void headlessPageShowsTheView() {
    const OpenRuns runs = {RunFile::open((kSamples / "llama3-8b-h100x8-mbs4.h5").string())};
    ViewState v;
    v.range = {10'000'000'000, 12'000'000'000};
    v.tracks.shown[rowkey::gpu(0, 5)] = false;
    v.heatmap = false;
    v.yMode = YMode::FitVisible;
    const auto page = makeViewPage(runs, v);
    QCOMPARE(page->viewport()->range(), (TimeRange{runs[0]->info().start_ns + 10'000'000'000,
                                                   runs[0]->info().start_ns + 12'000'000'000}));
    for (const TrackRow& r : page->view()->rows())
      QVERIFY2(!r.key.startsWith(rowkey::gpu(0, 5)), qPrintable(r.key));
    ViewState back;
    capturePage(*page, back);
    QCOMPARE(back.range, v.range);
    QCOMPARE(back.yMode, YMode::FitVisible);
    QCOMPARE(treeChanges(withTreeChanges(defaultTreeState(runs), v.tracks), defaultTreeState(runs)),
             v.tracks);
  }

  // File > Export Timeline's file carries the view it is given, run paths relative to the
  // figure's folder (figures that remember, issue 33 item 3).
  void exportDialogFileCarriesTheView() {
    test::TempDir dir;
    const OpenRuns runs = {RunFile::open((kSamples / "llama3-8b-h100x8-mbs4.h5").string())};
    ViewState v;
    v.runs = {{"llama3-8b-h100x8-mbs4.h5", kHash}};
    v.range = {1'000'000'000, 2'000'000'000};
    ViewFigure figure(runs, v);
    ExportDialog dialog(figure.figure());
    QString folder;
    dialog.setViewSource([&](const QString& f) {
      folder = f;
      return viewToJson(v, true);
    });
    dialog.setFigureSize(FigureSize{800, 600, SizeUnit::Pixels, 96});
    for (const char* ext : {"svg", "png", "pdf"}) {
      const QString path = QString::fromStdString((dir.path() / "fig.").string()) + ext;
      dialog.setPath(path);
      QVERIFY2(dialog.exportNow(true), qPrintable(dialog.lastError()));
      QCOMPARE(folder, QString::fromStdString(dir.path().string()));
      QCOMPARE(readViewFile(path), v);
    }
  }

 private:
  void openRuns(MainWindow& w, const std::vector<std::filesystem::path>& paths) {
    auto* session = w.findChild<RunSession*>();
    for (const auto& p : paths)
      w.openRun(QString::fromStdString(p.string()));
    QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(session->runs().size()),
                              static_cast<int>(paths.size()), 30'000);
    auto* compare = w.findChild<ComparePanel*>();
    QTRY_VERIFY_WITH_TIMEOUT(!compare->alignmentPending(), 30'000);
  }
};

QTEST_MAIN(ViewFileTest)
#include "view_file_test.moc"
