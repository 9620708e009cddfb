// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/track_painter.h"

#include <QFontMetricsF>
#include <QPaintEngine>
#include <QPainterPath>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analysis/parallel.h"

namespace wl {

std::optional<std::pair<size_t, size_t>> visibleSegment(const CounterGeometry& g, size_t a,
                                                        size_t b, double width) {
  if (b <= a) return std::nullopt;
  size_t first = a, last = b - 1;
  while (first + 1 < b && g.points[first + 1].x < 0)
    ++first;
  while (last > first && g.points[last - 1].x > width)
    --last;
  if (g.points[first].x > width || g.points[last].x < 0) return std::nullopt;
  return std::make_pair(first, last);
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

namespace {

// Value -> colour of heatmap cells: a 256-entry colour table (entry 256: no data) indexed by
// round((v - min) / span * 255) as the division computes it.
class HeatScale {
 public:
  HeatScale(ValueRange range, const Theme& theme)
      : lo_(range.min),
        span_(range.max > range.min ? range.max - range.min : 1.0),
        inv_(1.0 / span_) {
    for (size_t i = 0; i < 256; ++i)
      table_[i] = theme.heat(static_cast<double>(i) / 255.0).rgb();
    table_[256] = theme.trackAltBackground.rgb();
    // The four-lane float path's index is within 2e-4 of the exact one while |min| + |max| stays
    // under 8 spans (the rounding of min to a float is the largest term, 255 * 8 * 2^-24); lanes
    // closer than kEdge to a rounding boundary take the exact path, so every index is the
    // division's. Other ranges take the exact path for every cell.
    fast_ = std::isfinite(lo_) && std::isfinite(span_) && span_ > 1e-12 &&
            std::abs(lo_) + std::abs(lo_ + span_) < 8.0 * span_;
    loF_ = static_cast<float>(lo_);
    scaleF_ = static_cast<float>(255.0 / span_);
  }

  // The index of one value. A multiplication by 1 / span stands in for the division; where the
  // product is within 1e-9 of a rounding boundary (its error is below 1e-13), the division decides.
  size_t index(float v) const {
    if (std::isnan(v)) return 256;
    const double x = std::clamp((v - lo_) * inv_, 0.0, 1.0) * 255.0 + 0.5;
    int i = static_cast<int>(x);
    if (const double f = x - i; f < 1e-9 || f > 1.0 - 1e-9)
      i = static_cast<int>(std::clamp((v - lo_) / span_, 0.0, 1.0) * 255.0 + 0.5);
    return static_cast<size_t>(i);
  }

  void colourLine(QRgb* line, const float* vals, size_t n) const {
    size_t c = 0;
#if defined(__SSE2__)
    if (fast_) c = colourLanes(line, vals, n);
#endif
    for (; c < n; ++c)
      line[c] = table_[index(vals[c])];
  }

 private:
#if defined(__SSE2__)
  // Four cells at a time; returns the cells done (a multiple of four).
  size_t colourLanes(QRgb* line, const float* vals, size_t n) const {
    static constexpr float kEdge = 1e-3f;
    const __m128 lo = _mm_set1_ps(loF_), scale = _mm_set1_ps(scaleF_), zero = _mm_setzero_ps();
    const __m128 top = _mm_set1_ps(255.0f), half = _mm_set1_ps(0.5f);
    const __m128 below = _mm_set1_ps(kEdge), above = _mm_set1_ps(1.0f - kEdge);
    const __m128i none = _mm_set1_epi32(256);
    alignas(16) int32_t idx[4];
    size_t c = 0;
    for (; c + 4 <= n; c += 4) {
      const __m128 v = _mm_loadu_ps(vals + c);
      const __m128 nan = _mm_cmpunord_ps(v, v);
      // max(NaN, 0) is 0 in SSE: a NaN lane converts safely and is replaced below.
      __m128 x = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(v, lo), scale), zero);
      x = _mm_add_ps(_mm_min_ps(x, top), half);
      const __m128i i = _mm_cvttps_epi32(x);
      const __m128 f = _mm_sub_ps(x, _mm_cvtepi32_ps(i));
      const __m128 edge =
          _mm_andnot_ps(nan, _mm_or_ps(_mm_cmplt_ps(f, below), _mm_cmpgt_ps(f, above)));
      const __m128i nanI = _mm_castps_si128(nan);
      _mm_store_si128(reinterpret_cast<__m128i*>(idx),
                      _mm_or_si128(_mm_andnot_si128(nanI, i), _mm_and_si128(nanI, none)));
      if (const int m = _mm_movemask_ps(edge))
        for (int k = 0; k < 4; ++k)
          if (m & (1 << k)) idx[k] = static_cast<int32_t>(index(vals[c + static_cast<size_t>(k)]));
      for (size_t k = 0; k < 4; ++k)
        line[c + k] = table_[static_cast<size_t>(idx[k])];
    }
    return c;
  }
#endif

  double lo_, span_, inv_;
  float loF_ = 0, scaleF_ = 0;
  bool fast_ = false;
  std::array<QRgb, 257> table_{};
};

// Colours the cells of `g` into scan lines of `g.columns` pixels, `stride` bytes apart (rows in
// blocks on the cores side by side, each into its own lines).
void colourHeatmapCells(uchar* bits, size_t stride, const HeatmapGeometry& g, ValueRange range,
                        const Theme& theme) {
  const HeatScale scale(range, theme);
  const float* const values = g.values.data();
  const size_t columns = g.columns;
  parallelBlocks(g.rows, g.rows * g.columns, [&scale, bits, stride, values, columns](size_t r) {
    scale.colourLine(reinterpret_cast<QRgb*>(bits + r * stride), values + r * columns, columns);
  });
}

void paintNodeSeparators(QPainter& p, const QRectF& area, size_t rows, const Theme& theme,
                         const std::vector<size_t>& separators) {
  p.setPen(QPen(theme.background, 1.0));
  const double rowH = area.height() / static_cast<double>(rows);
  for (size_t s : separators) {
    const double y = area.top() + rowH * static_cast<double>(s);
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
  }
}

}  // namespace

