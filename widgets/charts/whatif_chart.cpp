// SPDX-License-Identifier: GPL-3.0-or-later
// The What-if sweep chart (whatif_chart.h).
#include "widgets/charts/whatif_chart.h"

#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QObject>
#include <QPalette>
#include <QPen>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace wl {
namespace {

bool finitePoint(const WhatifRow& r) {
  return std::isfinite(r.value.step_s) && std::isfinite(r.value.energy_per_token_j);
}

QScatterSeries* scatter(const QString& name, const char* id, QScatterSeries::MarkerShape shape,
                        double size, const QColor& fill, const QColor& border) {
  auto* s = new QScatterSeries;
  s->setName(name);
  s->setObjectName(QString::fromLatin1(id));
  s->setMarkerShape(shape);
  s->setMarkerSize(size);
  s->setColor(fill);
  s->setBorderColor(border);
  return s;
}

// The palette's background, text and grid, without a chart theme (as the Compare dock's charts).
void applyPalette(QChart* chart, const QPalette& pal) {
  chart->setBackgroundBrush(pal.base());
  chart->setTitleBrush(pal.text());
  chart->legend()->hide();  // whatifChartLegend says what the marks are (it wraps)
  QColor grid = pal.text().color();
  grid.setAlpha(45);
  for (QAbstractAxis* a : chart->axes()) {
    a->setLabelsColor(pal.text().color());
    a->setTitleBrush(pal.text());
    a->setGridLineColor(grid);
  }
}

// The axes' ranges: the points' with a margin, rounded to nice numbers (none without points).
void setRanges(QValueAxis* ax, QValueAxis* ay, double x0, double x1, double y0, double y1) {
  if (x0 > x1) return;
  const double px = std::max((x1 - x0) * 0.08, 1e-3 * std::fabs(x1));
  const double py = std::max((y1 - y0) * 0.08, 1e-3 * std::fabs(y1));
  ax->setRange(x0 - px, x1 + px);
  ay->setRange(y0 - py, y1 + py);
  ax->applyNiceNumbers();
  ay->applyNiceNumbers();
}

}  // namespace

WhatifChartColors whatifChartColors(const QPalette& pal) {
  WhatifChartColors c;
  c.front = QColor(0x2e, 0x9e, 0x5b);
  c.measured = QColor(0xe0, 0x6c, 0x00);
  c.other = pal.text().color();
  c.other.setAlpha(110);
  c.current = pal.highlight().color();
  return c;
}

QString whatifChartLegend(const QPalette& pal) {
  const WhatifChartColors c = whatifChartColors(pal);
  return QObject::tr(
             "<span style='color:%1'>&#9679;</span> Pareto front (no other setting is both "
             "faster and cheaper) &nbsp; <span style='color:%2'>&#9675;</span> other projected "
             "settings &nbsp; <span style='color:%3'>&#9733;</span> measured &nbsp; <span "
             "style='color:%4'>&#9711;</span> this setting")
      .arg(c.front.name(), c.other.name(), c.measured.name(), c.current.name());
}

QChart* makeWhatifSweepChart(const std::vector<WhatifRow>& sweep, const std::vector<size_t>& pareto,
                             const WhatifRow& measured, const WhatifRow& current,
                             double sweepInletC, const QPalette& pal) {
  auto* chart = new QChart;
  const WhatifChartColors c = whatifChartColors(pal);
  auto* line = new QLineSeries;
  line->setName(QObject::tr("sweep (projected)"));
  line->setObjectName(QStringLiteral("sweep"));
  line->setPen(QPen(c.other, 1.5));
  auto* points = scatter(QObject::tr("sweep point"), "sweepPoints",
                         QScatterSeries::MarkerShapeCircle, 7, pal.base().color(), c.other);
  auto* front = scatter(QObject::tr("Pareto front"), "pareto", QScatterSeries::MarkerShapeCircle,
                        10, c.front, c.front.darker(130));
  auto* meas = scatter(QObject::tr("measured"), "measured", QScatterSeries::MarkerShapeStar, 18,
                       c.measured, c.measured.darker(140));
  auto* cur = scatter(QObject::tr("this setting"), "current", QScatterSeries::MarkerShapeCircle, 18,
                      Qt::transparent, c.current);
  cur->setPen(QPen(c.current, 3));
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  auto add = [&](QXYSeries* s, const WhatifRow& r) {
    if (!finitePoint(r)) return;
    s->append(r.value.step_s, r.value.energy_per_token_j);
    x0 = std::min(x0, r.value.step_s), x1 = std::max(x1, r.value.step_s);
    y0 = std::min(y0, r.value.energy_per_token_j), y1 = std::max(y1, r.value.energy_per_token_j);
  };
  for (const WhatifRow& r : sweep)
    add(line, r), add(points, r);
  for (size_t i : pareto)
    if (i < sweep.size()) add(front, sweep[i]);
  add(meas, measured);
  add(cur, current);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{line, points, front, meas, cur})
    chart->addSeries(s);
  auto* ax = new QValueAxis;
  ax->setTitleText(QObject::tr("step time (s)"));
  auto* ay = new QValueAxis;
  ay->setTitleText(QObject::tr("energy per token (J)"));
  ay->setLabelFormat(QStringLiteral("%.3g"));
  setRanges(ax, ay, x0, x1, y0, y1);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series())
    s->attachAxis(ax), s->attachAxis(ay);
  if (x0 > x1)
    chart->setTitle(QObject::tr("No energy per token: the run lacks its batch or sequence length"));
  else
    chart->setTitle(QObject::tr("Power-limit sweep at inlet %1 °C (projected)")
                        .arg(std::isfinite(sweepInletC) ? QString::number(sweepInletC, 'f', 1)
                                                        : QStringLiteral("—")));
  applyPalette(chart, pal);
  return chart;
}

}  // namespace wl
