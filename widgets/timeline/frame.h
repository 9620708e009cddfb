// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The frame around the timeline's content: the label column (row titles, the value range or a y
// axis with ticks, a heatmap's colour bar and GPU axis), the legend of kernel classes and throttle
// reasons, and the time axis. It is computed as a plain value (FrameLayout: rectangles, ranges,
// ticks, legend entries) and drawn by the painters of this file, in one of two styles:
//
//   - Screen: the window's 200 px label column with each row's title and the max / min of its
//     value range, the ruler's "+12.5 s" ticks above the rows, the one-line legend bar below;
//   - Figure (PNG, SVG, PDF): a label column as wide as the titles need, y axes with ticks and
//     units, a legend above the rows (only what the figure shows), a time axis with its title
//     below; rows share the height in proportion to their natural heights.
//
// Row content comes from TimelineRenderer (raster or vector path); value ranges come from the
// same cached geometry the content is drawn from, so an axis always describes what is drawn.
// Layout is computed once per frame; painting reads it and the renderer's caches only.

#include <QFont>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <optional>
#include <vector>

#include "loaders/core/time_range.h"
#include "widgets/timeline/axis_ticks.h"
#include "widgets/timeline/row_plan.h"
#include "widgets/timeline/theme.h"
#include "widgets/timeline/timeline_renderer.h"

namespace wl {

enum class FrameStyle { Screen, Figure };

struct LegendEntry {
  QColor colour;
  QString label;
  QString tooltip;
};
// A legend entry where it is drawn: its colour swatch and its text.
struct PlacedLegendEntry {
  LegendEntry entry;
  QRectF swatch, text;
  QRectF extent() const { return swatch.united(text); }
};

// One row of the frame: where its label column and content go, and what its axis shows.
struct FrameRow {
  const TrackRow* row = nullptr;
  QRectF label, content;
  // Counters and differences: the range the content is drawn in (a heatmap: its colour scale).
  std::optional<ValueRange> range;
  // Figures: the y-axis ticks (value at pos) of a counter; a heatmap's GPU rows (y at pos).
  std::vector<AxisTick> ticks;
  bool collapsed = false;
};

// Fonts and line widths of a figure's frame (from its canvas).
struct FrameFonts {
  QFont text, bold, small;
  double hairline = 1.0;
  double scale = 1.0;  // device pixels per logical pixel (raster figures)
  bool vector = false;
  bool publication = true;
};

struct FrameLayout {
  FrameStyle style = FrameStyle::Figure;
  Theme theme;
  FrameFonts fonts;
  QRectF body;
  double labelWidth = 0, tickWidth = 0, tickLength = 4;
  double contentLeft = 0, contentWidth = 0;
  TimeMapping map;        // time <-> x from contentLeft, logical pixels
  TimeMapping deviceMap;  // the same per device pixel (raster rows of figures)
  std::vector<PlacedLegendEntry> legend;
  std::vector<FrameRow> rows;
  TimeAxis time;
  double timeAxisY = 0;  // figures: the axis line under the rows
};

// ---- Legend ----

// The screen's legend bar: every kernel class and throttle reason in the throttle strip's
// colours; with `bands` (View > Throttle Bands Behind Tracks), in the bands' colours and what a
// faint band means.
std::vector<LegendEntry> screenLegend(const Theme& theme, bool bands = false);
// A figure's legend: the kernel classes of the streams shown, the reasons of the bands drawn
// (geometry of counter rows for `map`, built and cached by `renderer`).
std::vector<LegendEntry> figureLegend(const std::vector<TrackRow>& rows, TimelineRenderer& renderer,
                                      TileStore& store, const TimeMapping& map,
                                      const TileFetch& fetch, const Theme& theme);
// Places entries from `area`'s left edge: Screen on one line of `area` (what does not fit is
// left out), Figure wrapped onto lines from area.left() to area.right().
std::vector<PlacedLegendEntry> placeLegend(const std::vector<LegendEntry>& entries,
                                           const QRectF& area, const QFont& font, FrameStyle style);
void paintLegend(QPainter& p, const std::vector<PlacedLegendEntry>& legend, const Theme& theme,
                 FrameStyle style, double hairline, const QFont& font);

// ---- Time axis ----

// The screen ruler's ticks: majors about 90 px apart at multiples of a nice step counted from the
// run start, labelled "+12.5 s"; minors at a fifth of the step.
TimeAxis rulerAxis(const TimeMapping& map, int64_t runStart);
// "+1.25 s" for an offset from the run start, with as many digits as the tick step needs.
QString rulerTickLabel(int64_t offset, int64_t step);
// Draws ruler ticks into [left, left + map width) of a strip of `height` px.
void paintRulerTicks(QPainter& p, const TimeAxis& axis, double left, double height,
                     const Theme& theme);

// ---- Rows ----

// The screen: a row's content, its label and the separator under it, into `rect` (label column
// `labelWidth` wide). `display` is the view's mapping; the row's own clock is the renderer's.
void paintScreenRow(QPainter& p, TimelineRenderer& renderer, const TrackRow& row,
                    const QRectF& rect, double labelWidth, const TimeMapping& display,
                    const TileFetch& fetch, std::vector<TileKey>* missing, bool collapsed,
                    const TimelineRenderer::Highlight& highlight);

// ---- Figures ----

struct FigureFrameSpec {
  TimeRange range;     // the visible range
  int64_t origin = 0;  // time zero of the time axis
  FrameFonts fonts;
  Theme theme;
};
// The natural height of a row in a figure (counters at least 56 px, headers at least 18 px).
double figureRowHeight(const TrackRow& row);
FrameLayout layoutFigureFrame(const std::vector<TrackRow>& rows, TimelineRenderer& renderer,
                              TileStore& store, const TileFetch& fetch, const FigureFrameSpec& spec,
                              const QRectF& body);
void paintFigureFrame(QPainter& p, const FrameLayout& frame, TimelineRenderer& renderer,
                      TileStore& store, const TileFetch& fetch);

}  // namespace wl
