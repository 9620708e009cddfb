// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Qt Charts as figures: one chart, or several laid out as panels (the summary view's power,
// temperature and clock bars). The charts are the same QChart objects the analysis panel shows
// (analysis_charts.h builds both); for an export they are restyled for the figure's theme and
// size (fonts as pixel sizes so they keep their physical size at any DPI, white background and
// black text in the publication theme, no drop shadow, legend at the bottom) and rendered through
// their QGraphicsScene, so SVG and PDF keep bars, lines and text as vector shapes and text.
//
// A chart borrowed from a QChartView (the GUI's "export this chart") is restored to its own size
// and style after each paint.
//
// Qt Charts are QGraphicsWidgets: they need a QApplication (the headless CLI creates one on the
// offscreen platform).

#include <QChart>

#include <memory>
#include <vector>

#include "widgets/export/figure.h"

namespace wl {

class ChartFigure : public Figure {
 public:
  // Owns the charts; `columns` panels per row (0: one column, or one row when the figure is
  // much wider than tall).
  ChartFigure(std::vector<QChart*> charts, QString kind, int columns = 0);
  // Borrows a chart that stays owned by its view.
  static std::unique_ptr<ChartFigure> borrow(QChart* chart, QString kind);
  ~ChartFigure() override;

  QString kind() const override { return kind_; }
  QSizeF preferredSize(double width) const override;
  const std::vector<QChart*>& charts() const { return charts_; }

 protected:
  void paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) override;

 private:
  std::vector<QChart*> charts_;
  bool owned_ = true;
  QString kind_;
  int columns_ = 0;
};

// Paints one chart into `rect` (logical pixels) with the canvas's style, restoring the chart's
// own size and style afterwards.
void paintChart(QPainter& p, QChart* chart, const QRectF& rect, const FigureCanvas& canvas);

}  // namespace wl
