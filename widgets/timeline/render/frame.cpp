// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline's frame (frame.h): legend, time axes and label columns of the screen and of
// figures, as layout values and their painters.
#include "widgets/timeline/render/frame.h"

#include <QFontMetrics>
#include <QFontMetricsF>
#include <QLinearGradient>

#include <algorithm>
#include <array>
#include <cmath>

#include "loaders/core/throttle_reasons.h"
#include "widgets/timeline/render/read_failures.h"
#include "widgets/timeline/render/throttle_strip.h"

namespace wl {
namespace {

// A value as the screen's label column prints a range end.
QString numberText(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6) return QString::number(v, 'g', 3);
  if (a >= 100 || v == std::floor(v)) return QString::number(v, 'f', 0);
  if (a >= 10) return QString::number(v, 'f', 1);
  return QString::number(v, 'f', 2);
}

// "SM clock (MHz)"; "SM clock (MHz, fitted)" when the axis is fitted to the values rather than
// started at zero (the axis says so: a reader would otherwise take the row's height for the clock).
QString counterTitle(const TrackRow& r, bool fitted = false) {
  QString unit = unitText(r.detail);
  if (fitted) unit = unit.isEmpty() ? QObject::tr("fitted") : QObject::tr("%1, fitted").arg(unit);
  return unit.isEmpty() ? r.label : QStringLiteral("%1 (%2)").arg(r.label, unit);
}

QString heatmapTitle(const RunFile& run, const HeatmapRow& h) {
  const MetricInfo& m = run.series().metrics[static_cast<size_t>(h.metric)];
  const QString label =
      h.domainPower ? QObject::tr("Package power") : QString::fromStdString(m.label);
  return m.unit.empty()
             ? label
             : QStringLiteral("%1 (%2)").arg(label, unitText(QString::fromStdString(m.unit)));
}

// A figure row's title in `box`, in `font`: on one line when it fits, else broken at spaces onto
// as many lines as the box holds (the label column has a maximum width). Words are never cut:
// when the lines run out, the last one keeps the words that fit and ends with "…".
void drawFigureTitle(QPainter& p, const QRectF& box, const QString& text, const QFont& font,
                     Qt::Alignment vertical) {
  const QFontMetricsF fm(font);
  p.setFont(font);
  if (fm.horizontalAdvance(text) <= box.width()) {
    p.drawText(box, Qt::AlignLeft | vertical, text);
    return;
  }
  const QStringList words = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  const auto maxLines =
      static_cast<qsizetype>(std::max(1.0, std::floor(box.height() / fm.height())));
  QStringList lines;
  for (const QString& w : words) {
    if (!lines.isEmpty() &&
        fm.horizontalAdvance(lines.back() + QLatin1Char(' ') + w) <= box.width())
      lines.back() += QLatin1Char(' ') + w;
    else
      lines.push_back(w);
  }
  if (lines.size() > maxLines) {
    QStringList rest = lines.mid(maxLines - 1).join(QLatin1Char(' ')).split(QLatin1Char(' '));
    lines.resize(maxLines - 1);
    const QString more = QStringLiteral(" …");
    while (rest.size() > 1 &&
           fm.horizontalAdvance(rest.join(QLatin1Char(' ')) + more) > box.width())
      rest.removeLast();
    lines.push_back(rest.join(QLatin1Char(' ')) + more);
  }
  const double h = static_cast<double>(lines.size()) * fm.height();
  double y = vertical & Qt::AlignTop      ? box.top()
             : vertical & Qt::AlignBottom ? box.bottom() - h
                                          : box.center().y() - h / 2;
  for (const QString& line : lines) {
    p.drawText(
        QRectF(box.left(), y, std::max(box.width(), fm.horizontalAdvance(line)), fm.height()),
        Qt::AlignLeft | Qt::AlignVCenter, line);
    y += fm.height();
  }
}

constexpr int kSwatch = 11;  // screen legend
constexpr int kGap = 14;

}  // namespace

// ---- Legend ----

std::vector<LegendEntry> screenLegend(const Theme& theme, bool bands) {
  std::vector<LegendEntry> e;
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto cls = static_cast<KernelClass>(c);
    e.push_back({theme.classColor(cls), QString::fromUtf8(kernelClassName(cls).data()),
                 QObject::tr("kernel class (first match wins): communication = NCCL/RCCL, memory = "
                             "memcpy/memset, compute = other kernels")});
  }
  const std::pair<uint32_t, QString> reasons[] = {
      {throttle::kSwPowerCap, QObject::tr("power cap")},
      {throttle::kSwThermal, QObject::tr("SW thermal")},
      {throttle::kHwThermal, QObject::tr("HW thermal")},
      {throttle::kHwSlowdown, QObject::tr("HW slowdown")},
      {throttle::kHwPowerBrake, QObject::tr("power brake")}};
  for (const auto& [bit, label] : reasons)
    e.push_back({bands ? theme.reasonColor(bit, true)
                       : throttleCellColor(theme, bit, kFullDeficit, theme.trackBackground),
                 QObject::tr("throttled: %1").arg(label),
                 QObject::tr("busy with the SM clock below its threshold, by reason: the throttle "
                             "strip under each GPU and the reason heatmap, paler the smaller the "
                             "clock deficit (full colour at %1 % below the reference clock)")
                     .arg(kFullDeficit * 100, 0, 'f', 0)});
  if (!bands) return e;
  e.push_back({theme.reasonColor(throttle::kSwPowerCap, false), QObject::tr("reason bit only"),
               QObject::tr("a throttle reason bit is set but the clock stayed near its maximum: "
                           "not counted as throttling (faint band)")});
  return e;
}

