// SPDX-License-Identifier: GPL-3.0-or-later
// Keyboard and mouse on the timeline through QTest (offscreen), and a screenshot comparison of
// the bundled sample against a reference image with a tolerance.
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QWheelEvent>
#include <QtTest>

#include <cmath>
#include <set>

#include "app/gui/main_window.h"
#include "loaders/core/throttle_reasons.h"
#include "support/missing.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/panels/analysis_panel.h"
#include "widgets/panels/kernel_details_view.h"
#include "widgets/timeline/render/throttle_strip.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/track_tree.h"

using namespace wl;  // NOLINT: test file

namespace {

// Processes events until the tile store is idle and the view has repainted with every tile.
// Three throttle intervals to step through: GPU 1 held at 1,600 MHz by HW thermal slowdown over
// [2 s, 2.5 s), GPU 0 power capped at 1,500 MHz over [5 s, 6 s) (as the synthetic run has it) and
// [8 s, 8.5 s); every other sample at 1,980 MHz, the GPUs' maximum.
void addThrottleIntervals(test::SyntheticRun& run) {
  for (int g : {0, 1}) {
    TelemetryTable& t = run.telemetry[static_cast<size_t>(g)];
    auto& clock = t.columns[2].values;
    for (size_t i = 0; i < t.size(); ++i) {
      const int64_t at = t.t_ns[i] - run.info.start_ns;
      auto in = [at](double a, double b) {
        return at >= static_cast<int64_t>(a * 1e9) && at < static_cast<int64_t>(b * 1e9);
      };
      const bool hot = g == 1 && in(2.0, 2.5);
      const bool capped = g == 0 && (in(5.0, 6.0) || in(8.0, 8.5));
      clock[i] = hot ? 1600 : (capped ? 1500 : 1980);
      t.throttle_reasons[i] = hot ? throttle::kHwThermal : (capped ? throttle::kSwPowerCap : 0);
    }
  }
}

// The placed row of the view that `pred` accepts, and its rectangle.
template <class Pred>
const TrackRow* findRow(TimelineView* view, QRectF* rect, Pred pred) {
  for (int y = 0; y < view->viewport()->height(); ++y)
    if (const TrackRow* r = view->rowAt(QPoint(TimelineView::kLabelWidth + 5, y), rect);
        r && pred(*r))
      return r;
  return nullptr;
}

// Paints until every tile the frame asked for is loaded. The bound is wall time, not a count of
// rounds: on a loaded machine (CI beside other builds) the loader thread may wait seconds for a
// core, and a frame drawn before its raw tiles arrive shows the pyramid's summary boxes instead
// of kernels (a click then selects no kernel).
void settle(TimelinePage* page) {
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < 60'000) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    page->view()->viewport()->repaint();
    if (page->store()->pending() == 0) {
      QCoreApplication::processEvents();
      page->view()->viewport()->repaint();
      if (page->store()->pending() == 0) return;
    }
    QTest::qWait(10);
  }
  QWARN("settle: tiles still pending after 60 s");
}

}  // namespace

class TimelineInteractionTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineTimelineTest");
    QSettings().clear();
    QSettings().setValue("theme", "light");
    src = test::makeSyntheticRun();
    addThrottleIntervals(src);
    test::writeSyntheticRun(src, dir.path() / "run.h5");
  }

  void init() {
    window = std::make_unique<MainWindow>();
    window->resize(1400, 900);
    window->show();
    page = window->timeline();
    QSignalSpy boundsSet(page->viewport(), &Viewport::boundsChanged);
    window->openRun(QString::fromStdString((dir.path() / "run.h5").string()));
    QVERIFY(boundsSet.wait(10000));
    settle(page);
    view = page->view();
    vp = page->viewport();
  }

  void cleanup() { window.reset(); }

  void keysZoomAndPan() {
    const TimeRange all = vp->range();
    QCOMPARE(all, (TimeRange{src.info.start_ns, src.info.end_ns}));
    QTest::keyClick(view, Qt::Key_W);  // zoom in by 0.8 around the centre, twice
    QCOMPARE(vp->range().span(),
             static_cast<int64_t>(std::llround(0.8 * static_cast<double>(all.span()))));
    QTest::keyClick(view, Qt::Key_W);
    const TimeRange in = vp->range();
    QCOMPARE(in.span(), static_cast<int64_t>(std::llround(0.64 * static_cast<double>(all.span()))));
    QCOMPARE(in.t0 + in.span() / 2, all.t0 + all.span() / 2);
    QTest::keyClick(view, Qt::Key_D);  // pan right by 15% of the span (room is left)
    const TimeRange right = vp->range();
    QCOMPARE(right.t0 - in.t0, static_cast<int64_t>(0.15 * static_cast<double>(in.span())));
    QTest::keyClick(view, Qt::Key_A);
    QCOMPARE(vp->range(), in);
    QTest::keyClick(view, Qt::Key_S);
    QTest::keyClick(view, Qt::Key_S);
    QCOMPARE(vp->range().span(), all.span());
    QTest::keyClick(view, Qt::Key_W);
    QTest::keyClick(view, Qt::Key_0);
    QCOMPARE(vp->range(), all);
    // History: back returns to the zoomed view.
    vp->goBack();
    QVERIFY(vp->range().span() < all.span());
  }

  void ctrlWheelZoomsAtTheCursor() {
    const TimeMapping before = view->mapping();
    const QPoint at(TimelineView::kLabelWidth + 300, 200);
    const int64_t anchor = before.t(300);
    QWheelEvent wheel(at, view->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(view->viewport(), &wheel);
    const TimeMapping after = view->mapping();
    QVERIFY(after.span() < before.span());
    QVERIFY(std::abs(after.t(300) - anchor) <= static_cast<int64_t>(after.nsPerPx()) + 1);
  }

  void dragSelectsAndFFits() {
    QWidget* vw = view->viewport();
    const TimeMapping map = view->mapping();
    const int y = 120;
    QTest::mousePress(vw, Qt::LeftButton, Qt::NoModifier,
                      QPoint(TimelineView::kLabelWidth + 100, y));
    QTest::mouseMove(vw, QPoint(TimelineView::kLabelWidth + 200, y));
    QTest::mouseMove(vw, QPoint(TimelineView::kLabelWidth + 300, y));
    QTest::mouseRelease(vw, Qt::LeftButton, Qt::NoModifier,
                        QPoint(TimelineView::kLabelWidth + 300, y));
    QVERIFY(vp->selection().has_value());
    QCOMPARE(vp->selection()->t0, map.t(100));
    QCOMPARE(vp->selection()->t1, map.t(300));
    QTest::keyClick(view, Qt::Key_F);
    const int64_t margin = vp->selection()->span() / 20;
    QCOMPARE(vp->range(), (TimeRange{map.t(100) - margin, map.t(300) + margin}));
    QTest::keyClick(view, Qt::Key_Escape);
    QVERIFY(!vp->selection().has_value());
  }

  void shiftDragPans() {
    QTest::keyClick(view, Qt::Key_W);
    QTest::keyClick(view, Qt::Key_W);
    const TimeRange before = vp->range();
    const double nsPerPx = view->mapping().nsPerPx();
    QWidget* vw = view->viewport();
    const int y = 120;
    QTest::mousePress(vw, Qt::LeftButton, Qt::ShiftModifier,
                      QPoint(TimelineView::kLabelWidth + 400, y));
    QTest::mouseMove(vw, QPoint(TimelineView::kLabelWidth + 300, y));
    QTest::mouseRelease(vw, Qt::LeftButton, Qt::ShiftModifier,
                        QPoint(TimelineView::kLabelWidth + 300, y));
    const int64_t moved = vp->range().t0 - before.t0;
    QVERIFY(std::abs(static_cast<double>(moved) - 100 * nsPerPx) <= nsPerPx);
    QVERIFY(!vp->selection().has_value());
  }

  void clickingAKernelShowsItsDetails() {
    // Zoom into the first tenth of the run so kernels are wide boxes, then click one.
    vp->setRange({src.info.start_ns, src.info.start_ns + 200'000'000});
    settle(page);
    // Find the kernel row of rank 0, stream 13 (communication) and its first box.
    QRectF rowRect;
    int y = -1;
    for (int py = 0; py < view->viewport()->height(); ++py) {
      const TrackRow* r = view->rowAt(QPoint(TimelineView::kLabelWidth + 10, py), &rowRect);
      if (r && r->kind() == RowKind::Kernels && r->label == "Stream 13") {
        y = static_cast<int>(rowRect.center().y());
        break;
      }
    }
    if (y < 0) {
      view->verticalScrollBar()->setValue(view->verticalScrollBar()->maximum());
      settle(page);
      for (int py = 0; py < view->viewport()->height(); ++py) {
        const TrackRow* r = view->rowAt(QPoint(TimelineView::kLabelWidth + 10, py), &rowRect);
        if (r && r->kind() == RowKind::Kernels && r->label == "Stream 13") {
          y = static_cast<int>(rowRect.center().y());
          break;
        }
      }
    }
    QVERIFY(y >= 0);
    // Comm kernel k starts at t0 + k*step + step/4 and lasts step/2; click inside the first one.
    const int64_t step = (src.info.end_ns - src.info.start_ns) / 201;
    const TimeMapping map = view->mapping();
    const int x = TimelineView::kLabelWidth + static_cast<int>(map.x(src.info.start_ns + step / 2));
    // The row shows kernels once their raw tiles are in; until then a summary box (under load
    // the loader thread may lag the frames): paint until the point is a kernel.
    QElapsedTimer clock;
    clock.start();
    while (!view->tooltipAt(QPoint(x, y)).contains("ncclDevKernel") && clock.elapsed() < 60'000) {
      settle(page);
      QTest::qWait(20);
    }
    QSignalSpy selected(view, &TimelineView::kernelSelected);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, QPoint(x, y));
    QVERIFY2(selected.count() == 1, qPrintable(view->tooltipAt(QPoint(x, y))));
    const KernelRef k = view->selectedKernel();
    QVERIFY(k.valid());
    QCOMPARE(k.event, 0L);
    QCOMPARE(k.data.start_ns, src.info.start_ns + step / 4);
    auto* details = window->findChild<KernelDetailsView*>();
    QVERIFY(details->toPlainText().contains("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"));
    // The collective's metadata is read off the UI thread (BackgroundJob).
    QTRY_VERIFY(details->toPlainText().contains("allreduce"));
    QVERIFY(details->toPlainText().contains("[0, 1]"));
    // The tooltip over the same kernel names it with its duration.
    const QString tip = view->tooltipAt(QPoint(x, y));
    QVERIFY2(tip.contains("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), qPrintable(tip));
  }

  void findNextRevealsMatches() {
    FindBar* find = page->findBar();
    find->searchNow("memcpy");
    QCOMPARE(find->matchCount(), static_cast<size_t>(2 * 20));  // every 10th of 200, two ranks
    QSignalSpy selected(view, &TimelineView::kernelSelected);
    find->next();
    QCOMPARE(selected.count(), 1);
    QCOMPARE(view->selectedKernel().data.start_ns, src.info.start_ns);  // the first memcpy
    find->next();
    find->previous();
    QCOMPARE(find->current(), 0);
  }

  // The window's rows are the plan of the track tree's state; with nothing changed in the tree,
  // the plan of the default state. Unchecking an item in the tree removes its rows.
  void windowRowsAreThePlanOfTheTreeState() {
    auto keys = [](const std::vector<TrackRow>& rows) {
      QStringList k;
      for (const TrackRow& r : rows)
        k << QStringLiteral("%1@%2").arg(r.key).arg(r.height);
      return k;
    };
    RowPlanOptions o;
    o.throttleStrip = true;  // the window shows the throttle strips
    const auto plan = planRows(page->store()->runs(), TreeState{}, {}, o);
    QCOMPARE(keys(view->rows()), keys(plan));
    auto* tree = window->findChild<TrackTree*>();
    QStandardItem* gpu1 = tree->trackModel()->item(0)->child(0)->child(0)->child(1);
    QCOMPARE(gpu1->data(TrackTree::KeyRole).toString(), QStringLiteral("r0/g1"));
    gpu1->setCheckState(Qt::Unchecked);
    TreeState hidden;
    hidden.shown[QStringLiteral("r0/g1")] = false;
    QCOMPARE(keys(view->rows()), keys(planRows(page->store()->runs(), hidden, {}, o)));
    QCOMPARE(view->rows().size(), plan.size() - 6);  // header, strip, 4 counters
  }

  void foldingAGroupHidesItsTracks() {
    const size_t before = view->rows().size();
    QString key;
    for (const TrackRow& r : view->rows())
      if (const auto* h = r.as<GroupHeaderRow>(); h && h->gpu == 0) key = r.key;
    QVERIFY(!key.isEmpty());
    view->setCollapsed(key, true);
    QVERIFY(view->isCollapsed(key));
    QCOMPARE(view->rows().size(), before);  // rows stay; the layout skips them
    QRectF rr;
    const TrackRow* second = view->rowAt(QPoint(10, 24 + 20 + 5), &rr);  // below run + GPU 0 header
    QVERIFY(second);
    QCOMPARE(second->kind(), RowKind::GroupHeader);
    QCOMPARE(second->as<GroupHeaderRow>()->gpu, 1);
  }

  void heatmapModeShowsOneRowPerGpu() {
    auto* action = window->findChild<QAction*>();
    (void)action;
    for (QAction* a : window->findChildren<QAction*>())
      if (a->text().contains("Heatmap")) a->setChecked(true);
    int heatmaps = 0;
    for (const TrackRow& r : view->rows())
      if (r.kind() == RowKind::Heatmap) {
        ++heatmaps;
        QCOMPARE(r.height, 14 * 4);
      }
    QCOMPARE(heatmaps, 1);
    settle(page);
    // Hovering a heatmap cell names its GPU.
    for (int py = 0; py < view->viewport()->height(); ++py) {
      QRectF rr;
      const TrackRow* r = view->rowAt(QPoint(TimelineView::kLabelWidth + 50, py), &rr);
      if (r && r->kind() == RowKind::Heatmap) {
        const QString tip = view->tooltipAt(
            QPoint(TimelineView::kLabelWidth + 50, static_cast<int>(rr.top() + 14 * 2 + 5)));
        QVERIFY2(tip.contains("GPU 2"), qPrintable(tip));
        // The cells are coloured: the row holds many colours, not only the empty background.
        const QImage img = view->viewport()->grab().toImage();
        std::set<QRgb> colours;
        for (int y = static_cast<int>(rr.top()) + 2; y < static_cast<int>(rr.bottom()) - 2; ++y)
          for (int x = TimelineView::kLabelWidth + 10; x < img.width() - 10; x += 7)
            colours.insert(img.pixel(x, y));
        QVERIFY2(colours.size() > 10, qPrintable(QString::number(colours.size())));
        return;
      }
    }
    QFAIL("no heatmap row on screen");
  }

  // The throttle analysis arrives from a worker after the run opens.
  bool throttleReady() {
    return QTest::qWaitFor(
        [this] { return view->renderer().displays().throttleView(0) != nullptr; }, 10000);
  }

  void clockAxesAreFittedToTheValues() {
    // SM clock 1,500..1,980 MHz: 5 % of the span each side (1,476..2,004), rounded outward to
    // tens; power stays zero-based.
    QRectF rr;
    const TrackRow* clock = findRow(view, &rr, [](const TrackRow& r) {
      return r.as<CounterRow>() && r.label == QStringLiteral("SM clock");
    });
    QVERIFY(clock);
    const TimeMapping map = view->renderer().displays().rowMapping(*clock, view->mapping());
    auto fetch = [this](const TileKey& k) { return page->store()->find(k); };
    const auto range = view->renderer().rowRange(*clock, map, fetch);
    QVERIFY(range);
    QCOMPARE(range->min, 1470.0);
    QCOMPARE(range->max, 2010.0);
    QVERIFY(range->fitted);
    const TrackRow* power = findRow(view, &rr, [](const TrackRow& r) {
      return r.as<CounterRow>() && r.label == QStringLiteral("Power");
    });
    QVERIFY(power);
    QCOMPARE(view->renderer().rowRange(*power, map, fetch)->min, 0.0);
    // The earlier default (View > Counter Y Range) is still there.
    view->setYMode(YMode::SharedPerMetric);
    QCOMPARE(view->renderer().rowRange(*clock, map, fetch)->min, 0.0);
    view->setYMode(YMode::SharedFitted);
  }

  void throttleStripShowsTheClockDeficit() {
    QVERIFY(throttleReady());
    settle(page);
    QRectF rr;
    const TrackRow* strip = findRow(view, &rr, [](const TrackRow& r) {
      return r.as<ThrottleStripRow>() && r.as<ThrottleStripRow>()->gpu == 0;
    });
    QVERIFY(strip);
    QCOMPARE(rr.height(), 10.0);
    // Right under GPU 0's header.
    QRectF hr;
    const TrackRow* header = view->rowAt(QPoint(5, static_cast<int>(rr.top()) - 2), &hr);
    QVERIFY(header && header->as<GroupHeaderRow>() && header->as<GroupHeaderRow>()->gpu == 0);
    const TimeMapping map = view->renderer().displays().rowMapping(*strip, view->mapping());
    const ThrottleStripGeometry* g =
        view->renderer().geometry(*strip->as<ThrottleStripRow>(), map, {}).strip;
    const auto at = [&](double s) {
      return static_cast<size_t>(map.x(src.info.start_ns + static_cast<int64_t>(s * 1e9)));
    };
    // 1,500 MHz against the 1,980 MHz maximum: 24.2 % below.
    const double deficit = (1980.0 - 1500.0) / 1980.0;
    QVERIFY(std::abs(g->deficit[at(5.5)] - deficit) < 1e-4);
    QCOMPARE(g->reasons[at(5.5)], throttle::kSwPowerCap);
    QCOMPARE(g->deficit[at(3.0)], 0.0f);
    QCOMPARE(g->deficit[at(7.0)], 0.0f);
    // On screen: the reason's colour at the deficit's strength, the background elsewhere.
    const QImage shot = view->viewport()->grab().toImage();
    const Theme& th = view->renderer().style().theme;
    const int y = static_cast<int>(rr.top()) + 4;
    const QColor want = throttleCellColor(th, throttle::kSwPowerCap, deficit, th.trackBackground);
    const QColor got = shot.pixelColor(TimelineView::kLabelWidth + static_cast<int>(at(5.5)), y);
    QVERIFY2(std::abs(got.red() - want.red()) <= 2 && std::abs(got.green() - want.green()) <= 2 &&
                 std::abs(got.blue() - want.blue()) <= 2,
             qPrintable(got.name() + " != " + want.name()));
    QCOMPARE(shot.pixelColor(TimelineView::kLabelWidth + static_cast<int>(at(3.0)), y),
             th.trackBackground);
    // Its tooltip names the reason once, with the deficit and the interval's duration.
    const QString tip =
        view->tooltipAt(QPoint(TimelineView::kLabelWidth + static_cast<int>(at(5.5)), y));
    QCOMPARE(tip.count(QStringLiteral("SW power cap")), 1);
    QVERIFY2(tip.contains(QStringLiteral("1.000 s")) || tip.contains(QStringLiteral("1 s")),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("24.2 % below")), qPrintable(tip));
  }

  // With and without the throttle bands behind the counters (View > Throttle Bands Behind
  // Tracks), a throttled sample's tooltip names it once.
  void throttledSampleTooltipNamesTheReasonOnce_data() {
    QTest::addColumn<bool>("tint");
    QTest::newRow("bands_off") << false;
    QTest::newRow("bands_behind_tracks") << true;
  }

  void throttledSampleTooltipNamesTheReasonOnce() {
    QFETCH(bool, tint);
    QVERIFY(throttleReady());
    RenderStyle style = view->renderer().style();
    style.throttleTint = tint;
    view->renderer().setStyle(style);
    settle(page);
    QRectF rr;
    const TrackRow* power = findRow(view, &rr, [](const TrackRow& r) {
      const auto* c = r.as<CounterRow>();
      return c && c->gpu == 0 && r.label == QStringLiteral("Power");
    });
    QVERIFY(power);
    const TimeMapping map = view->renderer().displays().rowMapping(*power, view->mapping());
    const int x =
        TimelineView::kLabelWidth + static_cast<int>(map.x(src.info.start_ns + 5'500'000'000));
    const QString tip = view->tooltipAt(QPoint(x, static_cast<int>(rr.center().y())));
    QVERIFY2(tip.count(QStringLiteral("throttled")) == 1, qPrintable(tip));
    QVERIFY2(tip.count(QStringLiteral("SW power cap")) == 1, qPrintable(tip));
  }

  void nAndShiftNStepThroughThrottleIntervals() {
    QVERIFY(throttleReady());
    auto* panel = window->findChild<AnalysisPanel*>();
    QVERIFY(panel);
    QVERIFY(QTest::qWaitFor([panel] { return panel->throttleTable()->rowCount() == 3; }, 20000));
    const int64_t t0 = src.info.start_ns, s = 1'000'000'000;
    auto range = [t0](double a, double b) {
      return TimeRange{t0 + static_cast<int64_t>(a * 1e9), t0 + static_cast<int64_t>(b * 1e9)};
    };
    auto tableRow = [panel] {
      const int r = panel->selectedThrottleRow();
      if (r < 0) return std::pair<int, qlonglong>{-1, -1};
      const QStandardItem* first = panel->throttleTable()->item(r, 0);
      return std::pair<int, qlonglong>{static_cast<int>(first->data(Qt::UserRole).toDouble()),
                                       first->data(AnalysisPanel::StartRole).toLongLong()};
    };
    vp->setRange({t0, t0 + s});  // from 0.5 s, of any GPU (nothing hovered or selected)
    // Each interval in the middle third of the view.
    QTest::keyClick(view, Qt::Key_N);
    QCOMPARE(vp->range(), range(1.5, 3.0));  // GPU 1, [2 s, 2.5 s)
    QCOMPARE(tableRow(), (std::pair<int, qlonglong>{1, t0 + 2 * s}));
    QTest::keyClick(view, Qt::Key_N);
    QCOMPARE(vp->range(), range(4.0, 7.0));  // GPU 0, [5 s, 6 s)
    QCOMPARE(tableRow(), (std::pair<int, qlonglong>{0, t0 + 5 * s}));
    QTest::keyClick(view, Qt::Key_N);
    QCOMPARE(vp->range(), range(7.5, 9.0));  // GPU 0, [8 s, 8.5 s)
    QSignalSpy notices(view, &TimelineView::notice);
    QTest::keyClick(view, Qt::Key_N);  // no further interval: the view stays, and says so
    QCOMPARE(vp->range(), range(7.5, 9.0));
    QCOMPARE(notices.size(), 1);
    QCOMPARE(notices.at(0).at(0).toString(),
             QStringLiteral("No throttle interval after this point on any GPU"));
    QCOMPARE(window->statusBar()->currentMessage(), notices.at(0).at(0).toString());
    QTest::keyClick(view, Qt::Key_N, Qt::ShiftModifier);
    QCOMPARE(vp->range(), range(4.0, 7.0));
    QTest::keyClick(view, Qt::Key_N, Qt::ShiftModifier);
    QCOMPARE(vp->range(), range(1.5, 3.0));
    QCOMPARE(tableRow(), (std::pair<int, qlonglong>{1, t0 + 2 * s}));
    // Over a row of GPU 0, N skips GPU 1's interval.
    vp->setRange({t0, t0 + s});
    QRectF rr;
    QVERIFY(findRow(view, &rr, [](const TrackRow& r) {
      const auto* c = r.as<CounterRow>();
      return c && c->gpu == 0;
    }));
    const QPoint over0(TimelineView::kLabelWidth + 20, static_cast<int>(rr.center().y()));
    QTest::mouseMove(view->viewport(), over0);
    QSignalSpy hover(view, &TimelineView::hoverTimeChanged);
    QTest::keyClick(view, Qt::Key_N);
    QCOMPARE(vp->range(), range(4.0, 7.0));
    // The cursor readout follows the time now under the (unmoved) mouse.
    QVERIFY(!hover.isEmpty());
    const auto last = hover.last().at(0).value<std::optional<int64_t>>();
    QVERIFY(last.has_value());
    const int64_t want = view->mapping().t(over0.x() - TimelineView::kLabelWidth);
    QVERIFY2(std::llabs(*last - want) <= vp->range().span() / 1000,
             qPrintable(QString("readout %1, under the mouse %2").arg(*last).arg(want)));
    QVERIFY(*last >= t0 + 4 * s);  // not the 0.5 s it showed before the jump
    // Over GPU 2, which never throttled, N stays and says why.
    QVERIFY(findRow(view, &rr, [](const TrackRow& r) {
      const auto* c = r.as<CounterRow>();
      return c && c->gpu == 2;
    }));
    QTest::mouseMove(view->viewport(),
                     QPoint(TimelineView::kLabelWidth + 20, static_cast<int>(rr.center().y())));
    notices.clear();
    QTest::keyClick(view, Qt::Key_N);
    QCOMPARE(vp->range(), range(4.0, 7.0));
    QCOMPARE(notices.size(), 1);
    QVERIFY2(notices.at(0).at(0).toString().startsWith("GPU 2 has no throttle intervals"),
             qPrintable(notices.at(0).at(0).toString()));
  }

  void reasonHeatmapNamesGpuReasonDeficitAndClickZooms() {
    QVERIFY(throttleReady());
    for (QAction* a : window->findChildren<QAction*>())
      if (QString(a->text()).remove('&') == QStringLiteral("Heatmap of GPUs: Throttling"))
        a->trigger();
    settle(page);
    QRectF rr;
    const TrackRow* heat =
        findRow(view, &rr, [](const TrackRow& r) { return r.as<ThrottleHeatmapRow>(); });
    QVERIFY(heat);
    QCOMPARE(rr.height(), 4.0 * 14);  // 4 GPUs, 14 px each
    const TimeMapping map = view->renderer().displays().rowMapping(*heat, view->mapping());
    const int x =
        TimelineView::kLabelWidth + static_cast<int>(map.x(src.info.start_ns + 5'500'000'000));
    const QPoint gpu0(x, static_cast<int>(rr.top()) + 7);
    const QString tip = view->tooltipAt(gpu0);
    QVERIFY2(tip.contains(QStringLiteral("GPU 0")), qPrintable(tip));
    QVERIFY2(tip.count(QStringLiteral("SW power cap")) == 1, qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("24.2 % below")), qPrintable(tip));
    // GPU 1's row at 2.25 s: HW thermal slowdown, 1,600 MHz (19.2 % below 1,980 MHz).
    const QString tip1 = view->tooltipAt(QPoint(
        TimelineView::kLabelWidth + static_cast<int>(map.x(src.info.start_ns + 2'250'000'000)),
        static_cast<int>(rr.top()) + 14 + 7));
    QVERIFY2(tip1.contains(QStringLiteral("GPU 1")) &&
                 tip1.contains(QStringLiteral("HW thermal")) &&
                 tip1.contains(QStringLiteral("19.2 % below")),
             qPrintable(tip1));
    // A click zooms to the interval under it, with its context.
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, gpu0);
    const int64_t t0 = src.info.start_ns;
    QCOMPARE(vp->range(), (TimeRange{t0 + 4'000'000'000, t0 + 7'000'000'000}));
  }

  // The renderer's caches hold the rows of the last frame: a row scrolled out of the view leaves
  // them (paging through 1,024 GPUs' tracks otherwise kept every row's image, 1 GB).
  void scrolledAwayRowsLeaveTheCaches() {
    window->resize(1400, 420);
    settle(page);
    QScrollBar* bar = view->verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    bar->setValue(0);
    settle(page);
    QRectF rect;
    const TrackRow* top =
        findRow(view, &rect, [](const TrackRow& r) { return r.as<CounterRow>() != nullptr; });
    QVERIFY(top);
    const RowContent first = top->content;
    QVERIFY(view->renderer().holds(first));
    bar->setValue(bar->maximum());
    settle(page);
    QVERIFY(!findRow(view, &rect, [&](const TrackRow& r) { return r.content == first; }));
    QVERIFY(!view->renderer().holds(first));
    const TrackRow* now =
        findRow(view, &rect, [](const TrackRow& r) { return r.as<CounterRow>() != nullptr; });
    QVERIFY(now);
    QVERIFY(view->renderer().holds(now->content));
    bar->setValue(0);  // and back: drawn again, cached again
    settle(page);
    QVERIFY(view->renderer().holds(first));
  }

  void screenshotMatchesReference() {
    // A standalone page at a fixed size, so the docks of the main window do not matter.
    TimelinePage standalone;
    TrackTree tree;
    const auto run = RunFile::open(dir.path() / "run.h5");
    const int index = standalone.addRun(run);
    tree.addRun(run, index);
    standalone.setTheme(Theme::light());
    RowPlanOptions o;
    o.throttleStrip = true;
    standalone.setRows(planRows(standalone.store()->runs(), tree.state(), {}, o));
    standalone.resize(1100, 820);
    standalone.show();
    settle(&standalone);
    QTest::qWait(300);  // the throttle intervals arrive from a worker
    settle(&standalone);
    const QImage shot = standalone.grab().toImage().convertToFormat(QImage::Format_RGB32);
    const QString ref = QStringLiteral(WATTLINE_TEST_DATA "/screenshots/timeline-synthetic.png");
    // A missing reference is written where a developer asked for it (or has none yet); under
    // CI it is a failure: the comparison would otherwise never run.
    const bool update = qEnvironmentVariableIsSet("WATTLINE_UPDATE_SCREENSHOTS");
    if (!update && !QFile::exists(ref) && wl::test::missingIsFailure())
      QFAIL("tests/data/screenshots/timeline-synthetic.png is missing (CI=true)");
    if (update || !QFile::exists(ref)) {
      QDir().mkpath(QFileInfo(ref).absolutePath());
      QVERIFY(shot.save(ref));
      QSKIP("reference screenshot written; run again to compare");
    }
    const QImage want = QImage(ref).convertToFormat(QImage::Format_RGB32);
    QCOMPARE(shot.size(), want.size());
    qint64 differ = 0;
    for (int y = 0; y < shot.height(); ++y) {
      const auto* a = reinterpret_cast<const QRgb*>(shot.constScanLine(y));
      const auto* b = reinterpret_cast<const QRgb*>(want.constScanLine(y));
      for (int x = 0; x < shot.width(); ++x) {
        const int d =
            std::max({std::abs(qRed(a[x]) - qRed(b[x])), std::abs(qGreen(a[x]) - qGreen(b[x])),
                      std::abs(qBlue(a[x]) - qBlue(b[x]))});
        if (d > 40) ++differ;
      }
    }
    const double frac = static_cast<double>(differ) / (shot.width() * shot.height());
    if (frac > 0.03) shot.save(QDir::temp().filePath("timeline-synthetic-actual.png"));
    QVERIFY2(frac <= 0.03,
             qPrintable(QString("%1% of pixels differ (actual saved to %2)")
                            .arg(frac * 100)
                            .arg(QDir::temp().filePath("timeline-synthetic-actual.png"))));
  }

 private:
  test::TempDir dir;
  test::SyntheticRun src;
  std::unique_ptr<MainWindow> window;
  TimelinePage* page = nullptr;
  TimelineView* view = nullptr;
  Viewport* vp = nullptr;
};

QTEST_MAIN(TimelineInteractionTest)
#include "timeline_interaction_test.moc"
