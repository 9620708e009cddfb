// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Figures that remember their view (issue 33, item 3): a figure drawn from a view file carries
// the view's JSON (widgets/viewfile/view_state.h), so that opening the figure in Wattline, or
// `wattline export --view-file FIG.svg`, draws that view again.
//
// PNG: a tEXt chunk with the key "wattline-view". SVG: <metadata><wattline-view
// xmlns="https://wattline.org/view">JSON</wattline-view></metadata>, the JSON XML-escaped, right
// after the <svg> element's start tag. (PDF does not carry it yet.)

#include <QByteArray>
#include <QString>

#include "widgets/export/figure.h"

namespace wl {

inline constexpr const char* kFigureViewKey = "wattline-view";

// Writes the figure as writeFigure() does, with `viewJson` in it (PNG and SVG; PDF as is).
void writeFigureWithView(Figure& figure, const FigureOptions& options, const QString& path,
                         const QByteArray& viewJson);
// The view JSON a PNG or SVG figure carries; empty when it carries none (or is no figure).
QByteArray figureViewJson(const QString& path);

}  // namespace wl