std::vector<LegendEntry> figureLegend(const std::vector<TrackRow>& rows, TimelineRenderer& renderer,
                                      TileStore& store, const TimeMapping& map,
                                      const TileFetch& fetch, const Theme& theme) {
  std::array<bool, kKernelClassCount> classes{};
  uint32_t reasons = 0;
  bool otherBand = false, cells = false;
  for (const TrackRow& r : rows) {
    if (const auto* k = r.as<KernelsRow>()) {
      const TrackInfo& ti = store.run(k->run).tracks()[static_cast<size_t>(k->track)];
      for (size_t c = 0; c < kKernelClassCount; ++c)
        classes[c] = classes[c] || ti.classCount[c] > 0;
    } else if (const auto* c = r.as<CounterRow>()) {
      for (const ThrottleBand& b : renderer.geometry(*c, map, fetch).counter->bands) {
        reasons |= b.reasons & throttle::kSlowdownMask;
        otherBand = otherBand || (b.reasons & throttle::kSlowdownMask) == 0;
      }
    } else if (r.kind() == RowKind::ThrottleStrip || r.kind() == RowKind::ThrottleHeatmap) {
      const auto* s = r.as<ThrottleStripRow>();
      const auto* h = r.as<ThrottleHeatmapRow>();
      const auto& deficit = s ? renderer.geometry(*s, map, {}).strip->deficit
                              : renderer.geometry(*h, map, {}).throttleHeatmap->deficit;
      const auto& bits = s ? renderer.geometry(*s, map, {}).strip->reasons
                           : renderer.geometry(*h, map, {}).throttleHeatmap->reasons;
      for (size_t i = 0; i < deficit.size(); ++i)
        if (deficit[i] > 0) {
          cells = true;
          reasons |= bits[i] & throttle::kSlowdownMask;
          otherBand = otherBand || (bits[i] & throttle::kSlowdownMask) == 0;
        }
    }
  }
  std::vector<LegendEntry> legend;
  for (size_t c = 0; c < kKernelClassCount; ++c)
    if (classes[c])
      legend.push_back({theme.kernelClass[c],
                        QString::fromUtf8(kernelClassName(static_cast<KernelClass>(c)).data()),
                        {}});
  // Strips and reason heatmaps draw a reason at full strength from kFullDeficit on; bands are
  // translucent.
  auto colour = [&](uint32_t bit) {
    return cells ? throttleCellColor(theme, bit, kFullDeficit, theme.background)
                 : theme.reasonColor(bit);
  };
  for (const auto& def : throttle::reasons())
    if (reasons & def.bit)
      legend.push_back(
          {colour(def.bit),
           QObject::tr("throttled: %1")
               .arg(QString::fromUtf8(def.label.data(), static_cast<int>(def.label.size()))),
           {}});
  if (otherBand) legend.push_back({colour(0), QObject::tr("throttled: other"), {}});
  if (cells)
    legend.push_back({throttleCellColor(theme, reasons ? reasons : 0, 0.01, theme.background),
                      QObject::tr("paler: a smaller clock deficit (full colour from %1 % below "
                                  "the reference clock)")
                          .arg(kFullDeficit * 100, 0, 'f', 0),
                      {}});
  return legend;
}

std::vector<PlacedLegendEntry> placeLegend(const std::vector<LegendEntry>& entries,
                                           const QRectF& area, const QFont& font,
                                           FrameStyle style) {
  std::vector<PlacedLegendEntry> out;
  if (style == FrameStyle::Screen) {
    const QFontMetrics fm(font);
    int x = static_cast<int>(area.left()) + 8;
    const int y = static_cast<int>(area.top()) + (static_cast<int>(area.height()) - kSwatch) / 2;
    for (const LegendEntry& e : entries) {
      const int w = kSwatch + 4 + fm.horizontalAdvance(e.label);
      if (x + w > area.right()) break;
      out.push_back({e, QRectF(x, y, kSwatch, kSwatch),
                     QRectF(x + kSwatch + 4, area.top(), w, area.height())});
      x += w + kGap;
    }
    return out;
  }
  const QFontMetricsF sm(font);
  const double sw = sm.height() * 0.75;
  double x = area.left(), y = area.top();
  for (const LegendEntry& e : entries) {
    const double w = sw + 4 + sm.horizontalAdvance(e.label) + 14;
    if (x + w > area.right() && x > area.left()) {
      x = area.left();
      y += sm.height() + 3;
    }
    out.push_back(
        {e, QRectF(x, y + (sm.height() - sw) / 2, sw, sw), QRectF(x + sw + 4, y, w, sm.height())});
    x += w;
  }
  return out;
}

void paintLegend(QPainter& p, const std::vector<PlacedLegendEntry>& legend, const Theme& theme,
                 FrameStyle style, double hairline, const QFont& font) {
  p.setFont(font);
  const bool screen = style == FrameStyle::Screen;
  for (const PlacedLegendEntry& e : legend) {
    p.fillRect(e.swatch, screen ? theme.trackBackground : theme.background);
    p.fillRect(e.swatch, e.entry.colour);
    if (screen) {
      p.setPen(theme.separator);
      p.drawRect(e.swatch.toRect().adjusted(0, 0, -1, -1));
      p.setPen(theme.mutedText);
      p.drawText(e.text.toRect(), Qt::AlignVCenter | Qt::AlignLeft, e.entry.label);
    } else {
      p.setPen(QPen(theme.separator, hairline));
      p.setBrush(Qt::NoBrush);
      p.drawRect(e.swatch);
      p.setPen(theme.text);
      p.drawText(e.text, Qt::AlignLeft | Qt::AlignVCenter, e.entry.label);
    }
  }
}

// ---- Time axis ----

