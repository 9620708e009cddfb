// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A GPU x configuration heatmap as a Qt Charts chart (the seed paper's Fig. 5 / 17): one column per
// configuration, one row per GPU, thick lines where a new node begins, and a last row with the
// mean over each configuration's GPUs. Qt Charts has no heatmap series, so HeatmapChart is a QChart
// with category axes over an invisible anchor series and one child graphics item that paints the
// cells in the plot area (it follows resizes). Because the cells are part of the chart's own
// graphics tree, rendering the chart (QChartView::render, or the chart in any QGraphicsScene)
// draws them, which is what figure export needs.
//
// Cells without a value (no such GPU in that run) are left light grey; columns of invalid runs
// are hatched and labelled "(invalid)": never painted as if their value were 0.

#include <QChart>

#include "analysis/study/study_figures.h"

class QScatterSeries;

namespace wl {

class HeatmapChart : public QChart {
  Q_OBJECT
 public:
  explicit HeatmapChart(GpuHeatmap data, QGraphicsItem* parent = nullptr);

  const GpuHeatmap& data() const { return data_; }
  // The colour of a value on this chart's scale (min -> dark blue, max -> yellow).
  QColor colorOf(double value) const;
  // The chart-coordinate rectangle of a cell; row == gpus.size() is the average row.
  QRectF cellRect(int row, int column) const;

 private:
  class Cells;
  GpuHeatmap data_;
  QScatterSeries* anchor_ = nullptr;
  Cells* cells_ = nullptr;
};

}  // namespace wl
