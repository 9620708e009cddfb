// SPDX-License-Identifier: GPL-3.0-or-later
// The export dialog driven through its public methods (offscreen): the format follows the file
// name and the other way round, units convert keeping the physical size, the preview has the
// figure's aspect, Export writes the file (or says why not), Copy puts an image and SVG on the
// clipboard; and the timeline's figure is what the page shows.
#include <gtest/gtest.h>

#include <QClipboard>
#include <QGuiApplication>
#include <QMimeData>

#include <algorithm>
#include <fstream>

#include "export_test_run.h"
#include "support/read_file.h"
#include "support/temp_dir.h"
#include "svg_util.h"
#include "widgets/export/export_dialog.h"
#include "widgets/export/export_views.h"
#include "widgets/export/timeline_figure.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/track_tree.h"

namespace wl {
namespace {

class ExportDialogTest : public ::testing::Test {
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
  static std::unique_ptr<Figure> figure() {
    ExportRequest rq;
    rq.run = run;
    rq.metrics = {"power_w"};
    return makeTimelineFigure(rq);
  }
  static QString path(const char* name) {
    return QString::fromStdString((dir->path() / name).string());
  }
  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};

test::TempDir* ExportDialogTest::dir = nullptr;
std::shared_ptr<const RunFile> ExportDialogTest::run;

TEST_F(ExportDialogTest, FormatAndFileNameFollowEachOther) {
  auto fig = figure();
  ExportDialog d(*fig);
  d.setPath(path("a.svg"));
  EXPECT_EQ(d.format(), FigureFormat::Svg);
  d.setFormat(FigureFormat::Pdf);
  EXPECT_EQ(d.path(), path("a.pdf"));
  d.setFormat(FigureFormat::Png);
  EXPECT_EQ(d.path(), path("a.png"));
}

TEST_F(ExportDialogTest, UnitsConvertKeepingThePhysicalSize) {
  auto fig = figure();
  ExportDialog d(*fig);
  d.setFigureSize({1600, 1000, SizeUnit::Pixels, 96});
  d.setSizeUnit(SizeUnit::Centimetres);
  EXPECT_EQ(d.figureSize().unit, SizeUnit::Centimetres);
  EXPECT_NEAR(d.figureSize().width, 1600 / 96.0 * 2.54, 0.01);  // 42.33 cm
  EXPECT_NEAR(d.figureSize().height, 1000 / 96.0 * 2.54, 0.01);
  d.setSizeUnit(SizeUnit::Inches);
  EXPECT_NEAR(d.figureSize().width, 1600 / 96.0, 0.01);
  d.setSizeUnit(SizeUnit::Pixels);
  EXPECT_EQ(d.figureSize().pixels(), QSize(1600, 1000));
  // Fit height asks the figure.
  d.fitHeight();
  EXPECT_NEAR(d.figureSize().height, fig->preferredSize(1600).height(), 1.0);
}

TEST_F(ExportDialogTest, PreviewHasTheFiguresAspect) {
  auto fig = figure();
  ExportDialog d(*fig);
  d.setFigureSize({1600, 800, SizeUnit::Pixels, 96});
  const QImage p = d.preview();
  ASSERT_FALSE(p.isNull());
  EXPECT_LE(p.width(), 380);
  EXPECT_LE(p.height(), 260);
  EXPECT_NEAR(static_cast<double>(p.width()) / p.height(), 2.0, 0.02);
}

TEST_F(ExportDialogTest, ExportWritesTheFileOrSaysWhyNot) {
  auto fig = figure();
  ExportDialog d(*fig);
  QString written;
  QObject::connect(&d, &ExportDialog::exported, [&](const QString& p) { written = p; });
  d.setFigureSize({800, 500, SizeUnit::Pixels, 96});
  d.setCaption(QStringLiteral("My caption"), QStringLiteral("details"));
  d.setPath(path("fig.svg"));
  ASSERT_TRUE(d.exportNow(true)) << d.lastError().toStdString();
  EXPECT_EQ(written, path("fig.svg"));
  const auto svg =
      test::parseSvg(QByteArray::fromStdString(test::readFile(dir->path() / "fig.svg")));
  EXPECT_TRUE(svg.hasText(QStringLiteral("My caption")));
  d.setCaptionShown(false);
  ASSERT_TRUE(d.exportNow(true));
  EXPECT_FALSE(test::parseSvg(QByteArray::fromStdString(test::readFile(dir->path() / "fig.svg")))
                   .hasText(QStringLiteral("My caption")));

  d.setPath(path("no/such/folder/fig.png"));
  EXPECT_FALSE(d.exportNow(true));
  EXPECT_FALSE(d.lastError().isEmpty());
  EXPECT_FALSE(d.lastError().contains(QLatin1Char('\n')));
  EXPECT_FALSE(std::filesystem::exists(dir->path() / "no"));
}

TEST_F(ExportDialogTest, CopyPutsAnImageAndSvgOnTheClipboard) {
  auto fig = figure();
  FigureOptions o;
  o.size = {640, 400, SizeUnit::Pixels, 96};
  copyToClipboard(*fig, o);
  const QMimeData* mime = QGuiApplication::clipboard()->mimeData();
  ASSERT_NE(mime, nullptr);
  ASSERT_TRUE(mime->hasImage());
  EXPECT_EQ(qvariant_cast<QImage>(mime->imageData()).size(), QSize(640, 400));
  EXPECT_TRUE(test::parseSvg(mime->data(QStringLiteral("image/svg+xml"))).ok);
}

TEST_F(ExportDialogTest, TimelineFigureIsWhatThePageShows) {
  TimelinePage page;
  const int idx = page.addRun(run);
  TrackTree tree;
  tree.addRun(run, idx);
  const std::vector<TrackRow> rows = planRows(page.store()->runs(), tree.state(), {}, {});
  page.setRows(rows);
  page.resize(1000, 360);
  page.show();
  QCoreApplication::processEvents();
  page.viewport()->setRange(
      {test::kExportT0 + 60 * test::kSecond, test::kExportT0 + 120 * test::kSecond});
  const auto all = timelineFigure(page, false);
  const auto shown = timelineFigure(page, true);
  EXPECT_EQ(all->spec().range, page.viewport()->range());
  EXPECT_EQ(all->captionTitle, QStringLiteral("export-test"));
  // One run: its header row is left out (the caption names it).
  size_t expected = 0;
  for (const TrackRow& r : rows)
    expected += r.kind() != RowKind::RunHeader;
  EXPECT_EQ(all->spec().rows.size(), expected);
  ASSERT_FALSE(shown->spec().rows.empty());
  EXPECT_LT(shown->spec().rows.size(), all->spec().rows.size());
  // The rows on screen are the first ones, in order.
  for (size_t i = 0; i < shown->spec().rows.size(); ++i)
    EXPECT_EQ(shown->spec().rows[i].key, all->spec().rows[i].key) << i;
  // Folding a GPU drops its rows.
  page.view()->setCollapsed(QStringLiteral("r0/g0"), true);
  EXPECT_LT(timelineFigure(page, false)->spec().rows.size(), all->spec().rows.size());
}

// A comparison exports as the screen aligns and names it: B's warp and the runs' legend labels
// travel with the rows (overlay rows included).
TEST_F(ExportDialogTest, TimelineFigureOfAComparisonFollowsTheScreensAlignment) {
  TimelinePage page;
  const int ia = page.addRun(run);
  const int ib = page.addRun(run);
  const int64_t t0 = run->info().start_ns;
  const TimeWarp warp = TimeWarp::fromKnots(
      {{t0, t0 + 2 * test::kSecond}, {t0 + 100 * test::kSecond, t0 + 150 * test::kSecond}});
  TimelineRenderer& r = page.view()->renderer();
  r.setRunDisplay(ib, r.displays().of(ib).withWarp(warp).withLabel(QStringLiteral("second")));
  r.setRunDisplay(ia, r.displays().of(ia).withLabel(QStringLiteral("first")));
  ComparePlan c;
  c.active = true;
  c.runA = ia;
  c.runB = ib;
  c.layout = CompareLayout::Overlay;
  c.pairs = {{0, 0}};
  c.labelA = QStringLiteral("first");
  c.labelB = QStringLiteral("second");
  page.setRows(planRows(page.store()->runs(), TreeState{}, c, {}));
  page.resize(1000, 360);
  page.show();
  QCoreApplication::processEvents();
  const auto fig = timelineFigure(page, false);
  const TimelineFigureSpec& spec = fig->spec();
  bool haveB = false;
  for (const auto& [r, w] : spec.runWarps)
    if (r == ib) {
      haveB = true;
      EXPECT_EQ(w, warp);
    }
  EXPECT_TRUE(haveB);
  EXPECT_NE(std::find(spec.runLabels.begin(), spec.runLabels.end(),
                      std::pair{ib, QStringLiteral("second")}),
            spec.runLabels.end());
  ASSERT_FALSE(spec.rows.empty());
  EXPECT_TRUE(std::any_of(spec.rows.begin(), spec.rows.end(),
                          [](const TrackRow& r) { return r.kind() == RowKind::Overlay; }));
  // Drawn: the SVG has the overlay's legend.
  FigureOptions o;
  o.format = FigureFormat::Svg;
  o.size = FigureSize{1200, 900, SizeUnit::Pixels, 96};
  const test::SvgDocument svg = test::parseSvg(renderFigureBytes(*fig, o));
  EXPECT_TRUE(svg.hasText(QStringLiteral("second"))) << svg.texts().join(' ').toStdString();
}

}  // namespace
}  // namespace wl
