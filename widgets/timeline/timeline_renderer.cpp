// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timeline_renderer.h"

#include <QFontMetricsF>
#include <QPaintEngine>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/metrics.h"
#include "core/time_format.h"
#include "timeline/raster_track.h"

namespace wl {
namespace {

template <class... Ts>
struct Overload : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overload(Ts...) -> Overload<Ts...>;

QString numberText(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6) return QString::number(v, 'g', 3);
  if (a >= 100 || v == std::floor(v)) return QString::number(v, 'f', 0);
  if (a >= 10) return QString::number(v, 'f', 1);
  return QString::number(v, 'f', 2);
}

}  // namespace

TimelineRenderer::TimelineRenderer(TileStore& store) : store_(store) {}

void TimelineRenderer::clearCaches() {
  cache_.clear();
  images_.clear();
  extents_.clear();
  nodeSeparators_.clear();
  lastRange_.clear();
}

template <typename G, typename Build>
const G* TimelineRenderer::cached(const RowContent& key, const TimeMapping& map, Build build) {
  auto it = cache_.find(key);
  if (it != cache_.end() && it->second.map == map && it->second.epoch == epoch_ &&
      std::holds_alternative<G>(it->second.geom))
    return &std::get<G>(it->second.geom);
  Cached c{map, epoch_, build()};
  auto& slot = cache_[key];
  slot = std::move(c);
  return &std::get<G>(slot.geom);
}

const CounterGeometry* TimelineRenderer::counterGeometry(const CounterRow& row,
                                                         const TimeMapping& map,
                                                         const TileFetch& fetch,
                                                         std::vector<TileKey>* missing) {
  const RunFile& run = store_.run(row.run);
  return cached<CounterGeometry>(row, map, [&] {
    CounterSource src;
    src.run = row.run;
    src.gpu = row.gpu;
    src.metric = row.metric;
    src.gapThresholdNs = run.series().gapThresholdNs[static_cast<size_t>(row.gpu)];
    CounterGeometry g = buildCounterGeometry(run, src, map, fetch, missing);
    auto it = throttleSpans_.find(row.run);
    if (it != throttleSpans_.end() && static_cast<size_t>(row.gpu) < it->second.size()) {
      const auto& spans = it->second[static_cast<size_t>(row.gpu)];
      // Spans are sorted by start: skip to the first that can reach the view.
      auto first = std::lower_bound(spans.begin(), spans.end(), map.t0,
                                    [](const ThrottleSpan& s, int64_t t) { return s.t1 < t; });
      for (auto sp = first; sp != spans.end() && sp->t0 <= map.t1; ++sp) {
        const double x0 = map.x(sp->t0), x1 = std::max(map.x(sp->t1), x0 + 1.0);
        if (!g.bands.empty() && g.bands.back().strong && x0 <= g.bands.back().x1 + 0.5 &&
            g.bands.back().reasons == sp->reasons) {
          g.bands.back().x1 = std::max(g.bands.back().x1, x1);
          continue;
        }
        g.bands.push_back({x0, x1, sp->reasons, true});
      }
    }
    return g;
  });
}

const KernelGeometry* TimelineRenderer::kernelGeometry(const KernelsRow& row,
                                                       const TimeMapping& map,
                                                       const TileFetch& fetch,
                                                       std::vector<TileKey>* missing) {
  const RunFile& run = store_.run(row.run);
  return cached<KernelGeometry>(row, map, [&] {
    return buildKernelGeometry(run, KernelSource{row.run, row.track}, map, fetch, missing);
  });
}

const HeatmapGeometry* TimelineRenderer::heatmapGeometry(const HeatmapRow& row,
                                                         const TimeMapping& map,
                                                         const TileFetch& fetch,
                                                         std::vector<TileKey>* missing) {
  const RunFile& run = store_.run(row.run);
  return cached<HeatmapGeometry>(row, map, [&] {
    return buildHeatmapGeometry(run, row.run, row.metric, heatmapMax_, map, fetch, missing);
  });
}

const DifferenceGeometry* TimelineRenderer::differenceGeometry(const DifferenceRow& row,
                                                               const TimeMapping& display,
                                                               const TileFetch& fetch,
                                                               std::vector<TileKey>* missing) {
  return cached<DifferenceGeometry>(row, display, [&] {
    DifferenceSource src{row.a.run,
                         row.b.run,
                         row.a.gpu,
                         row.b.gpu,
                         row.a.metric,
                         row.b.metric,
                         runOffset(row.a.run),
                         runOffset(row.b.run)};
    return buildDifferenceGeometry(store_.run(row.a.run), store_.run(row.b.run), src, display,
                                   fetch, missing);
  });
}

