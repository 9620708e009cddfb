// SPDX-License-Identifier: GPL-3.0-or-later
// The render path: geometry + paint of a 1920 px wide timeline into an image, with tiles in
// memory (what every pan and zoom repaint costs), at full zoom-out and zoomed in; plus the first
// frame of a freshly opened run (tiles read from disk), and a 1,024-GPU heatmap.
//
// Run: QT_QPA_PLATFORM=offscreen ./build/bench/bench_render
// The first run writes the benchmark inputs into the temp folder (a few minutes).
// WATTLINE_BENCH_SCALE=1e8 draws the same frames from the 10^8-kernel run (scale_run.h,
// kScale1e8: its first 16 GPUs and ranks, and its 1,024-GPU power heatmap).
#include <benchmark/benchmark.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <cstdlib>
#include <string_view>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "scale_run.h"
#include "widgets/matrix/matrix_frame.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/frame.h"
#include "widgets/timeline/render/timeline_renderer.h"
#include "widgets/timeline/render/track_painter.h"

namespace {

constexpr int kWidth = 1920;

bool scale1e8() {
  const char* v = std::getenv("WATTLINE_BENCH_SCALE");
  return v && std::string_view(v) == "1e8";
}
wl::bench::ScaleSpec timelineSpec() {
  return scale1e8() ? wl::bench::kScale1e8 : wl::bench::ScaleSpec{};
}
wl::bench::ScaleSpec heatmapSpec() {
  return scale1e8() ? wl::bench::kScale1e8 : wl::bench::ScaleSpec{1024, 3600, 20, 1, 0};
}

struct Scene {
  std::shared_ptr<const wl::RunFile> run;
  std::unique_ptr<wl::TileStore> store;
  std::unique_ptr<wl::TimelineRenderer> renderer;
  std::vector<wl::TrackRow> rows;
};

// 64 visible tracks: for 16 GPUs their 3 main counters, and the compute stream of 16 ranks.
Scene scene64() {
  Scene s;
  s.run = wl::RunFile::open(wl::bench::scaleRun(timelineSpec()));
  s.store = std::make_unique<wl::TileStore>();
  s.store->addRun(s.run);
  s.renderer = std::make_unique<wl::TimelineRenderer>(*s.store);
  for (int g = 0; g < 16; ++g)
    for (int m = 0; m < 3; ++m) {
      wl::TrackRow r;
      r.content = wl::CounterRow{0, g, m};
      r.height = 40;
      r.key = QStringLiteral("g%1m%2").arg(g).arg(m);
      r.label = QStringLiteral("metric");
      s.rows.push_back(r);
    }
  for (int k = 0; k < 16; ++k) {
    wl::TrackRow r;
    r.content = wl::KernelsRow{0, k, 2 * k};
    r.height = 24;
    r.key = QStringLiteral("k%1").arg(k);
    r.label = QStringLiteral("Stream 7");
    s.rows.push_back(r);
  }
  return s;
}

// As the timeline view paints: the frame planned (planFrame), every row's geometry and image
// built (prepareFrame: counters on two threads), then painted from the caches (paintFrame).
void paintRows(wl::TimelineRenderer& renderer, const std::vector<wl::TrackRow>& rows,
               const wl::TimeMapping& map, QImage& img, const wl::TileFetch& fetch) {
  wl::FrameSpec spec;
  spec.theme = renderer.style().theme;
  wl::FrameLayout f = wl::planFrame(rows, {map.t0, map.t1}, spec, QRectF(img.rect()));
  wl::prepareFrame(f, renderer, fetch);
  QPainter p(&img);
  wl::paintFrame(p, f, renderer);
}
void paintFrame(Scene& s, const wl::TimeMapping& map, QImage& img, const wl::TileFetch& fetch) {
  paintRows(*s.renderer, s.rows, map, img, fetch);
}

// The measured frame (a separate function so profilers can isolate it from the warm-up).
__attribute__((noinline)) void measuredFrame(Scene& s, const wl::TimeMapping& m, QImage& img,
                                             const wl::TileFetch& fetch) {
  s.renderer->bumpEpoch();
  paintFrame(s, m, img, fetch);
}

void renderAt(benchmark::State& state, double fraction) {
  static Scene s = scene64();
  const int64_t t0 = s.run->info().start_ns;
  const int64_t span =
      static_cast<int64_t>(static_cast<double>(s.run->info().end_ns - t0) * fraction);
  QImage img(kWidth + 200, 16 * 3 * 40 + 16 * 24, QImage::Format_RGB32);
  wl::TileStore& store = *s.store;
  const wl::TileFetch load = wl::loadingFetch(store);
  int64_t offset = 0;
  // Warm the tiles of the frames the loop draws.
  for (int i = 0; i < 8; ++i) {
    const wl::TimeMapping m{t0 + i * span / 64, t0 + i * span / 64 + span, kWidth};
    paintFrame(s, m, img, load);
  }
  int i = 0;
  for (auto _ : state) {
    // Pan a little each frame so geometry is recomputed (no cached frame), tiles stay in memory.
    offset = (i++ % 8) * span / 64;
    const wl::TimeMapping m{t0 + offset, t0 + offset + span, kWidth};
    measuredFrame(s, m, img, load);
  }
  state.counters["tracks"] = static_cast<double>(s.rows.size());
}

void BM_Render64_FullRun(benchmark::State& st) {
  renderAt(st, 1.0);
}
void BM_Render64_10min(benchmark::State& st) {
  renderAt(st, 600.0 / 3600);
}
void BM_Render64_30s(benchmark::State& st) {
  renderAt(st, 30.0 / 3600);
}
void BM_Render64_1s(benchmark::State& st) {
  renderAt(st, 1.0 / 3600);
}
void BM_Render64_10ms(benchmark::State& st) {
  renderAt(st, 0.01 / 3600);
}
BENCHMARK(BM_Render64_FullRun)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render64_10min)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render64_30s)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render64_1s)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render64_10ms)->Unit(benchmark::kMillisecond);

