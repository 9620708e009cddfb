// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/vector_track.h"

#include <QFontMetricsF>
#include <QPainterPath>

#include <cmath>
#include <map>

namespace wl {
namespace {

double r1(double v) {
  return std::round(v * 10.0) / 10.0;
}

// Appends a rounded vertex, skipping exact repeats.
void add(QPolygonF& poly, double x, double y) {
  const QPointF pt(r1(x), r1(y));
  if (poly.isEmpty() || poly.back() != pt) poly << pt;
}

// Raw samples: a sample-and-hold line where samples are far apart (more than 3 px), a straight
// line between close ones (the same picture at that spacing, half the vertices), over a light
// area; dots on the samples when they are far enough apart to tell apart.
void paintSamplesVector(QPainter& p, const QRectF& data, const CounterGeometry& g, ValueRange range,
                        const QColor& colour, double lineWidth, bool withArea) {
  p.save();
  p.setClipRect(data.adjusted(-1, -3, 1, 3));
  QColor fill = colour;
  fill.setAlpha(withArea ? 45 : 0);
  const double left = data.left();
  auto y = [&](float v) {
    return std::clamp(range.y(v, data), data.top() - 2.0, data.bottom() + 2.0);
  };
  size_t shown = 0;
  QPainterPath under, lines;
  forEachVisibleSegment(g, data.width(), [&](size_t first, size_t last) {
    QPolygonF line;
    for (size_t i = first; i <= last; ++i) {
      const double x = std::clamp(left + g.points[i].x, left - 1, data.right() + 1);
      if (i > first && g.points[i].x - g.points[i - 1].x > 3.0) add(line, x, y(g.points[i - 1].v));
      add(line, x, y(g.points[i].v));
    }
    shown += last - first + 1;
    line = dropCollinear(line);
    QPolygonF area = line;
    area << QPointF(line.back().x(), r1(data.bottom()))
         << QPointF(line.front().x(), r1(data.bottom()));
    under.addPolygon(area);
    under.closeSubpath();
    lines.addPolygon(line);
  });
  // One element for the areas and one for the lines of all segments.
  p.setPen(Qt::NoPen);
  p.setBrush(fill);
  p.drawPath(under);
  p.setPen(QPen(colour, lineWidth, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  p.setBrush(Qt::NoBrush);
  p.drawPath(lines);
  if (shown >= 2 && data.width() / static_cast<double>(shown) > 6.0) {
    QPainterPath dots;
    for (const auto& pt : g.points)
      if (pt.x >= -2 && pt.x <= data.width() + 2)
        dots.addRect(QRectF(r1(left + pt.x - 1.5), r1(y(pt.v) - 1.5), 3, 3));
    p.setPen(Qt::NoPen);
    p.setBrush(colour);
    p.drawPath(dots);
  }
  p.restore();
}

}  // namespace

QPolygonF dropCollinear(const QPolygonF& in) {
  if (in.size() < 3) return in;
  QPolygonF out;
  out.reserve(in.size());
  out << in.front();
  for (qsizetype i = 1; i + 1 < in.size(); ++i) {
    const QPointF& a = out.back();
    const QPointF& b = in[i];
    const QPointF& c = in[i + 1];
    const bool horizontal =
        a.y() == b.y() && b.y() == c.y() &&
        ((a.x() <= b.x() && b.x() <= c.x()) || (a.x() >= b.x() && b.x() >= c.x()));
    const bool vertical =
        a.x() == b.x() && b.x() == c.x() &&
        ((a.y() <= b.y() && b.y() <= c.y()) || (a.y() >= b.y() && b.y() >= c.y()));
    if (!horizontal && !vertical) out << b;
  }
  out << in.back();
  return out;
}

void paintCounterVector(QPainter& p, const QRectF& data, const CounterGeometry& g, ValueRange range,
                        const QColor& colour, double lineWidth, bool withArea) {
  if (g.raw()) {
    paintSamplesVector(p, data, g, range, colour, lineWidth, withArea);
    return;
  }
  p.save();
  QColor fill = colour;
  fill.setAlpha(withArea ? 45 : 0);
  const double bottom = data.bottom();
  auto y = [&](float v) {
    return std::clamp(range.y(v, data), data.top() - 2.0, data.bottom() + 2.0);
  };
  QPen pen(colour, lineWidth, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
  const size_t n = g.lo.size();
  size_t c = 0;
  // One element for the light areas and one for the bands of all gap-free stretches.
  QPainterPath areas, bands;
  areas.setFillRule(Qt::WindingFill);
  bands.setFillRule(Qt::WindingFill);
  while (c < n) {
    if (std::isnan(g.lo[c]) || std::isnan(g.hi[c])) {
      ++c;
      continue;
    }
    size_t end = c;
    while (end < n && !std::isnan(g.lo[end]) && !std::isnan(g.hi[end]))
      ++end;
    // The light area under the max.
    QPolygonF area;
    area.reserve(static_cast<qsizetype>(end - c + 2));
    add(area, data.left() + static_cast<double>(c) + 0.5, bottom);
    for (size_t k = c; k < end; ++k)
      add(area, data.left() + static_cast<double>(k) + 0.5, y(g.hi[k]));
    add(area, data.left() + static_cast<double>(end - 1) + 0.5, bottom);
    areas.addPolygon(dropCollinear(area));
    areas.closeSubpath();
    // The min-max band: along the max, back along the min; stroked so a flat stretch still
    // shows as a line.
    QPolygonF band;
    band.reserve(static_cast<qsizetype>(2 * (end - c)));
    for (size_t k = c; k < end; ++k)
      add(band, data.left() + static_cast<double>(k) + 0.5, y(g.hi[k]));
    for (size_t k = end; k-- > c;)
      add(band, data.left() + static_cast<double>(k) + 0.5, y(g.lo[k]));
    bands.addPolygon(dropCollinear(band));
    bands.closeSubpath();
    c = end;
  }
  p.setPen(Qt::NoPen);
  p.setBrush(fill);
  p.drawPath(areas);
  p.setPen(pen);
  p.setBrush(colour);
  p.drawPath(bands);
  p.restore();
}

void paintKernelsVector(QPainter& p, const QRectF& area, const KernelGeometry& g,
                        const Theme& theme, const std::function<QString(uint32_t)>& name) {
  const size_t cols = g.busy[0].size();
  // Per column, the stacked base of each class (as paintKernels and rasterKernelBusy stack them).
  std::array<std::vector<double>, kKernelClassCount> lo, hi;
  for (auto& v : lo)
    v.assign(cols, kNaN);
  for (auto& v : hi)
    v.assign(cols, kNaN);
  for (size_t c = 0; c < cols; ++c) {
    double base = area.bottom(), total = 0;
    for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
      const double f = std::min(1.0 - total, static_cast<double>(g.busy[cl][c]));
      if (!(f > 0.002)) continue;
      total += f;
      const double h = std::max(0.8, f * area.height());
      lo[cl][c] = base;
      hi[cl][c] = base - h;
      base -= h;
    }
  }
  p.save();
  p.setClipRect(area);
  for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
    const QColor colour = theme.kernelClass[cl];
    p.setPen(QPen(colour, 0.4, Qt::SolidLine, Qt::FlatCap, Qt::RoundJoin));
    p.setBrush(colour);
    QPainterPath stretches;  // one element per class
    stretches.setFillRule(Qt::WindingFill);
    size_t c = 0;
    while (c < cols) {
      if (std::isnan(lo[cl][c])) {
        ++c;
        continue;
      }
      size_t end = c;
      while (end < cols && !std::isnan(lo[cl][end]))
        ++end;
      // Column k spans [k, k + 1): the outline runs through the column centres and reaches the
      // outer edges of the stretch's first and last columns.
      const double x0 = area.left() + static_cast<double>(c);
      const double x1 = area.left() + static_cast<double>(end);
      QPolygonF poly;
      add(poly, x0, hi[cl][c]);
      for (size_t k = c; k < end; ++k)
        add(poly, area.left() + static_cast<double>(k) + 0.5, hi[cl][k]);
      add(poly, x1, hi[cl][end - 1]);
      add(poly, x1, lo[cl][end - 1]);
      for (size_t k = end; k-- > c;)
        add(poly, area.left() + static_cast<double>(k) + 0.5, lo[cl][k]);
      add(poly, x0, lo[cl][c]);
      stretches.addPolygon(dropCollinear(poly));
      stretches.closeSubpath();
      c = end;
    }
    if (!stretches.isEmpty()) p.drawPath(stretches);
  }
  p.restore();
  paintKernelBoxesVector(p, area, g, theme, name);
}

void paintKernelBoxesVector(QPainter& p, const QRectF& area, const KernelGeometry& g,
                            const Theme& theme, const std::function<QString(uint32_t)>& name) {
  if (g.boxes.empty()) return;
  p.save();
  p.setClipRect(area);
  std::array<QPainterPath, kKernelClassCount> fills;
  std::vector<std::pair<QRectF, const KernelBox*>> labelled;
  for (const KernelBox& b : g.boxes) {
    const QRectF box = kernelBoxRect(b, area);
    const QRectF r(r1(box.left()), r1(box.top()), r1(box.width()), r1(box.height()));
    fills[static_cast<size_t>(b.cls)].addRect(r);
    if (r.width() > 28 && name) labelled.emplace_back(r, &b);
  }
  // One path per class: an element per colour, not per box.
  for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
    if (fills[cl].isEmpty()) continue;
    const QColor c = theme.kernelClass[cl];
    p.setPen(QPen(c.darker(130), 0.5));
    p.setBrush(c);
    p.drawPath(fills[cl]);
  }
  QFont f = p.font();
  f.setPixelSize(std::max(6, std::min(12, static_cast<int>(area.height() * 0.6))));
  p.setFont(f);
  const QFontMetricsF fm(f);
  for (const auto& [r, b] : labelled) {
    const QString text = fm.elidedText(name(b->name), Qt::ElideRight, r.width() - 6);
    if (text.isEmpty() || text == QStringLiteral("…")) continue;
    const QColor c = theme.classColor(b->cls);
    p.setPen(c.lightness() > 140 ? QColor(0x10, 0x10, 0x10) : QColor(0xff, 0xff, 0xff));
    p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
  }
  p.restore();
}

void paintThrottleBandsVector(QPainter& p, const QRectF& area,
                              const std::vector<ThrottleBand>& bands, const Theme& theme) {
  // One path per band colour.
  std::map<QRgb, std::pair<QColor, QPainterPath>> byColour;
  for (const ThrottleBand& b : bands) {
    const double x0 = std::max(0.0, b.x0), x1 = std::min(area.width(), b.x1);
    if (x1 <= x0) continue;
    const QColor c = theme.reasonColor(b.reasons);
    auto& slot = byColour[c.rgba()];
    slot.first = c;
    slot.second.addRect(QRectF(r1(area.left() + x0), r1(area.top()), r1(std::max(1.0, x1 - x0)),
                               r1(area.height())));
  }
  p.save();
  p.setPen(Qt::NoPen);
  for (const auto& [rgba, cp] : byColour) {
    p.setBrush(cp.first);
    p.drawPath(cp.second);
  }
  p.restore();
}

}  // namespace wl
