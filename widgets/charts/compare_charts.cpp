// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/charts/compare_charts.h"

#include <QAreaSeries>
#include <QChart>
#include <QColor>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include "analysis/compare/iteration_profile.h"

namespace wl {

QChart* makeIterationProfileChart(const MetricProfilePair& m, int gpuA, int gpuB,
                                  const QString& labelA, const QString& labelB) {
  auto* chart = new QChart;
  chart->setTitle(QObject::tr("%1 · GPU %2 (A) · GPU %3 (B)")
                      .arg(QString::fromStdString(m.label))
                      .arg(gpuA)
                      .arg(gpuB));
  auto* ax = new QValueAxis;
  ax->setRange(0, 100);
  ax->setTitleText(QObject::tr("Step phase (%)"));
  ax->setLabelFormat(QStringLiteral("%.0f"));
  auto* ay = new QValueAxis;
  ay->setTitleText(m.unit.empty() ? QString::fromStdString(m.label)
                                  : QStringLiteral("%1 (%2)").arg(QString::fromStdString(m.label),
                                                                  QString::fromStdString(m.unit)));
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  double lo = kNaN, hi = kNaN;
  // A blue, B orange: the timeline's overlay colours (Theme::compareColor).
  const std::pair<const ProfileBand*, std::pair<QString, QColor>> sides[] = {
      {&m.a, {labelA.isEmpty() ? QStringLiteral("A") : labelA, QColor(0x1f, 0x5f, 0xb4)}},
      {&m.b, {labelB.isEmpty() ? QStringLiteral("B") : labelB, QColor(0xd0, 0x62, 0x00)}}};
  for (const auto& [band, style] : sides) {
    const size_t bins = band->mean.size();
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    auto* mean = new QLineSeries;
    for (size_t i = 0; i < bins; ++i) {
      if (!std::isfinite(band->mean[i])) continue;
      const double x = 100.0 * (static_cast<double>(i) + 0.5) / static_cast<double>(bins);
      upper->append(x, band->max[i]);
      lower->append(x, band->min[i]);
      mean->append(x, band->mean[i]);
      lo = std::isnan(lo) ? band->min[i] : std::min(lo, band->min[i]);
      hi = std::isnan(hi) ? band->max[i] : std::max(hi, band->max[i]);
    }
    auto* area = new QAreaSeries(upper, lower);
    upper->setParent(area);  // the area series does not own its edges
    lower->setParent(area);
    QColor fill = style.second;
    fill.setAlpha(60);
    area->setBrush(fill);
    area->setPen(Qt::NoPen);
    area->setName(QObject::tr("%1 min–max").arg(style.first));
    mean->setName(QObject::tr("%1 mean").arg(style.first));
    mean->setPen(QPen(style.second, 2));
    for (QAbstractSeries* series :
         {static_cast<QAbstractSeries*>(area), static_cast<QAbstractSeries*>(mean)}) {
      chart->addSeries(series);
      series->attachAxis(ax);
      series->attachAxis(ay);
    }
  }
  if (std::isfinite(lo) && std::isfinite(hi)) {
    const double pad = hi > lo ? 0.05 * (hi - lo) : 1.0;
    ay->setRange(lo - pad, hi + pad);
  }
  return chart;
}

}  // namespace wl