QString rulerTickLabel(int64_t offset, int64_t step) {
  const char* sign = offset < 0 ? "-" : "+";
  const double a = std::fabs(static_cast<double>(offset));
  // Unit after the step; as many decimals as multiples of the step need (0.25 -> 2, 0.5 -> 1).
  double unit = 1;
  const char* name = "ns";
  if (step >= 100'000'000)
    unit = 1e9, name = "s";
  else if (step >= 100'000)
    unit = 1e6, name = "ms";
  else if (step >= 100)
    unit = 1e3, name = "us";
  const double s = static_cast<double>(step) / unit;
  int digits = 0;
  while (digits < 6 &&
         std::fabs(s * std::pow(10.0, digits) - std::round(s * std::pow(10.0, digits))) > 1e-6)
    ++digits;
  return QStringLiteral("%1%2 %3").arg(sign).arg(a / unit, 0, 'f', digits).arg(QLatin1String(name));
}

TimeAxis rulerAxis(const TimeMapping& map, int64_t runStart) {
  TimeAxis axis;
  axis.step = niceTimeStep(map.nsPerPx(), 90);
  axis.minor = axis.step / 5 > 0 ? axis.step / 5 : axis.step;
  const int64_t rel0 = map.t0 - runStart;
  // Ticks at multiples of the step counted from the run start.
  auto firstTick = [&](int64_t s) {
    const int64_t k = rel0 >= 0 ? (rel0 + s - 1) / s : rel0 / s;
    return runStart + k * s;
  };
  for (int64_t t = firstTick(axis.minor); t <= map.t1; t += axis.minor)
    axis.ticks.push_back({map.x(t), QString(), false});
  for (int64_t t = firstTick(axis.step); t <= map.t1; t += axis.step)
    axis.ticks.push_back({map.x(t), rulerTickLabel(t - runStart, axis.step), true});
  return axis;
}

void paintRulerTicks(QPainter& p, const TimeAxis& axis, double left, double height,
                     const Theme& theme) {
  p.setPen(QPen(theme.separator, 1.0));
  for (const AxisTick& t : axis.ticks)
    if (!t.major) p.drawLine(QPointF(left + t.pos, height - 5), QPointF(left + t.pos, height));
  for (const AxisTick& t : axis.ticks) {
    if (!t.major) continue;
    const double x = left + t.pos;
    p.setPen(QPen(theme.separator, 1.0));
    p.drawLine(QPointF(x, height - 12), QPointF(x, height));
    p.setPen(theme.text);
    p.drawText(QRectF(x + 3, 4, 120, 18), Qt::AlignLeft | Qt::AlignVCenter, t.label);
  }
}

// ---- Screen rows ----

namespace {

// The screen's label of a row: its title, and for counters the ends of the range drawn.
void paintScreenLabel(QPainter& p, const Theme& theme, const TrackRow& row, const QRectF& r,
                      bool collapsed, const std::optional<ValueRange>& range) {
  p.fillRect(r, row.isHeader() ? theme.headerBackground : theme.labelBackground);
  p.fillRect(QRectF(std::floor(r.right()) - 1, r.top(), 1, r.height()), theme.separator);
  QFont f = p.font();
  const double base = f.pointSizeF() > 0 ? f.pointSizeF() : 9.0;
  const QRectF text = r.adjusted(6, 0, -6, 0);
  switch (row.kind()) {
    case RowKind::RunHeader:
      f.setBold(true);
      p.setFont(f);
      p.setPen(theme.text);
      p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(f).elidedText(row.label, Qt::ElideRight, text.width()));
      break;
    case RowKind::GroupHeader: {
      const QString arrow = collapsed ? QStringLiteral("▸ ") : QStringLiteral("▾ ");
      f.setBold(true);
      p.setFont(f);
      p.setPen(theme.text);
      const QString s = arrow + row.label;
      p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, s);
      const double w = QFontMetricsF(f).horizontalAdvance(s) + 8;
      f.setBold(false);
      f.setPointSizeF(base * 0.85);
      p.setFont(f);
      p.setPen(theme.mutedText);
      p.drawText(text.adjusted(w, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(f).elidedText(row.detail, Qt::ElideRight, text.width() - w));
      break;
    }
    case RowKind::Counter:
    case RowKind::Difference:
    case RowKind::Overlay: {
      p.setFont(f);
      p.setPen(theme.text);
      const QString unit =
          row.detail.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(row.detail);
      p.drawText(text.adjusted(8, 0, -34, 0), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetricsF(f).elidedText(row.label + unit, Qt::ElideRight, text.width() - 42));
      if (range) {
        f.setPointSizeF(base * 0.8);
        p.setFont(f);
        p.setPen(theme.mutedText);
        p.drawText(text, Qt::AlignTop | Qt::AlignRight, numberText(range->max));
        // A fitted axis does not start at zero: its lower end says so.
        p.drawText(text, Qt::AlignBottom | Qt::AlignRight,
                   range->fitted ? QObject::tr("fitted, from %1").arg(numberText(range->min))
                                 : numberText(range->min));
      }
      break;
    }
    case RowKind::Heatmap: {
      p.setFont(f);
      p.setPen(theme.text);
      p.drawText(text.adjusted(0, 2, 0, 0), Qt::AlignTop | Qt::AlignLeft, row.label);
      const ValueRange vr = range.value_or(ValueRange{});
      const QRectF bar(text.left(), text.top() + 22, std::min(120.0, text.width()), 8);
      for (int i = 0; i < static_cast<int>(bar.width()); ++i)
        p.fillRect(QRectF(bar.left() + i, bar.top(), 1, bar.height()), theme.heat(i / bar.width()));
      f.setPointSizeF(base * 0.8);
      p.setFont(f);
      p.setPen(theme.mutedText);
      p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), 14),
                 Qt::AlignLeft | Qt::AlignTop, numberText(vr.min));
      p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), 14),
                 Qt::AlignRight | Qt::AlignTop, numberText(vr.max));
      p.drawText(text.adjusted(0, 48, 0, 0), Qt::AlignTop | Qt::AlignLeft, row.detail);
      break;
    }
    case RowKind::ThrottleStrip:
      f.setPointSizeF(base * 0.75);
      p.setFont(f);
      p.setPen(theme.mutedText);
      p.drawText(text.adjusted(8, -2, 0, 2), Qt::AlignVCenter | Qt::AlignLeft, row.label);
      break;
    case RowKind::ThrottleHeatmap: {
      p.setFont(f);
      p.setPen(theme.text);
      p.drawText(text.adjusted(0, 2, 0, 0), Qt::AlignTop | Qt::AlignLeft, row.label);
      // The key: each reason's colour from pale (a shallow deficit) to full.
      f.setPointSizeF(base * 0.8);
      p.setFont(f);
      const std::pair<uint32_t, QString> keys[] = {{throttle::kSwPowerCap, QObject::tr("power")},
                                                   {throttle::kSwThermal, QObject::tr("thermal")},
                                                   {throttle::kHwSlowdown, QObject::tr("HW")}};
      double y = text.top() + 22;
      for (const auto& [bit, name] : keys) {
        if (y + 12 > r.bottom()) break;
        for (int i = 0; i < 60; ++i)
          p.fillRect(
              QRectF(text.left() + i, y + 2, 1, 8),
              throttleCellColor(theme, bit, kFullDeficit * (i + 1) / 60.0, theme.trackBackground));
        p.setPen(theme.mutedText);
        p.drawText(QRectF(text.left() + 66, y, text.width() - 66, 12),
                   Qt::AlignVCenter | Qt::AlignLeft, name);
        y += 13;
      }
      if (y + 14 < r.bottom())
        p.drawText(QRectF(text.left(), y, text.width(), 14), Qt::AlignVCenter | Qt::AlignLeft,
                   QObject::tr("clock deficit 0 → %1 %").arg(kFullDeficit * 100, 0, 'f', 0));
      break;
    }
    case RowKind::Kernels:
    case RowKind::Steps:
      p.setFont(f);
      p.setPen(theme.text);
      p.drawText(text.adjusted(8, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, row.label);
      if (!row.detail.isEmpty() && r.height() >= 20) {
        f.setPointSizeF(base * 0.8);
        p.setFont(f);
        p.setPen(theme.mutedText);
        p.drawText(text, Qt::AlignVCenter | Qt::AlignRight, row.detail);
      }
      break;
  }
  p.setFont(QFont(f.family(), static_cast<int>(base)));
}

}  // namespace

