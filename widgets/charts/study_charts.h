// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Qt Charts of a study (docs/compare.md, "Figures"), each built from the plain figure data of
// analysis/study/study_figures.h, so that the study view, the figure export and the tests draw the
// same numbers. Every function returns a new QChart the caller owns; none needs a widget, so a
// chart can be put in a QChartView or rendered straight to an image, SVG or PDF.
//
//   makeConfigBarsChart     mean and peak bars per configuration with the normalized efficiency
//                           line on a right axis (seed paper Fig. 4, 8, 13)
//   makeHeatmapChart        GPU x configuration heatmap with node separators and a mean row
//                           (Fig. 5, 17); a HeatmapChart
//   makeCategoryStackChart  stacked kernel-category time per bar (Fig. 10, 15)
//   makeParetoChart         tokens/s vs energy per token, the Pareto front as a line
//   makeScaleChart          scale-up vs scale-out per model, per token
//   makeStudyChart          any of the above for a study and a list of runs

#include <QChart>
#include <QString>

#include <vector>

#include "analysis/study/study_figures.h"

namespace wl {

enum class ConfigBarMetric { Temperature, Power, Clock };

// Bar sets "mean" and "peak" in one QBarSeries, plus the efficiency (normalized per model to the
// best configuration, 0..1) as QLineSeries on a right axis: one line per run of consecutive bars
// with a known efficiency, so an invalid run leaves a gap instead of a point at 0. Invalid runs
// keep their category, labelled "(invalid)", with no bar.
QChart* makeConfigBarsChart(const std::vector<ConfigBar>& bars, ConfigBarMetric metric);

// A HeatmapChart (heatmap_chart.h).
QChart* makeHeatmapChart(const GpuHeatmap& heatmap);

// One QStackedBarSeries with one QBarSet per kernel category present; bars without a trace (or
// of invalid runs) keep their category, labelled, with no bar.
QChart* makeCategoryStackChart(const CategoryStack& stack, const QString& title);

// Series: "runs" (QScatterSeries, points off the front), "Pareto front" (QScatterSeries) and the
// front's line (QLineSeries, by increasing throughput).
QChart* makeParetoChart(const ThroughputEnergyScatter& scatter);

enum class ScaleMetric { EnergyPerToken, TokensPerSecondPerGpu, GpuSecondsPerToken };
// One QBarSeries with the sets "scale-up" and "scale-out", one category per model (named with the
// two platforms and GPU counts).
QChart* makeScaleChart(const std::vector<ScaleComparison>& comparisons, ScaleMetric metric);

enum class StudyChart {
  TemperatureBars,
  PowerBars,
  ClockBars,
  Heatmap,
  CategoriesByConfig,
  CategoriesByStage,
  Pareto,
  ScaleUpVsOut,
};
inline constexpr int kStudyChartCount = 8;

struct StudyChartOptions {
  HeatmapMetric heatmap = HeatmapMetric::TempMean;
  CategoryOrder categories = CategoryOrder::SeedPaper;
  ScaleMetric scale = ScaleMetric::EnergyPerToken;
  PerUnit per = PerUnit::Device;  // the power bars' mean: per device or per package
};

QString studyChartTitle(StudyChart c);

// Axis labels for many configurations: the text every label shares at its start and at its end
// (cut at a '/', ' ', '_' or '-') is removed and returned in `common`, e.g.
// "sweep-h200/gpt3_1 (gpt3)", "sweep-h200/gpt3_2 (gpt3)" -> "gpt3_1", "gpt3_2" with common
// "sweep-h200/… (gpt3)". Labels that would become empty are kept whole.
QStringList shortLabels(const QStringList& labels, QString* common = nullptr);
QChart* makeStudyChart(const Study& study, const std::vector<size_t>& runs, StudyChart chart,
                       const StudyChartOptions& options = {});

}  // namespace wl
