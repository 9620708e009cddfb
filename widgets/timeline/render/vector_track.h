// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The vector path of track content (SVG and PDF): compact drawing of the same geometry the raster
// path draws. One element per pixel column would make a whole-run SVG tens of megabytes; these
// painters draw the per-column min/max envelope of the level of detail (so no spike is lost) as a
// few polygons: per gap-free stretch, one light area under the
// max and one band from the max (left to right) back along the min (right to left); kernel busy
// fractions as one stacked area per class. Coordinates are rounded to 0.1 px and vertices on
// straight horizontal runs are dropped, which keeps flat stretches (idle clocks, integer
// temperatures, saturated streams) to two vertices.

#include <QPainter>
#include <QPolygonF>

#include "widgets/timeline/render/geometry.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/render/track_painter.h"

namespace wl {

// Removes vertices that lie on a straight horizontal or vertical run between their neighbours
// (the outline is unchanged). Exposed for tests.
QPolygonF dropCollinear(const QPolygonF& polygon);

// A counter's envelope (or raw samples) in `data` (the rectangle the value range maps onto);
// column c of the geometry is at data.left() + c + 0.5. Without the area (an overlay of two
// runs) only the lines are drawn.
void paintCounterVector(QPainter& p, const QRectF& data, const CounterGeometry& g, ValueRange range,
                        const QColor& colour, double lineWidth, bool withArea = true);

// A kernel stream's per-column busy fractions as stacked areas (one polygon per class and
// stretch), then the boxes of events at least a pixel wide (with names) on top.
void paintKernelsVector(QPainter& p, const QRectF& area, const KernelGeometry& g,
                        const Theme& theme, const std::function<QString(uint32_t)>& name);

// Kernel boxes (events at least a pixel wide) as one path per class, with their names.
void paintKernelBoxesVector(QPainter& p, const QRectF& area, const KernelGeometry& g,
                            const Theme& theme, const std::function<QString(uint32_t)>& name);

// Throttle bands behind a counter as one path per band colour.
void paintThrottleBandsVector(QPainter& p, const QRectF& area,
                              const std::vector<ThrottleBand>& bands, const Theme& theme);

}  // namespace wl
