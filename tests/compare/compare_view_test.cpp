// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline draws run B through the iteration warp: warp spans put a time b of B at the x of
// warp.toA(b), a B kernel's box and its painted pixels land there, the A - B rows on the warped
// base are near zero where both runs do the same thing (and far from it under a plain shift), and
// the comparison layouts (paired, overlay, stacked) order their rows as documented.
#include <gtest/gtest.h>

#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>

#include <cmath>

#include "analysis/compare/config_diff.h"
#include "analysis/compare/time_warp.h"
#include "analysis/run_alignment.h"
#include "export_test_run.h"
#include "loaders/core/time_format.h"
#include "phased_run.h"
#include "support/temp_dir.h"
#include "widgets/panels/compare_panel.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/model/warp_spans.h"
#include "widgets/timeline/render/difference_geometry.h"
#include "widgets/timeline/render/timeline_renderer.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/timeline/view/timeline_view.h"
#include "widgets/timeline/view/viewport.h"

namespace wl {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(WarpSpans, ATimeOfBLandsAtTheXOfItsWarpedTime) {
  // B's steps of 2 s drawn onto A's steps of 3 s (A starts 1 s later on its clock).
  const TimeWarp w = TimeWarp::fromKnots({{0, 1 * kS}, {2 * kS, 4 * kS}, {4 * kS, 7 * kS}});
  const TimeMapping display{0, 8 * kS, 800};  // 10 ms per pixel
  const std::vector<WarpSpan> spans = warpSpans(w, display);
  // Cut at the knots inside the view (a = 1 s, 4 s, 7 s): four spans, edges at 100, 400, 700 px.
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_DOUBLE_EQ(spans[0].x1, 100.0);
  EXPECT_DOUBLE_EQ(spans[1].x0, 100.0);
  EXPECT_DOUBLE_EQ(spans[1].x1, 400.0);
  EXPECT_DOUBLE_EQ(spans[2].x1, 700.0);
  for (int64_t b : {int64_t{500'000'000}, 1 * kS, int64_t{3'300'000'000}, int64_t{4'500'000'000}}) {
    const double want = display.x(w.toA(b));
    const WarpSpan* s = nullptr;
    for (const WarpSpan& sp : spans)
      if (want >= sp.x0 && want < sp.x1) s = &sp;
    ASSERT_NE(s, nullptr);
    EXPECT_NEAR(s->px0 + s->local.x(b), want, 1e-6) << "b = " << b;
  }
  // In the stretched piece (slope 1.5) a pixel is 10 ms of A and 6.67 ms of B.
  EXPECT_NEAR(spans[1].local.nsPerPx(), 10'000'000.0 / 1.5, 1.0);
  // A shift is one span; tiny pieces merge: 1000 knots 1 ms apart over 800 px stay <= 400 spans.
  EXPECT_EQ(warpSpans(TimeWarp::shift(5 * kS), display).size(), 1u);
  std::vector<TimeWarp::Knot> many;
  for (int64_t k = 0; k < 1000; ++k)
    many.push_back({k * 1'000'000, k * 1'000'000 + (k % 2) * 100'000});
  EXPECT_LE(warpSpans(TimeWarp::fromKnots(many), TimeMapping{0, 1 * kS, 800}).size(), 400u);
}

class WarpedTimeline : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ensureApp();  // painting text needs a (offscreen) QApplication
    sa.name = "A";
    sa.stepNs = {3 * kS, 3 * kS, 3 * kS};
    sb.name = "B";
    sb.stepNs = {2 * kS, 2 * kS, 2 * kS, 2 * kS};
    sb.start += 700'000'000;
    sb.sampleNs = 20'000'000;
    a = test::writePhasedRun(sa, dir / "a.h5");
    b = test::writePhasedRun(sb, dir / "b.h5");
    store.addRun(a);
    store.addRun(b);
    warp = *iterationWarp(*a, *b);
  }
  int trackOf(const RunFile& run, int rank, int64_t stream) const {
    for (size_t t = 0; t < run.tracks().size(); ++t)
      if (run.tracks()[t].rank == rank && run.tracks()[t].stream == stream)
        return static_cast<int>(t);
    return -1;
  }
  test::TempDir dir;
  test::PhasedRunSpec sa, sb;
  std::shared_ptr<const RunFile> a, b;
  TileStore store;
  TimeWarp warp;
  TileFetch load = [this](const TileKey& k) { return store.load(k); };
};

TEST_F(WarpedTimeline, AKernelOfBIsDrawnAtTheXOfItsWarpedStart) {
  TimelineRenderer r(store);
  r.setRunDisplay(1, r.displays().of(1).withWarp(warp));
  ASSERT_TRUE(r.displays().warped(1));
  const int track = trackOf(*b, 0, 13);  // the communication stream of rank 0
  ASSERT_GE(track, 0);
  TrackRow row;
  row.content = KernelsRow{1, 0, track};
  const TimeMapping display{a->info().start_ns, a->info().end_ns, 1200};
  EXPECT_EQ(r.displays().contentMapping(row, display),
            display);  // drawn piece by piece on A's clock
  // The communication kernel of B's step 2 (over the first half of its optimizer phase).
  const std::vector<KernelEvent> ev = b->readAllKernels(static_cast<size_t>(track));
  const auto bounds = test::phasedStepBounds(sb, 2);
  const KernelEvent* comm = nullptr;
  for (const KernelEvent& e : ev)
    if (e.start_ns == bounds[2]) comm = &e;
  ASSERT_NE(comm, nullptr);
  const double want0 = display.x(warp.toA(comm->start_ns));
  const double want1 = display.x(warp.toA(comm->start_ns + comm->dur_ns));
  // By hand: B's optimizer phase of step 2 is stretched onto A's, which starts at the same
  // fraction of A's step 2: A's step 2 starts 1 s + 2 * 3 s after A's start, its optimizer 90 %
  // into it.
  const double byHand = static_cast<double>(1 * kS + 6 * kS + 2'700'000'000) / display.nsPerPx();
  EXPECT_NEAR(want0, byHand, 0.5);
  // The box the hit test finds under that x (the piece's linear map) starts there.
  const TimeMapping local = r.displays().rowMappingAt(row, display, want0 + 1);
  const KernelGeometry* g = r.geometry(std::get<KernelsRow>(row.content), local, load).kernels;
  const KernelBox* box = nullptr;
  for (const KernelBox& kb : g->boxes)
    if (kb.start_ns == comm->start_ns) box = &kb;
  ASSERT_NE(box, nullptr);
  EXPECT_NEAR(box->x0, want0, 1.0);
  // Painted: the pixels between the warped start and end are not the background; after the end
  // (the idle second half of the optimizer phase) they are.
  QImage img(1200, 24, QImage::Format_RGB32);
  img.fill(Qt::white);
  {
    std::vector<TimelineRenderer::RowTarget> frame{{&row, display, {}}};
    EXPECT_TRUE(r.prepare(frame, load, QFont()).empty());
    QPainter p(&img);
    r.paintContent(p, row, QRectF(0, 0, 1200, 24), display, {});
  }
  const QRgb bg = img.pixel(static_cast<int>(want1) + 3, 12);
  EXPECT_NE(img.pixel(static_cast<int>((want0 + want1) / 2), 12), bg);
  // Under a plain shift at the first step the same kernel lands elsewhere (B's steps are shorter).
  const int64_t off = *alignAtIteration(*a, *b, 0);
  EXPECT_GT(std::fabs(display.x(comm->start_ns + off) - want0), 50.0);
}

TEST_F(WarpedTimeline, WarpedDifferenceRowsAreNearZeroWhereBothRunsDoTheSameThing) {
  DifferenceSource src;
  src.metricA = metricIndex(*a, "power_w");
  src.metricB = metricIndex(*b, "power_w");
  // Zoomed in to samples: steps 0..2 of A.
  const TimeMapping display{a->info().start_ns + 1 * kS, a->info().start_ns + 10 * kS, 2000};
  auto meanAbs = [&](const DifferenceSource& s) {
    const DifferenceGeometry g = buildDifferenceGeometry(*a, *b, s, display, load);
    EXPECT_TRUE(g.samples);
    double sum = 0;
    size_t n = 0;
    for (const auto& pt : g.points)  // the geometry reaches a tile past the view's edges
      if (pt.x >= 0 && pt.x <= display.width) sum += std::fabs(pt.v), ++n;
    for (float v : g.column)
      if (std::isfinite(v)) sum += std::fabs(v), ++n;
    return n ? sum / static_cast<double>(n) : NAN;
  };
  DifferenceSource shifted = src;
  shifted.offsetB = *alignAtIteration(*a, *b, 0);
  DifferenceSource warped = src;
  warped.warpB = warp;
  const double underShift = meanAbs(shifted), underWarp = meanAbs(warped);
  // Same phase powers in both runs: only the samples next to a phase boundary differ under the
  // warp (B samples every 20 ms, A every 10 ms), while a shift compares a forward pass (400 W)
  // with a backward one (600 W) or an optimizer step (250 W) for much of every step.
  EXPECT_LT(underWarp, 10.0);
  EXPECT_GT(underShift, 60.0);
  EXPECT_LT(underWarp * 8, underShift);
}

TEST_F(WarpedTimeline, CompareLayoutsOrderRowsAndNameTheRunsByWhatDiffers) {
  const std::vector<std::shared_ptr<const RunFile>> runs{a, b};
  ComparePlan c;
  c.active = true;
  c.pairs = {{0, 0}, {1, 1}};
  c.differenceMetrics = {"power_w"};
  c.labelA = QStringLiteral("mbs4");
  c.labelB = QStringLiteral("mbs1");
  TreeState tree;
  auto kinds = [](const std::vector<TrackRow>& rows) {
    std::vector<RowKind> out;
    for (const TrackRow& r : rows)
      out.push_back(r.kind());
    return out;
  };
  c.layout = CompareLayout::Paired;
  const std::vector<TrackRow> paired = planRows(runs, tree, c, RowPlanOptions{});
  c.layout = CompareLayout::Overlay;
  const std::vector<TrackRow> overlay = planRows(runs, tree, c, RowPlanOptions{});
  c.layout = CompareLayout::Stacked;
  const std::vector<TrackRow> stacked = planRows(runs, tree, c, RowPlanOptions{});
  // Paired, per pair: header, then per default metric (power, temperature, SM clock, utilization
  // of the phased runs) A, B (and A - B for power), then rank g's steps and stream of A and of B.
  ASSERT_FALSE(paired.empty());
  EXPECT_EQ(paired[0].kind(), RowKind::GroupHeader);
  EXPECT_EQ(paired[1].as<CounterRow>()->run, 0);
  EXPECT_EQ(paired[2].as<CounterRow>()->run, 1);
  EXPECT_EQ(paired[3].kind(), RowKind::Difference);
  EXPECT_TRUE(paired[1].label.startsWith(QStringLiteral("A · ")));
  EXPECT_TRUE(paired[2].label.startsWith(QStringLiteral("B · ")));
  size_t stepsA = 0, stepsB = 0, kernelsA = 0, kernelsB = 0, firstPairEnd = 0;
  for (size_t i = 1; i < paired.size() && paired[i].kind() != RowKind::GroupHeader; ++i) {
    firstPairEnd = i;
    if (const auto* s = paired[i].as<StepsRow>()) (s->run == 0 ? stepsA : stepsB) += 1;
    if (const auto* k = paired[i].as<KernelsRow>()) (k->run == 0 ? kernelsA : kernelsB) += 1;
  }
  EXPECT_EQ(stepsA, 1u);
  EXPECT_EQ(stepsB, 1u);
  EXPECT_GE(kernelsA, 1u);
  EXPECT_GE(kernelsB, 1u);
  EXPECT_EQ(paired[firstPairEnd + 1].kind(), RowKind::GroupHeader);  // the second pair
  // Overlay: the A and B rows of each metric become one overlay row named by what differs.
  ASSERT_GT(overlay.size(), 2u);
  const auto* o = overlay[1].as<OverlayRow>();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->a.run, 0);
  EXPECT_EQ(o->b.run, 1);
  EXPECT_TRUE(overlay[1].label.contains(QStringLiteral("mbs4 vs mbs1")))
      << overlay[1].label.toStdString();
  EXPECT_EQ(overlay[2].kind(), RowKind::Difference);
  size_t counters = 0, overlays = 0;
  for (const TrackRow& r : overlay) {
    counters += r.kind() == RowKind::Counter;
    overlays += r.kind() == RowKind::Overlay;
  }
  EXPECT_EQ(counters, 0u);
  size_t pairedCounters = 0;
  for (const TrackRow& r : paired)
    pairedCounters += r.kind() == RowKind::Counter;
  EXPECT_EQ(overlays * 2, pairedCounters);
  EXPECT_EQ(overlay.size() + overlays, paired.size());
  // Stacked: every row of A before any of B, the A - B section last.
  const std::vector<RowKind> sk = kinds(stacked);
  size_t lastA = 0, firstB = stacked.size();
  for (size_t i = 0; i < stacked.size(); ++i) {
    if (stacked[i].key.startsWith(QStringLiteral("diff"))) continue;  // the A - B section
    if (stacked[i].run() == 0) lastA = i;
    if (stacked[i].run() == 1) firstB = std::min(firstB, i);
  }
  EXPECT_LT(lastA, firstB);
  EXPECT_EQ(sk.back(), RowKind::Difference);
  // Names of the layouts round-trip (the CLI's --layout, the GUI's settings).
  for (CompareLayout l : {CompareLayout::Paired, CompareLayout::Overlay, CompareLayout::Stacked})
    EXPECT_EQ(compareLayoutFromName(compareLayoutName(l)), l);
  EXPECT_FALSE(compareLayoutFromName(QStringLiteral("side-by-side")));
}

TEST_F(WarpedTimeline, AnOverlayRowDrawsBothRunsInTheirColours) {
  TimelineRenderer r(store);
  r.setRunDisplay(1, r.displays().of(1).withWarp(warp).withLabel(QStringLiteral("slow")));
  r.setRunDisplay(0, r.displays().of(0).withLabel(QStringLiteral("fast")));
  TrackRow row;
  const int m = metricIndex(*a, "power_w");
  row.content = OverlayRow{{0, 0, m}, {1, 0, metricIndex(*b, "power_w")}};
  const TimeMapping display{a->info().start_ns, a->info().end_ns, 900};
  QImage img(900, 60, QImage::Format_RGB32);
  {
    std::vector<TimelineRenderer::RowTarget> frame{{&row, display, {}}};
    EXPECT_TRUE(r.prepare(frame, load, QFont()).empty());
    QPainter p(&img);
    r.paintContent(p, row, QRectF(0, 0, 900, 60), display, {});
  }
  // Both colours occur (A's line and B's over it).
  const QColor ca = r.style().theme.compareColor(false), cb = r.style().theme.compareColor(true);
  auto near = [](QRgb p, const QColor& c) {
    return std::abs(qRed(p) - c.red()) + std::abs(qGreen(p) - c.green()) +
               std::abs(qBlue(p) - c.blue()) <
           40;
  };
  size_t na = 0, nb = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < 600; ++x) {
      na += near(img.pixel(x, y), ca);
      nb += near(img.pixel(x, y), cb);
    }
  EXPECT_GT(na, 20u);
  EXPECT_GT(nb, 20u);
  // The range covers both runs' powers (idle 100 W .. backward 610 W on GPU 1 of either run).
  const ValueRange vr = *r.rowRange(row, display, load);
  EXPECT_LE(vr.min, 100.0);
  EXPECT_GE(vr.max, 600.0);
}

