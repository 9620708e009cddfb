// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/matrix_figure.h"

#include <algorithm>

#include "widgets/matrix/matrix_frame.h"

namespace wl {

QSizeF IterationMatrixFigure::preferredSize(double width) const {
  // Rows of 4..16 px, at least 40 % of the width.
  const double rows = static_cast<double>(std::max<size_t>(matrix_.rows(), 1));
  const double rowH = std::clamp(600.0 / rows, 4.0, 16.0);
  return {width, std::max(width * 0.4, rows * rowH + 90)};
}

void IterationMatrixFigure::paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) {
  MatrixFonts fonts;
  fonts.text = canvas.font(canvas.textPt());
  fonts.small = canvas.font(canvas.smallPt());
  fonts.hairline = canvas.hairline();
  const MatrixLayout l = layoutMatrix(matrix_, body, fonts);
  // Vector devices embed the cells as an image at twice the logical resolution.
  paintMatrix(p, l, matrix_, canvas.theme, fonts, canvas.vector ? 2.0 : canvas.scale);
}

}  // namespace wl
