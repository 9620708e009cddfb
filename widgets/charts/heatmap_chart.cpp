// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/charts/heatmap_chart.h"

#include "widgets/charts/study_charts.h"

#include <QCategoryAxis>
#include <QGraphicsItem>
#include <QPainter>
#include <QScatterSeries>

#include <algorithm>
#include <array>
#include <cmath>

namespace wl {
namespace {

// Viridis at 9 stops (matplotlib's default colour map: perceptually uniform, readable in grey).
constexpr std::array<QRgb, 9> kViridis = {0xff440154, 0xff472d7b, 0xff3b528b,
                                          0xff2c728e, 0xff21918c, 0xff28ae80,
                                          0xff5ec962, 0xffaddc30, 0xfffde725};

QColor viridis(double f) {
  f = std::clamp(f, 0.0, 1.0) * static_cast<double>(kViridis.size() - 1);
  const auto i = static_cast<size_t>(std::floor(f));
  if (i + 1 >= kViridis.size()) return QColor(kViridis.back());
  const double t = f - static_cast<double>(i);
  const QColor a(kViridis[i]), b(kViridis[i + 1]);
  return QColor::fromRgbF(static_cast<float>(a.redF() + t * (b.redF() - a.redF())),
                          static_cast<float>(a.greenF() + t * (b.greenF() - a.greenF())),
                          static_cast<float>(a.blueF() + t * (b.blueF() - a.blueF())));
}

QString valueText(double v) {
  const double a = std::fabs(v);
  if (a >= 100) return QString::number(v, 'f', 0);
  if (a >= 10) return QString::number(v, 'f', 1);
  return QString::number(v, 'g', 3);
}

constexpr int kLegendWidth = 70;

}  // namespace

// Paints the cells, the node separators and the colour scale inside the chart.
class HeatmapChart::Cells : public QGraphicsItem {
 public:
  explicit Cells(HeatmapChart* chart) : QGraphicsItem(chart), chart_(chart) {
    setZValue(2);  // above the plot background and grid, below nothing else that matters
  }
  QRectF boundingRect() const override {
    const QRectF p = chart_->plotArea();
    return p.adjusted(-2, -2, kLegendWidth + 2, 2);
  }
  void refresh() {
    prepareGeometryChange();
    update();
  }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    const GpuHeatmap& h = chart_->data_;
    const int rows = static_cast<int>(h.gpus.size());
    const int cols = static_cast<int>(h.configs.size());
    if (cols == 0) return;
    painter->save();
    QFont small = painter->font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.75));
    painter->setFont(small);
    const QFontMetricsF fm(small);
    for (int c = 0; c < cols; ++c) {
      const bool valid = h.config_valid[static_cast<size_t>(c)];
      for (int r = 0; r <= rows; ++r) {
        const QRectF cell = chart_->cellRect(r, c);
        const double v = r < rows ? h.values[static_cast<size_t>(r)][static_cast<size_t>(c)]
                                  : h.average[static_cast<size_t>(c)];
        if (!valid) {
          painter->fillRect(cell, QColor(235, 235, 235));
          painter->fillRect(cell, QBrush(QColor(170, 170, 170), Qt::BDiagPattern));
          continue;
        }
        if (!std::isfinite(v)) {
          painter->fillRect(cell, QColor(242, 242, 242));
          continue;
        }
        const QColor col = chart_->colorOf(v);
        painter->fillRect(cell, col);
        const QString text = valueText(v);
        if (cell.width() > fm.horizontalAdvance(text) + 4 && cell.height() > fm.height()) {
          painter->setPen(col.lightnessF() > 0.55 ? Qt::black : Qt::white);
          painter->drawText(cell, Qt::AlignCenter, text);
        }
      }
    }
    // Node separators, and the line above the average row.
    const QRectF plot = chart_->plotArea();
    painter->setPen(QPen(Qt::white, 3));
    for (int start : h.node_starts) {
      const double y = chart_->cellRect(start, 0).top();
      painter->drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    }
    painter->setPen(QPen(Qt::black, 2));
    const double yAvg = chart_->cellRect(rows, 0).top();
    painter->drawLine(QPointF(plot.left(), yAvg), QPointF(plot.right(), yAvg));

    // Colour scale at the right of the plot area.
    if (std::isfinite(h.min)) {
      const QRectF bar(plot.right() + 10, plot.top(), 14, plot.height());
      const int steps = 64;
      for (int i = 0; i < steps; ++i) {
        const double f = static_cast<double>(i) / (steps - 1);
        const QRectF part(bar.left(), bar.bottom() - (i + 1) * bar.height() / steps, bar.width(),
                          bar.height() / steps + 0.5);
        painter->fillRect(part, viridis(f));
      }
      painter->setPen(Qt::black);
      painter->drawRect(bar);
      painter->drawText(QPointF(bar.right() + 3, bar.top() + fm.ascent()), valueText(h.max));
      painter->drawText(QPointF(bar.right() + 3, bar.bottom()), valueText(h.min));
    }
    painter->restore();
  }

 private:
  HeatmapChart* chart_;
};

