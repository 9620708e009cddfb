// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Figures that remember their view (issue 33, item 3): a figure drawn from a view file carries
// the view's JSON (widgets/viewfile/view_state.h), so that opening the figure in Wattline, or
// `wattline export --view-file FIG.svg`, draws that view again.
//
// PNG: a tEXt chunk with the key "wattline-view". SVG: <metadata><wattline-view
// xmlns="https://wattline.org/view">JSON</wattline-view></metadata>, the JSON XML-escaped, right
// after the <svg> element's start tag. PDF: the document's XMP metadata, a <wattline:view>
// element (namespace https://wattline.org/view) with the JSON XML-escaped.

#include <QByteArray>
#include <QString>

#include "widgets/export/figure.h"

namespace wl {

inline constexpr const char* kFigureViewKey = "wattline-view";

// Writes the figure as writeFigure() does, with `viewJson` in it.
void writeFigureWithView(Figure& figure, const FigureOptions& options, const QString& path,
                         const QByteArray& viewJson);
// The view JSON a PNG, SVG or PDF figure carries; empty when it carries none (or is no figure).
QByteArray figureViewJson(const QString& path);
// A PDF figure with this XMP packet as its document metadata (figure.cpp's PDF writer).
void writePdfWithXmp(QIODevice* out, Figure& figure, const FigureOptions& options,
                     const QByteArray& xmp);

}  // namespace wl