namespace {

// Symmetric about zero, with 10% headroom.
}  // namespace

ValueRange differenceRange(const DifferenceGeometry& g) {
  double m =
      std::max(std::fabs(static_cast<double>(g.minV)), std::fabs(static_cast<double>(g.maxV)));
  if (!std::isfinite(m) || m <= 0) m = 1;
  return {-1.1 * m, 1.1 * m};
}

const std::vector<std::pair<float, float>>& TimelineRenderer::extents(int run, int metric) {
  const auto key = std::make_pair(run, metric);
  auto it = extents_.find(key);
  if (it != extents_.end()) return it->second;
  const RunFile& rf = store_.run(run);
  const SeriesGroupMeta& tel = rf.series();
  std::vector<std::pair<float, float>> out(tel.entities, {kNaNf, kNaNf});
  if (tel.grid.levels() > 0) {
    const int top = static_cast<int>(tel.grid.levels()) - 1;
    const int64_t tiles =
        static_cast<int64_t>((tel.grid.buckets.back() + kTileBuckets - 1) / kTileBuckets);
    for (int64_t i = 0; i < tiles; ++i) {
      TilePtr tp;
      try {
        tp = store_.load(TileKey{run, TileKind::Heatmap, -1, metric, top, i});
      } catch (const std::exception&) {
      }
      if (!tp) continue;
      const auto& t = std::get<HeatmapTile>(*tp);
      for (size_t e = 0; e < t.entities; ++e)
        for (size_t b = 0; b < t.buckets; ++b) {
          const float lo = t.min[e * t.buckets + b], hi = t.max[e * t.buckets + b];
          if (std::isnan(lo)) continue;
          auto& [mn, mx] = out[e];
          mn = std::isnan(mn) ? lo : std::min(mn, lo);
          mx = std::isnan(mx) ? hi : std::max(mx, hi);
        }
    }
  }
  return extents_.emplace(key, std::move(out)).first->second;
}

namespace {

ValueRange niceRange(std::string_view metric, std::string_view unit, float lo, float hi) {
  if (unit == "%") return {0, 100};
  if (std::isnan(lo) || std::isnan(hi)) return {0, 1};
  double mn = lo, mx = hi;
  const bool temperature = unit == "C";
  if (!temperature && mn >= 0 &&
      (metric == metric::kPower || metric == metric::kSmClock || metric == metric::kMemClock ||
       mn < 0.3 * mx))
    mn = 0;
  if (temperature) mn = std::floor(mn - 2);
  if (mx <= mn) mx = mn + 1;
  mx += 0.05 * (mx - mn);
  return {mn, mx};
}

}  // namespace

ValueRange TimelineRenderer::valueRange(const CounterRow& row, const CounterGeometry* g) {
  const RunFile& run = store_.run(row.run);
  const MetricInfo& m = run.series().metrics[static_cast<size_t>(row.metric)];
  float lo = kNaNf, hi = kNaNf;
  switch (yMode_) {
    case YMode::SharedPerMetric:
      for (const auto& [a, b] : extents(row.run, row.metric)) {
        if (std::isnan(a)) continue;
        lo = std::isnan(lo) ? a : std::min(lo, a);
        hi = std::isnan(hi) ? b : std::max(hi, b);
      }
      break;
    case YMode::PerTrack: {
      const auto& e = extents(row.run, row.metric)[static_cast<size_t>(row.gpu)];
      lo = e.first;
      hi = e.second;
      break;
    }
    case YMode::FitVisible:
      if (g) {
        lo = g->visibleMin;
        hi = g->visibleMax;
      }
      break;
  }
  return niceRange(m.id, m.unit, lo, hi);
}

ValueRange TimelineRenderer::heatmapRange(int run, int metric) {
  float lo = kNaNf, hi = kNaNf;
  for (const auto& [a, b] : extents(run, metric)) {
    if (std::isnan(a)) continue;
    lo = std::isnan(lo) ? a : std::min(lo, a);
    hi = std::isnan(hi) ? b : std::max(hi, b);
  }
  if (std::isnan(lo)) return {0, 1};
  if (hi <= lo) hi = lo + 1;
  return {lo, hi};
}

