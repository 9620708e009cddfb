// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/track_painter.h"

#include <QFontMetricsF>
#include <QPainterPath>

#include <cmath>

namespace wl {

void paintThrottleBands(QPainter& p, const QRectF& area, const std::vector<ThrottleBand>& bands,
                        const Theme& theme) {
  for (const ThrottleBand& b : bands) {
    const double x0 = std::max(0.0, b.x0), x1 = std::min(area.width(), b.x1);
    if (x1 <= x0) continue;
    p.fillRect(QRectF(area.left() + x0, area.top(), std::max(1.0, x1 - x0), area.height()),
               theme.reasonColor(b.reasons));
  }
}

void paintCounter(QPainter& p, const QRectF& area, const CounterGeometry& g, ValueRange range,
                  const QColor& colour, const Theme& theme) {
  (void)theme;
  p.save();
  p.setClipRect(area);
  QColor fill = colour;
  fill.setAlpha(45);
  const double left = area.left();
  if (!g.raw()) {
    // Envelope: one vertical line per column from min to max, stretched to meet the previous
    // column so the line stays continuous; a filled area under the max.
    QVector<QLineF> lines;
    lines.reserve(static_cast<int>(g.lo.size()));
    QPolygonF poly;
    auto flush = [&](double lastX) {
      if (poly.size() > 1) {
        poly << QPointF(lastX, area.bottom()) << QPointF(poly.front().x(), area.bottom());
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawPolygon(poly);
      }
      poly.clear();
    };
    double prevLo = kNaN, prevHi = kNaN, lastX = 0;
    for (size_t c = 0; c < g.lo.size(); ++c) {
      if (std::isnan(g.lo[c])) {
        flush(lastX);
        prevLo = prevHi = kNaN;
        continue;
      }
      double lo = g.lo[c], hi = g.hi[c];
      if (!std::isnan(prevLo)) {
        lo = std::min(lo, prevHi);
        hi = std::max(hi, prevLo);
      }
      const double x = left + static_cast<double>(c) + 0.5;
      const double y0 = range.y(lo, area), y1 = range.y(hi, area);
      lines.append(QLineF(x, y0, x, std::min(y1, y0 - 1.0)));
      if (poly.isEmpty()) poly << QPointF(x, area.bottom());
      poly << QPointF(x, range.y(g.hi[c], area));
      lastX = x;
      prevLo = g.lo[c];
      prevHi = g.hi[c];
    }
    flush(lastX);
    p.setPen(QPen(colour, 1.0));
    p.drawLines(lines);
  } else {
    QPainterPath line;
    size_t dots = 0;
    for (size_t s = 0; s < g.segmentStarts.size(); ++s) {
      const size_t a = g.segmentStarts[s];
      const size_t b = s + 1 < g.segmentStarts.size() ? g.segmentStarts[s + 1] : g.points.size();
      if (b <= a) continue;
      QPainterPath area_;
      line.moveTo(left + g.points[a].x, range.y(g.points[a].v, area));
      area_.moveTo(left + g.points[a].x, area.bottom());
      area_.lineTo(left + g.points[a].x, range.y(g.points[a].v, area));
      for (size_t i = a + 1; i < b; ++i) {
        const double x = left + g.points[i].x;
        const double yPrev = range.y(g.points[i - 1].v, area), y = range.y(g.points[i].v, area);
        line.lineTo(x, yPrev);
        line.lineTo(x, y);
        area_.lineTo(x, yPrev);
        area_.lineTo(x, y);
      }
      area_.lineTo(left + g.points[b - 1].x, area.bottom());
      area_.closeSubpath();
      p.fillPath(area_, fill);
      dots += b - a;
    }
    p.setPen(QPen(colour, 1.3));
    p.setBrush(Qt::NoBrush);
    p.drawPath(line);
    // Dots on the samples when they are far enough apart to tell one from another.
    if (g.points.size() >= 2 && area.width() / static_cast<double>(dots) > 6.0) {
      p.setPen(Qt::NoPen);
      p.setBrush(colour);
      for (const auto& pt : g.points)
        p.drawEllipse(QPointF(left + pt.x, range.y(pt.v, area)), 2.0, 2.0);
    }
  }
  p.restore();
}

void paintKernels(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                  const std::function<QString(uint32_t)>& name, long highlight) {
  p.save();
  p.setClipRect(area);
  // Busy bars: each class stacked from the bottom, height = busy fraction of the pixel.
  const size_t cols = g.busy[0].size();
  std::array<QVector<QLineF>, kKernelClassCount> lines;
  for (size_t c = 0; c < cols; ++c) {
    double base = area.bottom();
    double total = 0;
    for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
      const double f = std::min(1.0 - total, static_cast<double>(g.busy[cl][c]));
      if (f <= 0.002) continue;
      total += f;
      const double h = std::max(1.0, f * area.height());
      const double x = area.left() + static_cast<double>(c) + 0.5;
      lines[cl].append(QLineF(x, base, x, base - h));
      base -= h;
    }
  }
  for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
    if (lines[cl].isEmpty()) continue;
    p.setPen(QPen(theme.kernelClass[cl], 1.0));
    p.drawLines(lines[cl]);
  }
  // Boxes with names.
  QFont f = p.font();
  f.setPointSizeF(std::max(6.0, std::min(9.0, area.height() * 0.45)));
  p.setFont(f);
  const QFontMetricsF fm(f);
  const QRectF inner = area.adjusted(0, 1, 0, -1);
  for (const KernelBox& b : g.boxes) {
    const double x0 = std::max(-1.0, b.x0), x1 = std::min(area.width() + 1, b.x1);
    const QRectF r(area.left() + x0, inner.top(), std::max(1.0, x1 - x0), inner.height());
    const QColor c = theme.classColor(b.cls);
    p.fillRect(r, c);
    if (r.width() > 4) {
      p.setPen(QPen(c.darker(130), 1.0));
      p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
    }
    if (r.width() > 28 && name) {
      const QString text = fm.elidedText(name(b.name), Qt::ElideRight, r.width() - 6);
      if (!text.isEmpty() && text != QStringLiteral("…")) {
        p.setPen(c.lightness() > 140 ? QColor(0x10, 0x10, 0x10) : QColor(0xff, 0xff, 0xff));
        p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
      }
    }
    if (highlight >= 0 && static_cast<long>(b.event) == highlight) {
      p.setPen(QPen(theme.highlight, 2.5));
      p.setBrush(Qt::NoBrush);
      p.drawRect(r.adjusted(-1, -1, 1, 1));
    }
  }
  p.restore();
}