TEST_F(WarpedTimeline, TheTooltipOverBShowsBsOwnTimeAndTheStretch) {
  TimelinePage page;
  const int ia = page.addRun(a);
  const int ib = page.addRun(b);
  TimelineRenderer& r = page.view()->renderer();
  r.setRunDisplay(ib, r.displays().of(ib).withWarp(warp));
  ComparePlan c;
  c.active = true;
  c.runA = ia;
  c.runB = ib;
  c.layout = CompareLayout::Paired;
  c.pairs = {{0, 0}};
  page.setRows(planRows(page.store()->runs(), TreeState{}, c, {}));
  page.resize(1200, 600);
  page.show();
  QCoreApplication::processEvents();
  const int64_t a0 = a->info().start_ns;
  page.viewport()->setRange({a0 + 1 * kS, a0 + 10 * kS});  // A's three steps
  TimelineView* view = page.view();
  // The B power row (the second row under the pair's header).
  int y = -1;
  for (int py = 0; py < view->viewport()->height() && y < 0; ++py) {
    const TrackRow* r = view->rowAt(QPoint(1, py));
    if (r && r->as<CounterRow>() && r->run() == ib) y = py + 5;
  }
  ASSERT_GE(y, 0);
  // Halfway through the view: A's time a0 + 5.5 s, in A's step 1 (4 s .. 7 s).
  const double content = view->viewport()->width() - TimelineView::kLabelWidth;
  const int x = TimelineView::kLabelWidth + static_cast<int>(content / 2);
  const QString tip = view->tooltipAt(QPoint(x, y));
  // B's steps of 2 s are stretched onto A's 3 s (every phase alike): x 1.5.
  EXPECT_TRUE(tip.contains(QStringLiteral("stretched ×1.500"))) << tip.toStdString();
  // B's own time there: toB of the cursor's A time, relative to B's start.
  const TimeMapping display{a0 + 1 * kS, a0 + 10 * kS, content};
  const int64_t tb = warp.toB(display.t(x - TimelineView::kLabelWidth));
  const QString own = QString::fromStdString(formatDuration(tb - b->info().start_ns));
  EXPECT_TRUE(tip.contains(own)) << own.toStdString() << " in " << tip.toStdString();
  // A's rows say nothing about a stretch.
  for (int py = 0; py < view->viewport()->height(); ++py) {
    const TrackRow* r = view->rowAt(QPoint(1, py));
    if (r && r->as<CounterRow>() && r->run() == ia) {
      EXPECT_FALSE(view->tooltipAt(QPoint(x, py + 5)).contains(QStringLiteral("stretched")));
      break;
    }
  }
}

