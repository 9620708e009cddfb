// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline and heatmap as SVG, PNG and PDF, checked in the files: SVGs parse and hold the
// axes, labels and one envelope per counter row; a whole-run SVG stays small and keeps a
// one-sample spike at the right height and place; PNGs have the requested size and the kernel
// class colour inside a known kernel; PDFs have the requested page size, text and ink.
#include <gtest/gtest.h>

#include <QBuffer>
#include <QFile>
#include <QImage>
#include <QSvgRenderer>

#include <algorithm>
#include <cmath>

#include "export_test_run.h"
#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "support/missing.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "svg_util.h"
#include "widgets/export/export_views.h"
#include "widgets/export/figure.h"
#include "widgets/export/timeline_figure.h"

namespace wl {
namespace {

using test::kExportT0;
using test::kSecond;

class TimelineExport : public ::testing::Test {
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
  static std::unique_ptr<Figure> timeline(std::vector<int> gpus, std::vector<std::string> metrics,
                                          std::optional<TimeRange> range = {}) {
    ExportRequest rq;
    rq.run = run;
    rq.gpus = std::move(gpus);
    rq.metrics = std::move(metrics);
    rq.range = range;
    return makeTimelineFigure(rq);
  }
  static FigureOptions options(FigureFormat f, double w, double h) {
    FigureOptions o;
    o.format = f;
    o.size = FigureSize{w, h, SizeUnit::Pixels, 96};
    return o;
  }
  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};

test::TempDir* TimelineExport::dir = nullptr;
std::shared_ptr<const RunFile> TimelineExport::run;

TEST_F(TimelineExport, SvgHoldsAxesLabelsAndOneEnvelopePerCounterRow) {
  auto fig = timeline({0, 1}, {"power_w", "temp_c"});
  const QByteArray bytes = renderFigureBytes(*fig, options(FigureFormat::Svg, 1600, 1000));
  QSvgRenderer renderer(bytes);
  EXPECT_TRUE(renderer.isValid());
  const test::SvgDocument svg = test::parseSvg(bytes);
  ASSERT_TRUE(svg.ok) << svg.error.toStdString();
  // 1600 x 1000 px at 96 dpi: 423.3 x 264.6 mm, viewBox in the same pixels.
  EXPECT_EQ(svg.viewBox, QStringLiteral("0 0 1600 1000"));
  EXPECT_EQ(svg.width, QStringLiteral("423.333mm"));
  // Text stays text: row titles with units, GPU headers, axis titles, tick labels, caption.
  // Temperature axes are fitted to the values (not from zero), and their titles say so.
  const QString temp =
      QString::fromStdString(metricLabel("temp_c")) + QStringLiteral(" (°C, fitted)");
  for (const QString& t :
       {QStringLiteral("Power (W)"), temp, QStringLiteral("GPU 0"), QStringLiteral("GPU 1"),
        QStringLiteral("Time since run start (min)"), QStringLiteral("export-test"),
        QStringLiteral("0"), QStringLiteral("30"), QStringLiteral("60"), QStringLiteral("50")})
    EXPECT_TRUE(svg.hasText(t)) << t.toStdString() << " missing; texts: "
                                << svg.texts().join(QStringLiteral(" | ")).toStdString();
  EXPECT_TRUE(svg.hasText(QStringLiteral("200")) || svg.hasText(QStringLiteral("500")));
  EXPECT_TRUE(svg.texts().filter(QStringLiteral("simulated")).size() == 1);
  // Series: per counter row one min-max band (fill and stroke in the metric colour) and one
  // light area under it (the same colour, translucent, no stroke); 2 GPUs x 2 metrics.
  const Theme th = Theme::publication();
  const QString power = th.metricColor("power_w").name(), tempC = th.metricColor("temp_c").name();
  EXPECT_EQ(svg.shapes(power, power).size(), 2u);
  EXPECT_EQ(svg.shapes(tempC, tempC).size(), 2u);
  size_t areas = 0;
  for (const auto* e : svg.shapes(power, QStringLiteral("none")))
    areas += e->fillOpacity < 0.5;
  EXPECT_EQ(areas, 2u);
  // GPU 0's throttling ([600 s, 900 s), SW power cap) is in its throttle strip and the legend.
  EXPECT_TRUE(svg.hasText(QStringLiteral("throttled: SW power cap")));
  EXPECT_EQ(svg.texts().filter(QStringLiteral("Throttling")).size(), 2);  // one strip per GPU
}

TEST_F(TimelineExport, WholeRunSvgStaysSmallAndKeepsTheOneSampleSpike) {
  auto fig = timeline({1}, {"power_w"});
  const QByteArray bytes = renderFigureBytes(*fig, options(FigureFormat::Svg, 1600, 500));
  EXPECT_LT(bytes.size(), 2 << 20);
  const test::SvgDocument svg = test::parseSvg(bytes);
  ASSERT_TRUE(svg.ok);
  const QString power = Theme::publication().metricColor("power_w").name();
  const auto bands = svg.shapes(power, power);
  ASSERT_EQ(bands.size(), 1u);
  const auto band = test::pathPoints(bands.front()->d);
  ASSERT_EQ(band.size(), 1u);  // no gap in the hour: one stretch
  // The light area reaches down to the value 0 (power axes start at 0).
  double bottom = -INFINITY;
  for (const auto* e : svg.shapes(power, QStringLiteral("none")))
    for (const auto& sub : test::pathPoints(e->d))
      for (const QPointF& p : sub)
        bottom = std::max(bottom, p.y());
  std::vector<double> ys;
  double xFirst = INFINITY, xLast = -INFINITY;
  for (const QPointF& p : band.front()) {
    ys.push_back(p.y());
    xFirst = std::min(xFirst, p.x());
    xLast = std::max(xLast, p.x());
  }
  const auto top = std::min_element(ys.begin(), ys.end());
  const double ySpike = *top;
  const QPointF spike = band.front()[static_cast<size_t>(top - ys.begin())];
  std::sort(ys.begin(), ys.end());
  const double yBase = ys[ys.size() / 2];
  // Heights above the zero line are proportional to the values: 950 W against 300 W.
  EXPECT_NEAR((bottom - ySpike) / (bottom - yBase), 950.0 / 300.0, 0.03 * 950.0 / 300.0);
  // And the spike sits at 1234.5 s of 3600 s (one column either way).
  const double cols = xLast - xFirst + 1;
  EXPECT_NEAR((spike.x() - xFirst) / (xLast - xFirst), test::kSpikeS / 3600.0, 1.5 / cols);

  // A whole-run figure of everything the run has stays well under the bound too.
  auto all = timeline({0, 1}, {"power_w", "temp_c", "sm_clock_mhz", "util_pct", "kernels"});
  EXPECT_LT(renderFigureBytes(*all, options(FigureFormat::Svg, 1920, 1200)).size(), 1 << 20);
}

// Pixels of the time axis line: the longest dark horizontal run in the lower part of the image.
struct AxisLine {
  int left = 0, right = 0, y = 0;
};
AxisLine findTimeAxis(const QImage& img) {
  AxisLine best;
  for (int y = img.height() / 2; y < img.height(); ++y) {
    int run = 0;
    for (int x = 0; x < img.width(); ++x) {
      if (qGray(img.pixel(x, y)) < 160) {
        ++run;
        if (run > best.right - best.left) best = {x - run + 1, x, y};
      } else {
        run = 0;
      }
    }
  }
  return best;
}

TEST_F(TimelineExport, PngHasTheRequestedSizeAndTheKernelColourInsideAKnownKernel) {
  // [99 s, 104 s) of GPU 0's rank: the 2 s kernel "long_gemm" runs over [100 s, 102 s).
  auto fig =
      timeline({0}, {"kernels"}, TimeRange{kExportT0 + 99 * kSecond, kExportT0 + 104 * kSecond});
  const QImage img = renderFigureImage(*fig, options(FigureFormat::Png, 1200, 420))
                         .convertToFormat(QImage::Format_RGB32);
  ASSERT_EQ(img.size(), QSize(1200, 420));
  EXPECT_EQ(img.pixel(1, 1), qRgb(255, 255, 255));  // publication background
  const AxisLine axis = findTimeAxis(img);
  ASSERT_GT(axis.right - axis.left, 600);
  auto xAt = [&](double s) {
    return static_cast<int>(axis.left + (s - 99.0) / 5.0 * (axis.right - axis.left));
  };
  const QRgb compute = Theme::publication().classColor(KernelClass::Compute).rgb();
  // Inside the kernel (three quarters in, away from its name at the left): a run of the compute
  // colour down the column.
  int first = -1, last = -1;
  for (int y = 0; y < axis.y; ++y)
    if (img.pixel(xAt(101.5), y) == compute) {
      if (first < 0) first = y;
      last = y;
    }
  ASSERT_GE(first, 0);
  EXPECT_GE(last - first, 8);
  // Before it, at 99.5 s, the same rows are background.
  for (int y = first; y <= last; ++y)
    EXPECT_EQ(img.pixel(xAt(99.5), y), qRgb(255, 255, 255)) << "y " << y;
  // After it, at 103 s, the kernel has ended; it is rank 0's last, so the row is hatched "not
  // traced" there (widgets/timeline/render/trace_coverage.h): no pixel of the compute colour.
  for (int y = first; y <= last; ++y)
    EXPECT_NE(img.pixel(xAt(103), y), compute) << "y " << y;

  // Screen theme, dark: the dark background.
  FigureOptions dark = options(FigureFormat::Png, 600, 300);
  dark.theme = FigureTheme::Screen;
  dark.screenTheme = Theme::dark();
  EXPECT_EQ(renderFigureImage(*fig, dark).pixel(1, 1), Theme::dark().background.rgb());
}

TEST_F(TimelineExport, PngFileHasThePixelsAndResolutionOfCentimetresAtADpi) {
  auto fig = timeline({0}, {"power_w"});
  FigureOptions o;
  o.format = FigureFormat::Png;
  o.size = FigureSize{17, 8, SizeUnit::Centimetres, 300};
  const QString path = QString::fromStdString((dir->path() / "t.png").string());
  writeFigure(*fig, o, path);
  const QImage img(path);
  // 17 cm x 8 cm at 300 dpi = 2007.9 x 944.9 -> 2008 x 945 px; 300 dpi = 11811 dots per metre.
  EXPECT_EQ(img.size(), QSize(2008, 945));
  EXPECT_NEAR(img.dotsPerMeterX(), 300 / 0.0254, 1.0);
}

TEST_F(TimelineExport, PdfHasTheRequestedPageSizeTextAndInk) {
  if (!QFile::exists(QStringLiteral("/usr/bin/pdfinfo")) ||
      !QFile::exists(QStringLiteral("/usr/bin/pdftoppm")))
    WL_SKIP_OR_FAIL_MISSING("poppler-utils is not installed (scripts/setup-debian.sh installs it)");
  auto fig = timeline({0, 1}, {"power_w", "sm_clock_mhz"});
  FigureOptions o;
  o.format = FigureFormat::Pdf;
  o.size = FigureSize{17, 10, SizeUnit::Centimetres, 300};
  const std::string pdf = (dir->path() / "t.pdf").string();
  writeFigure(*fig, o, QString::fromStdString(pdf));
  // 2008 x 1181 px at 300 dpi = 6.693 x 3.937 in = 481.9 x 283.4 pt.
  const auto info = test::runProcess("/usr/bin/pdfinfo", {pdf});
  ASSERT_EQ(info.exitCode, 0) << info.err;
  const auto at = info.out.find("Page size:");
  ASSERT_NE(at, std::string::npos);
  double w = 0, h = 0;
  ASSERT_EQ(std::sscanf(info.out.c_str() + at, "Page size: %lf x %lf pts", &w, &h), 2);
  EXPECT_NEAR(w, 2008.0 / 300 * 72, 1.0);
  EXPECT_NEAR(h, 1181.0 / 300 * 72, 1.0);
  EXPECT_NE(info.out.find("Pages:           1"), std::string::npos);
  // Text is text.
  if (QFile::exists(QStringLiteral("/usr/bin/pdftotext"))) {
    const auto text = test::runProcess("/usr/bin/pdftotext", {pdf, "-"});
    EXPECT_NE(text.out.find("Power (W)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("Time since run start (min)"), std::string::npos);
  }
  // It renders, with ink: not blank, and the power colour is on the page.
  const std::string png = (dir->path() / "page").string();
  const auto r =
      test::runProcess("/usr/bin/pdftoppm", {"-r", "100", "-png", "-singlefile", pdf, png});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const QImage page(QString::fromStdString(png + ".png"));
  ASSERT_FALSE(page.isNull());
  EXPECT_NEAR(page.width(), 17 / 2.54 * 100, 2);
  size_t ink = 0, orange = 0;
  const QColor p = Theme::publication().metricColor("power_w");
  for (int y = 0; y < page.height(); ++y)
    for (int x = 0; x < page.width(); ++x) {
      const QColor c = page.pixelColor(x, y);
      ink += qGray(c.rgb()) < 240;
      orange += std::abs(c.red() - p.red()) < 25 && std::abs(c.green() - p.green()) < 25 &&
                std::abs(c.blue() - p.blue()) < 25;
    }
  const double pixels = static_cast<double>(page.width()) * page.height();
  EXPECT_GT(ink / pixels, 0.02);
  EXPECT_GT(orange, 200u);
}

TEST_F(TimelineExport, HeatmapSvgHasOneRowPerGpuAndAColourBar) {
  ExportRequest rq;
  rq.run = run;
  auto fig = makeHeatmapFigure(rq);
  EXPECT_EQ(fig->kind(), QStringLiteral("heatmap"));
  const QByteArray bytes = renderFigureBytes(*fig, options(FigureFormat::Svg, 1200, 400));
  const test::SvgDocument svg = test::parseSvg(bytes);
  ASSERT_TRUE(svg.ok);
  const QString title = QString::fromStdString(metricLabel("temp_c")) + QStringLiteral(" (°C)");
  for (const QString& t :
       {QStringLiteral("GPU 0"), QStringLiteral("GPU 1"), title, QStringLiteral("50.0"),
        QStringLiteral("55.0"), QStringLiteral("Time since run start (min)")})
    EXPECT_TRUE(svg.hasText(t)) << t.toStdString();
  size_t images = 0;
  for (const auto& e : svg.elements)
    images += e.name == QLatin1String("image");
  EXPECT_EQ(images, 1u);
}

TEST_F(TimelineExport, UnknownMetricsAndGpusAreOneLineErrors) {
  EXPECT_THROW(timeline({0}, {"no_such_metric"}), Error);
  EXPECT_THROW(timeline({7}, {"power_w"}), Error);
  try {
    timeline({0}, {"no_such_metric"});
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_NE(m.find("power_w"), std::string::npos) << "lists what the run has: " << m;
  }
  EXPECT_THROW(timeline({0}, {"power_w"}, TimeRange{kExportT0 - 10 * kSecond, kExportT0 - kSecond}),
               Error);
}

}  // namespace
}  // namespace wl
