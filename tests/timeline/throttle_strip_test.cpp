// SPDX-License-Identifier: GPL-3.0-or-later
// Throttling at a glance without widgets: the strip's and the reason heatmap's cells from known
// segments (deepest deficit, dominant reason), the strength of a known deficit, the jump to the
// next / previous interval, the counter ranges fitted to their values, and where the row plan
// puts the strip and the reason heatmap.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include <memory>

#include "loaders/core/throttle_reasons.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/throttle_strip.h"
#include "widgets/timeline/render/timeline_renderer.h"

namespace wl {
namespace {

ThrottleSegment seg(int64_t t0, int64_t t1, float clock, uint32_t bits, uint16_t causes = 0) {
  ThrottleSegment s;
  s.start_ns = t0;
  s.end_ns = t1;
  s.clock_mhz = clock;
  s.recorded_reasons = bits;
  s.causes = causes;
  return s;
}

ThrottleInterval interval(int gpu, int64_t t0, int64_t t1) {
  ThrottleInterval iv;
  iv.gpu = gpu;
  iv.start_ns = t0;
  iv.end_ns = t1;
  return iv;
}

TEST(ThrottleStrip, CellsTakeTheDeepestDeficitAndTheDominantReason) {
  GpuThrottle g;
  g.gpu = 0;
  g.reference_clock_mhz = 2000;
  // 10 ns per pixel over [0, 200): column 0 holds a deep thermal dip (4 ns at 1,000 MHz: 50 %
  // below) and a longer shallow power-capped part (6 ns at 1,800 MHz: 10 %); columns 1..9 are
  // power capped at 1,500 MHz (25 %); columns 10..14 held at 1,900 MHz by an inferred thermal
  // cause (5 %); 15..19 are not throttled.
  const auto thermalInferred =
      static_cast<uint16_t>(1u << static_cast<int>(ThrottleCause::ThermalInferred));
  g.segments = {seg(0, 4, 1000, throttle::kHwThermal), seg(4, 10, 1800, throttle::kSwPowerCap),
                seg(10, 100, 1500, throttle::kSwPowerCap), seg(100, 150, 1900, 0, thermalInferred)};
  const RunThrottleView v = makeThrottleView({g}, 2);
  ASSERT_EQ(v.gpus.size(), 2u);
  ASSERT_EQ(v.gpus[0].pieces.size(), 4u);
  EXPECT_FLOAT_EQ(v.gpus[0].pieces[2].deficit, 0.25f);
  EXPECT_EQ(v.gpus[0].pieces[3].reasons, throttle::kSwThermal);  // inferred -> SW thermal's colour

  const ThrottleStripGeometry s = buildThrottleStrip(v.gpus[0], TimeMapping{0, 200, 20});
  ASSERT_EQ(s.deficit.size(), 20u);
  EXPECT_FLOAT_EQ(s.deficit[0], 0.5f);
  EXPECT_EQ(s.reasons[0], throttle::kSwPowerCap);  // 6 of the column's 10 ns
  for (int c = 1; c < 10; ++c) {
    EXPECT_FLOAT_EQ(s.deficit[c], 0.25f) << c;
    EXPECT_EQ(s.reasons[c], throttle::kSwPowerCap) << c;
  }
  for (int c = 10; c < 15; ++c) {
    EXPECT_NEAR(s.deficit[c], 0.05f, 1e-6) << c;
    EXPECT_EQ(s.reasons[c], throttle::kSwThermal) << c;
  }
  for (int c = 15; c < 20; ++c)
    EXPECT_EQ(s.deficit[c], 0.0f) << c;

  // Zoomed out 10x, the whole 150 ns fall in the first 1.5 columns: the dip still shows.
  const ThrottleStripGeometry far = buildThrottleStrip(v.gpus[0], TimeMapping{0, 2000, 20});
  EXPECT_FLOAT_EQ(far.deficit[0], 0.5f);
  EXPECT_EQ(far.reasons[0], throttle::kSwPowerCap);  // 90 of its 100 ns
  EXPECT_NEAR(far.deficit[1], 0.05f, 1e-6);
  EXPECT_EQ(far.deficit[2], 0.0f);

  // The reason heatmap: the same cells per GPU; GPU 1 did not throttle.
  const ThrottleHeatmapGeometry h = buildThrottleHeatmap(v, TimeMapping{0, 200, 20});
  ASSERT_EQ(h.rows, 2u);
  ASSERT_EQ(h.columns, 20u);
  EXPECT_FLOAT_EQ(h.deficit[5], 0.25f);
  EXPECT_EQ(h.reasons[12], throttle::kSwThermal);
  EXPECT_EQ(h.deficit[20 + 5], 0.0f);
}

TEST(ThrottleStrip, TouchingSegmentsAtOneClockAreOnePiece) {
  GpuThrottle g;
  g.gpu = 0;
  g.reference_clock_mhz = 1980;
  // Held at 1,845 MHz for three samples, then one sample lower, then a gap, then 1,845 again.
  g.segments = {seg(0, 50, 1845, throttle::kSwPowerCap), seg(50, 100, 1845, throttle::kSwPowerCap),
                seg(100, 150, 1845, throttle::kSwPowerCap),
                seg(150, 200, 1830, throttle::kSwPowerCap),
                seg(300, 350, 1845, throttle::kSwPowerCap)};
  const RunThrottleView v = makeThrottleView({g}, 1);
  ASSERT_EQ(v.gpus[0].pieces.size(), 3u);
  EXPECT_EQ(v.gpus[0].pieces[0].t0, 0);
  EXPECT_EQ(v.gpus[0].pieces[0].t1, 150);
  EXPECT_EQ(v.gpus[0].pieces[1].t0, 150);
  EXPECT_EQ(v.gpus[0].pieces[2].t0, 300);
  EXPECT_FLOAT_EQ(v.gpus[0].pieces[1].deficit, static_cast<float>((1980.0 - 1830.0) / 1980.0));
}

TEST(ThrottleStrip, StrengthFollowsTheDeficit) {
  // 0.25 + 0.75 sqrt(deficit / 20 %), at most 1.
  EXPECT_EQ(throttleIntensity(0.0), 0.0);
  EXPECT_DOUBLE_EQ(throttleIntensity(0.05), 0.25 + 0.75 * 0.5);
  EXPECT_DOUBLE_EQ(throttleIntensity(0.2), 1.0);
  EXPECT_DOUBLE_EQ(throttleIntensity(0.6), 1.0);
  const Theme t = Theme::light();
  const QColor bg(255, 255, 255);
  const QColor hue = t.reasonColor(throttle::kSwPowerCap);  // 0xffa800
  EXPECT_EQ(throttleCellColor(t, throttle::kSwPowerCap, 0.25, bg), QColor(hue.rgb()));
  // A quarter of the full deficit: 62.5 % of the way from white to the hue.
  const QColor half = throttleCellColor(t, throttle::kSwPowerCap, 0.05, bg);
  EXPECT_EQ(half.red(), 255);
  EXPECT_EQ(half.green(), static_cast<int>(std::lround(255 + (0xa8 - 255) * 0.625)));
  EXPECT_EQ(half.blue(), static_cast<int>(std::lround(255 + (0 - 255) * 0.625)));
}

TEST(ThrottleStrip, NextAndPreviousIntervalOfOneGpuOrAny) {
  RunThrottleView v;
  v.gpus.resize(3);
  v.gpus[0].intervals = {interval(0, 500, 600), interval(0, 800, 850)};
  v.gpus[2].intervals = {interval(2, 200, 250)};
  auto start = [](const ThrottleJump& j) { return j.interval ? j.interval->start_ns : -1; };
  ThrottleJump j = findThrottleInterval(v, -1, 0, true);
  EXPECT_EQ(j.gpu, 2);
  EXPECT_EQ(start(j), 200);
  j = findThrottleInterval(v, -1, 200, true);
  EXPECT_EQ(j.gpu, 0);
  EXPECT_EQ(start(j), 500);
  EXPECT_EQ(start(findThrottleInterval(v, -1, 500, true)), 800);
  EXPECT_EQ(findThrottleInterval(v, -1, 800, true).interval, nullptr);
  EXPECT_EQ(start(findThrottleInterval(v, -1, 800, false)), 500);
  EXPECT_EQ(start(findThrottleInterval(v, -1, 500, false)), 200);
  EXPECT_EQ(findThrottleInterval(v, -1, 200, false).interval, nullptr);
  // One GPU only.
  EXPECT_EQ(start(findThrottleInterval(v, 0, 0, true)), 500);
  EXPECT_EQ(findThrottleInterval(v, 1, 0, true).interval, nullptr);
  EXPECT_EQ(start(findThrottleInterval(v, 2, 900, false)), 200);
  // The interval at a time.
  EXPECT_EQ(throttleIntervalAt(v.gpus[0], 550)->start_ns, 500);
  EXPECT_EQ(throttleIntervalAt(v.gpus[0], 600), nullptr);  // end excluded
  EXPECT_EQ(throttleIntervalAt(v.gpus[0], 100), nullptr);
}

TEST(ThrottleStrip, ReasonsAreNamedOnce) {
  EXPECT_EQ(throttleReasonsText(throttle::kSwPowerCap | throttle::kSwThermal | throttle::kGpuIdle),
            QStringLiteral("SW power cap, SW thermal slowdown"));
  ThrottleInterval iv = interval(0, 0, 2'500'000'000);
  iv.recorded_reasons = throttle::kSwPowerCap;
  iv.mean_clock_mhz = 1500;
  iv.deficit_mhz_s = 1200;
  const QString text = throttleIntervalText(iv, 2000);
  EXPECT_EQ(text.count(QStringLiteral("SW power cap")), 1) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("25.0 % below"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("1,200 MHz·s")) || text.contains("1200 MHz·s"))
      << text.toStdString();
}

TEST(CounterRange, ClocksAndTemperaturesAreFittedPowerAndUtilizationStartAtZero) {
  // SM clock 1,750..1,980 MHz: 5 % of the 230 MHz span on each side, ends rounded outward to
  // tens (a tenth of the padded span's decade).
  ValueRange r = counterRange("sm_clock_mhz", "MHz", 1750, 1980, true);
  EXPECT_DOUBLE_EQ(r.min, 1730);
  EXPECT_DOUBLE_EQ(r.max, 2000);
  EXPECT_TRUE(r.fitted);
  // Not fitted (View > Counter Y Range > from zero): 0 to the maximum plus 5 %.
  r = counterRange("sm_clock_mhz", "MHz", 1750, 1980, false);
  EXPECT_DOUBLE_EQ(r.min, 0);
  EXPECT_DOUBLE_EQ(r.max, 1980 * 1.05);
  EXPECT_FALSE(r.fitted);
  // Temperature 60..83 C: pad 1.15, 58.85..84.15 rounded to whole degrees.
  r = counterRange("temp_c", "C", 60, 83, true);
  EXPECT_DOUBLE_EQ(r.min, 58);
  EXPECT_DOUBLE_EQ(r.max, 85);
  EXPECT_TRUE(r.fitted);
  // Power stays zero-based, utilization 0..100.
  r = counterRange("power_w", "W", 200, 700, true);
  EXPECT_DOUBLE_EQ(r.min, 0);
  EXPECT_DOUBLE_EQ(r.max, 735);
  EXPECT_FALSE(r.fitted);
  r = counterRange("util_pct", "%", 40, 90, true);
  EXPECT_DOUBLE_EQ(r.min, 0);
  EXPECT_DOUBLE_EQ(r.max, 100);
  // A constant clock still gets a range around it.
  r = counterRange("sm_clock_mhz", "MHz", 1980, 1980, true);
  EXPECT_LT(r.min, 1980);
  EXPECT_GT(r.max, 1980);
}

class ThrottleRows : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir();
    test::writeSyntheticRun(test::makeSyntheticRun(), dir->path() / "run.h5");
    run = RunFile::open(dir->path() / "run.h5");
  }
  static void TearDownTestSuite() {
    run.reset();
    delete dir;
  }
  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};