void TimelineRenderer::paintRow(QPainter& p, const TrackRow& row, const QRectF& rect,
                                double labelWidth, const TimeMapping& display,
                                const TileFetch& fetch, std::vector<TileKey>* missing,
                                bool collapsed, const Highlight& highlight) {
  // Difference rows mix two runs: they take the display clock and shift each run themselves.
  const TimeMapping map = row.kind() == RowKind::Difference ? display : rowMapping(row, display);
  const QRectF label(rect.left(), rect.top(), labelWidth, rect.height());
  const QRectF content(rect.left() + labelWidth, rect.top(), rect.width() - labelWidth,
                       rect.height());
  paintContent(p, row, content, map, fetch, missing, highlight);
  paintLabel(p, row, label, collapsed);
  // Integer rectangles: the raster engine fills them as plain spans.
  p.fillRect(QRectF(rect.left(), std::floor(rect.bottom()) - 1, rect.width(), 1), theme_.separator);
}

void TimelineRenderer::paintLabel(QPainter& p, const TrackRow& row, const QRectF& r,
                                  bool collapsed) {
  p.fillRect(r, row.isHeader() ? theme_.headerBackground : theme_.labelBackground);
  p.fillRect(QRectF(std::floor(r.right()) - 1, r.top(), 1, r.height()), theme_.separator);
  QFont f = p.font();
  const double base = f.pointSizeF() > 0 ? f.pointSizeF() : 9.0;
  const QRectF text = r.adjusted(6, 0, -6, 0);
  switch (row.kind()) {
    case RowKind::RunHeader: {
      f.setBold(true);
      p.setFont(f);
      p.setPen(theme_.text);
      p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(f).elidedText(row.label, Qt::ElideRight, text.width()));
      break;
    }
    case RowKind::GroupHeader: {
      const QString arrow = collapsed ? QStringLiteral("▸ ") : QStringLiteral("▾ ");
      f.setBold(true);
      p.setFont(f);
      p.setPen(theme_.text);
      const QString s = arrow + row.label;
      p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, s);
      const double w = QFontMetricsF(f).horizontalAdvance(s) + 8;
      f.setBold(false);
      f.setPointSizeF(base * 0.85);
      p.setFont(f);
      p.setPen(theme_.mutedText);
      p.drawText(text.adjusted(w, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(f).elidedText(row.detail, Qt::ElideRight, text.width() - w));
      break;
    }
    case RowKind::Counter:
    case RowKind::Difference: {
      p.setFont(f);
      p.setPen(theme_.text);
      const QString unit =
          row.detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(row.detail);
      p.drawText(text.adjusted(8, 0, -34, 0), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(f).elidedText(row.label + unit, Qt::ElideRight, text.width() - 42));
      const auto it = lastRange_.find(row.content);
      if (it != lastRange_.end()) {
        f.setPointSizeF(base * 0.8);
        p.setFont(f);
        p.setPen(theme_.mutedText);
        p.drawText(text, Qt::AlignTop | Qt::AlignRight, numberText(it->second.max));
        p.drawText(text, Qt::AlignBottom | Qt::AlignRight, numberText(it->second.min));
      }
      break;
    }
    case RowKind::Heatmap: {
      p.setFont(f);
      p.setPen(theme_.text);
      p.drawText(text.adjusted(0, 2, 0, 0), Qt::AlignTop | Qt::AlignLeft, row.label);
      const HeatmapRow& h = std::get<HeatmapRow>(row.content);
      const ValueRange vr = heatmapRange(h.run, h.metric);
      const QRectF bar(text.left(), text.top() + 22, std::min(120.0, text.width()), 8);
      for (int i = 0; i < static_cast<int>(bar.width()); ++i)
        p.fillRect(QRectF(bar.left() + i, bar.top(), 1, bar.height()),
                   theme_.heat(i / bar.width()));
      f.setPointSizeF(base * 0.8);
      p.setFont(f);
      p.setPen(theme_.mutedText);
      p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), 14),
                 Qt::AlignLeft | Qt::AlignTop, numberText(vr.min));
      p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), 14),
                 Qt::AlignRight | Qt::AlignTop, numberText(vr.max));
      p.drawText(text.adjusted(0, 48, 0, 0), Qt::AlignTop | Qt::AlignLeft, row.detail);
      break;
    }
    case RowKind::Kernels:
    case RowKind::Steps: {
      p.setFont(f);
      p.setPen(theme_.text);
      p.drawText(text.adjusted(8, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, row.label);
      if (!row.detail.isEmpty() && r.height() >= 20) {
        f.setPointSizeF(base * 0.8);
        p.setFont(f);
        p.setPen(theme_.mutedText);
        p.drawText(text, Qt::AlignVCenter | Qt::AlignRight, row.detail);
      }
      break;
    }
  }
  p.setFont(QFont(f.family(), static_cast<int>(base)));
}

