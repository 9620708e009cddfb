// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/raster_track.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include <QFontMetricsF>

namespace wl {
namespace {

QRgb mix(QRgb a, QRgb b, int alpha) {  // b over a with alpha 0..255
  const int ia = 255 - alpha;
  return qRgb((qRed(a) * ia + qRed(b) * alpha) / 255, (qGreen(a) * ia + qGreen(b) * alpha) / 255,
              (qBlue(a) * ia + qBlue(b) * alpha) / 255);
}

QRgb over(QRgb base, const QColor& c) {
  return mix(base, c.rgb(), c.alpha());
}

// The band colour of every column (0 = none), from the geometry's bands.
std::vector<const ThrottleBand*> bandPerColumn(const std::vector<ThrottleBand>& bands, int width) {
  std::vector<const ThrottleBand*> out(static_cast<size_t>(std::max(width, 0)), nullptr);
  for (const ThrottleBand& b : bands) {
    const int c0 = std::max(0, static_cast<int>(std::floor(b.x0)));
    const int c1 = std::min(width, static_cast<int>(std::ceil(b.x1)));
    for (int c = c0; c < c1; ++c)
      out[static_cast<size_t>(c)] = &b;
  }
  return out;
}

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

void rasterBackground(QImage& img, const std::vector<ThrottleBand>& bands, const QColor& background,
                      const Theme& theme) {
  img.fill(background);
  const int w = img.width(), h = img.height();
  if (bands.empty() || w <= 0 || h <= 0) return;
  // Every row is the same: build the first one (a colour per band, not per column), copy it down.
  auto* first = reinterpret_cast<QRgb*>(img.scanLine(0));
  const auto perColumn = bandPerColumn(bands, w);
  const ThrottleBand* last = nullptr;
  QRgb lastColour = 0;
  for (int x = 0; x < w; ++x) {
    const ThrottleBand* b = perColumn[static_cast<size_t>(x)];
    if (!b) continue;
    if (b != last) {
      last = b;
      lastColour = over(background.rgb(), theme.reasonColor(b->reasons, b->strong));
    }
    first[x] = lastColour;
  }
  const size_t bytes = static_cast<size_t>(w) * sizeof(QRgb);
  for (int y = 1; y < h; ++y)
    std::memcpy(img.scanLine(y), first, bytes);
}

void rasterCounter(QImage& img, const CounterGeometry& g, ValueRange range, int dataTop,
                   int dataBottom, const QColor& colour, const Theme& theme) {
  const int w = img.width(), h = img.height();
  auto* px = reinterpret_cast<QRgb*>(img.bits());
  const qsizetype stride = img.bytesPerLine() / 4;
  const QRgb bg = theme.trackBackground.rgb();
  const QRgb line = colour.rgb();
  const QRgb fill = mix(bg, line, 45);
  const QRgb grid = theme.gridLine.rgb();
  const auto perColumn = bandPerColumn(g.bands, w);
  const double span = range.max > range.min ? range.max - range.min : 1.0;
  const double scale = (dataBottom - dataTop) / span;
  auto yOf = [&](double v) {
    const double y = dataBottom - (v - range.min) * scale + 0.5;
    return std::clamp(static_cast<int>(y), 0, h - 1);  // y > 0 in range: truncation rounds
  };
  std::vector<int> gridRows;
  for (double v : niceTicks(range.min, range.max, 2)) {
    const int y = yOf(v);
    if (y > dataTop + 1 && y < dataBottom - 1) gridRows.push_back(y);
  }
  // Per column: where the filled area starts (h: nothing filled), the line's rows [l1, l0]
  // (empty when l1 > l0) and the two colours; then the background and fill are written row by
  // row (a select per pixel that vectorizes; column by column, loop overhead took most of the
  // time), and the line, a few pixels per column, column by column over them.
  const size_t n = static_cast<size_t>(std::max(w, 0));
  std::vector<int> top(n, h), l0(n, -1), l1(n, 0);
  std::vector<QRgb> colBg(n, bg), colFill(n, fill);
  double prevLo = kNaN, prevHi = kNaN;
  const ThrottleBand* lastBand = nullptr;  // the colours of the last band seen, computed once
  QRgb bandBg = bg, bandFill = fill;
  for (size_t c = 0; c < n; ++c) {
    if (const ThrottleBand* b = perColumn[c]) {
      if (b != lastBand) {
        lastBand = b;
        const QColor bc = theme.reasonColor(b->reasons, b->strong);
        bandBg = over(bg, bc);
        bandFill = over(fill, bc);
      }
      colBg[c] = bandBg;
      colFill[c] = bandFill;
    }
    if (c >= g.lo.size() || std::isnan(g.lo[c])) {
      prevLo = prevHi = kNaN;
      continue;
    }
    double lo = g.lo[c], hi = g.hi[c];
    if (!std::isnan(prevLo)) {
      lo = std::min(lo, prevHi);
      hi = std::max(hi, prevLo);
    }
    top[c] = yOf(g.hi[c]);
    l0[c] = yOf(lo);
    l1[c] = std::min(yOf(hi), l0[c]);
    prevLo = g.lo[c];
    prevHi = g.hi[c];
  }
  const int fillEnd = std::min(h, dataBottom + 1);
  const int* __restrict tp = top.data();
  const int* __restrict a0 = l0.data();
  const int* __restrict a1 = l1.data();
  const QRgb* __restrict cb = colBg.data();
  const QRgb* __restrict cf = colFill.data();
  for (int y = 0; y < h; ++y) {
    QRgb* __restrict row = px + y * stride;
    if (y >= fillEnd) {
      std::memcpy(row, cb, n * sizeof(QRgb));
    } else {
      for (size_t c = 0; c < n; ++c) {
        const QRgb b = cb[c], f = cf[c];  // both loaded: the select vectorizes
        row[c] = y < tp[c] ? b : f;
      }
    }
    if (std::find(gridRows.begin(), gridRows.end(), y) != gridRows.end())
      for (size_t c = 0; c < n; c += 3)
        if (y < tp[c]) row[c] = grid;
  }
  // The line is a few pixels per column: drawn column by column over the fill.
  for (size_t c = 0; c < n; ++c)
    for (int y = a1[c]; y <= a0[c]; ++y)
      px[y * stride + static_cast<qsizetype>(c)] = line;
}

void rasterKernelBusy(QImage& img, const KernelGeometry& g, const Theme& theme) {
  const int w = img.width(), h = img.height();
  if (w <= 0 || h <= 0) return;
  const size_t n = static_cast<size_t>(w);
  const size_t cols = std::min(n, g.busy[0].size());
  // Per column, the top row of each class's stack segment: class 0 fills [top0, h), class 1
  // [top1, top0), ... (bottom up, each at least a pixel when busier than 0.2 %); a class that is
  // absent gets the top of the one below, an empty segment. Then the image row by row: a pixel
  // takes the first class whose top it is at or below (selects that vectorize), else the
  // background. Filling column by column, strided through the image, took twice as long.
  std::array<std::vector<int>, kKernelClassCount> top;
  for (auto& t : top)
    t.assign(n, h);
  for (size_t x = 0; x < cols; ++x) {
    int base = h;
    double total = 0;
    for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
      const double f = std::min(1.0 - total, static_cast<double>(g.busy[cl][x]));
      if (f > 0.002) {
        total += f;
        // lround(f * h) for f * h >= 0.002: + 0.5 and truncation differ from it only below 0.5,
        // where both give the 1-pixel minimum.
        const int hh = std::max(1, static_cast<int>(f * h + 0.5));
        base = std::max(0, base - hh);
      }
      top[cl][x] = base;
    }
  }
  static_assert(kKernelClassCount == 4);
  const QRgb bg = theme.trackAltBackground.rgb();
  const QRgb k0 = theme.kernelClass[0].rgb(), k1 = theme.kernelClass[1].rgb();
  const QRgb k2 = theme.kernelClass[2].rgb(), k3 = theme.kernelClass[3].rgb();
  const int* __restrict t0 = top[0].data();
  const int* __restrict t1 = top[1].data();
  const int* __restrict t2 = top[2].data();
  const int* __restrict t3 = top[3].data();
  for (int y = 0; y < h; ++y) {
    auto* __restrict row = reinterpret_cast<QRgb*>(img.scanLine(y));
    for (size_t c = 0; c < n; ++c) {
      QRgb r = y >= t3[c] ? k3 : bg;
      r = y >= t2[c] ? k2 : r;
      r = y >= t1[c] ? k1 : r;
      row[c] = y >= t0[c] ? k0 : r;
    }
  }
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
  forEachVisibleSegment(g, area.width(), [&](size_t first, size_t last) {
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
  });
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

void paintKernelBoxes(QPainter& p, const QRectF& area, const KernelGeometry& g, const Theme& theme,
                      const std::function<QString(uint32_t)>& name) {
  if (g.boxes.empty()) return;
  p.save();
  p.setClipRect(area);
  QFont f = p.font();
  f.setPointSizeF(std::max(6.0, std::min(9.0, area.height() * 0.45)));
  p.setFont(f);
  const QFontMetricsF fm(f);
  for (const KernelBox& b : g.boxes) {
    const QRectF r = kernelBoxRect(b, area);
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
  for (const KernelBox& b : g.boxes) {
    if (static_cast<long>(b.event) != highlight) continue;
    const QRectF r = kernelBoxRect(b, area);
    p.setPen(QPen(theme.highlight, 2.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(-1, -1, 1, 1));
  }
  p.restore();
}

}  // namespace wl
