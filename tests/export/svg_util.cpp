// SPDX-License-Identifier: GPL-3.0-or-later
#include "svg_util.h"

#include <QRegularExpression>
#include <QXmlStreamReader>

#include <algorithm>
#include <cmath>
#include <utility>

namespace wl::test {

QStringList SvgDocument::texts() const {
  QStringList out;
  for (const SvgElement& e : elements)
    if (e.name == QLatin1String("text")) out << e.text;
  return out;
}

bool SvgDocument::hasText(const QString& t) const {
  return texts().contains(t);
}

std::vector<const SvgElement*> SvgDocument::shapes(const QString& fill,
                                                   const QString& stroke) const {
  std::vector<const SvgElement*> out;
  for (const SvgElement& e : elements)
    if (e.name != QLatin1String("text") && e.fill == fill && e.stroke == stroke) out.push_back(&e);
  return out;
}

SvgDocument parseSvg(const QByteArray& bytes) {
  SvgDocument doc;
  QXmlStreamReader xml(bytes);
  struct Style {
    QString fill = QStringLiteral("none"), stroke = QStringLiteral("none");
    double fillOpacity = 1.0;
  };
  std::vector<Style> stack{Style{}};
  while (!xml.atEnd()) {
    const auto token = xml.readNext();
    if (token == QXmlStreamReader::StartElement) {
      const QString name = xml.name().toString();
      const QXmlStreamAttributes a = xml.attributes();
      Style s = stack.back();
      if (a.hasAttribute(QStringLiteral("fill")))
        s.fill = a.value(QStringLiteral("fill")).toString();
      if (a.hasAttribute(QStringLiteral("stroke")))
        s.stroke = a.value(QStringLiteral("stroke")).toString();
      if (a.hasAttribute(QStringLiteral("fill-opacity")))
        s.fillOpacity = a.value(QStringLiteral("fill-opacity")).toDouble();
      stack.push_back(s);
      if (name == QLatin1String("svg")) {
        doc.width = a.value(QStringLiteral("width")).toString();
        doc.height = a.value(QStringLiteral("height")).toString();
        doc.viewBox = a.value(QStringLiteral("viewBox")).toString();
      }
      if (name == QLatin1String("text") || name == QLatin1String("path") ||
          name == QLatin1String("polyline") || name == QLatin1String("polygon") ||
          name == QLatin1String("rect") || name == QLatin1String("image")) {
        SvgElement e;
        e.name = name;
        e.fill = s.fill;
        e.stroke = s.stroke;
        e.fillOpacity = s.fillOpacity;
        e.d = a.hasAttribute(QStringLiteral("d")) ? a.value(QStringLiteral("d")).toString()
                                                  : a.value(QStringLiteral("points")).toString();
        e.x = a.value(QStringLiteral("x")).toDouble();
        e.y = a.value(QStringLiteral("y")).toDouble();
        e.width = a.value(QStringLiteral("width")).toDouble();
        e.height = a.value(QStringLiteral("height")).toDouble();
        e.href = a.value(QStringLiteral("http://www.w3.org/1999/xlink"), QStringLiteral("href"))
                     .toString();
        if (name == QLatin1String("text"))
          e.text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
        doc.elements.push_back(e);
        if (name == QLatin1String("text")) stack.pop_back();  // readElementText consumed the end
      }
    } else if (token == QXmlStreamReader::EndElement) {
      if (stack.size() > 1) stack.pop_back();
    }
  }
  doc.ok = !xml.hasError();
  doc.error = xml.errorString();
  return doc;
}

std::vector<std::vector<QPointF>> pathPoints(const QString& d) {
  std::vector<std::vector<QPointF>> out;
  static const QRegularExpression token(
      QStringLiteral("([MLZmlz])|(-?[0-9.]+(?:e-?[0-9]+)?)\\s*,\\s*(-?[0-9.]+(?:e-?[0-9]+)?)"));
  auto it = token.globalMatch(d);
  bool newPath = true;
  while (it.hasNext()) {
    const auto m = it.next();
    if (!m.captured(1).isEmpty()) {
      const QChar c = m.captured(1).at(0).toUpper();
      if (c == QLatin1Char('M') || c == QLatin1Char('Z')) newPath = true;
      continue;
    }
    if (newPath || out.empty()) {
      out.emplace_back();
      newPath = false;
    }
    out.back().emplace_back(m.captured(2).toDouble(), m.captured(3).toDouble());
  }
  return out;
}

TimeAxis readTimeAxis(const SvgDocument& d) {
  std::vector<double> ticks;  // x of the vertical 4 px marks, at the lowest axis
  double axisY = 0;
  for (const SvgElement& e : d.elements) {
    if (e.name != QLatin1String("polyline")) continue;
    const auto pts = pathPoints(e.d);
    if (pts.size() != 1 || pts[0].size() != 2) continue;
    const QPointF a = pts[0][0], b = pts[0][1];
    if (a.x() != b.x() || std::fabs(std::fabs(b.y() - a.y()) - 4) > 0.01) continue;
    const double top = std::min(a.y(), b.y());
    if (top > axisY + 0.5) ticks.clear(), axisY = top;
    if (std::fabs(top - axisY) <= 0.5) ticks.push_back(a.x());
  }
  double unitS = 1;
  std::vector<std::pair<double, double>> labels;  // (x, value) under the axis
  for (const SvgElement& e : d.elements) {
    if (e.name != QLatin1String("text") || e.y <= axisY) continue;
    bool ok = false;
    const double v = e.text.toDouble(&ok);
    if (ok) labels.emplace_back(e.x, v);
    if (e.text.endsWith(QLatin1String("(ms)"))) unitS = 1e-3;
    if (e.text.endsWith(QLatin1String("(min)"))) unitS = 60;
    if (e.text.endsWith(QLatin1String("(h)"))) unitS = 3600;
  }
  std::sort(ticks.begin(), ticks.end());
  std::sort(labels.begin(), labels.end());
  TimeAxis axis;
  if (ticks.size() < 2 || ticks.size() != labels.size()) return axis;
  const double s0 = labels.front().second * unitS, s1 = labels.back().second * unitS;
  axis.pxPerS = (ticks.back() - ticks.front()) / (s1 - s0);
  axis.x0 = ticks.front() - axis.pxPerS * s0;
  for (size_t i = 0; i < ticks.size(); ++i)
    if (std::fabs(axis.x(labels[i].second * unitS) - ticks[i]) > 0.5) return TimeAxis{};
  return axis;
}

}  // namespace wl::test
