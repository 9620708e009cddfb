// SPDX-License-Identifier: GPL-3.0-or-later
// Geometry from known data, without pixels: spikes survive every zoom, gaps stay gaps, busy
// fractions of known kernel patterns are exact.
#include <gtest/gtest.h>

#include <QImage>
#include <QPainter>

#include <cmath>
#include <random>

#include "loaders/format/run_writer.h"
#include "support/temp_dir.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/render/geometry.h"
#include "widgets/timeline/render/raster_track.h"
#include "widgets/timeline/render/track_painter.h"

namespace wl {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kHour = 3600'000'000'000;
constexpr int64_t kDt = 50'000'000;  // 20 Hz

// One GPU-hour of power at 20 Hz: 300 W, a single 950 W sample at 1234.5 s, and no samples
// between 2000 s and 2100 s. One kernel track: a 1 us kernel every 4 us during [10 s, 10.004 s)
// and one 2 s kernel at 100 s.
class GeometryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir();
    RunInfo info;
    info.name = "geometry";
    info.start_ns = kT0;
    info.end_ns = kT0 + kHour;
    info.sample_interval_s = 0.05;
    TelemetryTable t;
    TelemetryColumn p{"power_w", {}};
    for (int64_t i = 0; i * kDt <= kHour; ++i) {
      const int64_t ts = i * kDt;
      if (ts > 2000'000'000'000 && ts < 2100'000'000'000) continue;
      t.t_ns.push_back(kT0 + ts);
      p.values.push_back(ts == 1234'500'000'000 ? 950.0 : 300.0);
    }
    t.columns = {p};
    StringTable names;
    KernelTrack tr{0, 7, 0, {}, {}, {}};
    for (int i = 0; i < 1000; ++i)
      tr.events.push_back({kT0 + 10'000'000'000 + int64_t{i} * 4000, 1000, names.intern("k"),
                           KernelClass::Compute, GpuEventKind::Kernel, i});
    tr.events.push_back({kT0 + 100'000'000'000, 2'000'000'000, names.intern("long"),
                         KernelClass::Communication, GpuEventKind::Kernel, -1});
    RunWriter w(dir->path() / "g.h5", info, std::vector<GpuInfo>(1), {});
    w.addGpuTelemetry(0, t);
    w.addKernelTrack(tr, names);
    w.finish();
    run = RunFile::open(dir->path() / "g.h5");
  }
  static void TearDownTestSuite() {
    run.reset();
    delete dir;
  }
  void SetUp() override { store.addRun(run); }

  TileFetch loadAll() {
    return [this](const TileKey& k) { return store.load(k); };
  }
  CounterGeometry counter(TimeMapping map) {
    return buildCounterGeometry(
        *run, CounterSource{0, 0, 0, run->series().gapThresholdNs[0], false}, map, loadAll());
  }

  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
  TileStore store;
};

test::TempDir* GeometryTest::dir = nullptr;
std::shared_ptr<const RunFile> GeometryTest::run;

