// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Iterations dock: the rank x iteration matrix of the analysed run (matrix_frame.h), from the
// cost of throttling the Analysis dock computed (the same numbers as `wattline explain` and
// `analyze --json`).
//
// A measure picker (Cost of throttling by GPU, Lateness into the last collective by rank), a line
// saying what is shown, and the matrix. Hover: the cell in words (its tooltip and the lines under
// the matrix, which keep the cell last clicked when the mouse leaves). Click or Enter:
// cellActivated() with the cell's GPU, rank and step span; the main window zooms the timeline there
// with the GPU's telemetry and the rank's kernels pinned at the top. Arrow keys move the current
// cell.

#include <QWidget>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/iteration_matrix.h"
#include "widgets/matrix/matrix_frame.h"
#include "widgets/timeline/render/theme.h"

class QComboBox;
class QLabel;

namespace wl {

class MatrixCanvas;

class IterationMatrixView : public QWidget {
  Q_OBJECT
 public:
  explicit IterationMatrixView(QWidget* parent = nullptr);

  // The cost to show (nullptr: none yet) with the run's ranks; `busy`: an analysis is running.
  void setCost(std::shared_ptr<const ThrottleCost> cost, std::vector<RankInfo> ranks);
  void setBusy(bool busy);
  void setTheme(const Theme& theme);
  void setMeasure(MatrixMeasure m);
  MatrixMeasure measure() const { return matrix_.measure; }

  const IterationMatrix& matrix() const { return matrix_; }
  const ThrottleCost* cost() const { return cost_.get(); }
  // The canvas (tests: hover and click at cell positions).
  QWidget* canvas() const;
  // Where a cell is drawn in the canvas (tests).
  QRectF cellRect(size_t row, size_t col) const;
  // The words of the cell under the mouse or current ("" when none).
  QString hoverText() const;

 signals:
  // A cell was clicked or entered: GPU (-1 unknown), rank (-1 none), the step's span (ns).
  void cellActivated(int gpu, int rank, qint64 t0, qint64 t1);

 private:
  friend class MatrixCanvas;
  void rebuild();
  void hover(std::optional<std::pair<size_t, size_t>> cell);
  void activate(size_t row, size_t col);

  std::shared_ptr<const ThrottleCost> cost_;
  std::vector<RankInfo> ranks_;
  IterationMatrix matrix_;
  Theme theme_ = Theme::light();
  bool busy_ = false;
  std::optional<std::pair<size_t, size_t>> hover_;
  std::optional<std::pair<size_t, size_t>> selected_;  // the cell last activated
  QComboBox* picker_;
  QLabel* status_;
  QLabel* cellLine_;
  MatrixCanvas* canvas_;
};

}  // namespace wl
