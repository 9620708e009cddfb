// SPDX-License-Identifier: GPL-3.0-or-later
// Throttle strip and reason heatmap: geometry and painting (throttle_strip.h).
#include "widgets/timeline/render/throttle_strip.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <optional>

#include "loaders/core/throttle_reasons.h"
#include "loaders/core/time_format.h"

namespace wl {

bool RunThrottleView::empty() const {
  return std::all_of(gpus.begin(), gpus.end(),
                     [](const GpuThrottleView& g) { return g.pieces.empty(); });
}

uint32_t segmentReasonBits(const ThrottleSegment& s) {
  if (const uint32_t r = s.recorded_reasons & throttle::kSlowdownMask) return r;
  auto has = [&](ThrottleCause c) { return (s.causes & (1u << static_cast<unsigned>(c))) != 0; };
  uint32_t r = 0;
  if (has(ThrottleCause::ThermalInferred)) r |= throttle::kSwThermal;
  if (has(ThrottleCause::PowerCapInferred)) r |= throttle::kSwPowerCap;
  return r;
}

uint32_t intervalReasonBits(const ThrottleInterval& iv) {
  if (const uint32_t r = iv.recorded_reasons & throttle::kSlowdownMask) return r;
  switch (iv.cause) {
    case ThrottleCause::ThermalInferred:
      return throttle::kSwThermal;
    case ThrottleCause::PowerCapInferred:
      return throttle::kSwPowerCap;
    default:
      return 0;
  }
}

RunThrottleView makeThrottleView(const std::vector<GpuThrottle>& found, size_t gpuCount) {
  RunThrottleView v;
  v.gpus.resize(gpuCount);
  for (const GpuThrottle& g : found) {
    if (g.gpu < 0 || static_cast<size_t>(g.gpu) >= gpuCount) continue;
    GpuThrottleView& out = v.gpus[static_cast<size_t>(g.gpu)];
    out.referenceMhz = g.reference_clock_mhz;
    const double ref = g.reference_clock_mhz;
    out.pieces.reserve(g.segments.size());
    for (const ThrottleSegment& s : g.segments) {
      if (s.end_ns <= s.start_ns) continue;
      const double d = std::isfinite(ref) && ref > 0 ? (ref - s.clock_mhz) / ref : 0.0;
      const uint32_t bits = segmentReasonBits(s);
      // Touching segments at the same clock for the same reasons are one piece: clocks come in
      // steps (15 MHz on an H100), so an hour of a held clock is a few pieces, not 72,000.
      if (!out.pieces.empty() && out.pieces.back().t1 == s.start_ns &&
          out.pieces.back().clockMhz == s.clock_mhz && out.pieces.back().reasons == bits) {
        out.pieces.back().t1 = s.end_ns;
        continue;
      }
      out.pieces.push_back(
          {s.start_ns, s.end_ns, s.clock_mhz, static_cast<float>(std::clamp(d, 0.0, 1.0)), bits});
    }
    std::sort(out.pieces.begin(), out.pieces.end(),
              [](const ThrottlePiece& a, const ThrottlePiece& b) { return a.t0 < b.t0; });
    out.intervals = g.intervals;
    std::sort(out.intervals.begin(), out.intervals.end(),
              [](const ThrottleInterval& a, const ThrottleInterval& b) {
                return a.start_ns < b.start_ns;
              });
  }
  return v;
}

RunThrottleView computeThrottleView(const RunFile& run) {
  std::vector<int> gpus;
  for (const GpuInfo& g : run.gpus())
    gpus.push_back(g.id);
  return makeThrottleView(detectThrottle(run, gpus, TimeRange{}, AnalysisOptions{}),
                          run.gpus().size());
}

namespace {

// Adds a GPU's pieces to one row of cells (deficit and reasons, `columns` wide): per cell the
// deepest deficit, and the reasons of the piece with the most time in the cell.
void fillCells(const GpuThrottleView& gpu, const TimeMapping& map, size_t columns, float* deficit,
               uint32_t* reasons) {
  if (columns == 0 || gpu.pieces.empty()) return;
  std::vector<double> best(columns, 0.0);  // time of the dominant piece per cell, in px
  const auto first = std::lower_bound(gpu.pieces.begin(), gpu.pieces.end(), map.t0,
                                      [](const ThrottlePiece& p, int64_t t) { return p.t1 < t; });
  // Pieces are sorted by start and do not overlap (a GPU's clock segments): a linear walk.
  const double w = static_cast<double>(columns);
  for (auto p = first; p != gpu.pieces.end() && p->t0 <= map.t1; ++p) {
    double x0 = std::max(0.0, map.x(p->t0)), x1 = std::min(w, map.x(p->t1));
    if (x1 <= x0) {
      if (x0 >= w) continue;
      x1 = x0 + 1e-9;  // narrower than a column: still marks the column it falls in
    }
    const auto c0 = static_cast<size_t>(std::floor(x0));
    const auto c1 = std::min(columns, static_cast<size_t>(std::ceil(x1)));
    for (size_t c = c0; c < c1; ++c) {
      const double cover =
          std::min(x1, static_cast<double>(c + 1)) - std::max(x0, static_cast<double>(c));
      deficit[c] = std::max(deficit[c], std::max(p->deficit, 1e-6f));
      if (cover > best[c]) {
        best[c] = cover;
        reasons[c] = p->reasons;
      }
    }
  }
}

size_t columnsOf(const TimeMapping& map) {
  return static_cast<size_t>(std::max(0.0, std::ceil(map.width - 1e-9)));
}

}  // namespace

ThrottleStripGeometry buildThrottleStrip(const GpuThrottleView& gpu, const TimeMapping& map) {
  ThrottleStripGeometry g;
  const size_t n = columnsOf(map);
  g.deficit.assign(n, 0.0f);
  g.reasons.assign(n, 0);
  if (map.span() > 0) fillCells(gpu, map, n, g.deficit.data(), g.reasons.data());
  return g;
}

ThrottleHeatmapGeometry buildThrottleHeatmap(const RunThrottleView& view, const TimeMapping& map) {
  ThrottleHeatmapGeometry g;
  g.rows = view.gpus.size();
  g.columns = columnsOf(map);
  g.deficit.assign(g.rows * g.columns, 0.0f);
  g.reasons.assign(g.rows * g.columns, 0);
  if (map.span() <= 0) return g;
  for (size_t r = 0; r < g.rows; ++r)
    fillCells(view.gpus[r], map, g.columns, g.deficit.data() + r * g.columns,
              g.reasons.data() + r * g.columns);
  return g;
}

double throttleIntensity(double deficit) {
  if (!(deficit > 0)) return 0.0;
  return 0.25 + 0.75 * std::sqrt(std::min(1.0, deficit / kFullDeficit));
}

QColor throttleCellColor(const Theme& theme, uint32_t reasons, double deficit,
                         const QColor& background) {
  const double a = throttleIntensity(deficit);
  const QColor hue = theme.reasonColor(reasons, true);
  // The reason's colour itself (opaque), blended over the background by the deficit.
  const auto blend = [a](int bg, int fg) {
    return static_cast<int>(std::lround(bg + (fg - bg) * a));
  };
  return QColor(blend(background.red(), hue.red()), blend(background.green(), hue.green()),
                blend(background.blue(), hue.blue()));
}

namespace {

// Runs of equal colour in one row of cells, as rectangles.
template <class Colour>
void paintCellRow(QPainter& p, double left, double top, double height, double colW, size_t n,
                  Colour colour) {
  size_t c = 0;
  while (c < n) {
    const std::optional<QColor> col = colour(c);
    size_t e = c + 1;
    while (e < n && colour(e) == col)
      ++e;
    if (col)
      p.fillRect(QRectF(left + static_cast<double>(c) * colW, top,
                        static_cast<double>(e - c) * colW, height),
                 *col);
    c = e;
  }
}

}  // namespace

void paintThrottleStrip(QPainter& p, const QRectF& area, const ThrottleStripGeometry& g,
                        const Theme& theme) {
  p.fillRect(area, theme.trackBackground);
  const size_t n = g.deficit.size();
  if (n == 0) return;
  const double colW = area.width() / static_cast<double>(n);
  const QRectF inner = area.adjusted(0, 1, 0, -1);
  paintCellRow(p, area.left(), inner.top(), inner.height(), colW, n,
               [&](size_t c) -> std::optional<QColor> {
                 if (g.deficit[c] <= 0) return std::nullopt;
                 return throttleCellColor(theme, g.reasons[c], g.deficit[c], theme.trackBackground);
               });
}

void paintThrottleHeatmap(QPainter& p, const QRectF& area, const ThrottleHeatmapGeometry& g,
                          const Theme& theme, const std::vector<size_t>& separators) {
  const QColor bg = theme.trackBackground;
  p.fillRect(area, bg);
  if (g.rows == 0 || g.columns == 0) return;
  const double rowH = area.height() / static_cast<double>(g.rows);
  const double colW = area.width() / static_cast<double>(g.columns);
  for (size_t r = 0; r < g.rows; ++r) {
    const float* d = g.deficit.data() + r * g.columns;
    const uint32_t* rs = g.reasons.data() + r * g.columns;
    paintCellRow(p, area.left(), area.top() + static_cast<double>(r) * rowH, rowH, colW, g.columns,
                 [&](size_t c) -> std::optional<QColor> {
                   if (d[c] <= 0) return std::nullopt;
                   return throttleCellColor(theme, rs[c], d[c], bg);
                 });
  }
  p.setPen(QPen(theme.separator, 1.0));
  for (size_t s : separators) {
    const double y = area.top() + static_cast<double>(s) * rowH;
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
  }
}

const ThrottleInterval* throttleIntervalAt(const GpuThrottleView& gpu, int64_t t) {
  auto it = std::upper_bound(gpu.intervals.begin(), gpu.intervals.end(), t,
                             [](int64_t x, const ThrottleInterval& iv) { return x < iv.start_ns; });
  if (it == gpu.intervals.begin()) return nullptr;
  --it;
  return t < it->end_ns ? &*it : nullptr;
}

const ThrottlePiece* throttlePieceAt(const GpuThrottleView& gpu, int64_t t) {
  auto it = std::upper_bound(gpu.pieces.begin(), gpu.pieces.end(), t,
                             [](int64_t x, const ThrottlePiece& p) { return x < p.t0; });
  if (it == gpu.pieces.begin()) return nullptr;
  --it;
  return t < it->t1 ? &*it : nullptr;
}

ThrottleJump findThrottleInterval(const RunThrottleView& view, int gpu, int64_t after,
                                  bool forward) {
  ThrottleJump best;
  for (size_t g = 0; g < view.gpus.size(); ++g) {
    if (gpu >= 0 && static_cast<size_t>(gpu) != g) continue;
    const auto& ivs = view.gpus[g].intervals;
    const ThrottleInterval* cand = nullptr;
    if (forward) {
      auto it =
          std::upper_bound(ivs.begin(), ivs.end(), after,
                           [](int64_t x, const ThrottleInterval& iv) { return x < iv.start_ns; });
      if (it != ivs.end()) cand = &*it;
    } else {
      auto it =
          std::lower_bound(ivs.begin(), ivs.end(), after,
                           [](const ThrottleInterval& iv, int64_t x) { return iv.start_ns < x; });
      if (it != ivs.begin()) cand = &*std::prev(it);
    }
    if (!cand) continue;
    const bool better = !best.interval || (forward ? cand->start_ns < best.interval->start_ns
                                                   : cand->start_ns > best.interval->start_ns);
    if (better) best = {static_cast<int>(g), cand};
  }
  return best;
}

QString throttleReasonsText(uint32_t reasons) {
  QStringList parts;
  for (const auto& r : throttle::reasons())
    if ((reasons & throttle::kSlowdownMask & r.bit) != 0)
      parts << QString::fromUtf8(r.label.data(), static_cast<qsizetype>(r.label.size()));
  return parts.isEmpty() ? QObject::tr("other") : parts.join(QStringLiteral(", "));
}

QString throttleIntervalText(const ThrottleInterval& iv, double referenceMhz) {
  const std::string_view cause = throttleCauseLabel(iv.cause);
  // Recorded bits name the reasons; without any, the detector's (inferred) cause does.
  const QString reasons =
      iv.recorded_reasons & throttle::kSlowdownMask
          ? throttleReasonsText(iv.recorded_reasons)
          : QString::fromUtf8(cause.data(), static_cast<qsizetype>(cause.size()));
  QString s = QObject::tr("throttled: %1").arg(reasons.toHtmlEscaped());
  s += QStringLiteral("<br>") +
       QObject::tr("interval %1, clock deficit %L2 MHz·s")
           .arg(QString::fromStdString(formatDuration(iv.end_ns - iv.start_ns)))
           .arg(iv.deficit_mhz_s, 0, 'f', 0);
  if (std::isfinite(iv.mean_clock_mhz) && std::isfinite(referenceMhz) && referenceMhz > 0)
    s += QStringLiteral("<br>") +
         QObject::tr("mean clock %L1 MHz, %2 % below %L3 MHz")
             .arg(iv.mean_clock_mhz, 0, 'f', 0)
             .arg((referenceMhz - iv.mean_clock_mhz) / referenceMhz * 100, 0, 'f', 1)
             .arg(referenceMhz, 0, 'f', 0);
  return s;
}

}  // namespace wl
