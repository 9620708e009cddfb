// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/charts/study_charts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QFont>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "widgets/charts/heatmap_chart.h"

namespace wl {
namespace {

constexpr qsizetype kMostLabels = 60;  // category labels shown at most

QString qs(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// Category labels must be unique in a QBarCategoryAxis: repeated labels get invisible suffixes.
QStringList uniqueLabels(const QStringList& in) {
  QStringList out;
  for (QString s : in) {
    while (out.contains(s))
      s += QChar(0x200B);
    out << s;
  }
  return out;
}

QValueAxis* valueAxis(const QString& title, double lo, double hi) {
  auto* a = new QValueAxis;
  a->setTitleText(title);
  if (std::isfinite(lo) && std::isfinite(hi)) {
    const double top = hi > 0 ? hi * 1.08 : 1.0;
    a->setRange(std::min(0.0, lo), top);
    a->applyNiceNumbers();
  }
  return a;
}

QBarCategoryAxis* categoryAxis(const QStringList& cats, const QString& title) {
  auto* a = new QBarCategoryAxis;
  QString common;
  a->append(uniqueLabels(shortLabels(cats, &common)));
  a->setTitleText(common.isEmpty()
                      ? title
                      : (title.isEmpty() ? common : QStringLiteral("%1: %2").arg(title, common)));
  // Upright labels while there is room for them (Qt Charts elides rotated labels to the height
  // it grants the axis, which is small); rotated beyond that.
  qsizetype longest = 0;
  for (const QString& c : a->categories())
    longest = std::max(longest, c.size());
  if (cats.size() * longest > 150) a->setLabelsAngle(-60);  // ~150 characters fit across
  if (cats.size() > 24) {
    QFont f = a->labelsFont();
    f.setPointSizeF(std::max(6.0, f.pointSizeF() * 0.8));
    a->setLabelsFont(f);
  }
  if (cats.size() > kMostLabels) {
    // Too many to read: the labels would only be elided; say how many there are instead.
    a->setLabelsVisible(false);
    // (An axis title without labels is elided to nothing: the chart's title says it instead.)
    a->setTitleText(QString());
  }
  return a;
}

// The chart title, with a note when there are too many configurations to name on the axis.
QString titleFor(const QString& title, qsizetype categories) {
  if (categories <= kMostLabels) return title;
  return QStringLiteral("%1: %2 configurations (filter the table to name them)")
      .arg(title)
      .arg(categories);
}

// With many categories, bars a pixel or two wide: no outline (it would hide them) and no gap.
void thinBars(QAbstractBarSeries* series, qsizetype categories) {
  if (categories <= 40) return;
  series->setBarWidth(1.0);
  for (QBarSet* set : series->barSets())
    set->setPen(Qt::NoPen);
}

bool isCut(QChar c) {
  return c == QLatin1Char('/') || c == QLatin1Char(' ') || c == QLatin1Char('_') ||
         c == QLatin1Char('-');
}

}  // namespace

QChart* makeConfigBarsChart(const std::vector<ConfigBar>& bars, ConfigBarMetric metric) {
  QString title, unit;
  switch (metric) {
    case ConfigBarMetric::Temperature:
      title = QStringLiteral("Temperature per configuration");
      unit = QStringLiteral("°C");
      break;
    case ConfigBarMetric::Power:
      title = QStringLiteral("Power per configuration");
      unit = QStringLiteral("W");
      break;
    case ConfigBarMetric::Clock:
      title = QStringLiteral("SM clock per configuration");
      unit = QStringLiteral("MHz");
      break;
  }
  auto pick = [metric](const ConfigBar& b) -> std::pair<double, double> {
    switch (metric) {
      case ConfigBarMetric::Temperature:
        return {b.temp_mean_c, b.temp_max_c};
      case ConfigBarMetric::Power:
        return {b.power_mean_w, b.power_max_w};
      case ConfigBarMetric::Clock:
        return {b.clock_mean_mhz, b.clock_max_mhz};
    }
    return {kNaN, kNaN};
  };
  auto* chart = new QChart;
  chart->setTitle(title);
  auto* mean = new QBarSet(QStringLiteral("mean"));
  auto* peak = new QBarSet(QStringLiteral("peak"));
  QStringList cats;
  double lo = INFINITY, hi = -INFINITY;
  for (const ConfigBar& b : bars) {
    const auto [m, p] = pick(b);
    // A bar set needs a value per category; a run without a value gets an empty (0-height) bar
    // and says why in its label, so nothing is drawn as if it had been measured.
    *mean << (std::isfinite(m) ? m : 0.0);
    *peak << (std::isfinite(p) ? p : 0.0);
    for (double v : {m, p})
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    QString label = QString::fromStdString(b.label);
    if (!b.valid) label += QStringLiteral(" (invalid)");
    cats << label;
  }
  auto* series = new QBarSeries;
  series->append(mean);
  series->append(peak);
  thinBars(series, cats.size());
  chart->setTitle(titleFor(chart->title(), cats.size()));
  chart->addSeries(series);
  auto* ax = categoryAxis(cats, QStringLiteral("configuration"));
  auto* ay = valueAxis(unit, lo, hi);
  auto* ae = new QValueAxis;
  ae->setRange(0, 1.2);
  ae->setTickCount(7);
  ae->setLabelFormat(QStringLiteral("%.1f"));
  ae->setTitleText(QStringLiteral("efficiency (best of model = 1)"));
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  chart->addAxis(ae, Qt::AlignRight);
  series->attachAxis(ax);
  series->attachAxis(ay);

  // The efficiency line, broken where a run has none.
  QLineSeries* line = nullptr;
  bool first = true;
  for (size_t i = 0; i < bars.size(); ++i) {
    const double e = bars[i].efficiency_normalized;
    if (!std::isfinite(e)) {
      line = nullptr;
      continue;
    }
    if (!line) {
      line = new QLineSeries;
      line->setName(QStringLiteral("efficiency"));
      line->setPointsVisible(true);
      line->setColor(QColor(200, 30, 30));
      chart->addSeries(line);
      line->attachAxis(ax);
      line->attachAxis(ae);
      if (!first)
        for (QLegendMarker* mk : chart->legend()->markers(line))
          mk->setVisible(false);
      first = false;
    }
    line->append(static_cast<double>(i), e);
  }
  if (std::any_of(bars.begin(), bars.end(),
                  [](const ConfigBar& b) { return !b.efficiency_comparable; }))
    chart->setTitle(chart->title() + QStringLiteral(" (runs of a model differ in iterations: their "
                                                    "efficiencies do not compare)"));
  return chart;
}

QChart* makeHeatmapChart(const GpuHeatmap& heatmap) {
  return new HeatmapChart(heatmap);
}

QChart* makeCategoryStackChart(const CategoryStack& stack, const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  auto* series = new QStackedBarSeries;
  double hi = 0;
  std::vector<double> totals(stack.bars.size(), 0.0);
  for (size_t c = 0; c < stack.categories.size(); ++c) {
    auto* set = new QBarSet(qs(kernelCategoryLabel(stack.categories[c])));
    for (size_t b = 0; b < stack.bars.size(); ++b) {
      const double v = stack.seconds[c][b];
      *set << (std::isfinite(v) ? v : 0.0);
      if (std::isfinite(v)) totals[b] += v;
    }
    series->append(set);
  }
  for (double t : totals)
    hi = std::max(hi, t);
  QStringList cats;
  for (size_t b = 0; b < stack.bars.size(); ++b) {
    QString label = QString::fromStdString(stack.bars[b]);
    if (!stack.bar_has_data[b]) label += QStringLiteral(" (no trace)");
    cats << label;
  }
  thinBars(series, cats.size());
  chart->setTitle(titleFor(chart->title(), cats.size()));
  chart->addSeries(series);
  auto* ax = categoryAxis(cats, QString());
  auto* ay = valueAxis(QStringLiteral("kernel time per traced rank (s)"), 0, hi);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  series->attachAxis(ax);
  series->attachAxis(ay);
  chart->legend()->setAlignment(Qt::AlignRight);
  if (std::none_of(stack.bar_has_data.begin(), stack.bar_has_data.end(), [](bool b) { return b; }))
    chart->setTitle(chart->title() + QStringLiteral(" (no kernel traces in these runs)"));
  return chart;
}

QChart* makeParetoChart(const ThroughputEnergyScatter& scatter) {
  auto* chart = new QChart;
  chart->setTitle(QStringLiteral("Throughput vs energy per token"));
  auto* others = new QScatterSeries;
  others->setName(QStringLiteral("runs"));
  others->setMarkerSize(9);
  auto* front = new QScatterSeries;
  front->setName(QStringLiteral("Pareto front"));
  front->setMarkerSize(12);
  front->setColor(QColor(200, 30, 30));
  auto* line = new QLineSeries;
  line->setName(QStringLiteral("front"));
  line->setColor(QColor(200, 30, 30));
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const ScatterPoint& p : scatter.points) {
    (p.on_front ? front : others)->append(p.tokens_per_s, p.energy_per_token_j);
    x0 = std::min(x0, p.tokens_per_s), x1 = std::max(x1, p.tokens_per_s);
    y0 = std::min(y0, p.energy_per_token_j), y1 = std::max(y1, p.energy_per_token_j);
  }
  for (size_t k : scatter.front)
    line->append(scatter.points[k].tokens_per_s, scatter.points[k].energy_per_token_j);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{line, others, front})
    chart->addSeries(s);
  auto* ax = new QValueAxis;
  ax->setTitleText(QStringLiteral("throughput (tokens/s)"));
  auto* ay = new QValueAxis;
  ay->setTitleText(QStringLiteral("energy per token (J)"));
  if (std::isfinite(x0)) {
    const double px = std::max((x1 - x0) * 0.08, std::fabs(x1) * 0.02 + 1e-9);
    const double py = std::max((y1 - y0) * 0.08, std::fabs(y1) * 0.02 + 1e-12);
    ax->setRange(std::max(0.0, x0 - px), x1 + px);
    ay->setRange(std::max(0.0, y0 - py), y1 + py);
    ax->applyNiceNumbers();
    ay->applyNiceNumbers();
  }
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series()) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  for (QLegendMarker* mk : chart->legend()->markers(line))
    mk->setVisible(false);
  if (!scatter.left_out.empty())
    chart->setTitle(
        chart->title() +
        QStringLiteral(" (%1 runs without both numbers left out)").arg(scatter.left_out.size()));
  return chart;
}

