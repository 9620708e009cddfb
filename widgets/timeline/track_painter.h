// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Render step three: geometry -> paint. These functions draw one track's geometry into a
// rectangle with any QPainter (widget, QImage, QSvgGenerator, QPdfWriter), so the screen and the
// exported figures are the same drawing. They iterate geometry, never events.

#include <QPainter>
#include <QRectF>

#include <functional>
#include <vector>

#include "timeline/difference_geometry.h"
#include "timeline/geometry.h"
#include "timeline/theme.h"

namespace wl {

struct ValueRange {
  double min = 0.0, max = 1.0;
  double y(double v, const QRectF& r) const {
    const double span = max > min ? max - min : 1.0;
    return r.bottom() - (v - min) / span * r.height();
  }
};

// Background bands behind a GPU's tracks, coloured by throttle reason.
void paintThrottleBands(QPainter& p, const QRectF& area, const std::vector<ThrottleBand>& bands,
                        const Theme& theme);

// A counter: the per-pixel min-max envelope (with the area under it lightly filled), or the raw
// samples as a sample-and-hold line with dots when they are far apart. Gaps stay gaps.
void paintCounter(QPainter& p, const QRectF& area, const CounterGeometry& g, ValueRange range,
                  const QColor& colour, const Theme& theme);

// A kernel stream: per-pixel busy fraction bars (stacked by class) for events narrower than a
// pixel, and boxes with their names for wider ones. `highlight` outlines one event.
void paintKernels(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                  const std::function<QString(uint32_t)>& name, long highlight = -1);

// The parts of paintKernels: boxes with names, and the outline of one highlighted event.
void paintKernelBoxes(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                      const std::function<QString(uint32_t)>& name);
void paintKernelHighlight(QPainter& p, const QRectF& area, const KernelGeometry& g,
                          const Theme& theme, long highlight);

// Sample-and-hold line of a counter in raw mode (with dots when samples are far apart).
void paintCounterSamples(QPainter& p, const QRectF& area, const CounterGeometry& g,
                         ValueRange range, const QColor& colour);

// A difference track (A - B): bars or a line around a zero axis, above it where A is higher, in
// `range` (symmetric about zero).
void paintDifference(QPainter& p, const QRectF& area, const DifferenceGeometry& g, ValueRange range,
                     const Theme& theme);

// A heatmap: one row per GPU, coloured by value in `range`; NaN cells in the background colour.
// `separators` lists the rows before which a node separator line is drawn.
void paintHeatmap(QPainter& p, const QRectF& area, const HeatmapGeometry& g, ValueRange range,
                  const Theme& theme, const std::vector<size_t>& separators);

// "Nice" tick positions (1, 2, 5 x 10^k) for a value range and an approximate tick count.
std::vector<double> niceTicks(double min, double max, int approxCount);
// Nice tick step in ns for a time span shown over `pixels` with ~`minSpacingPx` between ticks.
int64_t niceTimeStep(double nsPerPx, double minSpacingPx);

}  // namespace wl
