// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Direct pixel rendering of the dense parts of tracks (per-column envelopes, throttle bands,
// kernel busy bars) into opaque RGB32 images. Drawing thousands of one-pixel columns through
// QPainter costs about a thousand instructions each; writing the pixels costs a few. Screens and
// PNG exports use these and blit the image; SVG and PDF use the vector painters of
// track_painter.h, from the same geometry.

#include <QImage>

#include "timeline/geometry.h"
#include "timeline/theme.h"
#include "timeline/track_painter.h"

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

}  // namespace wl