void paintHeatmap(QPainter& p, const QRectF& area, const HeatmapGeometry& g, ValueRange range,
                  const Theme& theme, const std::vector<size_t>& separators) {
  if (g.rows == 0 || g.columns == 0) return;
  QImage img(static_cast<int>(g.columns), static_cast<int>(g.rows), QImage::Format_RGB32);
  colourHeatmapCells(img.bits(), static_cast<size_t>(img.bytesPerLine()), g, range, theme);
  p.save();
  p.setRenderHint(QPainter::SmoothPixmapTransform, false);
  p.drawImage(QRectF(area.left(), area.top(), static_cast<double>(g.columns), area.height()), img);
  paintNodeSeparators(p, area, g.rows, theme, separators);
  p.restore();
}

void rasterHeatmap(QImage& img, const HeatmapGeometry& g, ValueRange range, const Theme& theme,
                   const std::vector<size_t>& separators) {
  const QRectF area(0, 0, img.width(), img.height());
  if (g.rows == 0 || g.columns == 0 || img.format() != QImage::Format_RGB32 ||
      static_cast<size_t>(img.width()) != g.columns ||
      static_cast<size_t>(img.height()) != g.rows) {
    img.fill(theme.trackAltBackground);
    QPainter p(&img);
    paintHeatmap(p, area, g, range, theme, separators);
    return;
  }
  // One pixel per cell: coloured in place, as paintHeatmap's unscaled blit would leave them.
  colourHeatmapCells(img.bits(), static_cast<size_t>(img.bytesPerLine()), g, range, theme);
  QPainter p(&img);
  paintNodeSeparators(p, area, g.rows, theme, separators);
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
