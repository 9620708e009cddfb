// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/chart_figure.h"

#include <QAbstractAxis>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QLegend>

#include <cmath>

namespace wl {
namespace {

// What paintChart changes on a chart, to put back afterwards.
struct SavedAxis {
  QAbstractAxis* axis;
  QFont labelsFont, titleFont;
  QBrush labelsBrush, titleBrush;
  QPen gridPen, linePen;
  QColor shadesColor;
};

struct SavedChart {
  QSizeF size;
  QPointF pos;
  QBrush background;
  QPen backgroundPen;
  qreal roundness;
  bool dropShadow, plotBackground;
  QFont titleFont;
  QBrush titleBrush;
  QMargins margins;
  QChart::AnimationOptions animations;
  QFont legendFont;
  QColor legendLabels;
  Qt::Alignment legendAlignment;
  std::vector<SavedAxis> axes;

  explicit SavedChart(QChart* c)
      : size(c->size()),
        pos(c->pos()),
        background(c->backgroundBrush()),
        backgroundPen(c->backgroundPen()),
        roundness(c->backgroundRoundness()),
        dropShadow(c->isDropShadowEnabled()),
        plotBackground(c->isPlotAreaBackgroundVisible()),
        titleFont(c->titleFont()),
        titleBrush(c->titleBrush()),
        margins(c->margins()),
        animations(c->animationOptions()),
        legendFont(c->legend()->font()),
        legendLabels(c->legend()->labelColor()),
        legendAlignment(c->legend()->alignment()) {
    for (QAbstractAxis* a : c->axes())
      axes.push_back({a, a->labelsFont(), a->titleFont(), a->labelsBrush(), a->titleBrush(),
                      a->gridLinePen(), a->linePen(), a->shadesColor()});
  }

  void restore(QChart* c) const {
    c->setBackgroundBrush(background);
    c->setBackgroundPen(backgroundPen);
    c->setBackgroundRoundness(roundness);
    c->setDropShadowEnabled(dropShadow);
    c->setPlotAreaBackgroundVisible(plotBackground);
    c->setTitleFont(titleFont);
    c->setTitleBrush(titleBrush);
    c->setMargins(margins);
    c->legend()->setFont(legendFont);
    c->legend()->setLabelColor(legendLabels);
    c->legend()->setAlignment(legendAlignment);
    for (const SavedAxis& a : axes) {
      a.axis->setLabelsFont(a.labelsFont);
      a.axis->setTitleFont(a.titleFont);
      a.axis->setLabelsBrush(a.labelsBrush);
      a.axis->setTitleBrush(a.titleBrush);
      a.axis->setGridLinePen(a.gridPen);
      a.axis->setLinePen(a.linePen);
    }
    c->setAnimationOptions(animations);
    c->setPos(pos);
    c->resize(size);
  }
};

void applyStyle(QChart* c, const FigureCanvas& canvas) {
  const Theme& th = canvas.theme;
  c->setAnimationOptions(QChart::NoAnimation);
  c->setBackgroundBrush(th.background);
  c->setBackgroundPen(Qt::NoPen);
  c->setBackgroundRoundness(0);
  c->setDropShadowEnabled(false);
  c->setPlotAreaBackgroundVisible(false);
  c->setTitleFont(canvas.font(canvas.textPt() + 1, true));
  c->setTitleBrush(th.text);
  c->setMargins(QMargins(4, 4, 8, 4));
  c->legend()->setFont(canvas.font(canvas.smallPt()));
  c->legend()->setLabelColor(th.text);
  c->legend()->setAlignment(Qt::AlignBottom);
  for (QAbstractAxis* a : c->axes()) {
    a->setLabelsFont(canvas.font(canvas.smallPt()));
    a->setLabelsBrush(th.text);
    a->setTitleFont(canvas.font(canvas.textPt()));
    a->setTitleBrush(th.text);
    QPen grid(canvas.publication ? QColor(0xdd, 0xdd, 0xdd) : th.gridLine);
    grid.setWidthF(canvas.hairline());
    a->setGridLinePen(grid);
    QPen line(th.text);
    line.setWidthF(canvas.hairline());
    a->setLinePen(line);
  }
}

}  // namespace

void paintChart(QPainter& p, QChart* chart, const QRectF& rect, const FigureCanvas& canvas) {
  if (!chart || rect.width() < 4 || rect.height() < 4) return;
  const SavedChart saved(chart);
  // A chart without a scene (built for export) gets a temporary one; a chart shown in a view is
  // rendered from the view's scene.
  std::unique_ptr<QGraphicsScene> own;
  QGraphicsScene* scene = chart->scene();
  if (!scene) {
    own = std::make_unique<QGraphicsScene>();
    own->addItem(chart);
    scene = own.get();
  }
  applyStyle(chart, canvas);
  chart->setPos(0, 0);
  chart->resize(rect.size());
  if (chart->layout()) chart->layout()->activate();
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  scene->render(&p, rect, QRectF(chart->pos(), rect.size()), Qt::IgnoreAspectRatio);
  p.restore();
  saved.restore(chart);
  if (own) own->removeItem(chart);
}

ChartFigure::ChartFigure(std::vector<QChart*> charts, QString kind, int columns)
    : charts_(std::move(charts)), kind_(std::move(kind)), columns_(columns) {}

std::unique_ptr<ChartFigure> ChartFigure::borrow(QChart* chart, QString kind) {
  auto f = std::make_unique<ChartFigure>(std::vector<QChart*>{chart}, std::move(kind), 1);
  f->owned_ = false;
  return f;
}

ChartFigure::~ChartFigure() {
  if (owned_)
    for (QChart* c : charts_)
      delete c;
}

QSizeF ChartFigure::preferredSize(double width) const {
  const size_t n = std::max<size_t>(1, charts_.size());
  // Panels in a grid of `columns_` (rows of n / columns_); one column by default.
  const size_t cols = columns_ > 0 ? std::min(n, static_cast<size_t>(columns_)) : 1;
  const double rows = static_cast<double>((n + cols - 1) / cols);
  const double panelW = width / static_cast<double>(cols);
  return {width, std::ceil(60 + rows * std::clamp(panelW * (cols > 1 ? 0.75 : 0.3), 240.0, 480.0))};
}

void ChartFigure::paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) {
  if (charts_.empty()) return;
  const int n = static_cast<int>(charts_.size());
  int cols = columns_;
  if (cols <= 0) cols = body.width() > 2.2 * body.height() ? n : 1;
  cols = std::clamp(cols, 1, n);
  const int rows = (n + cols - 1) / cols;
  const double w = body.width() / cols, h = body.height() / rows;
  for (int i = 0; i < n; ++i) {
    const QRectF cell(body.left() + (i % cols) * w, body.top() + (i / cols) * h, w, h);
    paintChart(p, charts_[static_cast<size_t>(i)], cell, canvas);
  }
}

}  // namespace wl
