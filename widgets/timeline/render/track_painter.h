// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Render step three: geometry -> paint. A track's content has one raster path (raster_track.h:
// screens and PNGs, per device pixel into cached images) and one vector path (vector_track.h: SVG
// and PDF, a few compact paths per track), both from the same geometry; this header holds what
// they share: the value range, tick positions, culling, and the two painters both paths use as
// they are (differences, heatmaps). They iterate geometry, never events.

#include <QPainter>
#include <QRectF>

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "widgets/timeline/render/difference_geometry.h"
#include "widgets/timeline/render/geometry.h"
#include "widgets/timeline/render/theme.h"

namespace wl {

struct ValueRange {
  double min = 0.0, max = 1.0;
  // Fitted to the values with a margin rather than started at zero (clocks, temperatures): the
  // axis labels say so.
  bool fitted = false;
  double y(double v, const QRectF& r) const {
    const double span = max > min ? max - min : 1.0;
    return r.bottom() - (v - min) / span * r.height();
  }
};

// The points [first, last] of segment [a, b) of a counter's samples that a track of `width`
// pixels shows: one neighbour kept on each side so lines reach the edges (culled here rather than
// clipped by the painter: clipping a path costs far more than drawing it); nullopt when none is.
std::optional<std::pair<size_t, size_t>> visibleSegment(const CounterGeometry& g, size_t a,
                                                        size_t b, double width);

// Calls f(first, last) for every segment of a counter's samples with a visible part.
template <class F>
void forEachVisibleSegment(const CounterGeometry& g, double width, F f) {
  for (size_t s = 0; s < g.segmentStarts.size(); ++s) {
    const size_t a = g.segmentStarts[s];
    const size_t b = s + 1 < g.segmentStarts.size() ? g.segmentStarts[s + 1] : g.points.size();
    if (const auto span = visibleSegment(g, a, b, width)) f(span->first, span->second);
  }
}

// A kernel box in a track's rectangle: clamped to one pixel beyond each edge, at least a pixel
// wide, a pixel inside the track's top and bottom.
// Inline: it runs per box of every kernel row.
inline QRectF kernelBoxRect(const KernelBox& b, const QRectF& area) {
  const QRectF inner = area.adjusted(0, 1, 0, -1);
  const double x0 = std::max(-1.0, b.x0), x1 = std::min(area.width() + 1, b.x1);
  return QRectF(area.left() + x0, inner.top(), std::max(1.0, x1 - x0), inner.height());
}

// A difference track (A - B): bars or a line around a zero axis, above it where A is higher, in
// `range` (symmetric about zero).
void paintDifference(QPainter& p, const QRectF& area, const DifferenceGeometry& g, ValueRange range,
                     const Theme& theme);

// A heatmap: one row per GPU, coloured by value in `range`; NaN cells in the background colour.
// `separators` lists the rows before which a node separator line is drawn.
void paintHeatmap(QPainter& p, const QRectF& area, const HeatmapGeometry& g, ValueRange range,
                  const Theme& theme, const std::vector<size_t>& separators);
// A heatmap as the raster path draws a row of it: the whole of `img`, its cells coloured in place
// when the image has one pixel per cell (a heatmap of as many GPUs as the row has pixels, the
// 1,024-GPU view), else through paintHeatmap over the row's background. The same pixels either way.
void rasterHeatmap(QImage& img, const HeatmapGeometry& g, ValueRange range, const Theme& theme,
                   const std::vector<size_t>& separators);

// "Nice" tick positions (1, 2, 5 x 10^k) for a value range and an approximate tick count.
std::vector<double> niceTicks(double min, double max, int approxCount);
// Nice tick step in ns for a time span shown over `pixels` with ~`minSpacingPx` between ticks.
int64_t niceTimeStep(double nsPerPx, double minSpacingPx);

}  // namespace wl
