// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/matrix/matrix_frame.h"

#include <QFontMetricsF>
#include <QLinearGradient>
#include <QObject>

#include <algorithm>
#include <cmath>

namespace wl {
namespace {

constexpr double kBarWidth = 180, kBarHeight = 9, kGap = 6;

// The smallest of 1, 2, 5, 10, 20, 50, ... (steps) or 1, 2, 4, 8, ... (rows) at least `every`.
size_t niceEvery(double every, bool powersOfTwo) {
  size_t n = 1;
  for (int i = 0; i < 40; ++i) {
    if (static_cast<double>(n) >= every) return n;
    if (powersOfTwo) {
      n *= 2;
    } else {
      const size_t lead = n / static_cast<size_t>(std::pow(10, std::floor(std::log10(n))));
      n = lead == 2 ? n / 2 * 5 : n * 2;
    }
  }
  return n;
}

bool darkTheme(const Theme& t) {
  return t.trackBackground.lightness() < 128;
}

}  // namespace

QString matrixMeasureTitle(MatrixMeasure measure) {
  return measure == MatrixMeasure::Cost
             ? QObject::tr("Cost of throttling per step (s)")
             : QObject::tr("Lateness into the step's last collective (s)");
}

QColor matrixCellColor(const Theme& theme, double value, double max) {
  if (!std::isfinite(value)) return theme.trackAltBackground;
  if (!(value > 0) || !(max > 0)) return theme.trackBackground;
  const double t = std::clamp(value / max, 0.0, 1.0);
  // Light themes: pale yellow for a little, dark purple for the most; dark themes the other way,
  // so the largest values always stand out from the background.
  return theme.heat(darkTheme(theme) ? 0.2 + 0.8 * t : 0.95 - 0.75 * t);
}

MatrixLayout layoutMatrix(const IterationMatrix& m, const QRectF& body, const MatrixFonts& fonts) {
  MatrixLayout l;
  const QFontMetricsF tm(fonts.text), sm(fonts.small);
  l.barTitle = matrixMeasureTitle(m.measure);
  l.stepTitle = QObject::tr("Step");
  // Legend line: title, bar, its labels under it.
  const double legendH = std::max(tm.height(), kBarHeight + sm.height() + 1) + kGap;
  const double titleW = tm.horizontalAdvance(l.barTitle);
  l.bar = QRectF(body.left() + titleW + 10, body.top() + 2, kBarWidth, kBarHeight);
  if (m.max > 0) {
    for (const AxisTick& t : valueTicks(0, m.max, 4))
      if (t.pos >= 0 && t.pos <= m.max * (1 + 1e-9))
        l.barTicks.push_back({l.bar.left() + t.pos / m.max * l.bar.width(), t.label, true});
  } else {
    l.barTicks.push_back({l.bar.left(), QStringLiteral("0"), true});
  }
  bool unknown = false;
  for (double v : m.values)
    unknown = unknown || !std::isfinite(v);
  if (unknown) l.untraced = QRectF(l.bar.right() + 24, l.bar.top(), 18, kBarHeight);
  // Bottom: tick labels and the axis title.
  const double bottomH = l.tickLength + sm.height() + 2 + tm.height() + 2;
  const double top = body.top() + legendH;
  const double height = std::max(1.0, body.bottom() - bottomH - top);
  // Rows: every n-th labelled.
  const size_t R = std::max<size_t>(m.rows(), 1), C = std::max<size_t>(m.cols(), 1);
  const double rowH = height / static_cast<double>(R);
  const size_t everyRow = niceEvery(std::ceil(sm.height() * 1.1 / rowH), true);
  double labelW = 0;
  for (size_t r = 0; r < m.rows(); r += everyRow) {
    const QString s = QString::fromStdString(matrixRowLabel(m, r));
    labelW = std::max(labelW, sm.horizontalAdvance(s));
    l.rowTicks.push_back({top + (static_cast<double>(r) + 0.5) * rowH, s, true});
  }
  const double left = body.left() + labelW + l.tickLength + 4;
  l.cells = QRectF(left, top, std::max(1.0, body.right() - left - 2), height);
  // Steps: labels about 60 px apart (and never overlapping), at steps that are multiples of n.
  const double colW = l.cells.width() / static_cast<double>(C);
  double widest = 0;
  for (const MatrixColumn& c : m.columns)
    widest = std::max(widest, sm.horizontalAdvance(QString::number(c.step)));
  const size_t everyCol = niceEvery(std::max(widest + 8, 40.0) / colW, false);
  for (size_t c = 0; c < m.cols(); ++c)
    if (m.columns[c].step % static_cast<int64_t>(everyCol) == 0)
      l.stepTicks.push_back({l.cells.left() + (static_cast<double>(c) + 0.5) * colW,
                             QString::number(m.columns[c].step), true});
  return l;
}

QImage matrixImage(const IterationMatrix& m, QSize size, const Theme& theme) {
  QImage img(std::max(size.width(), 1), std::max(size.height(), 1), QImage::Format_RGB32);
  img.fill(theme.trackBackground);
  if (m.empty()) return img;
  const int W = img.width(), H = img.height();
  const size_t R = m.rows(), C = m.cols();
  // The cell ranges under each pixel column and row.
  auto spans = [](int pixels, size_t cells) {
    std::vector<std::pair<size_t, size_t>> s(static_cast<size_t>(pixels));
    for (int i = 0; i < pixels; ++i) {
      const auto a = static_cast<size_t>(static_cast<double>(i) * cells / pixels);
      auto b = static_cast<size_t>(static_cast<double>(i + 1) * cells / pixels);
      s[static_cast<size_t>(i)] = {std::min(a, cells - 1), std::clamp(b, a + 1, cells)};
    }
    return s;
  };
  const auto xs = spans(W, C), ys = spans(H, R);
  const double cellW = static_cast<double>(W) / C, cellH = static_cast<double>(H) / R;
  // A light hatch: the muted text colour 35 % over the unknown cell's background.
  const QColor u = theme.trackAltBackground, t = theme.mutedText;
  const QRgb gap = theme.gridLine.rgb(), unknown = u.rgb(),
             hatch = qRgb(u.red() + (t.red() - u.red()) * 35 / 100,
                          u.green() + (t.green() - u.green()) * 35 / 100,
                          u.blue() + (t.blue() - u.blue()) * 35 / 100);
  // Colours of the per-pixel maxima (a lookup of 256 steps).
  std::vector<QRgb> lut(256);
  for (size_t i = 0; i < lut.size(); ++i)
    lut[i] = matrixCellColor(theme, m.max * static_cast<double>(i) / 255.0, m.max).rgb();
  lut[0] = theme.trackBackground.rgb();
  std::vector<double> colMax(static_cast<size_t>(W));
  for (int y = 0; y < H; ++y) {
    auto* line = reinterpret_cast<QRgb*>(img.scanLine(y));
    const auto [r0, r1] = ys[static_cast<size_t>(y)];
    const bool rowGap =
        cellH >= 6 && static_cast<int>((y + 1) / cellH) != static_cast<int>(y / cellH);
    for (int x = 0; x < W; ++x) {
      const auto [c0, c1] = xs[static_cast<size_t>(x)];
      double v = kNaN;
      for (size_t r = r0; r < r1; ++r)
        for (size_t c = c0; c < c1; ++c) {
          const double a = m.values[r * C + c];
          if (std::isfinite(a) && !(a <= v)) v = a;
        }
      const bool colGap =
          cellW >= 6 && static_cast<int>((x + 1) / cellW) != static_cast<int>(x / cellW);
      if (rowGap || colGap)
        line[x] = gap;
      else if (!std::isfinite(v))
        line[x] = (x + y) % 7 == 0 ? hatch : unknown;
      else
        line[x] =
            v > 0 && m.max > 0
                ? lut[std::clamp<size_t>(static_cast<size_t>(std::lround(v / m.max * 255)), 1, 255)]
                : lut[0];
    }
  }
  return img;
}

namespace {

void paintLegend(QPainter& p, const MatrixLayout& l, const IterationMatrix& m, const Theme& theme,
                 const MatrixFonts& fonts) {
  const QFontMetricsF tm(fonts.text), sm(fonts.small);
  p.setPen(theme.text);
  p.setFont(fonts.text);
  p.drawText(QRectF(l.bar.left() - 10 - tm.horizontalAdvance(l.barTitle) - 1, l.bar.top() - 3,
                    tm.horizontalAdvance(l.barTitle) + 2, tm.height()),
             Qt::AlignLeft | Qt::AlignTop, l.barTitle);
  QLinearGradient grad(l.bar.topLeft(), l.bar.topRight());
  for (int i = 0; i <= 8; ++i)
    grad.setColorAt(i / 8.0, matrixCellColor(theme, i == 0 ? 0.0 : m.max * i / 8.0, m.max));
  p.fillRect(l.bar, grad);
  p.setPen(QPen(theme.gridLine, fonts.hairline));
  p.drawRect(l.bar);
  p.setFont(fonts.small);
  p.setPen(theme.text);
  for (const AxisTick& t : l.barTicks) {
    const double w = sm.horizontalAdvance(t.label) + 2;
    p.drawText(QRectF(t.pos - w / 2, l.bar.bottom() + 1, w, sm.height()), Qt::AlignCenter, t.label);
  }
  if (l.untraced) {
    p.fillRect(*l.untraced, QBrush(theme.trackAltBackground));
    QColor h = theme.mutedText;
    h.setAlphaF(0.35);
    p.fillRect(*l.untraced, QBrush(h, Qt::BDiagPattern));
    p.setPen(QPen(theme.gridLine, fonts.hairline));
    p.drawRect(*l.untraced);
    p.setPen(theme.text);
    p.drawText(QRectF(l.untraced->right() + 4, l.untraced->top() - 3, 200, sm.height() + 4),
               Qt::AlignLeft | Qt::AlignVCenter, QObject::tr("not traced"));
  }
}

void paintAxes(QPainter& p, const MatrixLayout& l, const Theme& theme, const MatrixFonts& fonts) {
  const QFontMetricsF tm(fonts.text), sm(fonts.small);
  p.setPen(QPen(theme.text, fonts.hairline));
  p.setFont(fonts.small);
  for (const AxisTick& t : l.rowTicks) {
    p.drawLine(QPointF(l.cells.left() - l.tickLength, t.pos), QPointF(l.cells.left(), t.pos));
    p.drawText(
        QRectF(l.cells.left() - l.tickLength - 2 - 200, t.pos - sm.height() / 2, 200, sm.height()),
        Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
  for (const AxisTick& t : l.stepTicks) {
    p.drawLine(QPointF(t.pos, l.cells.bottom()), QPointF(t.pos, l.cells.bottom() + l.tickLength));
    const double w = sm.horizontalAdvance(t.label) + 4;
    p.drawText(QRectF(t.pos - w / 2, l.cells.bottom() + l.tickLength + 1, w, sm.height()),
               Qt::AlignCenter, t.label);
  }
  p.setFont(fonts.text);
  p.drawText(QRectF(l.cells.left(), l.cells.bottom() + l.tickLength + sm.height() + 2,
                    l.cells.width(), tm.height()),
             Qt::AlignHCenter | Qt::AlignTop, l.stepTitle);
}

}  // namespace

void paintMatrix(QPainter& p, const MatrixLayout& l, const IterationMatrix& m, const Theme& theme,
                 const MatrixFonts& fonts, double scale, const QImage* image) {
  p.save();
  paintLegend(p, l, m, theme, fonts);
  if (image) {
    p.drawImage(l.cells, *image);
  } else {
    const QSize px(std::max(1, static_cast<int>(std::lround(l.cells.width() * scale))),
                   std::max(1, static_cast<int>(std::lround(l.cells.height() * scale))));
    p.drawImage(l.cells, matrixImage(m, px, theme));
  }
  p.setPen(QPen(theme.gridLine, fonts.hairline));
  p.setBrush(Qt::NoBrush);
  p.drawRect(l.cells);
  paintAxes(p, l, theme, fonts);
  p.restore();
}

std::optional<std::pair<size_t, size_t>> matrixCellAt(const MatrixLayout& l,
                                                      const IterationMatrix& m, QPointF pos) {
  if (m.empty() || !l.cells.contains(pos)) return std::nullopt;
  const auto r = static_cast<size_t>((pos.y() - l.cells.top()) / l.cells.height() * m.rows());
  const auto c = static_cast<size_t>((pos.x() - l.cells.left()) / l.cells.width() * m.cols());
  return std::make_pair(std::min(r, m.rows() - 1), std::min(c, m.cols() - 1));
}

QRectF matrixCellRect(const MatrixLayout& l, const IterationMatrix& m, size_t row, size_t col) {
  if (m.empty()) return {};
  const double w = l.cells.width() / m.cols(), h = l.cells.height() / m.rows();
  return QRectF(l.cells.left() + col * w, l.cells.top() + row * h, w, h);
}

}  // namespace wl