test::TempDir* ThrottleRows::dir = nullptr;
std::shared_ptr<const RunFile> ThrottleRows::run;

TEST_F(ThrottleRows, StripUnderEachGpuHeaderAndTheReasonHeatmap) {
  RowPlanOptions o;
  o.throttleStrip = true;
  const std::vector<TrackRow> rows = planRows({run}, {}, {}, o);
  // run header, then per GPU: header, strip, 4 counters.
  ASSERT_GE(rows.size(), 1u + 4u * 6u);
  for (int g = 0; g < 4; ++g) {
    const TrackRow& h = rows[static_cast<size_t>(1 + 6 * g)];
    const TrackRow& s = rows[static_cast<size_t>(2 + 6 * g)];
    ASSERT_EQ(h.kind(), RowKind::GroupHeader);
    ASSERT_EQ(s.kind(), RowKind::ThrottleStrip) << g;
    EXPECT_EQ(*s.as<ThrottleStripRow>(), (ThrottleStripRow{0, g}));
    EXPECT_EQ(s.group, h.key);
    EXPECT_EQ(s.key, rowkey::throttle(0, g));
    EXPECT_EQ(s.height, 10);
    EXPECT_EQ(rows[static_cast<size_t>(3 + 6 * g)].kind(), RowKind::Counter);
  }
  // Hidden in the tree state: gone.
  TreeState t;
  t.shown[rowkey::throttle(0, 1)] = false;
  EXPECT_EQ(planRows({run}, t, {}, o).size(), rows.size() - 1);
  // Off: none.
  for (const TrackRow& r : planRows({run}, {}, {}, {}))
    EXPECT_NE(r.kind(), RowKind::ThrottleStrip);

  // The heatmap's "Throttling" choice: one reason heatmap row as high as a metric's.
  o.heatmap = true;
  o.heatmapMetric = kThrottleHeatmapMetric;
  const std::vector<TrackRow> heat = planRows({run}, {}, {}, o);
  ASSERT_EQ(heat[1].kind(), RowKind::ThrottleHeatmap);
  EXPECT_EQ(*heat[1].as<ThrottleHeatmapRow>(), (ThrottleHeatmapRow{0}));
  EXPECT_EQ(heat[1].height, 4 * heatmapRowHeight(4));
  // Figures in heatmap mode: after the metrics' heatmaps.
  RowPlanOptions f;
  f.style = RowStyle::Figure;
  f.heatmap = true;
  f.throttleHeatmap = true;
  const std::vector<TrackRow> fig =
      planRows({run}, figureTreeState(*run, 0, {{}, {"temp_c"}, false, false}), {}, f);
  ASSERT_EQ(fig.size(), 2u);
  EXPECT_EQ(fig[0].kind(), RowKind::Heatmap);
  EXPECT_EQ(fig[1].kind(), RowKind::ThrottleHeatmap);
}

