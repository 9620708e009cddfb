// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rank x iteration matrix as a figure (`wattline export RUN.h5 --view iteration-matrix`):
// the layout and painter of the window's Iterations dock (widgets/matrix/matrix_frame.h) with the
// canvas's fonts, so the file shows what the dock shows.

#include <memory>
#include <utility>

#include "analysis/iteration_matrix.h"
#include "widgets/export/figure.h"

namespace wl {

class IterationMatrixFigure : public Figure {
 public:
  explicit IterationMatrixFigure(IterationMatrix matrix) : matrix_(std::move(matrix)) {}
  QString kind() const override { return QStringLiteral("iteration-matrix"); }
  QSizeF preferredSize(double width) const override;
  const IterationMatrix& matrix() const { return matrix_; }

 protected:
  void paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) override;

 private:
  IterationMatrix matrix_;
};

}  // namespace wl
