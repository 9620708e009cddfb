// SPDX-License-Identifier: GPL-3.0-or-later
// Export of every view of the 64-GPU x 1 h benchmark run (bench/scale_run.h: 6 metrics at 20 Hz,
// 10^7 kernels over 64 ranks x 2 streams) as PNG, SVG and PDF: opening the run, computing what the
// view needs (tiles or analyses) and writing the file, as `wattline export` does (process start
// not included). Counters: the file's size in bytes.
//
// Run: ./build/bench/bench_export (the first run writes the benchmark run into the temp folder,
// a few minutes; QT_QPA_PLATFORM is set to offscreen here).
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QFileInfo>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "scale_run.h"
#include "widgets/export/export_views.h"
#include "widgets/export/figure.h"

namespace {

void exportView(benchmark::State& state, const char* view, wl::FigureFormat format,
                std::vector<std::string> metrics = {}) {
  const auto path = wl::bench::scaleRun({});
  const wl::ExportView* v = wl::findExportView(view);
  const QString out = QString::fromStdString(
      (std::filesystem::temp_directory_path() / ("wattline-bench-export." + std::string(view) +
                                                 "." + wl::figureFormatName(format).toStdString()))
          .string());
  wl::FigureOptions options;
  options.format = format;
  options.size = wl::FigureSize{1600, 1000, wl::SizeUnit::Pixels, 96};
  for (auto _ : state) {
    wl::ExportRequest rq;
    rq.run = wl::RunFile::open(path);
    rq.metrics = metrics;
    std::unique_ptr<wl::Figure> fig = v->make(rq);
    options.size.height = std::ceil(fig->preferredSize(1600).height());
    wl::writeFigure(*fig, options, out);
  }
  state.counters["bytes"] = static_cast<double>(QFileInfo(out).size());
  state.counters["height_px"] = options.size.height;
  std::filesystem::remove(out.toStdString());
}

#define WL_EXPORT_BENCH(name, view)                          \
  void BM_##name##_Png(benchmark::State& s) {                \
    exportView(s, view, wl::FigureFormat::Png);              \
  }                                                          \
  void BM_##name##_Svg(benchmark::State& s) {                \
    exportView(s, view, wl::FigureFormat::Svg);              \
  }                                                          \
  void BM_##name##_Pdf(benchmark::State& s) {                \
    exportView(s, view, wl::FigureFormat::Pdf);              \
  }                                                          \
  BENCHMARK(BM_##name##_Png)->Unit(benchmark::kMillisecond); \
  BENCHMARK(BM_##name##_Svg)->Unit(benchmark::kMillisecond); \
  BENCHMARK(BM_##name##_Pdf)->Unit(benchmark::kMillisecond);

WL_EXPORT_BENCH(Timeline, "timeline")
WL_EXPORT_BENCH(Heatmap, "heatmap")
WL_EXPORT_BENCH(Summary, "summary")
WL_EXPORT_BENCH(Breakdown, "breakdown")
WL_EXPORT_BENCH(Throttle, "throttle")
WL_EXPORT_BENCH(Histogram, "histogram")

// The power and |dP/dt| histograms together (a logarithm per sample for the second).
void BM_HistogramDpdt_Pdf(benchmark::State& s) {
  exportView(s, "histogram", wl::FigureFormat::Pdf, {"power_w", "dpdt"});
}
BENCHMARK(BM_HistogramDpdt_Pdf)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