// The tiles a frame of one heatmap row over the whole run misses, and the row's range
// (TimelineRenderer::prepare).
std::pair<std::vector<TileKey>, ValueRange> prepareHeatmap(TimelineRenderer& r, const RunFile& run,
                                                           int metric, const TileFetch& fetch) {
  TrackRow row;
  row.content = HeatmapRow{0, metric, false};
  std::vector<TimelineRenderer::RowTarget> frame{
      {&row, TimeMapping{run.info().start_ns, run.info().end_ns, 400}, {}}};
  std::vector<TileKey> missing = r.prepare(frame, fetch, QFont());
  return {std::move(missing), frame[0].range.value_or(ValueRange{})};
}

// The timeline's renderer never reads the file in paint: the whole-run tiles a value range comes
// from are listed, first, in what the prepare step misses, for the view's request; the range
// meanwhile is the placeholder, and once the loader thread has them the range is the one an
// exporter (which loads on its own thread) gets.
TEST_F(ThrottleRows, AScreenRendererQueuesTheTilesOfItsRangesInsteadOfReadingThem) {
  const int power = metricIndex(*run, "power_w");
  ASSERT_GE(power, 0);
  TileStore loading;
  loading.addRun(run);
  TimelineRenderer exporter(loading);
  const auto [none, whole] =
      prepareHeatmap(exporter, *run, power, [&](const TileKey& k) { return loading.load(k); });
  EXPECT_LT(whole.min, whole.max);
  EXPECT_TRUE(none.empty());

  TileStore store;
  store.addRun(run);
  TimelineRenderer screen(store, TimelineRenderer::TileReads::Queue);
  const TileFetch find = [&store](const TileKey& k) { return store.find(k); };
  const auto [missing, first] = prepareHeatmap(screen, *run, power, find);
  EXPECT_EQ(store.bytesInUse(), 0u);  // nothing was read on this thread
  EXPECT_DOUBLE_EQ(first.min, 0);     // no value yet: the placeholder range
  EXPECT_DOUBLE_EQ(first.max, 1);
  ASSERT_FALSE(missing.empty());
  const int top = static_cast<int>(run->series().grid.levels()) - 1;
  for (const TileKey& k : missing) {
    EXPECT_EQ(k.kind, TileKind::Heatmap);
    EXPECT_EQ(k.metric, power);
  }
  EXPECT_EQ(missing.front().level, top);  // the range's tiles first

  store.request(missing);
  for (int i = 0; i < 500 && store.pending() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(store.pending(), 0u);
  const auto [again, after] = prepareHeatmap(screen, *run, power, find);
  EXPECT_DOUBLE_EQ(after.min, whole.min);
  EXPECT_DOUBLE_EQ(after.max, whole.max);
  EXPECT_TRUE(again.empty());  // complete now, and cached
}

// A pan or zoom repaint builds the visible counter rows' geometry and images on two threads
// first (prepare); painting then reads no tile, and every row comes out as it does when it is
// built on one thread.
TEST_F(ThrottleRows, RowsPreparedOnTwoThreadsPaintAsRowsBuiltInPaint) {
  int argc = 1;
  char name[] = "test";
  char* argv[] = {name, nullptr};
  std::unique_ptr<QGuiApplication> app;
  if (!QGuiApplication::instance()) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    app = std::make_unique<QGuiApplication>(argc, argv);
  }
  TileStore store;
  store.addRun(run);
  std::vector<TrackRow> rows;
  for (const TrackRow& r : planRows({run}, {}, {}, {}))
    if (r.kind() == RowKind::Counter) rows.push_back(r);
  ASSERT_GE(rows.size(), 8u);
  const int64_t t0 = run->info().start_ns, t1 = run->info().end_ns;
  int fetches = 0;
  const TileFetch load = [&store, &fetches](const TileKey& k) {
    ++fetches;
    return store.load(k);
  };
  for (const TimeMapping display :
       {TimeMapping{t0, t1, 700}, TimeMapping{t0, t0 + (t1 - t0) / 7, 700}}) {
    TimelineRenderer serial(store), prepared(store);
    // Two threads: rows drawn into images; one: geometry only, rasterized in paint.
    std::vector<TimelineRenderer::RowTarget> images, plain;
    for (const TrackRow& r : rows) {
      images.push_back({&r, prepared.displays().contentMapping(r, display), QSize(700, r.height)});
      plain.push_back({&r, serial.displays().contentMapping(r, display), QSize()});
    }
    fetches = 0;
    EXPECT_TRUE(prepared.prepare(images, load, QFont()).empty());  // everything loads here
    EXPECT_GT(fetches, 0);
    EXPECT_TRUE(serial.prepare(plain, load, QFont()).empty());
    fetches = 0;
    for (const TrackRow& r : rows) {
      QImage a(700, r.height, QImage::Format_RGB32), b(700, r.height, QImage::Format_RGB32);
      const QRectF rect(0, 0, 700, r.height);
      {
        QPainter p(&b);
        prepared.paintContent(p, r, rect, prepared.displays().contentMapping(r, display), {});
      }
      {
        QPainter p(&a);
        serial.paintContent(p, r, rect, serial.displays().contentMapping(r, display), {});
      }
      EXPECT_EQ(fetches, 0) << r.label.toStdString();  // built before paint
      fetches = 0;
      EXPECT_TRUE(a == b) << r.label.toStdString();
    }
  }
}

}  // namespace
}  // namespace wl
