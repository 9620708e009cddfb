// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Qt Charts of an analysis report: per-GPU bars (mean and peak power, mean and max temperature,
// mean and min SM clock), the HTA breakdown stacked per rank, and the power and |dP/dt|
// histograms. Each function builds a new QChart from a RunAnalysis; the analysis panel shows one
// at a time, and the export code can render the same charts.

#include <QChart>
#include <QString>

#include "analysis/run_analysis.h"

namespace wl {

enum class AnalysisChart {
  GpuPower,
  GpuTemperature,
  GpuClock,
  RankBreakdown,
  PowerHistogram,
  RampHistogram,
};
inline constexpr int kAnalysisChartCount = 6;

QString analysisChartTitle(AnalysisChart c);
// A chart of the analysis; the caller owns it.
QChart* makeAnalysisChart(const RunAnalysis& a, AnalysisChart c);

}  // namespace wl