void TimelineRenderer::paintContent(QPainter& p, const TrackRow& row, const QRectF& c,
                                    const TimeMapping& map, const TileFetch& fetch,
                                    std::vector<TileKey>* missing, const Highlight& highlight) {
  switch (row.kind()) {
    case RowKind::RunHeader:
    case RowKind::GroupHeader:
      p.fillRect(c, theme_.headerBackground);
      return;
    case RowKind::Steps:
      p.fillRect(c, theme_.trackBackground);
      paintSteps(p, std::get<StepsRow>(row.content), c, map);
      return;
    default:
      break;
  }
  const bool raster = p.paintEngine() && p.paintEngine()->type() == QPaintEngine::Raster;
  if (raster)
    paintContentRaster(p, row, c, map, fetch, missing, highlight);
  else
    paintContentVector(p, row, c, map, fetch, missing, highlight);
}

void TimelineRenderer::paintContentRaster(QPainter& p, const TrackRow& row, const QRectF& c,
                                          const TimeMapping& map, const TileFetch& fetch,
                                          std::vector<TileKey>* missing,
                                          const Highlight& highlight) {
  const QSize size(std::max(1, static_cast<int>(std::ceil(c.width()))),
                   std::max(1, static_cast<int>(std::ceil(c.height()))));
  const RunFile& run = store_.run(row.run());
  CachedImage& ci = images_[row.content];
  auto stale = [&](double vmin, double vmax) {
    return ci.image.size() != size || !(ci.map == map) || ci.epoch != epoch_ ||
           ci.style != style_ || ci.vmin != vmin || ci.vmax != vmax;
  };
  auto stamp = [&](double vmin, double vmax) {
    ci.map = map;
    ci.epoch = epoch_;
    ci.style = style_;
    ci.vmin = vmin;
    ci.vmax = vmax;
  };
  const QRectF local(0, 0, size.width(), size.height());
  switch (row.kind()) {
    case RowKind::Counter: {
      const CounterRow& cr = std::get<CounterRow>(row.content);
      const CounterGeometry* g = counterGeometry(cr, map, fetch, missing);
      const ValueRange vr = valueRange(cr, g);
      lastRange_[row.content] = vr;
      if (stale(vr.min, vr.max)) {
        if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
        const std::string& id = run.series().metrics[static_cast<size_t>(cr.metric)].id;
        const QColor colour = theme_.metricColor(id);
        const QRectF data = local.adjusted(0, 3, 0, -2);
        // Samples closer than the dots' spacing are drawn as their staircase's per-column
        // envelope, the fast raster path (the painter's antialiased polygons cost ~4x more);
        // sparser samples get lines and dots from the painter.
        const bool dense =
            g->raw() && g->points.size() >= 2 &&
            static_cast<double>(size.width()) / static_cast<double>(g->points.size()) <= 8.0;
        if (!g->raw() || dense) {
          std::optional<CounterGeometry> steps;
          if (dense) steps = samplesAsEnvelope(*g, static_cast<size_t>(size.width()));
          rasterCounter(ci.image, steps ? *steps : *g, vr, static_cast<int>(data.top()),
                        static_cast<int>(data.bottom()), colour, theme_);
        } else {
          rasterBackground(ci.image, g->bands, theme_.trackBackground, theme_);
          QPainter ip(&ci.image);
          ip.setPen(QPen(theme_.gridLine, 1.0, Qt::DotLine));
          for (double v : niceTicks(vr.min, vr.max, 2)) {
            const double y = vr.y(v, data);
            if (y > data.top() + 2 && y < data.bottom() - 2)
              ip.drawLine(QPointF(0, y), QPointF(data.right(), y));
          }
          paintCounterSamples(ip, data, *g, vr, colour);
        }
        stamp(vr.min, vr.max);
      }
      p.drawImage(c.topLeft(), ci.image);
      return;
    }
    case RowKind::Kernels: {
      const KernelsRow& kr = std::get<KernelsRow>(row.content);
      const KernelGeometry* g = kernelGeometry(kr, map, fetch, missing);
      if (stale(0, 0)) {
        if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
        rasterKernelBusy(ci.image, *g, theme_);
        QPainter ip(&ci.image);
        ip.setFont(p.font());
        paintKernelBoxes(ip, local, *g, theme_,
                         [&run](uint32_t id) { return QString::fromStdString(run.str(id)); });
        stamp(0, 0);
      }
      p.drawImage(c.topLeft(), ci.image);
      const long hl = highlight.run == kr.run && highlight.track == kr.track ? highlight.event : -1;
      paintKernelHighlight(p, c, *g, theme_, hl);
      return;
    }
    case RowKind::Difference: {
      const DifferenceGeometry* g =
          differenceGeometry(std::get<DifferenceRow>(row.content), map, fetch, missing);
      const ValueRange vr = differenceRange(*g);
      lastRange_[row.content] = vr;
      if (stale(vr.min, vr.max)) {
        if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
        ci.image.fill(theme_.trackBackground);
        QPainter ip(&ci.image);
        paintDifference(ip, local.adjusted(0, 3, 0, -2), *g, vr, theme_);
        stamp(vr.min, vr.max);
      }
      p.drawImage(c.topLeft(), ci.image);
      return;
    }
    case RowKind::Heatmap: {
      const HeatmapRow& hr = std::get<HeatmapRow>(row.content);
      const HeatmapGeometry* g = heatmapGeometry(hr, map, fetch, missing);
      const ValueRange vr = heatmapRange(hr.run, hr.metric);
      if (stale(vr.min, vr.max)) {
        if (ci.image.size() != size) ci.image = QImage(size, QImage::Format_RGB32);
        ci.image.fill(theme_.trackAltBackground);
        QPainter ip(&ci.image);
        paintHeatmap(ip, local, *g, vr, theme_, nodeSeparators(hr.run));
        stamp(vr.min, vr.max);
      }
      p.drawImage(c.topLeft(), ci.image);
      return;
    }
    default:
      return;
  }
}

