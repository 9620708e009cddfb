// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/track_painter.h"

#include <QFontMetricsF>
#include <QPaintEngine>
#include <QPainterPath>

#include <cmath>
#include <unordered_map>

namespace wl {

namespace {

// Eliding shapes the whole text; kernel names are long and repeat, so remember the results per
// name, font size and width (rounded down to 4 px, which only ever shortens the text).
QString elided(const QFontMetricsF& fm, const QFont& font, const QString& text, double width) {
  struct Key {
    QString text;
    int size, width;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return qHash(k.text) ^ (static_cast<size_t>(k.width) << 20) ^ static_cast<size_t>(k.size);
    }
  };
  static thread_local std::unordered_map<Key, QString, KeyHash> cache;
  const int w = static_cast<int>(width) / 4 * 4;
  Key key{text, static_cast<int>(font.pointSizeF() * 10), w};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 20000) cache.clear();
  QString e = fm.elidedText(text, Qt::ElideRight, w);
  cache.emplace(std::move(key), e);
  return e;
}

}  // namespace

void paintThrottleBands(QPainter& p, const QRectF& area, const std::vector<ThrottleBand>& bands,
                        const Theme& theme) {
  for (int pass = 0; pass < 2; ++pass) {  // weak bands first, strong ones over them
    for (const ThrottleBand& b : bands) {
      if (b.strong != (pass == 1)) continue;
      const double x0 = std::max(0.0, b.x0), x1 = std::min(area.width(), b.x1);
      if (x1 <= x0) continue;
      p.fillRect(QRectF(area.left() + x0, area.top(), std::max(1.0, x1 - x0), area.height()),
                 theme.reasonColor(b.reasons, b.strong));
    }
  }
}

void paintCounter(QPainter& p, const QRectF& area, const CounterGeometry& g, ValueRange range,
                  const QColor& colour, const Theme& theme) {
  (void)theme;
  if (g.raw()) {
    paintCounterSamples(p, area, g, range, colour);
    return;
  }
  // Envelope: per column, a line from min to max (stretched to meet the previous column so the
  // line stays continuous) over a lightly filled area under the max: one filled polygon per
  // gap-free stretch and one batch of lines. (Screens and PNGs use raster_track.h instead.)
  p.save();
  p.setClipRect(area);
  QColor fill = colour;
  fill.setAlpha(45);
  const double left = area.left(), bottom = area.bottom();
  QVector<QLineF> lines;
  lines.reserve(static_cast<int>(g.lo.size()));
  QPolygonF poly;
  auto flush = [&](double lastX) {
    if (poly.size() > 1) {
      poly << QPointF(lastX, bottom) << QPointF(poly.front().x(), bottom);
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
    if (poly.isEmpty()) poly << QPointF(x, bottom);
    poly << QPointF(x, range.y(g.hi[c], area));
    lastX = x;
    prevLo = g.lo[c];
    prevHi = g.hi[c];
  }
  flush(lastX);
  p.setPen(QPen(colour, 1.0));
  p.drawLines(lines);
  p.restore();
}

void paintCounterSamples(QPainter& p, const QRectF& area, const CounterGeometry& g,
                         ValueRange range, const QColor& colour) {
  // Points outside the area are culled here (one neighbour kept on each side) rather than
  // clipped by the painter: clipping a path costs far more than drawing it.
  p.save();
  QColor fill = colour;
  fill.setAlpha(45);
  const double left = area.left();
  size_t dots = 0;
  QPolygonF line, under;
  for (size_t s = 0; s < g.segmentStarts.size(); ++s) {
    const size_t a = g.segmentStarts[s];
    const size_t b = s + 1 < g.segmentStarts.size() ? g.segmentStarts[s + 1] : g.points.size();
    if (b <= a) continue;
    size_t first = a, last = b - 1;
    while (first + 1 < b && g.points[first + 1].x < 0)
      ++first;
    while (last > first && g.points[last - 1].x > area.width())
      --last;
    if (g.points[first].x > area.width() || g.points[last].x < 0) continue;
    line.clear();
    for (size_t i = first; i <= last; ++i) {
      const double x = std::clamp(left + g.points[i].x, left - 1, area.right() + 1);
      if (i > first) line << QPointF(x, range.y(g.points[i - 1].v, area));
      line << QPointF(x, range.y(g.points[i].v, area));
    }
    under = line;
    under << QPointF(line.back().x(), area.bottom()) << QPointF(line.front().x(), area.bottom());
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    p.drawPolygon(under);
    QPen pen(colour, 0);  // cosmetic: one device pixel, the raster engine's fast line path
    pen.setCosmetic(true);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(line);
    dots += last - first + 1;
  }
  // Dots on the samples when they are far enough apart to tell one from another.
  if (dots >= 2 && area.width() / static_cast<double>(dots) > 8.0) {
    p.setPen(Qt::NoPen);
    p.setBrush(colour);
    for (const auto& pt : g.points)
      if (pt.x >= -2 && pt.x <= area.width() + 2)
        p.fillRect(QRectF(left + pt.x - 1.5, range.y(pt.v, area) - 1.5, 3, 3), colour);
  }
  p.restore();
}

void paintKernels(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                  const std::function<QString(uint32_t)>& name, long highlight) {
  // Busy bars: each class stacked from the bottom, height = busy fraction of the pixel.
  p.save();
  p.setClipRect(area);
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
  p.restore();
  paintKernelBoxes(p, area, g, theme, name);
  paintKernelHighlight(p, area, g, theme, highlight);
}

void paintKernelBoxes(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                      const std::function<QString(uint32_t)>& name) {
  if (g.boxes.empty()) return;
  p.save();
  p.setClipRect(area);
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
      p.setBrush(Qt::NoBrush);
      p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
    }
    if (r.width() > 28 && name) {
      const QString text = elided(fm, f, name(b.name), r.width() - 6);
      if (!text.isEmpty() && text != QStringLiteral("…")) {
        p.setPen(c.lightness() > 140 ? QColor(0x10, 0x10, 0x10) : QColor(0xff, 0xff, 0xff));
        p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
      }
    }
  }
  p.restore();
}

