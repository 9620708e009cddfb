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

#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "loaders/core/time_range.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/axis_ticks.h"
#include "widgets/timeline/render/note_bands.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/render/timeline_renderer.h"

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
  size_t index = 0;  // its position among the planned rows
  QRectF label, content;
  bool pinned = false;  // screen: drawn over the scrolled rows
  bool collapsed = false;
  // Filled by prepareFrame. Counters and differences: the range the content is drawn in (a
  // heatmap: its colour scale).
  std::optional<ValueRange> range;
  // Figures: the y-axis ticks (value at pos) of a counter; a heatmap's GPU rows (y at pos).
  std::vector<AxisTick> ticks;
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
  // Screen: the height of the pinned rows at the top (at most 40 % of the area) and of all
  // scrolled rows (the scroll bar's extent).
  double pinnedHeight = 0, scrollHeight = 0;
  const TileStore* store = nullptr;   // the runs' metadata (figures' axes)
  std::vector<ReadFailure> failures;  // screen: drawn over the rows they concern
  std::vector<NoteMark> notes;        // screen and figures: bands over the rows they concern
};

// What a frame is planned for besides its rows, its visible range, its area and its scroll
// position.
struct FrameSpec {
  FrameStyle style = FrameStyle::Screen;
  int64_t origin = 0;  // figures: time zero of the time axis
  FrameFonts fonts;    // screen: fonts.text is the widget's
  Theme theme;
  std::set<QString> collapsed;       // screen: folded groups (hidden rows, "▸" headers)
  const TileStore* store = nullptr;  // figures: the runs' metadata
  // Figures: the legend of what the rows show at the content's (device) mapping, which only the
  // plan knows (figureLegend); none when unset.
  std::function<std::vector<LegendEntry>(const TimeMapping& deviceMap)> legend;
};

// The screen's label column.
inline constexpr double kScreenLabelWidth = 200;

// The one place rows are placed, on screen and in figures.
//   Screen: the rows not folded away, pinned rows first at the top (at most 40 % of the area;
//   kept when they do not fit), then the scrolled rows from `scroll` px down, those that show in
//   `area`; a label column of kScreenLabelWidth px.
//   Figure: a label column as wide as the titles need, the legend above the rows, rows sharing
//   the height in proportion to their natural heights (figureRowHeight), the time axis below.
// Ranges and ticks come from the rows' geometry: prepareFrame fills them.
FrameLayout planFrame(const std::vector<TrackRow>& rows, const TimeRange& range,
                      const FrameSpec& spec, const QRectF& area, double scroll = 0);

// Builds what painting a frame needs, for every row of `layout`: its geometry (on the screen
// also its image, the counter rows' on two threads), the range in its label column and a
// figure's axes. Returns the one list of tiles not in memory (the whole-run tiles of value
// ranges first: every axis depends on them), for one request; painting reads nothing more.
std::vector<TileKey> prepareFrame(FrameLayout& layout, TimelineRenderer& renderer,
                                  const TileFetch& fetch);

// Paints a prepared frame: on screen the rows (scrolled ones clipped under the pinned ones, the
// pinned area's edge), in figures also the legend and the time axis.
void paintFrame(QPainter& p, const FrameLayout& layout, TimelineRenderer& renderer,
                const TimelineRenderer::Highlight& highlight = {});

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

// ---- Figures ----

// The natural height of a row in a figure (counters at least 56 px, headers at least 18 px).
double figureRowHeight(const TrackRow& row);

}  // namespace wl