QChart* makeScaleChart(const std::vector<ScaleComparison>& comparisons, ScaleMetric metric) {
  auto* chart = new QChart;
  QString unit;
  auto pick = [metric](const ScaleGroup& g) {
    switch (metric) {
      case ScaleMetric::EnergyPerToken:
        return g.energy_per_token_j;
      case ScaleMetric::TokensPerSecondPerGpu:
        return g.tokens_per_s_per_gpu;
      case ScaleMetric::GpuSecondsPerToken:
        return g.gpu_seconds_per_token;
    }
    return kNaN;
  };
  switch (metric) {
    case ScaleMetric::EnergyPerToken:
      unit = QStringLiteral("energy per token (J)");
      break;
    case ScaleMetric::TokensPerSecondPerGpu:
      unit = QStringLiteral("tokens/s per GPU");
      break;
    case ScaleMetric::GpuSecondsPerToken:
      unit = QStringLiteral("GPU-seconds per token");
      break;
  }
  chart->setTitle(QStringLiteral("Scale-up vs scale-out (best run of each, per token)"));
  auto* up = new QBarSet(QStringLiteral("scale-up: fewer, larger-memory GPUs"));
  auto* out = new QBarSet(QStringLiteral("scale-out: more, smaller GPUs"));
  QStringList cats;
  double hi = 0;
  for (const ScaleComparison& c : comparisons) {
    const double a = pick(c.up), b = pick(c.out);
    *up << (std::isfinite(a) ? a : 0.0);
    *out << (std::isfinite(b) ? b : 0.0);
    if (std::isfinite(a)) hi = std::max(hi, a);
    if (std::isfinite(b)) hi = std::max(hi, b);
    cats << QStringLiteral("%1 (%2 x%3 vs %4 x%5)")
                .arg(QString::fromStdString(c.model), QString::fromStdString(c.up.platform))
                .arg(c.up.gpus)
                .arg(QString::fromStdString(c.out.platform))
                .arg(c.out.gpus);
  }
  auto* series = new QBarSeries;
  series->append(up);
  series->append(out);
  chart->addSeries(series);
  auto* ax = categoryAxis(cats, QStringLiteral("model"));
  auto* ay = valueAxis(unit, 0, hi);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  series->attachAxis(ax);
  series->attachAxis(ay);
  if (comparisons.empty())
    chart->setTitle(chart->title() +
                    QStringLiteral(" (no model has runs on both kinds of platform)"));
  return chart;
}