HeatmapChart::HeatmapChart(GpuHeatmap data, QGraphicsItem* parent)
    : QChart(parent), data_(std::move(data)) {
  const int rows = static_cast<int>(data_.gpus.size());
  const int cols = static_cast<int>(data_.configs.size());
  const QString unit =
      QString::fromUtf8(heatmapMetricUnit(data_.metric).data(),
                        static_cast<qsizetype>(heatmapMetricUnit(data_.metric).size()));
  setTitle(QStringLiteral("GPU x configuration: %1%2")
               .arg(QString::fromUtf8(heatmapMetricLabel(data_.metric).data()),
                    unit.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(unit)));
  legend()->hide();
  QMargins m = margins();
  m.setRight(m.right() + kLegendWidth);
  setMargins(m);

  anchor_ = new QScatterSeries;
  anchor_->setMarkerSize(0.1);
  anchor_->setColor(Qt::transparent);
  anchor_->setBorderColor(Qt::transparent);
  anchor_->append(0, 0);
  anchor_->append(std::max(cols, 1), rows + 1);
  addSeries(anchor_);

  auto* ax = new QCategoryAxis;
  ax->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  QStringList names;
  for (const std::string& c : data_.configs)
    names << QString::fromStdString(c);
  QString common;
  names = shortLabels(names, &common);
  for (int c = 0; c < cols; ++c) {
    QString label = names[c];
    if (!data_.config_valid[static_cast<size_t>(c)]) label += QStringLiteral(" (invalid)");
    // Category labels must be unique; a zero-width space keeps repeated labels apart.
    while (ax->categoriesLabels().contains(label))
      label += QChar(0x200B);
    ax->append(label, c + 1);
  }
  ax->setRange(0, std::max(cols, 1));
  ax->setLabelsAngle(cols > 6 ? -60 : 0);
  ax->setGridLineVisible(false);
  ax->setTitleText(common.isEmpty() ? QStringLiteral("configuration")
                                    : QStringLiteral("configuration: %1").arg(common));
  if (cols > 60) {
    // Too many to read: the labels would only be elided; say how many there are instead.
    ax->setLabelsVisible(false);
    ax->setTitleText(QStringLiteral("%1 configurations (filter the table to name them)").arg(cols));
  }

  // One label per GPU while they fit; with more rows, one per node.
  auto* ay = new QCategoryAxis;
  ay->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  if (rows <= 16 || data_.node_starts.empty()) {
    for (int r = 0; r < rows; ++r)
      ay->append(QStringLiteral("GPU %1").arg(data_.gpus[static_cast<size_t>(r)]), r + 1);
  } else {
    std::vector<int> starts = {0};
    starts.insert(starts.end(), data_.node_starts.begin(), data_.node_starts.end());
    for (size_t n = 0; n < starts.size(); ++n) {
      const int end = n + 1 < starts.size() ? starts[n + 1] : rows;
      ay->append(QStringLiteral("GPU %1-%2").arg(starts[n]).arg(end - 1), end);
    }
  }
  ay->append(QStringLiteral("mean"), rows + 1);
  ay->setRange(0, rows + 1);
  ay->setReverse(true);  // GPU 0 at the top, the mean row at the bottom
  ay->setGridLineVisible(false);
  addAxis(ax, Qt::AlignBottom);
  addAxis(ay, Qt::AlignLeft);
  anchor_->attachAxis(ax);
  anchor_->attachAxis(ay);

  cells_ = new Cells(this);
  connect(this, &QChart::plotAreaChanged, this, [this] { cells_->refresh(); });
}

QColor HeatmapChart::colorOf(double value) const {
  if (!std::isfinite(value) || !std::isfinite(data_.min)) return QColor(242, 242, 242);
  const double span = data_.max - data_.min;
  return viridis(span > 0 ? (value - data_.min) / span : 0.5);
}

QRectF HeatmapChart::cellRect(int row, int column) const {
  // QChart::mapToPosition is not const, though it changes nothing.
  auto* self = const_cast<HeatmapChart*>(this);
  const QPointF a = self->mapToPosition(QPointF(column, row), anchor_);
  const QPointF b = self->mapToPosition(QPointF(column + 1, row + 1), anchor_);
  return QRectF(a, b).normalized();
}

}  // namespace wl