TEST_F(GeometryTest, OneSampleSpikeSurvivesFullZoomOut) {
  for (double width : {1920.0, 800.0, 100.0}) {
    const TimeMapping map{kT0, kT0 + kHour, width};
    const CounterGeometry g = counter(map);
    ASSERT_FALSE(g.raw()) << width;
    const auto col = static_cast<size_t>(map.x(kT0 + 1234'500'000'000));
    float peak = 0;
    size_t at = 0;
    for (size_t c = 0; c < g.hi.size(); ++c)
      if (!std::isnan(g.hi[c]) && g.hi[c] > peak) peak = g.hi[c], at = c;
    EXPECT_EQ(peak, 950.0f) << "width " << width;
    EXPECT_LE(std::abs(static_cast<long>(at) - static_cast<long>(col)), 1) << "width " << width;
    EXPECT_EQ(g.visibleMax, 950.0f);
    EXPECT_EQ(g.visibleMin, 300.0f);
  }
}

TEST_F(GeometryTest, SpikeSurvivesAtEveryZoomLevelAroundIt) {
  const int64_t spike = kT0 + 1234'500'000'000;
  for (int64_t span = kHour; span >= 1'000'000'000; span /= 3) {
    const TimeMapping map{spike - span / 3, spike - span / 3 + span, 1920};
    const CounterGeometry g = counter(map);
    float peak = 0;
    if (g.raw()) {
      for (const auto& p : g.points)
        peak = std::max(peak, p.v);
    } else {
      for (float h : g.hi)
        if (!std::isnan(h)) peak = std::max(peak, h);
    }
    EXPECT_EQ(peak, 950.0f) << "span " << span << " level " << g.level;
  }
}

// The heatmap's largest and mean values per column around the one 950 W sample: the column
// holding it shows 950 W as the largest and between 300 and 950 W as the mean; every other column
// shows 300 W both ways, and the 100 s without samples shows none.
TEST_F(GeometryTest, HeatmapMaxAndMeanAroundTheSpike) {
  const TimeMapping map{kT0, kT0 + kHour, 1920};
  const HeatmapGeometry mx = buildHeatmapGeometry(*run, 0, 0, true, map, loadAll());
  const HeatmapGeometry mean = buildHeatmapGeometry(*run, 0, 0, false, map, loadAll());
  const auto spike = static_cast<size_t>(map.x(kT0 + 1234'500'000'000));
  const auto gap = static_cast<size_t>(map.x(kT0 + 2050'000'000'000));
  size_t at950 = 0;
  for (size_t c = 0; c < mx.columns; ++c) {
    if (c == gap) {
      EXPECT_TRUE(std::isnan(mx.values[c]) && std::isnan(mean.values[c]));
      continue;
    }
    if (mx.values[c] == 950.0f) {
      ++at950;
      EXPECT_LE(std::abs(static_cast<long>(c) - static_cast<long>(spike)), 1);
      EXPECT_GT(mean.values[c], 300.0f);
      EXPECT_LT(mean.values[c], 950.0f);
    } else if (!std::isnan(mx.values[c])) {
      EXPECT_EQ(mx.values[c], 300.0f) << c;
      EXPECT_EQ(mean.values[c], 300.0f) << c;
    }
  }
  EXPECT_GE(at950, 1u);
  EXPECT_LE(at950, 2u);
}

// A heatmap built into an earlier frame's storage (of another size, or full of other values) is
// the heatmap built fresh: the gap's columns are NaN again and the others the bucket means.
TEST_F(GeometryTest, HeatmapIntoReusedStorageIsTheFreshOne) {
  for (double width : {1920.0, 333.0}) {
    const TimeMapping map{kT0 + 1900'000'000'000, kT0 + 2200'000'000'000, width};
    const HeatmapGeometry fresh = buildHeatmapGeometry(*run, 0, 0, false, map, loadAll());
    ASSERT_EQ(fresh.columns, static_cast<size_t>(width));
    size_t gap = 0;
    for (float v : fresh.values) {
      if (std::isnan(v))
        ++gap;
      else
        EXPECT_EQ(v, 300.0f);
    }
    // 100 s of 300 s without samples: about a third of the columns.
    EXPECT_NEAR(static_cast<double>(gap) / width, 1.0 / 3, 0.02) << width;
    for (size_t n : {size_t{0}, size_t{7}, fresh.values.size(), 3 * fresh.values.size()}) {
      const HeatmapGeometry reused =
          buildHeatmapGeometry(*run, 0, 0, false, map, loadAll(), std::vector<float>(n, 7.0f));
      ASSERT_EQ(reused.values.size(), fresh.values.size()) << n;
      for (size_t c = 0; c < fresh.values.size(); ++c)
        ASSERT_TRUE(reused.values[c] == fresh.values[c] ||
                    (std::isnan(reused.values[c]) && std::isnan(fresh.values[c])))
            << "storage " << n << ", column " << c;
    }
  }
}

TEST_F(GeometryTest, GapStaysAGapInEnvelopeAndRawModes) {
  // Envelope: columns strictly inside the 100 s gap have no data.
  {
    const TimeMapping map{kT0, kT0 + kHour, 1920};
    const CounterGeometry g = counter(map);
    const double x0 = map.x(kT0 + 2001'000'000'000), x1 = map.x(kT0 + 2099'000'000'000);
    size_t empty = 0, total = 0;
    for (auto c = static_cast<size_t>(std::ceil(x0)) + 1; c + 1 < static_cast<size_t>(x1);
         ++c, ++total)
      empty += std::isnan(g.lo[c]) ? 1 : 0;
    EXPECT_GT(total, 40u);
    EXPECT_EQ(empty, total);
    EXPECT_FALSE(std::isnan(g.lo[static_cast<size_t>(map.x(kT0 + 1900'000'000'000))]));
  }
  // Raw: the line breaks at the gap (a new segment starts at the first sample after it).
  {
    const TimeMapping map{kT0 + 1999'000'000'000, kT0 + 2101'000'000'000, 20000};
    const CounterGeometry g = counter(map);
    ASSERT_TRUE(g.raw());
    ASSERT_EQ(g.segmentStarts.size(), 2u);
    const auto& after = g.points[g.segmentStarts[1]];
    EXPECT_NEAR(after.x, map.x(kT0 + 2100'000'000'000), 1e-6);
  }
}

TEST_F(GeometryTest, LevelChoiceFollowsPixelWidth) {
  const LodGrid& grid = run->series().grid;
  EXPECT_EQ(chooseLevel(grid, static_cast<double>(grid.widths_ns[0]) - 1), -1);
  EXPECT_EQ(chooseLevel(grid, static_cast<double>(grid.widths_ns[0])), 0);
  EXPECT_EQ(chooseLevel(grid, static_cast<double>(grid.widths_ns[1]) * 1.5), 1);
  EXPECT_EQ(chooseLevel(grid, 1e30), static_cast<int>(grid.levels()) - 1);
}

TEST_F(GeometryTest, BusyFractionOfAKnownKernelPatternFromPyramid) {
  // 10.000 s to 10.004 s holds 1000 kernels of 1 us every 4 us: 25% busy. A view 40 ms wide at
  // 400 px puts 100 us in a pixel; the 40 pixels over the pattern are 25% busy compute.
  const TimeMapping map{kT0 + 9'980'000'000, kT0 + 10'020'000'000, 400};
  const KernelGeometry g = buildKernelGeometry(*run, KernelSource{0, 0}, map, loadAll());
  const auto c0 = static_cast<size_t>(std::ceil(map.x(kT0 + 10'000'000'000)));
  const auto c1 = static_cast<size_t>(std::floor(map.x(kT0 + 10'004'000'000)));
  ASSERT_GT(c1, c0 + 30);
  for (size_t c = c0 + 1; c + 1 < c1; ++c)
    EXPECT_NEAR(g.busy[0][c], 0.25, 0.03) << "column " << c << " level " << g.level;
  EXPECT_NEAR(g.busy[0][c0 - 5], 0.0, 1e-6);
  EXPECT_TRUE(g.boxes.empty());
}

TEST_F(GeometryTest, BusyFractionFromRawEventsWhenZoomedIn) {
  // 8 us over 800 px: 10 ns per pixel; kernels are 100 px wide boxes.
  const TimeMapping map{kT0 + 10'000'000'000, kT0 + 10'000'008'000, 800};
  const KernelGeometry g = buildKernelGeometry(*run, KernelSource{0, 0}, map, loadAll());
  ASSERT_TRUE(g.raw());
  ASSERT_EQ(g.boxes.size(), 2u);
  EXPECT_NEAR(g.boxes[0].x0, 0.0, 1e-9);
  EXPECT_NEAR(g.boxes[0].x1, 100.0, 1e-9);
  EXPECT_NEAR(g.boxes[1].x0, 400.0, 1e-9);
  // Sub-pixel events become busy fractions: 40 ns over 4 ms per pixel... zoom out to 1 us/px.
  const TimeMapping wide{kT0 + 10'000'000'000, kT0 + 10'000'400'000, 400};
  const KernelGeometry w = buildKernelGeometry(*run, KernelSource{0, 0}, wide, loadAll());
  ASSERT_TRUE(w.raw());
  double busy = 0;
  for (float f : w.busy[0])
    busy += f;
  // 100 kernels of 1 us in 400 us: exactly their boxes' width in pixels (1 px each) or busy.
  EXPECT_NEAR(busy + static_cast<double>(w.boxes.size()), 100.0, 1e-3);
}

TEST_F(GeometryTest, LongKernelIsOneBoxAcrossRawTiles) {
  const TimeMapping map{kT0 + 99'000'000'000, kT0 + 103'000'000'000, 4000};  // 1 ms per pixel
  const KernelGeometry g = buildKernelGeometry(*run, KernelSource{0, 0}, map, loadAll());
  if (g.raw()) {
    ASSERT_EQ(g.boxes.size(), 1u);
    EXPECT_NEAR(g.boxes[0].x1 - g.boxes[0].x0, 2000.0, 1e-6);
  } else {
    double comm = 0;
    for (float f : g.busy[1])
      comm += f;
    EXPECT_NEAR(comm, 2000.0, 2.0);  // 2 s of 1 ms pixels
  }
}

TEST_F(GeometryTest, MissingTilesAreReportedAndCoarserLevelsStandIn) {
  // Only the top level is in memory: the geometry uses it and lists the wanted tiles.
  const LodGrid& grid = run->series().grid;
  const int top = static_cast<int>(grid.levels()) - 1;
  store.load(TileKey{0, TileKind::CounterLod, 0, 0, top, 0});
  const TileFetch memoryOnly = [this](const TileKey& k) { return store.find(k); };
  const TimeMapping map{kT0, kT0 + kHour / 10, 1920};
  std::vector<TileKey> missing;
  const CounterGeometry g = buildCounterGeometry(*run, CounterSource{0, 0, 0, 1'000'000'000, false},
                                                 map, memoryOnly.noting(&missing));
  EXPECT_FALSE(g.complete);
  EXPECT_EQ(g.level, top);
  ASSERT_FALSE(missing.empty());
  // Only the wanted level's tiles are noted, each once, not the coarser levels tried meanwhile.
  const int want = chooseLevel(grid, map.nsPerPx());
  for (const TileKey& k : missing) {
    EXPECT_EQ(k.level, want);
    EXPECT_EQ(k.kind, want < 0 ? TileKind::CounterRaw : TileKind::CounterLod);
  }
  const auto [first, last] =
      std::minmax_element(missing.begin(), missing.end(),
                          [](const TileKey& a, const TileKey& b) { return a.index < b.index; });
  EXPECT_EQ(static_cast<size_t>(last->index - first->index + 1), missing.size());
  // The same fetch, quiet, draws the same and notes nothing.
  std::vector<TileKey> none;
  const CounterGeometry q = buildCounterGeometry(*run, CounterSource{0, 0, 0, 1'000'000'000, false},
                                                 map, memoryOnly.noting(&none).quiet());
  EXPECT_EQ(q.level, top);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace wl

namespace wl {
namespace {

// Dense samples are drawn as their staircase's per-column envelope: each sample holds up to the
// next one of its segment, the next sample's column holds both values, a gap stays empty.
TEST(SamplesAsEnvelope, StaircaseColumnsByHand) {
  CounterGeometry g;
  g.mode = CounterGeometry::Mode::Samples;
  g.points = {{0.5, 1.f}, {3.2, 5.f}, {6.0, 2.f}, {10.4, 7.f}};
  g.segmentStarts = {0, 3};  // a gap between x = 6 and x = 10.4
  const CounterGeometry e = samplesAsEnvelope(g, 12);
  ASSERT_FALSE(e.raw());
  ASSERT_EQ(e.lo.size(), 12u);
  const float n = kNaNf;
  const std::vector<float> lo = {1, 1, 1, 1, 5, 5, 2, n, n, n, 7, n};
  const std::vector<float> hi = {1, 1, 1, 5, 5, 5, 5, n, n, n, 7, n};
  for (size_t c = 0; c < 12; ++c) {
    SCOPED_TRACE(c);
    if (std::isnan(lo[c])) {
      EXPECT_TRUE(std::isnan(e.lo[c]));
      EXPECT_TRUE(std::isnan(e.hi[c]));
    } else {
      EXPECT_EQ(e.lo[c], lo[c]);
      EXPECT_EQ(e.hi[c], hi[c]);
    }
  }
}

}  // namespace
}  // namespace wl

namespace wl {
namespace {

// The raster path colours a heatmap with one pixel per cell in place; the pixels must be those of
// painting it over the row's background (the path every other size takes), node separators too.
TEST(HeatmapRaster, InPlaceEqualsPaintedOverTheBackground) {
  HeatmapGeometry g;
  g.rows = 6;
  g.columns = 7;
  for (size_t r = 0; r < g.rows; ++r)
    for (size_t c = 0; c < g.columns; ++c)
      g.values.push_back((r + c) % 5 == 0 ? kNaNf : static_cast<float>(30.0 + 7.5 * (r * c % 9)));
  const std::vector<size_t> separators{2, 4};
  const ValueRange range{25.0, 95.0};
  for (const Theme& theme : {Theme::light(), Theme::dark()})
    for (QSize size : {QSize(7, 6), QSize(7, 13), QSize(9, 6)}) {
      QImage inPlace(size, QImage::Format_RGB32), painted(size, QImage::Format_RGB32);
      inPlace.fill(Qt::magenta);  // nothing of it may show through
      rasterHeatmap(inPlace, g, range, theme, separators);
      painted.fill(theme.trackAltBackground);
      {
        QPainter p(&painted);
        paintHeatmap(p, QRectF(0, 0, size.width(), size.height()), g, range, theme, separators);
      }
      EXPECT_EQ(inPlace, painted) << size.width() << "x" << size.height();
    }
  // And the colours are the table's: the cell (1, 1) = 37.5 and a NaN cell.
  QImage one(7, 6, QImage::Format_RGB32);
  rasterHeatmap(one, g, range, Theme::light(), {});
  const int idx = static_cast<int>((37.5 - 25.0) / 70.0 * 255.0 + 0.5);
  EXPECT_EQ(one.pixel(1, 1), Theme::light().heat(idx / 255.0).rgb());
  EXPECT_EQ(one.pixel(0, 0), Theme::light().trackAltBackground.rgb());
}

// Every cell's colour is the table's entry at round((v - min) / span * 255), computed with the
// division, also for values at and beside each rounding boundary and outside the range.
TEST(HeatmapRaster, ColourIndexIsTheDivisionsAtEveryBoundary) {
  const ValueRange range{23.7, 91.3};
  const double span = range.max - range.min;
  HeatmapGeometry g;
  g.rows = 1;
  for (int k = 0; k <= 256; ++k) {
    const auto at = static_cast<float>(range.min + span * (k - 0.5) / 255.0);
    for (float v : {at, std::nextafter(at, -1e9f), std::nextafter(at, 1e9f)})
      g.values.push_back(v);
  }
  for (float v : {-5.0f, 0.0f, 1e6f, 50.0f, 23.7f, 91.3f})
    g.values.push_back(v);
  g.columns = g.values.size();
  QImage img(static_cast<int>(g.columns), 1, QImage::Format_RGB32);
  const Theme theme = Theme::dark();
  rasterHeatmap(img, g, range, theme, {});
  for (size_t c = 0; c < g.columns; ++c) {
    const double v = g.values[c];
    const int idx = static_cast<int>(std::clamp((v - range.min) / span, 0.0, 1.0) * 255.0 + 0.5);
    ASSERT_EQ(img.pixel(static_cast<int>(c), 0), theme.heat(idx / 255.0).rgb()) << "v = " << v;
  }
}

// The four-lane path's colours are the division's on many values in ranges near zero and far from
// it (where only the exact path runs), on rows whose length is not a multiple of four, NaN and
// values outside the range included.
TEST(HeatmapRaster, ColourIndexIsTheDivisionsOnRandomValues) {
  std::mt19937 rng(20261128);
  const Theme theme = Theme::light();
  for (const ValueRange range :
       {ValueRange{0, 700}, ValueRange{23.7, 91.3}, ValueRange{250, 700}, ValueRange{-40, 0.5},
        ValueRange{1e6, 1e6 + 3}, ValueRange{5, 5}}) {
    const double span = range.max > range.min ? range.max - range.min : 1.0;
    std::uniform_real_distribution<double> u(range.min - 0.1 * span, range.max + 0.1 * span);
    HeatmapGeometry g;
    g.rows = 3;
    g.columns = 1001;
    for (size_t i = 0; i < g.rows * g.columns; ++i)
      g.values.push_back(i % 97 == 0 ? kNaNf : static_cast<float>(u(rng)));
    QImage img(static_cast<int>(g.columns), static_cast<int>(g.rows), QImage::Format_RGB32);
    rasterHeatmap(img, g, range, theme, {});
    for (size_t r = 0; r < g.rows; ++r)
      for (size_t c = 0; c < g.columns; ++c) {
        const double v = g.values[r * g.columns + c];
        const QRgb want =
            std::isnan(v)
                ? theme.trackAltBackground.rgb()
                : theme
                      .heat(static_cast<int>(std::clamp((v - range.min) / span, 0.0, 1.0) * 255.0 +
                                             0.5) /
                            255.0)
                      .rgb();
        ASSERT_EQ(img.pixel(static_cast<int>(c), static_cast<int>(r)), want)
            << "range " << range.min << ".." << range.max << ", v = " << v;
      }
  }
}

// The kernel busy row: each column a stack of the classes' busy fractions, bottom up, each at
// least a pixel when above 0.2 %, clipped at the top; checked against painting the stack column
// by column (the old way) on random fractions, wide and narrow images, fewer columns than pixels.
TEST(KernelBusyRaster, StacksAsPaintedColumnByColumn) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 0.7f);
  for (const Theme& theme : {Theme::light(), Theme::dark()})
    for (const QSize size : {QSize(203, 24), QSize(64, 5), QSize(300, 1)}) {
      KernelGeometry g;
      for (auto& b : g.busy)
        for (int c = 0; c < 250; ++c)
          b.push_back(c % 11 == 0 ? 0.0f : c % 7 == 0 ? 0.001f : u(rng));
      QImage img(size, QImage::Format_RGB32);
      img.fill(Qt::magenta);
      rasterKernelBusy(img, g, theme);
      QImage want(size, QImage::Format_RGB32);
      want.fill(theme.trackAltBackground);
      for (int x = 0; x < size.width() && x < 250; ++x) {
        int base = size.height();
        double total = 0;
        for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
          const double f = std::min(1.0 - total, static_cast<double>(g.busy[cl][x]));
          if (f <= 0.002) continue;
          total += f;
          const int hh = std::max(1, static_cast<int>(std::lround(f * size.height())));
          const int top = std::max(0, base - hh);
          for (int y = top; y < base; ++y)
            want.setPixel(x, y, theme.kernelClass[cl].rgb());
          base = top;
        }
      }
      EXPECT_EQ(img, want) << size.width() << "x" << size.height();
    }
}

}  // namespace
}  // namespace wl