namespace {

// A screen row's content, its label and the separator under it.
void paintScreenRow(QPainter& p, const FrameLayout& f, const FrameRow& fr,
                    TimelineRenderer& renderer, const TimelineRenderer::Highlight& highlight) {
  const TrackRow& row = *fr.row;
  const TimeMapping map = renderer.displays().contentMapping(row, f.map);
  renderer.paintContent(p, row, fr.content, map, highlight);
  paintScreenLabel(p, f.theme, row, fr.label, fr.collapsed, fr.range);
  // Integer rectangles: the raster engine fills them as plain spans.
  const QRectF rect = fr.label.united(fr.content);
  p.fillRect(QRectF(rect.left(), std::floor(rect.bottom()) - 1, rect.width(), 1),
             f.theme.separator);
}

// Screen: the rows not folded away; pinned rows at the top (at most 40 % of the height), the
// others scrolled under them.
void planScreenRows(FrameLayout& f, const std::vector<TrackRow>& rows,
                    const std::set<QString>& collapsed, double scroll) {
  const std::vector<size_t> shown = unfoldedRows(rows, collapsed);
  double pinned = 0;
  for (size_t i : shown)
    (rows[i].pinned ? pinned : f.scrollHeight) += rows[i].height;
  f.pinnedHeight = std::min(pinned, 0.4 * f.body.height());
  double pinnedY = f.body.top(), y = f.body.top() + f.pinnedHeight - scroll;
  const double bottom = f.body.bottom(), pinnedBottom = f.body.top() + f.pinnedHeight;
  for (size_t i : shown) {
    const TrackRow& r = rows[i];
    const auto h = static_cast<double>(r.height);
    double& at = r.pinned ? pinnedY : y;
    const bool visible = r.pinned ? at < pinnedBottom : at + h > pinnedBottom && at < bottom;
    if (visible) {
      FrameRow fr;
      fr.row = &r;
      fr.index = i;
      fr.pinned = r.pinned;
      fr.collapsed = collapsed.count(r.key) > 0;
      fr.label = QRectF(f.body.left(), at, f.labelWidth, h);
      fr.content = QRectF(f.contentLeft, at, f.contentWidth, h);
      f.rows.push_back(std::move(fr));
    }
    at += h;
  }
}

}  // namespace

// ---- Figures ----

double figureRowHeight(const TrackRow& r) {
  if (r.isHeader()) return std::max(r.height, 18);
  // Differences as counters: room for a y axis (-x, 0, +x).
  return r.kind() == RowKind::Counter || r.kind() == RowKind::Overlay ||
                 r.kind() == RowKind::Difference
             ? std::max(r.height, 56)
             : r.height;
}

