// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The What-if sweep chart (docs/user-guide.md#what-if-another-power-limit-or-inlet-temperature):
// step time against energy per token of a power-limit sweep (analysis/whatif.h), its Pareto front
// (analysis/whatif_pareto.h), the measured point and the chosen setting. Built for the What if
// dock (widgets/panels/whatif_panel.h); a figure of `wattline export` can draw the same chart.

#include <QColor>
#include <QString>

#include <cstddef>
#include <vector>

#include "analysis/whatif.h"

class QChart;
class QPalette;

namespace wl {

// The colours of the chart's marks in a palette (light or dark).
struct WhatifChartColors {
  QColor front;     // the Pareto front's points
  QColor other;     // the sweep's line and its other points
  QColor measured;  // the measured run's star
  QColor current;   // the ring around the chosen setting
};
WhatifChartColors whatifChartColors(const QPalette& pal);

// One line of rich text naming the marks in their colours (the chart's own legend is hidden: this
// one wraps under the chart).
QString whatifChartLegend(const QPalette& pal);

// The sweep chart: `sweep` (rows by power limit) as a line with points, the rows at `pareto`
// (indices into `sweep`) filled, `measured` as a star and `current` as a ring; rows without a step
// time or an energy per token are left out. Its series are named by objectName "sweep",
// "sweepPoints", "pareto", "measured" and "current" (tooltips and tests find them so). The title
// says the sweep's inlet (`sweepInletC`), or that there is no energy per token when no row has
// one. The palette `pal` colours the background, text and grid; the legend is hidden
// (whatifChartLegend). The caller owns the chart.
QChart* makeWhatifSweepChart(const std::vector<WhatifRow>& sweep, const std::vector<size_t>& pareto,
                             const WhatifRow& measured, const WhatifRow& current,
                             double sweepInletC, const QPalette& pal);

}  // namespace wl