// Opening the run and painting the first full-run frame with tiles read from disk.
void BM_OpenAndFirstFrame64(benchmark::State& state) {
  const auto path = wl::bench::scaleRun(timelineSpec());
  QImage img(kWidth + 200, 16 * 3 * 40 + 16 * 24, QImage::Format_RGB32);
  for (auto _ : state) {
    Scene s;
    s.run = wl::RunFile::open(path);
    s.store = std::make_unique<wl::TileStore>();
    s.store->addRun(s.run);
    s.renderer = std::make_unique<wl::TimelineRenderer>(*s.store);
    Scene tmpl = scene64();
    s.rows = tmpl.rows;
    wl::TileStore& store = *s.store;
    const wl::TimeMapping m{s.run->info().start_ns, s.run->info().end_ns, kWidth};
    paintFrame(s, m, img, [&store](const wl::TileKey& k) { return store.load(k); });
  }
}
BENCHMARK(BM_OpenAndFirstFrame64)->Unit(benchmark::kMillisecond)->Iterations(3);

void heatmap(benchmark::State& state, double fraction, bool cold) {
  const auto path = wl::bench::scaleRun(heatmapSpec());
  static std::shared_ptr<const wl::RunFile> run = wl::RunFile::open(path);
  static wl::TileStore store;
  static const int idx = store.addRun(run);
  static wl::TimelineRenderer renderer(store);
  wl::TrackRow r;
  r.content = wl::HeatmapRow{idx, 0};
  r.height = 1024;
  r.key = QStringLiteral("heat");
  QImage img(kWidth + 200, 1024, QImage::Format_RGB32);
  const int64_t t0 = run->info().start_ns;
  const auto span = static_cast<int64_t>(static_cast<double>(run->info().end_ns - t0) * fraction);
  const wl::TileFetch load = wl::loadingFetch(store);
  int i = 0;
  const std::vector<wl::TrackRow> rows{r};
  // Warm the tiles of the frames below; for the cold frames, only the file's chunk caches (the
  // first read of the open file inflates its pyramid: BM_Heatmap1024_OpenAndFirstFrame measures
  // that), so that every repetition measures the same thing, tiles read from an open file.
  for (int w = 0; w < (cold ? 1 : 8); ++w) {
    const int64_t off = w * span / 64;
    paintRows(renderer, rows, wl::TimeMapping{t0 + off, t0 + off + span, kWidth}, img, load);
  }
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      store.clear();
      store.addRun(run);
      state.ResumeTiming();
    }
    const int64_t off = (i++ % 8) * span / 64;
    renderer.bumpEpoch();
    paintRows(renderer, rows, wl::TimeMapping{t0 + off, t0 + off + span, kWidth}, img, load);
  }
}
void BM_Heatmap1024_FullRun(benchmark::State& st) {
  heatmap(st, 1.0, false);
}
void BM_Heatmap1024_1min(benchmark::State& st) {
  heatmap(st, 60.0 / 3600, false);
}
void BM_Heatmap1024_FullRun_Cold(benchmark::State& st) {
  heatmap(st, 1.0, true);
}
// "Cold" above is cold tiles in an open file: HDF5 keeps the inflated chunks of the pyramid
// read by the first iteration, so later iterations copy them out of its cache. This is the
// first frame after opening the file (no tile and no chunk in memory; the file's bytes in the
// page cache): what a user waits for after File > Open, drawn synchronously as a figure does.
void BM_Heatmap1024_OpenAndFirstFrame(benchmark::State& state) {
  const auto path = wl::bench::scaleRun(heatmapSpec());
  QImage img(kWidth + 200, 1024, QImage::Format_RGB32);
  for (auto _ : state) {
    auto run = wl::RunFile::open(path);
    wl::TileStore store;
    const int idx = store.addRun(run);
    wl::TimelineRenderer renderer(store);
    wl::TrackRow r;
    r.content = wl::HeatmapRow{idx, 0};
    r.height = 1024;
    r.key = QStringLiteral("heat");
    paintRows(renderer, {r}, wl::TimeMapping{run->info().start_ns, run->info().end_ns, kWidth}, img,
              wl::loadingFetch(store));
  }
}
// Registered before the benchmarks that keep the file open (heatmap()'s statics): HDF5 shares an
// open file's datasets, chunk caches included, with a second open of the same file.
BENCHMARK(BM_Heatmap1024_OpenAndFirstFrame)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Heatmap1024_FullRun)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Heatmap1024_1min)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Heatmap1024_FullRun_Cold)->Unit(benchmark::kMillisecond)->Iterations(5);