namespace {

// Label column: as wide as the longest row title plus room for tick labels, up to 40 % of the
// figure (longer titles are then wrapped, drawFigureTitle).
void layoutLabelColumn(FrameLayout& f, const std::vector<TrackRow>& rows, const TileStore& store) {
  const QFontMetricsF tm(f.fonts.text), sm(f.fonts.small);
  double titleW = 0, stripW = 0;
  f.tickWidth = sm.horizontalAdvance(QStringLiteral("00000"));
  for (const TrackRow& r : rows) {
    switch (r.kind()) {
      case RowKind::Counter:
      case RowKind::Overlay:
        titleW = std::max(titleW, tm.horizontalAdvance(counterTitle(r, true)));
        break;
      case RowKind::Difference:
        titleW = std::max(titleW, tm.horizontalAdvance(counterTitle(r)));
        break;
      case RowKind::ThrottleStrip:  // its title in the small font across the whole column
        stripW = std::max(stripW, sm.horizontalAdvance(r.label) + 10);
        break;
      case RowKind::ThrottleHeatmap:
        titleW = std::max(titleW, tm.horizontalAdvance(r.label));
        f.tickWidth = std::max(f.tickWidth, sm.horizontalAdvance(QStringLiteral("GPU 0000")));
        break;
      case RowKind::Heatmap:
        titleW = std::max(
            titleW,
            std::min(tm.horizontalAdvance(heatmapTitle(store.run(r.run()), *r.as<HeatmapRow>())),
                     240.0));
        f.tickWidth = std::max(f.tickWidth, sm.horizontalAdvance(QStringLiteral("GPU 0000")));
        break;
      case RowKind::Kernels:
      case RowKind::Steps:
        titleW = std::max(titleW, tm.horizontalAdvance(r.label) + 8);
        break;
      default:
        break;
    }
  }
  f.labelWidth = std::clamp(std::max(titleW + f.tickWidth + f.tickLength + 18, stripW), 90.0,
                            std::max(90.0, 0.4 * f.body.width()));
  // Vector rows put column c's vertex at contentLeft + c + 0.5: a content edge at a half pixel
  // makes those whole numbers, two characters less per vertex in an SVG.
  f.contentLeft = f.fonts.vector ? std::floor(f.body.left() + f.labelWidth) + 0.5
                                 : f.body.left() + f.labelWidth;
  f.contentWidth = std::max(8.0, f.body.right() - f.contentLeft - 6);
}

// An A - B row's axis, symmetric around zero (differenceRange: +-1.1 x the largest difference):
// zero and +-s, s the largest round value (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k) not above the
// largest difference, so the outer ticks sit at least 70 % of the way out and their labels stay
// apart in a thin row. Zero alone for a range of no data (rangeMax 0).
std::vector<AxisTick> differenceTicks(double rangeMax) {
  const double m = rangeMax / 1.1;
  if (!(m > 0) || !std::isfinite(m)) return {{0.0, QStringLiteral("0"), true}};
  const double decade = std::pow(10.0, std::floor(std::log10(m)));
  double s = decade;
  for (double k : {1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0})
    if (k * decade <= m * (1 + 1e-9)) s = k * decade;
  // As many decimals as s needs (2.5: one), the same for the three labels.
  return {{-s, tickValueText(-s, s), true},
          {0.0, tickValueText(0.0, s), true},
          {s, tickValueText(s, s), true}};
}

// A heatmap's GPU axis: every n-th GPU (n a power of two) so labels do not overlap.
std::vector<AxisTick> gpuTicks(const RunFile& run, const QRectF& content, double labelHeight) {
  std::vector<AxisTick> ticks;
  const size_t gpus = run.gpus().size();
  if (gpus == 0) return ticks;
  const double rowH = content.height() / static_cast<double>(gpus);
  const auto every = static_cast<size_t>(std::max(1.0, std::ceil(labelHeight * 1.1 / rowH)));
  size_t nice = 1;
  for (size_t n : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048})
    if (n >= every) {
      nice = n;
      break;
    }
  // The devices of a run with MI250 packages are GCDs.
  const QString name = hasPackages(run) ? QObject::tr("GCD %1") : QObject::tr("GPU %1");
  for (size_t gi = 0; gi < gpus; gi += nice)
    ticks.push_back({content.top() + (static_cast<double>(gi) + 0.5) * rowH,
                     name.arg(run.gpus()[gi].id), true});
  return ticks;
}

// Rows share the height left after the legend and the time axis, in proportion to their natural
// heights.
void placeFigureRows(FrameLayout& f, const std::vector<TrackRow>& rows, double top) {
  const QFontMetricsF tm(f.fonts.text), sm(f.fonts.small);
  const double axisH = f.tickLength + sm.height() + 4 + tm.height() + 2;
  const double rowsH = std::max(10.0, f.body.bottom() - axisH - top);
  double natural = 0;
  for (const TrackRow& r : rows)
    natural += figureRowHeight(r);
  const double k = natural > 0 ? rowsH / natural : 1.0;
  double y = top;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TrackRow& r = rows[i];
    const double h = figureRowHeight(r) * k;
    FrameRow fr;
    fr.row = &r;
    fr.index = i;
    fr.label = QRectF(f.body.left(), y, f.labelWidth, h);
    fr.content = QRectF(f.contentLeft, y, f.contentWidth, h);
    y += h;
    f.rows.push_back(std::move(fr));
  }
  f.timeAxisY = y;
}

// A figure row's axis: counters get their range and y ticks, heatmaps their colour range and GPU
// axis (from the geometry the row is drawn from).
void prepareFigureAxis(const FrameLayout& f, FrameRow& fr, TimelineRenderer& renderer,
                       const TileFetch& fetch) {
  const QFontMetricsF sm(f.fonts.small);
  const TrackRow& r = *fr.row;
  const double h = fr.content.height();
  if (const auto* c = r.as<CounterRow>()) {
    fr.range =
        renderer.geometry(*c, renderer.displays().contentMapping(r, f.deviceMap), fetch).range;
    const int approx = std::max(2, static_cast<int>(h / (1.8 * sm.height())));
    fr.ticks = valueTicks(fr.range->min, fr.range->max, approx);
  } else if (r.as<OverlayRow>()) {
    fr.range = renderer.rowRange(r, f.deviceMap, fetch);
    const int approx = std::max(2, static_cast<int>(h / (1.8 * sm.height())));
    fr.ticks = valueTicks(fr.range->min, fr.range->max, approx);
  } else if (const auto* d = r.as<DifferenceRow>()) {
    const TimelineRenderer::RowGeometry g =
        renderer.geometry(*d, renderer.displays().contentMapping(r, f.deviceMap), fetch);
    fr.range = g.range;
    // Where the runs have no data in common only the zero line is there to be labelled.
    fr.ticks = differenceTicks(std::isnan(g.difference->maxV) ? 0.0 : g.range->max);
  } else if (const auto* hm = r.as<HeatmapRow>()) {
    fr.range = renderer.rowRange(r, f.map, fetch);  // the colour range
    fr.ticks = gpuTicks(f.store->run(hm->run), fr.content, sm.height());
  } else if (const auto* th = r.as<ThrottleHeatmapRow>()) {
    fr.ticks = gpuTicks(f.store->run(th->run), fr.content, sm.height());
  }
}

