// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/charts/analysis_charts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace wl {
namespace {

double orZero(double v) {
  return std::isfinite(v) ? v : 0.0;
}

// Two bars per GPU (e.g. mean and peak power).
QChart* gpuBars(const RunAnalysis& a, const QString& title, const QString& unit,
                const QString& first, const QString& second, double (*one)(const GpuAnalysis&),
                double (*two)(const GpuAnalysis&)) {
  auto* chart = new QChart;
  chart->setTitle(title);
  auto* s1 = new QBarSet(first);
  auto* s2 = new QBarSet(second);
  QStringList cats;
  double lo = INFINITY, hi = -INFINITY;
  for (const GpuAnalysis& g : a.gpus) {
    const double x = one(g), y = two(g);
    *s1 << orZero(x);
    *s2 << orZero(y);
    for (double v : {x, y})
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    cats << QString::number(g.info.id);
  }
  auto* series = new QBarSeries;
  series->append(s1);
  series->append(s2);
  chart->addSeries(series);
  auto* ax = new QBarCategoryAxis;
  ax->append(cats);
  ax->setTitleText(QStringLiteral("GPU"));
  auto* ay = new QValueAxis;
  ay->setTitleText(unit);
  if (std::isfinite(lo)) ay->setRange(std::min(0.0, lo), hi > 0 ? hi * 1.05 : 1.0);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  series->attachAxis(ax);
  series->attachAxis(ay);
  return chart;
}

// A histogram drawn as a step line over its bin edges.
QChart* histogram(const Histogram& h, const QString& title, const QString& xTitle,
                  const QString& yTitle, bool logX) {
  auto* chart = new QChart;
  chart->setTitle(title);
  auto* line = new QLineSeries;
  line->setName(yTitle);
  size_t last = 0;
  for (size_t i = 0; i < h.values.size(); ++i)
    if (h.values[i] > 0) last = i;
  for (size_t i = 0; i <= last && i + 1 < h.edges.size(); ++i) {
    line->append(h.edges[i], h.values[i]);
    line->append(h.edges[i + 1], h.values[i]);
  }
  chart->addSeries(line);
  QAbstractAxis* ax = nullptr;
  if (logX) {
    auto* l = new QLogValueAxis;
    l->setBase(10);
    ax = l;
  } else {
    ax = new QValueAxis;
  }
  ax->setTitleText(xTitle);
  auto* ay = new QValueAxis;
  ay->setTitleText(yTitle);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  line->attachAxis(ax);
  line->attachAxis(ay);
  chart->legend()->hide();
  if (h.values.empty())
    chart->setTitle(title + QStringLiteral(" (not computed: raw-sample budget)"));
  return chart;
}

}  // namespace

QString analysisChartTitle(AnalysisChart c) {
  switch (c) {
    case AnalysisChart::GpuPower:
      return QStringLiteral("Power per GPU");
    case AnalysisChart::GpuTemperature:
      return QStringLiteral("Temperature per GPU");
    case AnalysisChart::GpuClock:
      return QStringLiteral("SM clock per GPU");
    case AnalysisChart::RankBreakdown:
      return QStringLiteral("Kernel breakdown per rank (HTA)");
    case AnalysisChart::PowerHistogram:
      return QStringLiteral("Power histogram");
    case AnalysisChart::RampHistogram:
      return QStringLiteral("|dP/dt| histogram");
  }
  return {};
}

QChart* makeAnalysisChart(const RunAnalysis& a, AnalysisChart c) {
  switch (c) {
    case AnalysisChart::GpuPower:
      return gpuBars(
          a, analysisChartTitle(c), QStringLiteral("W"), QStringLiteral("mean"),
          QStringLiteral("peak"), [](const GpuAnalysis& g) { return g.power.mean; },
          [](const GpuAnalysis& g) { return g.power.max; });
    case AnalysisChart::GpuTemperature:
      return gpuBars(
          a, analysisChartTitle(c), QStringLiteral("°C"), QStringLiteral("mean"),
          QStringLiteral("max"), [](const GpuAnalysis& g) { return g.temp.mean; },
          [](const GpuAnalysis& g) { return g.temp.max; });
    case AnalysisChart::GpuClock:
      return gpuBars(
          a, analysisChartTitle(c), QStringLiteral("MHz"), QStringLiteral("mean"),
          QStringLiteral("min"), [](const GpuAnalysis& g) { return g.sm_clock.mean; },
          [](const GpuAnalysis& g) { return g.sm_clock.min; });
    case AnalysisChart::RankBreakdown: {
      auto* chart = new QChart;
      chart->setTitle(analysisChartTitle(c));
      auto* compute = new QBarSet(QStringLiteral("compute"));
      auto* comm = new QBarSet(QStringLiteral("exposed communication"));
      auto* other = new QBarSet(QStringLiteral("exposed memory / other"));
      auto* idle = new QBarSet(QStringLiteral("idle"));
      QStringList cats;
      for (const RankAnalysis& r : a.ranks) {
        const RankBreakdown& b = r.breakdown;
        *compute << static_cast<double>(b.compute_ns) * 1e-6;
        *comm << static_cast<double>(b.exposed_comm_ns) * 1e-6;
        *other << static_cast<double>(b.non_compute_ns - b.exposed_comm_ns) * 1e-6;
        *idle << static_cast<double>(b.idle_ns) * 1e-6;
        cats << QString::number(b.rank);
      }
      auto* series = new QStackedBarSeries;
      for (QBarSet* s : {compute, comm, other, idle})
        series->append(s);
      chart->addSeries(series);
      auto* ax = new QBarCategoryAxis;
      ax->append(cats);
      ax->setTitleText(QStringLiteral("rank"));
      auto* ay = new QValueAxis;
      ay->setTitleText(QStringLiteral("ms"));
      chart->addAxis(ax, Qt::AlignBottom);
      chart->addAxis(ay, Qt::AlignLeft);
      series->attachAxis(ax);
      series->attachAxis(ay);
      return chart;
    }
    case AnalysisChart::PowerHistogram:
      return histogram(a.power_hist, analysisChartTitle(c), QStringLiteral("W"),
                       QStringLiteral("seconds"), false);
    case AnalysisChart::RampHistogram:
      return histogram(a.ramp_hist, analysisChartTitle(c), QStringLiteral("W/s"),
                       QStringLiteral("segments"), true);
  }
  return new QChart;
}

}  // namespace wl