QStringList shortLabels(const QStringList& labels, QString* common) {
  if (common) common->clear();
  if (labels.size() < 2) return labels;
  // Longest common prefix, cut back to just after a separator.
  qsizetype pre = labels.front().size();
  for (const QString& l : labels) {
    qsizetype k = 0;
    while (k < pre && k < l.size() && l[k] == labels.front()[k])
      ++k;
    pre = k;
  }
  while (pre > 0 && !isCut(labels.front()[pre - 1]))
    --pre;
  // Longest common suffix, cut forward to just before a separator or '('.
  qsizetype suf = labels.front().size();
  for (const QString& l : labels) {
    qsizetype k = 0;
    while (k < suf && k < l.size() &&
           l[l.size() - 1 - k] == labels.front()[labels.front().size() - 1 - k])
      ++k;
    suf = k;
  }
  const QString& f = labels.front();
  while (suf > 0 &&
         !(f[f.size() - suf] == QLatin1Char(' ') || f[f.size() - suf] == QLatin1Char('(')))
    --suf;
  QStringList out;
  for (const QString& l : labels) {
    if (l.size() - pre - suf <= 0) return labels;  // something would become empty: keep all
    out << l.mid(pre, l.size() - pre - suf).trimmed();
  }
  if (common && (pre > 0 || suf > 0))
    *common = (f.left(pre) + QStringLiteral("…") + f.right(suf)).trimmed();
  return out;
}