void TimelineRenderer::paintContentVector(QPainter& p, const TrackRow& row, const QRectF& c,
                                          const TimeMapping& map, const TileFetch& fetch,
                                          std::vector<TileKey>* missing,
                                          const Highlight& highlight) {
  const RunFile& run = store_.run(row.run());
  switch (row.kind()) {
    case RowKind::Counter: {
      const CounterRow& cr = std::get<CounterRow>(row.content);
      p.fillRect(c, theme_.trackBackground);
      const CounterGeometry* g = counterGeometry(cr, map, fetch, missing);
      const ValueRange vr = valueRange(cr, g);
      lastRange_[row.content] = vr;
      paintThrottleBands(p, c, g->bands, theme_);
      const QRectF data = c.adjusted(0, 3, 0, -2);
      p.setPen(QPen(theme_.gridLine, 1.0, Qt::DotLine));
      for (double v : niceTicks(vr.min, vr.max, 2)) {
        const double y = vr.y(v, data);
        if (y > data.top() + 2 && y < data.bottom() - 2)
          p.drawLine(QPointF(c.left(), y), QPointF(c.right(), y));
      }
      const std::string& id = run.series().metrics[static_cast<size_t>(cr.metric)].id;
      paintCounter(p, data, *g, vr, theme_.metricColor(id), theme_);
      return;
    }
    case RowKind::Kernels: {
      const KernelsRow& kr = std::get<KernelsRow>(row.content);
      p.fillRect(c, theme_.trackAltBackground);
      const KernelGeometry* g = kernelGeometry(kr, map, fetch, missing);
      const long hl = highlight.run == kr.run && highlight.track == kr.track ? highlight.event : -1;
      paintKernels(
          p, c, *g, theme_, [&run](uint32_t id) { return QString::fromStdString(run.str(id)); },
          hl);
      return;
    }
    case RowKind::Difference: {
      p.fillRect(c, theme_.trackBackground);
      const DifferenceGeometry* g =
          differenceGeometry(std::get<DifferenceRow>(row.content), map, fetch, missing);
      const ValueRange vr = differenceRange(*g);
      lastRange_[row.content] = vr;
      paintDifference(p, c.adjusted(0, 3, 0, -2), *g, vr, theme_);
      return;
    }
    case RowKind::Heatmap: {
      const HeatmapRow& hr = std::get<HeatmapRow>(row.content);
      p.fillRect(c, theme_.trackAltBackground);
      const HeatmapGeometry* g = heatmapGeometry(hr, map, fetch, missing);
      paintHeatmap(p, c, *g, heatmapRange(hr.run, hr.metric), theme_, nodeSeparators(hr.run));
      return;
    }
    default:
      return;
  }
}

