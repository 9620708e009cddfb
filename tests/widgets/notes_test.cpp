// SPDX-License-Identifier: GPL-3.0-or-later
// Notes in the window (issue 33, item 2): Add Note on a selection writes the run's sidecar, lists
// the note in the Notes dock and draws it; a click on the dock's row zooms there; Delete removes
// it; the notes come back when the run is reopened and travel with view files; a bad sidecar is
// named and the run still opens; exported figures draw the notes.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTreeWidget>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "analysis/notes.h"
#include "app/gui/main_window.h"
#include "app/gui/notes_controller.h"
#include "app/gui/run_session.h"
#include "app/gui/view_controller.h"
#include "loaders/core/error.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "widgets/export/export_dialog.h"
#include "widgets/export/figure.h"
#include "widgets/export/timeline_figure.h"
#include "widgets/panels/notes_panel.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/viewfile/view_state.h"

using namespace wl;  // NOLINT: test file

namespace {
const std::filesystem::path kSample = WATTLINE_SOURCE_DIR "/resources/samples/synthetic-pattern.h5";
constexpr int64_t kSec = 1'000'000'000;
}  // namespace

class NotesTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineNotesTest");
    QSettings().clear();
  }

  void viewFileCarriesNotes() {
    ViewState v;
    v.runs = {{"a.h5", kHash}, {"b.h5", kHash}};
    v.range = {0, 10 * kSec};
    v.notes = {{0, Note{kSec, 2 * kSec, {}, {}, "all of A"}},
               {1, Note{3 * kSec, 4 * kSec, {2, 3}, {1}, "B's GPUs 2-3"}}};
    QCOMPARE(viewFromJson(viewToJson(v), "v.json"), v);
    QCOMPARE(viewFromJson(viewToJson(v, true), "v.json"), v);
    // A view file without notes (all version 1 files before notes) reads as none.
    ViewState none = v;
    none.notes.clear();
    QVERIFY(!viewToJson(none).contains("notes"));
    QVERIFY(viewFromJson(viewToJson(none), "v.json").notes.empty());
    // Bad notes are named with their JSON path.
    const QByteArray good = viewToJson(none, true);
    const std::vector<std::pair<QByteArray, QString>> bad = {
        {R"("notes": 3, )", "v.json: $.notes: expected an array, got a number"},
        {R"("notes": [{"range_ns": [1, 2], "text": "x"}], )",
         "v.json: $.notes[0].run: expected an integer from 0 to 1, got no such field"},
        {R"("notes": [{"run": 2, "range_ns": [1, 2], "text": "x"}], )",
         "v.json: $.notes[0].run: expected an integer from 0 to 1, got a number"},
        {R"("notes": [{"run": 0, "range_ns": [2, 1], "text": "x"}], )",
         "v.json: $.notes[0].range_ns: expected start < end, got [2,1]"},
        {R"("notes": [{"run": 0, "range_ns": [1, 2]}], )",
         "v.json: $.notes[0].text: expected a string, got null"},
    };
    for (const auto& [member, message] : bad) {
      QByteArray text = good;
      text.insert(1, member);
      try {
        viewFromJson(text, "v.json");
        QFAIL(qPrintable("accepted: " + member));
      } catch (const Error& e) {
        QCOMPARE(QString::fromUtf8(e.what()), message);
      }
    }
  }

  void addNoteThroughTheActionAndTheDock() {
    test::TempDir dir;
    const auto run = copySample(dir);
    MainWindow w;
    const int64_t t0 = showWith(w, run);
    TimelinePage* page = w.timeline();
    page->viewport()->setSelection(TimeRange{t0 + 2 * kSec, t0 + 3 * kSec});
    w.notes()->askNote = [](const Note& draft, bool editing) -> std::optional<Note> {
      if (editing) return std::nullopt;
      Note n = draft;
      n.text = "fan curve change";
      n.gpus = {1};
      return n;
    };
    w.findChild<QAction*>("addNote")->trigger();
    const Note want{2 * kSec, 3 * kSec, {1}, {}, "fan curve change"};
    // Written beside the run, the run's file untouched.
    QCOMPARE(readNotes(run.string()), std::vector<Note>{want});
    QCOMPARE(std::filesystem::file_size(run), std::filesystem::file_size(kSample));
    // Drawn on the timeline, on the run's clock.
    QCOMPARE(page->view()->notes().size(), size_t{1});
    QCOMPARE(page->view()->notes()[0].range, (TimeRange{t0 + 2 * kSec, t0 + 3 * kSec}));
    // Listed in the dock.
    auto* panel = w.findChild<NotesPanel*>();
    QTreeWidget* tree = panel->tree();
    QCOMPARE(tree->topLevelItemCount(), 1);
    QCOMPARE(tree->topLevelItem(0)->text(0), noteRangeText(want));
    QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("2.000 s – 3.000 s"));
    QCOMPARE(tree->topLevelItem(0)->text(1), QStringLiteral("1"));
    QCOMPARE(tree->topLevelItem(0)->text(2), QStringLiteral("fan curve change"));
    // A click zooms the timeline there: the note's range selected and in view.
    page->viewport()->setSelection(std::nullopt);
    page->viewport()->fitAll();
    w.findChild<QDockWidget*>("notesDock")->raise();
    QApplication::processEvents();
    const QRect item = tree->visualItemRect(tree->topLevelItem(0));
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, item.center());
    const TimeRange shown = page->viewport()->range();
    QCOMPARE(page->viewport()->selection(), std::optional(TimeRange{t0 + 2 * kSec, t0 + 3 * kSec}));
    QVERIFY(shown.t0 <= t0 + 2 * kSec && shown.t1 >= t0 + 3 * kSec);
    QVERIFY2(shown.span() < 2 * kSec, qPrintable(QString::number(shown.span())));
    // Reopened: the note is back.
    {
      MainWindow w2;
      w2.show();
      open(w2, run);
      QCOMPARE(w2.notes()->notes(0), std::vector<Note>{want});
      QCOMPARE(w2.findChild<NotesPanel*>()->tree()->topLevelItemCount(), 1);
    }
    // A view file carries it: saved, the sidecar removed, the view opened in a fresh window.
    const QString viewFile = QString::fromStdString((dir.path() / "view.json").string());
    QVERIFY(w.views()->saveTo(viewFile));
    const ViewState saved = readViewFile(viewFile);
    QCOMPARE(saved.notes.size(), size_t{1});
    QCOMPARE(saved.notes[0], (ViewNote{0, want}));
    std::filesystem::remove(notesSidecarPath(run.string()));
    {
      MainWindow w3;
      w3.show();
      QSignalSpy applied(w3.views(), &ViewController::viewApplied);
      w3.openRun(viewFile);
      QVERIFY(applied.wait(30'000));
      QCOMPARE(w3.notes()->notes(0), std::vector<Note>{want});
      QCOMPARE(w3.timeline()->view()->notes().size(), size_t{1});
    }
    // A double-click edits it (the dialog's answer replaces it); Enter on the row zooms there.
    w.notes()->askNote = [](const Note& n, bool editing) -> std::optional<Note> {
      if (!editing) return std::nullopt;
      Note e = n;
      e.text = "fan curve change (edited)";
      return e;
    };
    QTest::mouseDClick(tree->viewport(), Qt::LeftButton, {}, item.center());
    QCOMPARE(readNotes(run.string())[0].text, std::string("fan curve change (edited)"));
    QCOMPARE(tree->topLevelItem(0)->text(2), QStringLiteral("fan curve change (edited)"));
    page->viewport()->setSelection(std::nullopt);
    tree->setCurrentItem(tree->topLevelItem(0));
    QTest::keyClick(tree, Qt::Key_Return);
    QCOMPARE(page->viewport()->selection(), std::optional(TimeRange{t0 + 2 * kSec, t0 + 3 * kSec}));
    // Delete in the dock removes it, from the sidecar too.
    tree->setCurrentItem(tree->topLevelItem(0));
    QTest::keyClick(tree, Qt::Key_Delete);
    QCOMPARE(tree->topLevelItemCount(), 0);
    QVERIFY(readNotes(run.string()).empty());
    QVERIFY(page->view()->notes().empty());
  }

  void badSidecarIsNamedAndTheRunOpens() {
    test::TempDir dir;
    const auto run = copySample(dir);
    const std::string side = notesSidecarPath(run.string());
    std::ofstream(side) << R"({"format": "wattline-notes", "version": 1, "notes": [{"text": 1}]})";
    MainWindow w;
    QStringList warnings;
    w.notes()->warn = [&](const QString&, const QString& text) { warnings << text; };
    open(w, run);
    QCOMPARE(w.timeline()->store()->runs().size(), size_t{1});
    QCOMPARE(warnings.size(), 1);
    QVERIFY2(warnings[0].contains(QString::fromStdString(side) +
                                  ": $.notes[0].range_ns: expected [start, end] in ns, got null"),
             qPrintable(warnings[0]));
    QVERIFY(w.notes()->notes(0).empty());
    // Adding a note then keeps the bad file aside instead of overwriting it.
    QVERIFY(w.notes()->add(0, Note{0, kSec, {}, {}, "x"}));
    QVERIFY(std::filesystem::exists(side + ".bad"));
    QCOMPARE(readNotes(run.string()).size(), size_t{1});
  }

  void figuresDrawTheNotes() {
    test::TempDir dir;
    const auto run = copySample(dir);
    MainWindow w;
    const int64_t t0 = showWith(w, run);
    TimelinePage* page = w.timeline();
    page->viewport()->setRange({t0, t0 + 10 * kSec});
    FigureOptions o;
    o.format = FigureFormat::Png;
    o.size = FigureSize{1000, 700, SizeUnit::Pixels, 96};
    const QImage plain = renderFigureImage(*timelineFigure(*page, false), o);
    QVERIFY(w.notes()->add(0, Note{4 * kSec, 6 * kSec, {}, {}, "NOTE-IN-FIGURE"}));
    const auto fig = timelineFigure(*page, false);
    QCOMPARE(fig->spec().notes.size(), size_t{1});
    const QImage noted = renderFigureImage(*fig, o);
    QCOMPARE(noted.size(), plain.size());
    // Pixels differ inside the band (4 s to 6 s of 10 s) and nowhere left of it.
    int inBand = 0, leftOfIt = 0;
    for (int y = 0; y < plain.height(); ++y)
      for (int x = 0; x < plain.width(); ++x)
        if (plain.pixel(x, y) != noted.pixel(x, y))
          (x > plain.width() * 0.35 ? inBand : leftOfIt)++;
    QVERIFY2(inBand > 1000, qPrintable(QString::number(inBand)));
    QCOMPARE(leftOfIt, 0);
    // SVG carries the text; `wattline export` of the run draws its sidecar's notes too.
    o.format = FigureFormat::Svg;
    QVERIFY(renderFigureBytes(*fig, o).contains("NOTE-IN-FIGURE"));
    const std::string svg = (dir.path() / "cli.svg").string();
    const auto r = test::runWattline({"export", run.string(), "--view", "timeline", "-o", svg});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    QFile f(QString::fromStdString(svg));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("NOTE-IN-FIGURE"));
  }

 private:
  static constexpr const char* kHash =
      "sha256:0000000000000000000000000000000000000000000000000000000000000000";
  static std::filesystem::path copySample(const test::TempDir& dir) {
    const auto run = dir.path() / "run.h5";
    std::filesystem::copy_file(kSample, run);
    return run;
  }
  // Shows the window with the run open; returns the run's start (ns).
  int64_t showWith(MainWindow& w, const std::filesystem::path& run) {
    w.resize(1400, 900);
    w.show();
    open(w, run);
    return w.timeline()->store()->run(0).info().start_ns;
  }
  void open(MainWindow& w, const std::filesystem::path& run) {
    auto* session = w.findChild<RunSession*>();
    w.openRun(QString::fromStdString(run.string()));
    QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(session->runs().size()), 1, 30'000);
  }
};

QTEST_MAIN(NotesTest)
#include "notes_test.moc"