// The mapping a figure row's content is drawn with (paintFigureContent): raster rows and vector
// counters and kernels per device pixel, the rest in logical pixels.
TimeMapping figureContentMapping(const FrameLayout& f, const TrackRow& r,
                                 const TimelineRenderer& renderer) {
  const bool device =
      r.kind() != RowKind::Steps &&
      (!f.fonts.vector || r.kind() == RowKind::Counter || r.kind() == RowKind::Kernels);
  return renderer.displays().contentMapping(r, device ? f.deviceMap : f.map);
}

void planFigure(FrameLayout& f, const std::vector<TrackRow>& rows, const TimeRange& range,
                const FrameSpec& spec) {
  layoutLabelColumn(f, rows, *spec.store);
  f.map = TimeMapping{range.t0, range.t1, f.contentWidth};
  // Raster rows are computed per device pixel.
  const double devW = std::max(1.0, std::round(f.contentWidth * f.fonts.scale));
  f.deviceMap = TimeMapping{range.t0, range.t1, f.fonts.vector ? f.contentWidth : devW};
  const QFontMetricsF sm(f.fonts.small);
  double top = f.body.top();
  const std::vector<LegendEntry> legend =
      spec.legend ? spec.legend(f.deviceMap) : std::vector<LegendEntry>{};
  if (!legend.empty()) {
    f.legend = placeLegend(legend, QRectF(f.contentLeft, top, f.body.right() - f.contentLeft, 0),
                           f.fonts.small, FrameStyle::Figure);
    top = f.legend.back().text.top() + sm.height() + 6;
  }
  placeFigureRows(f, rows, top);
  f.time = timeAxis(f.map, spec.origin, sm.horizontalAdvance(QStringLiteral("00000")) * 1.8);
}

}  // namespace

FrameLayout planFrame(const std::vector<TrackRow>& rows, const TimeRange& range,
                      const FrameSpec& spec, const QRectF& area, double scroll) {
  FrameLayout f;
  f.style = spec.style;
  f.theme = spec.theme;
  f.fonts = spec.fonts;
  f.body = area;
  f.store = spec.store;
  if (spec.style == FrameStyle::Figure) {
    planFigure(f, rows, range, spec);
    return f;
  }
  f.labelWidth = kScreenLabelWidth;
  f.contentLeft = area.left() + kScreenLabelWidth;
  f.contentWidth = std::max(1.0, area.width() - kScreenLabelWidth);
  f.map = f.deviceMap = TimeMapping{range.t0, range.t1, f.contentWidth};
  planScreenRows(f, rows, spec.collapsed, scroll);
  return f;
}

std::vector<TileKey> prepareFrame(FrameLayout& f, TimelineRenderer& renderer,
                                  const TileFetch& fetch) {
  std::vector<TimelineRenderer::RowTarget> targets;
  targets.reserve(f.rows.size());
  const bool screen = f.style == FrameStyle::Screen;
  for (const FrameRow& fr : f.rows) {
    const TrackRow& r = *fr.row;
    const TimeMapping m = screen ? renderer.displays().contentMapping(r, f.map)
                                 : figureContentMapping(f, r, renderer);
    // The screen's rows are drawn into images of their content's size, cached by the renderer.
    const QSize image = screen
                            ? QSize(std::max(1, static_cast<int>(std::ceil(fr.content.width()))),
                                    std::max(1, static_cast<int>(std::ceil(fr.content.height()))))
                            : QSize();
    targets.push_back({&r, m, image});
  }
  // The font rows are drawn in after the first label (paintScreenLabel resets it).
  const double base = f.fonts.text.pointSizeF() > 0 ? f.fonts.text.pointSizeF() : 9.0;
  // Ranges' whole-run tiles first, then the rows' (TimelineRenderer::prepare).
  std::vector<TileKey> missing =
      renderer.prepare(targets, fetch, QFont(f.fonts.text.family(), static_cast<int>(base)));
  for (size_t k = 0; k < f.rows.size(); ++k) {
    FrameRow& fr = f.rows[k];
    if (screen)
      fr.range = targets[k].range;
    else if (!fr.row->isHeader())
      prepareFigureAxis(f, fr, renderer, fetch);
  }
  return missing;
}