QString studyChartTitle(StudyChart c) {
  switch (c) {
    case StudyChart::TemperatureBars:
      return QStringLiteral("Temperature per configuration");
    case StudyChart::PowerBars:
      return QStringLiteral("Power per configuration");
    case StudyChart::ClockBars:
      return QStringLiteral("SM clock per configuration");
    case StudyChart::Heatmap:
      return QStringLiteral("GPU x configuration heatmap");
    case StudyChart::CategoriesByConfig:
      return QStringLiteral("Kernel categories per configuration");
    case StudyChart::CategoriesByStage:
      return QStringLiteral("Kernel categories per pipeline stage");
    case StudyChart::Pareto:
      return QStringLiteral("Throughput vs energy per token (Pareto front)");
    case StudyChart::ScaleUpVsOut:
      return QStringLiteral("Scale-up vs scale-out");
  }
  return {};
}

QChart* makeStudyChart(const Study& study, const std::vector<size_t>& runs, StudyChart chart,
                       const StudyChartOptions& options) {
  const QString order = options.categories == CategoryOrder::SeedPaper
                            ? QStringLiteral("seed paper categories")
                            : QStringLiteral("corrected categories");
  switch (chart) {
    case StudyChart::TemperatureBars:
      return makeConfigBarsChart(configBars(study, runs), ConfigBarMetric::Temperature);
    case StudyChart::PowerBars: {
      QChart* c = makeConfigBarsChart(configBars(study, runs, options.per), ConfigBarMetric::Power);
      c->setTitle(c->title() + (options.per == PerUnit::Package
                                    ? QStringLiteral(" (mean per package, peak per power domain)")
                                    : QStringLiteral(" (mean per device, peak per power domain)")));
      return c;
    }
    case StudyChart::ClockBars:
      return makeConfigBarsChart(configBars(study, runs), ConfigBarMetric::Clock);
    case StudyChart::Heatmap:
      return makeHeatmapChart(gpuHeatmap(study, runs, options.heatmap));
    case StudyChart::CategoriesByConfig:
      return makeCategoryStackChart(categoriesByConfig(study, runs, options.categories),
                                    studyChartTitle(chart) + QStringLiteral(" (%1)").arg(order));
    case StudyChart::CategoriesByStage:
      return makeCategoryStackChart(categoriesByStage(study, runs, options.categories),
                                    studyChartTitle(chart) + QStringLiteral(" (%1)").arg(order));
    case StudyChart::Pareto:
      return makeParetoChart(throughputEnergyScatter(study, runs));
    case StudyChart::ScaleUpVsOut:
      return makeScaleChart(scaleUpVsOut(study, runs), options.scale);
  }
  return new QChart;
}

}  // namespace wl