// Only the colouring of a 1,024 x 1,920-cell heatmap (value -> colour per cell, into an image, and
// its blit): the part of a heatmap frame that does not depend on tiles. Values: a smooth field
// with 1 % missing cells, no file.
void BM_PaintHeatmapCells(benchmark::State& state) {
  wl::HeatmapGeometry g;
  g.rows = 1024;
  g.columns = kWidth;
  g.values.resize(g.rows * g.columns);
  for (size_t r = 0; r < g.rows; ++r)
    for (size_t c = 0; c < g.columns; ++c)
      g.values[r * g.columns + c] =
          (r * 7 + c * 13) % 100 == 0
              ? std::numeric_limits<float>::quiet_NaN()
              : static_cast<float>(300 + 350 * (0.5 + 0.5 * std::sin(0.01 * c + 0.1 * r)));
  QImage img(kWidth + 200, 1024, QImage::Format_RGB32);
  const wl::Theme theme = wl::Theme::light();
  for (auto _ : state) {
    QPainter p(&img);
    wl::paintHeatmap(p, QRectF(200, 0, kWidth, 1024), g, {250, 700}, theme, {});
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(g.values.size()));
}
BENCHMARK(BM_PaintHeatmapCells)->Unit(benchmark::kMillisecond);

// A frame of the Iterations dock (widgets/matrix/matrix_frame.h) for 1,024 GPUs x `steps` steps:
// the layout, the cell image (the largest value under each pixel) and the frame around it, into
// a 420 x 900 px dock and a 1,600 x 1,000 px figure. The cells change every frame (no cache), as
// when a new analysis or a resize arrives; a hover repaint blits the cached image instead.
void matrixFrame(benchmark::State& state, size_t steps, QSize size) {
  wl::IterationMatrix m;
  for (int g = 0; g < 1024; ++g) {
    m.ids.push_back(g);
    m.gpuOf.push_back(g);
    m.rankOf.push_back(g);
  }
  for (size_t k = 0; k < steps; ++k)
    m.columns.push_back({static_cast<int64_t>(k), 0, 1, 10.0, 0.5, wl::CostMethod::Telemetry});
  m.values.resize(m.ids.size() * steps);
  for (size_t r = 0; r < m.ids.size(); ++r)
    for (size_t c = 0; c < steps; ++c)
      m.values[r * steps + c] =
          r % 8 == 7 ? 0.05 + 0.1 * std::sin(0.01 * c) * std::sin(0.01 * c) : 0;
  m.max = 0.15;
  QImage img(size, QImage::Format_RGB32);
  const wl::Theme theme = wl::Theme::light();
  wl::MatrixFonts fonts;
  fonts.small.setPointSizeF(7.5);
  for (auto _ : state) {
    QPainter p(&img);
    const wl::MatrixLayout l = wl::layoutMatrix(m, QRectF(QPointF(0, 0), QSizeF(size)), fonts);
    wl::paintMatrix(p, l, m, theme, fonts, 1.0);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(m.values.size()));
}
void BM_Matrix1024x361_Dock(benchmark::State& st) {
  matrixFrame(st, 361, QSize(420, 900));
}
void BM_Matrix1024x1000_Dock(benchmark::State& st) {
  matrixFrame(st, 1000, QSize(420, 900));
}
void BM_Matrix1024x1000_Figure(benchmark::State& st) {
  matrixFrame(st, 1000, QSize(1600, 1000));
}
BENCHMARK(BM_Matrix1024x361_Dock)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matrix1024x1000_Dock)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matrix1024x1000_Figure)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