namespace {

void paintFigureHeader(QPainter& p, const FrameLayout& f, const FrameRow& fr) {
  const TrackRow& r = *fr.row;
  const QFontMetricsF sm(f.fonts.small), bm(f.fonts.bold);
  const double w = f.labelWidth + f.contentWidth, h = fr.label.height();
  if (!f.fonts.publication)
    p.fillRect(QRectF(f.body.left(), fr.label.top(), w, h), f.theme.headerBackground);
  p.setFont(f.fonts.bold);
  p.setPen(f.theme.text);
  const double hw = bm.horizontalAdvance(r.label);
  p.drawText(QRectF(f.body.left() + 2, fr.label.top(), w, h), Qt::AlignLeft | Qt::AlignBottom,
             r.label);
  if (!r.detail.isEmpty()) {
    p.setFont(f.fonts.small);
    p.setPen(f.theme.mutedText);
    p.drawText(QRectF(f.body.left() + 2 + hw + 8, fr.label.top(), w - hw - 10, h),
               Qt::AlignLeft | Qt::AlignBottom,
               sm.elidedText(r.detail, Qt::ElideRight, w - hw - 10));
  }
}

// Content: raster rows per device pixel (exactly as the screen draws them), vector rows through
// the renderer's vector path, steps in logical pixels.
void paintFigureContent(QPainter& p, const FrameLayout& f, const FrameRow& fr,
                        TimelineRenderer& renderer) {
  const TrackRow& r = *fr.row;
  if (r.kind() == RowKind::Steps) {
    p.save();
    p.setFont(f.fonts.small);
    renderer.paintContent(p, r, fr.content, renderer.displays().contentMapping(r, f.map), {});
    p.restore();
  } else if (!f.fonts.vector) {
    p.save();
    const QTransform t = p.transform();
    const QRectF dev = t.mapRect(fr.content);
    const QRectF devSnapped(std::round(dev.left()), std::round(dev.top()), f.deviceMap.width,
                            std::max(1.0, std::round(dev.height())));
    p.resetTransform();
    QFont font = f.fonts.small;
    font.setPixelSize(
        std::max(1, static_cast<int>(std::lround(f.fonts.small.pixelSize() * f.fonts.scale))));
    p.setFont(font);
    renderer.paintContent(p, r, devSnapped, renderer.displays().contentMapping(r, f.deviceMap), {});
    p.restore();
  } else if (r.kind() == RowKind::Counter || r.kind() == RowKind::Kernels) {
    renderer.paintContent(p, r, fr.content, renderer.displays().contentMapping(r, f.deviceMap), {});
  } else {
    p.save();
    renderer.paintContent(p, r, fr.content, renderer.displays().contentMapping(r, f.map), {});
    p.restore();
  }
}

// A counter's y axis: the axis line, ticks with values (those that fit), the row's title.
void paintCounterAxis(QPainter& p, const FrameLayout& f, const FrameRow& fr, double axisX) {
  const QFontMetricsF sm(f.fonts.small);
  const double hair = f.fonts.hairline;
  const QRectF& content = fr.content;
  const ValueRange vr = *fr.range;
  // The value mapping of the drawn rows (raster rows: device pixels, see kDataTop).
  const double mt = kDataTop / (f.fonts.vector ? 1.0 : f.fonts.scale);
  const double mb = kDataBottom / (f.fonts.vector ? 1.0 : f.fonts.scale);
  const QRectF data = content.adjusted(0, mt, 0, -mb);
  p.setPen(QPen(f.theme.text, hair));
  p.drawLine(QPointF(axisX, content.top() + 0.5), QPointF(axisX, content.bottom() - 0.5));
  p.setFont(f.fonts.small);
  double lastTop = INFINITY;
  for (const AxisTick& t : fr.ticks) {
    const double ty = vr.y(t.pos, data);
    if (ty < content.top() - 0.5 || ty > content.bottom() + 0.5) continue;
    p.setPen(QPen(f.theme.text, hair));
    p.drawLine(QPointF(axisX - f.tickLength, ty), QPointF(axisX, ty));
    QRectF box(axisX - f.tickLength - 2 - f.tickWidth, ty - sm.height() / 2, f.tickWidth,
               sm.height());
    if (box.top() < content.top()) box.moveTop(content.top());
    if (box.bottom() > content.bottom()) box.moveBottom(content.bottom());
    if (box.bottom() > lastTop + 0.5) continue;  // would overlap the label above
    p.drawText(box, Qt::AlignRight | Qt::AlignVCenter, t.label);
    lastTop = box.top();
  }
  p.setPen(f.theme.text);
  const double titleRoom = f.labelWidth - f.tickWidth - f.tickLength - 8;
  drawFigureTitle(p, QRectF(fr.label.left() + 2, fr.label.top(), titleRoom, fr.label.height()),
                  counterTitle(*fr.row, vr.fitted), f.fonts.text, Qt::AlignVCenter);
}

// A heatmap's label column: its title, a colour bar with the value range, the GPU axis.
void paintHeatmapAxis(QPainter& p, const FrameLayout& f, const FrameRow& fr, double axisX) {
  const TileStore& store = *f.store;
  const QFontMetricsF tm(f.fonts.text), sm(f.fonts.small);
  const HeatmapRow& hm = *fr.row->as<HeatmapRow>();
  const QRectF& label = fr.label;
  const QString title = heatmapTitle(store.run(hm.run), hm);
  p.setPen(f.theme.text);
  const double room = f.labelWidth - f.tickWidth - f.tickLength - 8;
  drawFigureTitle(p, QRectF(label.left() + 2, label.top(), room, tm.height()), title, f.fonts.text,
                  Qt::AlignTop);
  const ValueRange vr = *fr.range;
  const QRectF bar(label.left() + 2, label.top() + tm.height() + 4, std::min(room, 120.0),
                   std::max(6.0, sm.height() * 0.7));
  if (bar.bottom() + sm.height() < label.bottom()) {
    QLinearGradient grad(bar.topLeft(), bar.topRight());
    for (double s : {0.0, 0.25, 0.5, 0.75, 1.0})
      grad.setColorAt(s, f.theme.heat(s));
    p.fillRect(bar, grad);
    p.setFont(f.fonts.small);
    p.setPen(f.theme.text);
    const double step = std::fabs(vr.max - vr.min) / 10;
    p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), sm.height()),
               Qt::AlignLeft | Qt::AlignTop, tickValueText(vr.min, step));
    p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), sm.height()),
               Qt::AlignRight | Qt::AlignTop, tickValueText(vr.max, step));
  }
  if (fr.ticks.empty()) return;
  p.setPen(QPen(f.theme.text, f.fonts.hairline));
  p.drawLine(QPointF(axisX, fr.content.top()), QPointF(axisX, fr.content.bottom()));
  p.setFont(f.fonts.small);
  for (const AxisTick& t : fr.ticks) {
    p.drawLine(QPointF(axisX - f.tickLength, t.pos), QPointF(axisX, t.pos));
    p.drawText(QRectF(axisX - f.tickLength - 2 - f.tickWidth, t.pos - sm.height() / 2, f.tickWidth,
                      sm.height()),
               Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
}

// A throttle strip's or reason heatmap's label column: its title in the small font (a strip is
// thin), and a heatmap's GPU axis.
void paintThrottleAxis(QPainter& p, const FrameLayout& f, const FrameRow& fr, double axisX) {
  const QFontMetricsF sm(f.fonts.small);
  const double room = f.labelWidth - f.tickWidth - f.tickLength - 8;
  p.setPen(f.theme.text);
  const bool strip = fr.row->kind() == RowKind::ThrottleStrip;
  drawFigureTitle(p,
                  QRectF(fr.label.left() + 2, fr.label.top(), strip ? f.labelWidth - 8 : room,
                         strip ? fr.label.height() : sm.height()),
                  fr.row->label, f.fonts.small, strip ? Qt::AlignVCenter : Qt::AlignTop);
  p.setFont(f.fonts.small);
  if (fr.ticks.empty()) return;
  p.setPen(QPen(f.theme.text, f.fonts.hairline));
  p.drawLine(QPointF(axisX, fr.content.top()), QPointF(axisX, fr.content.bottom()));
  for (const AxisTick& t : fr.ticks) {
    p.drawLine(QPointF(axisX - f.tickLength, t.pos), QPointF(axisX, t.pos));
    p.drawText(QRectF(axisX - f.tickLength - 2 - f.tickWidth, t.pos - sm.height() / 2, f.tickWidth,
                      sm.height()),
               Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
}

void paintFigureRow(QPainter& p, const FrameLayout& f, const FrameRow& fr,
                    TimelineRenderer& renderer) {
  const TrackRow& r = *fr.row;
  if (r.isHeader()) {
    paintFigureHeader(p, f, fr);
    return;
  }
  paintFigureContent(p, f, fr, renderer);
  const double hair = f.fonts.hairline;
  p.setPen(QPen(f.theme.separator, hair));
  const double axisX = f.contentLeft - 0.5 * hair;
  switch (r.kind()) {
    case RowKind::Counter:
    case RowKind::Overlay:
    case RowKind::Difference:
      paintCounterAxis(p, f, fr, axisX);
      break;
    case RowKind::Heatmap:
      paintHeatmapAxis(p, f, fr, axisX);
      break;
    case RowKind::ThrottleStrip:
    case RowKind::ThrottleHeatmap:
      paintThrottleAxis(p, f, fr, axisX);
      break;
    default:  // kernels, steps: a title
      p.setPen(f.theme.text);
      drawFigureTitle(
          p, QRectF(fr.label.left() + 2, fr.label.top(), f.labelWidth - 8, fr.label.height()),
          r.label, f.fonts.text, Qt::AlignVCenter);
      break;
  }
  // A hairline under each content row.
  p.setPen(QPen(f.theme.gridLine, hair));
  p.drawLine(QPointF(f.contentLeft, fr.content.bottom()),
             QPointF(f.contentLeft + f.contentWidth, fr.content.bottom()));
}

void paintFigureTimeAxis(QPainter& p, const FrameLayout& f) {
  const QFontMetricsF tm(f.fonts.text), sm(f.fonts.small);
  const double hair = f.fonts.hairline, axisY = f.timeAxisY;
  const double contentRight = f.contentLeft + f.contentWidth;
  p.setPen(QPen(f.theme.text, hair));
  p.drawLine(QPointF(f.contentLeft, axisY), QPointF(contentRight, axisY));
  p.setFont(f.fonts.small);
  for (const AxisTick& t : f.time.ticks) {
    const double x = f.contentLeft + t.pos;
    if (x < f.contentLeft - 0.5 || x > contentRight + 0.5) continue;
    p.setPen(QPen(f.theme.text, hair));
    p.drawLine(QPointF(x, axisY), QPointF(x, axisY + (t.major ? f.tickLength : f.tickLength / 2)));
    if (!t.major) continue;
    const double w = sm.horizontalAdvance(t.label) + 2;
    QRectF box(x - w / 2, axisY + f.tickLength + 1, w, sm.height());
    if (box.right() > f.body.right()) box.moveRight(f.body.right());
    p.drawText(box, Qt::AlignCenter, t.label);
  }
  p.setFont(f.fonts.text);
  p.setPen(f.theme.text);
  p.drawText(
      QRectF(f.contentLeft, axisY + f.tickLength + sm.height() + 3, f.contentWidth, tm.height()),
      Qt::AlignHCenter | Qt::AlignTop, timeAxisTitle(f.time));
}

}  // namespace

void paintFrame(QPainter& p, const FrameLayout& f, TimelineRenderer& renderer,
                const TimelineRenderer::Highlight& highlight) {
  if (f.style == FrameStyle::Figure) {
    if (!f.legend.empty())
      paintLegend(p, f.legend, f.theme, FrameStyle::Figure, f.fonts.hairline, f.fonts.small);
    std::vector<bool> labelled;
    for (const FrameRow& fr : f.rows) {
      paintFigureRow(p, f, fr, renderer);
      if (!f.notes.empty()) {
        p.save();
        p.setFont(f.fonts.small);
        paintNoteBands(p, *fr.row, fr.content, renderer.displays().rowMapping(*fr.row, f.map),
                       f.notes, labelled);
        p.restore();
      }
    }
    paintFigureTimeAxis(p, f);
    return;
  }
  // Scrolled rows first, clipped below the pinned area; then the pinned rows on top.
  const double pinnedBottom = f.body.top() + f.pinnedHeight;
  std::vector<bool> labelled;  // a note's text is written once, in its first row
  for (int pass = 0; pass < 2; ++pass) {
    for (const FrameRow& fr : f.rows) {
      if (fr.pinned != (pass == 1)) continue;
      p.save();
      if (!fr.pinned)
        p.setClipRect(
            QRectF(f.body.left(), pinnedBottom, f.body.width(), f.body.bottom() - pinnedBottom));
      paintScreenRow(p, f, fr, renderer, highlight);
      if (!f.failures.empty())
        paintReadFailures(p, *fr.row, fr.content,
                          renderer.displays().contentMapping(*fr.row, f.map), f.failures);
      if (!f.notes.empty())
        paintNoteBands(p, *fr.row, fr.content, renderer.displays().rowMapping(*fr.row, f.map),
                       f.notes, labelled);
      p.restore();
    }
  }
  if (f.pinnedHeight > 0) {
    p.setPen(QPen(f.theme.separator, 2.0));
    p.drawLine(QPointF(f.body.left(), pinnedBottom), QPointF(f.body.right(), pinnedBottom));
  }
}

}  // namespace wl