const std::vector<size_t>& TimelineRenderer::nodeSeparators(int runIndex) {
  auto it = nodeSeparators_.find(runIndex);
  if (it != nodeSeparators_.end()) return it->second;
  const RunFile& run = store_.run(runIndex);
  std::vector<size_t> seps;
  for (size_t i = 1; i < run.gpus().size(); ++i)
    if (run.gpus()[i].node != run.gpus()[i - 1].node) seps.push_back(i);
  return nodeSeparators_.emplace(runIndex, std::move(seps)).first->second;
}

void TimelineRenderer::paintSteps(QPainter& p, const StepsRow& row, const QRectF& c,
                                  const TimeMapping& map) {
  const RunFile& run = store_.run(row.run);
  p.save();
  p.setClipRect(c);
  QFont f = p.font();
  f.setPointSizeF(std::max(6.0, (f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.8));
  p.setFont(f);
  const QFontMetricsF fm(f);
  // Iterations and annotations are stored sorted by rank, then start.
  const auto& its = run.iterations();
  const auto itRange =
      std::equal_range(its.begin(), its.end(), row.rank,
                       Overload{[](const Iteration& a, int r) { return a.rank < r; },
                                [](int r, const Iteration& a) { return r < a.rank; }});
  const auto& ans = run.annotations();
  const auto anRange =
      std::equal_range(ans.begin(), ans.end(), row.rank,
                       Overload{[](const Annotation& a, int r) { return a.rank < r; },
                                [](int r, const Annotation& a) { return r < a.rank; }});
  const bool hasAnnotations = anRange.first != anRange.second;
  const QRectF lane = hasAnnotations ? QRectF(c.left(), c.top(), c.width(), c.height() / 2) : c;
  for (auto it = itRange.first; it != itRange.second; ++it) {
    if (it->start_ns > map.t1) break;
    if (it->end_ns < map.t0) continue;
    const double x0 = std::max(-2.0, map.x(it->start_ns));
    const double x1 = std::min(c.width() + 2, map.x(it->end_ns));
    const QRectF r(c.left() + x0, lane.top() + 1, std::max(1.0, x1 - x0), lane.height() - 2);
    QColor col = theme_.isDark ? QColor(0x55, 0x5f, 0x70) : QColor(0xc9, 0xd3, 0xe3);
    if ((it - itRange.first) % 2) col = col.darker(112);
    p.fillRect(r, col);
    if (r.width() > 40) {
      p.setPen(theme_.text);
      p.drawText(
          r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
          fm.elidedText(QObject::tr("step %1").arg(it->step), Qt::ElideRight, r.width() - 6));
    }
  }
  if (hasAnnotations) {
    const QRectF low(c.left(), c.top() + c.height() / 2, c.width(), c.height() / 2);
    for (auto a = anRange.first; a != anRange.second; ++a) {
      if (a->start_ns > map.t1) break;
      if (a->start_ns + a->dur_ns < map.t0) continue;
      const double x0 = std::max(-2.0, map.x(a->start_ns));
      const double x1 = std::min(c.width() + 2, map.x(a->start_ns + a->dur_ns));
      const QRectF r(c.left() + x0, low.top() + 1, std::max(1.0, x1 - x0), low.height() - 2);
      const QString name = QString::fromStdString(run.str(a->name));
      const QColor col =
          QColor::fromHsv(static_cast<int>(qHash(name) % 360), 70, theme_.isDark ? 150 : 220);
      p.fillRect(r, col);
      if (r.width() > 30) {
        p.setPen(QColor(0x10, 0x10, 0x10));
        p.drawText(r.adjusted(2, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(name, Qt::ElideRight, r.width() - 4));
      }
    }
  }
  p.restore();
}

}  // namespace wl
