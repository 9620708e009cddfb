// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reads an SVG with QXmlStreamReader into a flat list of drawn elements (text, path, polyline,
// polygon, rect, image) with the fill and stroke they inherit from their <g> parents, and parses
// path data, so tests can look for labels, count series and read coordinates.

#include <QByteArray>
#include <QPointF>
#include <QString>
#include <QStringList>

#include <vector>

namespace wl::test {

struct SvgElement {
  QString name;          // "text", "path", ...
  QString fill, stroke;  // resolved through the parents ("none" when unset)
  double fillOpacity = 1.0;
  QString text;                  // text elements: the content
  QString d;                     // path data, or polyline / polygon points
  double x = 0, y = 0;           // text: position; rect: corner
  double width = 0, height = 0;  // rect, image: size
  QString href;                  // image: xlink:href (a data: URL for embedded images)
};

struct SvgDocument {
  bool ok = false;
  QString error;
  QString width, height, viewBox;
  std::vector<SvgElement> elements;

  QStringList texts() const;
  bool hasText(const QString& t) const;
  std::vector<const SvgElement*> shapes(const QString& fill, const QString& stroke) const;
};

SvgDocument parseSvg(const QByteArray& bytes);

// The time axis as a figure labels it: its major ticks (the 4 px marks of the lowest axis), their
// labels and the unit its title names ("Time since run start (ms)"), so x(t) is where the figure
// says t seconds since the run's start are drawn. pxPerS is 0 when the axis cannot be read (tick
// and label counts differ, fewer than two, a tick off the line through the others).
struct TimeAxis {
  double x0 = 0, pxPerS = 0;
  double x(double seconds) const { return x0 + pxPerS * seconds; }
};
TimeAxis readTimeAxis(const SvgDocument& d);

// The subpaths of path data ("M x,y L x,y ... Z M ...") or of a points list.
std::vector<std::vector<QPointF>> pathPoints(const QString& d);

}  // namespace wl::test
