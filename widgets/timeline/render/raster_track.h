// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The raster path of track content (screens and PNG exports): the dense parts (per-column
// envelopes, throttle bands, kernel busy bars) written directly as pixels of opaque RGB32 images,
// and the sparse parts (raw samples far apart, kernel boxes with names) drawn over them with a
// QPainter. Drawing thousands of one-pixel columns through QPainter costs about a thousand
// instructions each; writing the pixels costs a few. SVG and PDF take the vector path of
// vector_track.h, from the same geometry.

#include <QImage>

#include "widgets/timeline/render/geometry.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/render/track_painter.h"

namespace wl {

// Background, throttle bands, grid lines at the value ticks, and the envelope (filled area under
// the max, and the min-max line) of a counter in envelope mode. `dataTop`/`dataBottom` are the
// image rows the value range maps onto.
void rasterCounter(QImage& img, const CounterGeometry& g, ValueRange range, int dataTop,
                   int dataBottom, const QColor& colour, const Theme& theme);

// Background and throttle bands only (raw counters draw their few points with QPainter on top).
void rasterBackground(QImage& img, const std::vector<ThrottleBand>& bands, const QColor& background,
                      const Theme& theme);

// Background and per-column busy bars, stacked by class from the bottom.
void rasterKernelBusy(QImage& img, const KernelGeometry& g, const Theme& theme);

// Sample-and-hold line of a counter in raw mode, over a light area, with dots when samples are
// far apart (cosmetic one-pixel lines: the raster engine's fast path).
void paintCounterSamples(QPainter& p, const QRectF& area, const CounterGeometry& g,
                         ValueRange range, const QColor& colour);

// Kernel boxes (events at least a pixel wide) with their names, and the outline of one
// highlighted event.
void paintKernelBoxes(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                      const std::function<QString(uint32_t)>& name);
void paintKernelHighlight(QPainter& p, const QRectF& area, const KernelGeometry& g,
                          const Theme& theme, long highlight);

}  // namespace wl