void paintHeatmap(QPainter& p, const QRectF& area, const HeatmapGeometry& g, ValueRange range,
                  const Theme& theme, const std::vector<size_t>& separators) {
  if (g.rows == 0 || g.columns == 0) return;
  QImage img(static_cast<int>(g.columns), static_cast<int>(g.rows), QImage::Format_RGB32);
  const double span = range.max > range.min ? range.max - range.min : 1.0;
  // A 256-entry colour table keeps per-cell work to a lookup.
  std::array<QRgb, 256> lut;
  for (int i = 0; i < 256; ++i)
    lut[static_cast<size_t>(i)] = theme.heat(i / 255.0).rgb();
  const QRgb none = theme.trackAltBackground.rgb();
  for (size_t r = 0; r < g.rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(img.scanLine(static_cast<int>(r)));
    for (size_t c = 0; c < g.columns; ++c) {
      const float v = g.values[r * g.columns + c];
      if (std::isnan(v)) {
        line[c] = none;
        continue;
      }
      const int i = static_cast<int>(std::clamp((v - range.min) / span, 0.0, 1.0) * 255.0 + 0.5);
      line[c] = lut[static_cast<size_t>(i)];
    }
  }
  p.save();
  p.setRenderHint(QPainter::SmoothPixmapTransform, false);
  p.drawImage(QRectF(area.left(), area.top(), static_cast<double>(g.columns), area.height()), img);
  p.setPen(QPen(theme.background, 1.0));
  const double rowH = area.height() / static_cast<double>(g.rows);
  for (size_t s : separators) {
    const double y = area.top() + rowH * static_cast<double>(s);
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
  }
  p.restore();
}

std::vector<double> niceTicks(double min, double max, int approxCount) {
  std::vector<double> ticks;
  if (!(max > min) || approxCount < 1) return ticks;
  const double raw = (max - min) / approxCount;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(min / step) * step; v <= max + step * 1e-9; v += step)
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

int64_t niceTimeStep(double nsPerPx, double minSpacingPx) {
  const double raw = nsPerPx * minSpacingPx;
  int64_t step = 1;
  while (true) {
    for (int64_t m : {1, 2, 5}) {
      if (static_cast<double>(step * m) >= raw) return step * m;
    }
    if (step > INT64_MAX / 100) return step * 10;
    step *= 10;
  }
}

}  // namespace wl
