// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rank x iteration matrix drawn (analysis/iteration_matrix.h): one layout value and one
// painter serve the window's Iterations dock and the exported figure
// (`wattline export RUN.h5 --view iteration-matrix`), so what a user sees is what a paper shows.
//
// The layout, top to bottom: a legend line (the colour bar of the measure, 0 .. the largest
// value, with its title; a hatched swatch "not traced" when a cell is unknown), the cells with
// the row axis on their left (every n-th GPU or rank, n a power of two, so labels do not
// overlap) and the step axis below them (every n-th step, about 60 px apart) with its title.
//
// Cells: one colour per cell, white (the track background) for 0, then a sequential scale (the
// inferno map, reversed on light themes) up to the matrix's largest value; unknown cells hatched.
// Rows and columns share the height and width equally; where there are more cells than pixels,
// a pixel shows the largest value under it (a short, costly spike survives any size, as in the
// heatmap), so 1,024 GPUs x 1,000 steps draw in a few milliseconds (bench_render).

#include <QFont>
#include <QImage>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <optional>
#include <utility>
#include <vector>

#include "analysis/iteration_matrix.h"
#include "widgets/timeline/render/axis_ticks.h"
#include "widgets/timeline/render/theme.h"

namespace wl {

struct MatrixFonts {
  QFont text, small;
  double hairline = 1.0;
};

struct MatrixLayout {
  QRectF cells;                     // the cells
  QRectF bar;                       // the colour bar
  QString barTitle;                 // "Cost of throttling per step (s)"
  std::vector<AxisTick> barTicks;   // value at x
  std::optional<QRectF> untraced;   // the "not traced" swatch, when a cell is unknown
  std::vector<AxisTick> rowTicks;   // label at y (a row's centre)
  std::vector<AxisTick> stepTicks;  // label at x (a column's centre)
  QString stepTitle;                // "Step"
  double tickLength = 4;
};

// The layout of `m` in `body` (logical pixels).
MatrixLayout layoutMatrix(const IterationMatrix& m, const QRectF& body, const MatrixFonts& fonts);

// The colour of a value in [0, max] (NaN: unknown, the caller hatches it).
QColor matrixCellColor(const Theme& theme, double value, double max);

// The cells as an image of `size` device pixels: per pixel the largest value of the cells under
// it; unknown cells hatched; a 1 px gap between cells of 6 px and more.
QImage matrixImage(const IterationMatrix& m, QSize size, const Theme& theme);

// Paints the frame (legend, axes) and the cells (an image at `scale` device pixels per logical
// pixel; `image`, when given, is used as is: the screen caches it).
void paintMatrix(QPainter& p, const MatrixLayout& l, const IterationMatrix& m, const Theme& theme,
                 const MatrixFonts& fonts, double scale, const QImage* image = nullptr);

// The cell (row, column) under `pos`, or nullopt.
std::optional<std::pair<size_t, size_t>> matrixCellAt(const MatrixLayout& l,
                                                      const IterationMatrix& m, QPointF pos);
// The rectangle of a cell (logical pixels).
QRectF matrixCellRect(const MatrixLayout& l, const IterationMatrix& m, size_t row, size_t col);

// "Cost of throttling per step (s)" / "Lateness into the step's last collective (s)".
QString matrixMeasureTitle(MatrixMeasure measure);

}  // namespace wl
