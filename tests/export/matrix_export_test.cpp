// SPDX-License-Identifier: GPL-3.0-or-later
// The rank x iteration matrix on the bundled hot-aisle sample (8 H100, steps 19-20 traced): its
// cells add up to each step's cost (the estimator splits every step's cost among the GPUs), its
// figure colours each cell from the value it stands for, and bad requests get one-line errors.
#include <gtest/gtest.h>

#include <QImage>

#include <cmath>
#include <string>

#include "analysis/iteration_matrix.h"
#include "analysis/run_analysis.h"
#include "analysis/throttle_cost.h"
#include "export_test_run.h"
#include "loaders/core/error.h"
#include "loaders/format/run_file.h"
#include "widgets/export/export_views.h"
#include "widgets/export/figure.h"
#include "widgets/export/matrix_figure.h"
#include "widgets/matrix/matrix_frame.h"

namespace wl {
namespace {

const std::string kSample = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5";

ThrottleCost sampleCost(const RunFile& run) {
  return estimateThrottleCost(run, scopeGpus(run, {}), scopeRanks(run, {}), rangeInsideRun(run, {}),
                              {});
}

TEST(IterationMatrixSample, EachColumnAddsUpToItsStepsCost) {
  const auto run = RunFile::open(kSample);
  const ThrottleCost c = sampleCost(*run);
  ASSERT_TRUE(c.unknown.empty()) << c.unknown;
  const IterationMatrix m = buildIterationMatrix(c, run->ranks(), MatrixMeasure::Cost);
  ASSERT_EQ(m.rows(), 8u);
  ASSERT_EQ(m.cols(), c.iterations);
  size_t traced = 0;
  double largest = 0;
  for (size_t col = 0; col < m.cols(); ++col) {
    double sum = 0;
    for (size_t r = 0; r < m.rows(); ++r) {
      ASSERT_TRUE(std::isfinite(m.at(r, col)));
      sum += m.at(r, col);
      largest = std::max(largest, m.at(r, col));
    }
    EXPECT_NEAR(sum, m.columns[col].cost_s, 1e-9 + 1e-9 * m.columns[col].cost_s)
        << "step " << m.columns[col].step;
    traced += m.columns[col].method == CostMethod::Traced;
  }
  EXPECT_EQ(traced, c.traced_iterations);
  EXPECT_EQ(m.max, largest);
  // Each GPU's row averages to its cost in the ranked list (`wattline explain`).
  for (const GpuCost& g : c.by_gpu) {
    double sum = 0;
    for (size_t col = 0; col < m.cols(); ++col)
      sum += m.at(static_cast<size_t>(g.gpu), col);
    EXPECT_NEAR(sum / static_cast<double>(m.cols()), g.step_s, 1e-9) << "GPU " << g.gpu;
  }
  // Lateness exists for the traced steps only.
  const IterationMatrix l = buildIterationMatrix(c, run->ranks(), MatrixMeasure::Lateness);
  for (size_t col = 0; col < l.cols(); ++col)
    for (size_t r = 0; r < l.rows(); ++r)
      EXPECT_EQ(std::isfinite(l.at(r, col)), l.columns[col].method == CostMethod::Traced);
}

TEST(IterationMatrixSample, FigureColoursEachCellByItsValue) {
  test::ensureApp();
  ExportRequest rq;
  rq.run = RunFile::open(kSample);
  const auto fig = makeIterationMatrixFigure(rq);
  auto* mf = dynamic_cast<IterationMatrixFigure*>(fig.get());
  ASSERT_NE(mf, nullptr);
  const IterationMatrix& m = mf->matrix();
  FigureOptions o;
  o.size = FigureSize{1200, 600, SizeUnit::Pixels, 96};
  o.caption = false;
  const QImage img = renderFigureImage(*fig, o);
  ASSERT_EQ(img.size(), QSize(1200, 600));
  // The cells' layout in the same body the figure paints into.
  const FigureCanvas canvas = figureCanvas(o);
  MatrixFonts fonts;
  fonts.text = canvas.font(canvas.textPt());
  fonts.small = canvas.font(canvas.smallPt());
  // Without a caption the body is the canvas less its 10 px margin (figure.cpp).
  const QRectF body(10, 10, 1180, 580);
  const MatrixLayout l = layoutMatrix(m, body, fonts);
  const Theme th = canvas.theme;
  for (size_t r = 0; r < m.rows(); ++r)
    for (size_t col = 0; col < m.cols(); ++col) {
      const QPointF at = matrixCellRect(l, m, r, col).center();
      const QColor want = matrixCellColor(th, m.at(r, col), m.max);
      const QColor got = img.pixelColor(at.toPoint());
      // The image quantises values to 255 steps.
      EXPECT_LE(std::abs(got.red() - want.red()) + std::abs(got.green() - want.green()) +
                    std::abs(got.blue() - want.blue()),
                12)
          << "GPU " << m.ids[r] << " step " << m.columns[col].step << ": " << m.at(r, col);
    }
  // Zero cost reads as the background; the costliest cell is the far end of the scale.
  EXPECT_EQ(matrixCellColor(th, 0.0, m.max), th.trackBackground);
  EXPECT_NE(matrixCellColor(th, m.max, m.max), th.trackBackground);
}

TEST(IterationMatrixSample, BadRequestsGetOneLine) {
  test::ensureApp();
  ExportRequest rq;
  rq.run = RunFile::open(kSample);
  rq.metrics = {"power_w"};
  try {
    makeIterationMatrixFigure(rq);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--metrics takes one of cost, lateness"),
              std::string::npos)
        << e.what();
  }
  rq.metrics = {"lateness"};
  EXPECT_EQ(dynamic_cast<IterationMatrixFigure&>(*makeIterationMatrixFigure(rq)).matrix().measure,
            MatrixMeasure::Lateness);
  rq.metrics = {};
  const int64_t t0 = rq.run->info().start_ns;
  rq.range = TimeRange{t0, t0 + 1'000'000};  // no whole step
  try {
    makeIterationMatrixFigure(rq);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the cost of throttling is unknown"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace wl