void paintKernelHighlight(QPainter& p, const QRectF& area, const KernelGeometry& g,
                          const Theme& theme, long highlight) {
  if (highlight < 0) return;
  p.save();
  p.setClipRect(area.adjusted(-2, -2, 2, 2));
  const QRectF inner = area.adjusted(0, 1, 0, -1);
  for (const KernelBox& b : g.boxes) {
    if (static_cast<long>(b.event) != highlight) continue;
    const double x0 = std::max(-1.0, b.x0), x1 = std::min(area.width() + 1, b.x1);
    const QRectF r(area.left() + x0, inner.top(), std::max(1.0, x1 - x0), inner.height());
    p.setPen(QPen(theme.highlight, 2.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(-1, -1, 1, 1));
  }
  p.restore();
}

void paintDifference(QPainter& p, const QRectF& area, const DifferenceGeometry& g, ValueRange range,
                     const Theme& theme) {
  p.save();
  p.setClipRect(area);
  const QColor above = theme.isDark ? QColor(0xf0, 0x80, 0x60) : QColor(0xd0, 0x50, 0x30);
  const QColor below = theme.isDark ? QColor(0x70, 0xa8, 0xf0) : QColor(0x30, 0x70, 0xc0);
  const double y0 = range.y(0.0, area);
  p.setPen(QPen(theme.separator, 1.0));
  p.drawLine(QPointF(area.left(), y0), QPointF(area.right(), y0));
  if (!g.samples) {
    QVector<QLineF> up, down;
    for (size_t c = 0; c < g.column.size(); ++c) {
      const float v = g.column[c];
      if (std::isnan(v)) continue;
      const double x = area.left() + static_cast<double>(c) + 0.5;
      const double y = range.y(v, area);
      (v >= 0 ? up : down)
          .append(QLineF(x, y0, x, std::abs(y - y0) < 1 ? y0 + (v >= 0 ? -1 : 1) : y));
    }
    p.setPen(QPen(above, 1.0));
    p.drawLines(up);
    p.setPen(QPen(below, 1.0));
    p.drawLines(down);
  } else {
    for (size_t s = 0; s < g.segmentStarts.size(); ++s) {
      const size_t a = g.segmentStarts[s];
      const size_t b = s + 1 < g.segmentStarts.size() ? g.segmentStarts[s + 1] : g.points.size();
      QPolygonF line;
      for (size_t i = a; i < b; ++i) {
        const double x = std::clamp(area.left() + g.points[i].x, area.left() - 1, area.right() + 1);
        if (i > a) line << QPointF(x, range.y(g.points[i - 1].v, area));
        line << QPointF(x, range.y(g.points[i].v, area));
      }
      QPen pen(theme.text, 0);
      pen.setCosmetic(true);
      p.setPen(pen);
      p.drawPolyline(line);
      for (size_t i = a; i < b; ++i)
        p.fillRect(
            QRectF(area.left() + g.points[i].x - 1.5, range.y(g.points[i].v, area) - 1.5, 3, 3),
            g.points[i].v >= 0 ? above : below);
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