TEST_F(WarpedTimeline, ClickingAStepOfTheIterationTableZoomsBothRunsToIt) {
  ComparePanel panel;
  panel.resize(600, 700);
  panel.show();
  panel.setRuns({a, b});
  ASSERT_TRUE(panel.active());
  EXPECT_EQ(panel.settings().align, AlignMode::Warp);  // the default with common steps
  // The warp reads both runs' kernels off the UI thread; until then B is aligned at the starts,
  // and the status says so.
  EXPECT_TRUE(panel.settings().warp.isShift());
  QSignalSpy changed(&panel, &ComparePanel::settingsChanged);
  for (int i = 0; i < 500 && panel.settings().warp.isShift(); ++i)
    QTest::qWait(10);
  EXPECT_FALSE(panel.settings().warp.isShift());
  EXPECT_GE(changed.count(), 1);
  panel.computeIterationsNow();
  QTableWidget* t = panel.iterationTable();
  // The 3 steps both runs completed, then mean ± sd; the step-time column by default.
  ASSERT_EQ(t->rowCount(), 4);
  EXPECT_EQ(t->item(1, 0)->text(), QStringLiteral("1"));
  EXPECT_EQ(t->item(1, 1)->text(), QStringLiteral("3.000"));  // A's steps take 3 s
  EXPECT_EQ(t->item(1, 2)->text(), QStringLiteral("2.000"));  // B's 2 s
  EXPECT_EQ(t->item(1, 3)->text(), QStringLiteral("1.000"));
  EXPECT_EQ(t->item(1, 4)->text(), QStringLiteral("+50.0"));
  EXPECT_EQ(t->item(3, 1)->text(), QStringLiteral("3.000 ± 0.000"));
  QSignalSpy zoom(&panel, &ComparePanel::zoomRequested);
  panel.tabs()->setCurrentIndex(1);
  QTest::qWait(10);
  const QRect cell = t->visualItemRect(t->item(1, 2));
  QTest::mouseClick(t->viewport(), Qt::LeftButton, {}, cell.center());
  ASSERT_EQ(zoom.count(), 1);
  // Step 1 of A: [start + 1 s + 3 s, + 3 s); under the warp B's step 1 is drawn on the same
  // window, so the range is A's window with 5 % on each side.
  const int64_t t0 = a->info().start_ns + 4 * kS, t1 = t0 + 3 * kS;
  EXPECT_EQ(zoom.at(0).at(0).toLongLong(), t0 - 150'000'000);
  EXPECT_EQ(zoom.at(0).at(1).toLongLong(), t1 + 150'000'000);
  // The mean ± sd row zooms nowhere.
  QTest::mouseClick(t->viewport(), Qt::LeftButton, {}, t->visualItemRect(t->item(3, 0)).center());
  EXPECT_EQ(zoom.count(), 1);
  // Under a shift at the starts, B's step 1 sits elsewhere: the range covers both windows.
  panel.setAlignment(AlignMode::Start);
  const TimeRange r = panel.iterationDisplayRange(1);
  const int64_t off = alignAtStart(*a, *b);
  const int64_t b0 = b->info().start_ns + 1 * kS + 2 * kS + off;
  EXPECT_EQ(r.t0, std::min(t0, b0) - (t1 - std::min(t0, b0)) / 20);
  // The header names what differs.
  EXPECT_FALSE(panel.differencesLabel()->text().isEmpty());
}

}  // namespace
}  // namespace wl
