// SPDX-License-Identifier: GPL-3.0-or-later
#include "export/timeline_figure.h"

#include <QFontMetricsF>
#include <QLinearGradient>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/throttle_reasons.h"
#include "export/figure_axes.h"
#include "export/vector_tracks.h"
#include "timeline/track_painter.h"

namespace wl {
namespace {

// The raster path maps values onto the content rows [3, h - 2] (timeline_renderer.cpp); the
// vector path and the axes use the same margins.
constexpr double kDataTop = 3.0, kDataBottom = 2.0;

bool isContent(const TrackRow& r) {
  return r.kind() == RowKind::Counter || r.kind() == RowKind::Kernels ||
         r.kind() == RowKind::Heatmap || r.kind() == RowKind::Steps ||
         r.kind() == RowKind::Difference;
}

QString counterTitle(const TrackRow& r) {
  const QString unit = unitText(r.detail);
  return unit.isEmpty() ? r.label : QStringLiteral("%1 (%2)").arg(r.label, unit);
}

QString heatmapTitle(const RunFile& run, const TrackRow& r) {
  const MetricInfo& m =
      run.series().metrics[static_cast<size_t>(std::get<HeatmapRow>(r.content).metric)];
  const QString label = QString::fromStdString(m.label);
  return m.unit.empty()
             ? label
             : QStringLiteral("%1 (%2)").arg(label, unitText(QString::fromStdString(m.unit)));
}

struct LegendItem {
  QColor colour;
  QString label;
};

}  // namespace

TimelineFigure::TimelineFigure(TileStore& store, TimelineFigureSpec spec)
    : store_(&store), spec_(std::move(spec)), renderer_(std::make_unique<TimelineRenderer>(store)) {
  for (const auto& [run, offset] : spec_.runOffsets)
    renderer_->setRunOffset(run, offset);
  std::set<int> runs;
  for (const TrackRow& r : spec_.rows)
    runs.insert(r.run());
  if (runs.size() <= 1)
    std::erase_if(spec_.rows, [](const TrackRow& r) { return r.kind() == RowKind::RunHeader; });
}

TimelineFigure::TimelineFigure(std::unique_ptr<TileStore> store, TimelineFigureSpec spec)
    : TimelineFigure(*store, std::move(spec)) {
  ownedStore_ = std::move(store);
}

TimelineFigure::~TimelineFigure() = default;

QString TimelineFigure::kind() const {
  bool heat = false, other = false;
  for (const TrackRow& r : spec_.rows) {
    if (r.kind() == RowKind::Heatmap) heat = true;
    if (r.kind() == RowKind::Counter || r.kind() == RowKind::Kernels) other = true;
  }
  return heat && !other ? QStringLiteral("heatmap") : QStringLiteral("timeline");
}

QSizeF TimelineFigure::preferredSize(double width) const {
  double rows = 0;
  for (const TrackRow& r : spec_.rows)
    rows += r.kind() == RowKind::Counter ? std::max(r.height, 56) : r.height;
  // Caption, legend and time axis.
  return {width, std::ceil(rows + 150)};
}

void TimelineFigure::paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) {
  const Theme& th = canvas.theme;
  renderer_->setTheme(th);
  renderer_->setYMode(spec_.yMode);
  TileStore& store = *store_;
  const TileFetch load = [&store](const TileKey& k) { return store.load(k); };
  const QFont text = canvas.font(canvas.textPt());
  const QFont bold = canvas.font(canvas.textPt(), true);
  const QFont small = canvas.font(canvas.smallPt());
  const QFontMetricsF tm(text), sm(small), bm(bold);
  const double hair = canvas.hairline();

  // Label column: row titles plus room for tick labels.
  double titleW = 0, tickW = sm.horizontalAdvance(QStringLiteral("00000"));
  for (const TrackRow& r : spec_.rows) {
    switch (r.kind()) {
      case RowKind::Counter:
        titleW = std::max(titleW, tm.horizontalAdvance(counterTitle(r)));
        break;
      case RowKind::Heatmap:
        titleW = std::max(
            titleW, std::min(tm.horizontalAdvance(heatmapTitle(store.run(r.run()), r)), 240.0));
        tickW = std::max(tickW, sm.horizontalAdvance(QStringLiteral("GPU 0000")));
        break;
      case RowKind::Kernels:
      case RowKind::Steps:
        titleW = std::max(titleW, tm.horizontalAdvance(r.label) + 8);
        break;
      default:
        break;
    }
  }
  const double tickLen = 4;
  const double labelW =
      std::clamp(titleW + tickW + tickLen + 18, 90.0, std::max(90.0, 0.4 * body.width()));
  // Vector rows put column c's vertex at contentLeft + c + 0.5: a content edge at a half pixel
  // makes those whole numbers, two characters less per vertex in an SVG.
  const double contentLeft =
      canvas.vector ? std::floor(body.left() + labelW) + 0.5 : body.left() + labelW;
  const double contentW = std::max(8.0, body.right() - contentLeft - 6);
  const TimeMapping mapL{spec_.range.t0, spec_.range.t1, contentW};
  // Raster rows are computed per device pixel.
  const double devW = std::max(1.0, std::round(contentW * canvas.scale));
  const TimeMapping mapD{spec_.range.t0, spec_.range.t1, canvas.vector ? contentW : devW};

  // Legend: kernel classes of the streams shown, throttle reasons of the bands drawn.
  std::vector<LegendItem> legend;
  {
    std::array<bool, kKernelClassCount> classes{};
    uint32_t reasons = 0;
    bool otherBand = false;
    for (const TrackRow& r : spec_.rows) {
      if (r.kind() == RowKind::Kernels) {
        const TrackInfo& ti =
            store.run(r.run()).tracks()[static_cast<size_t>(std::get<KernelsRow>(r.content).track)];
        for (size_t c = 0; c < kKernelClassCount; ++c)
          classes[c] = classes[c] || ti.classCount[c] > 0;
      } else if (r.kind() == RowKind::Counter) {
        const CounterGeometry* g =
            renderer_->counterGeometry(std::get<CounterRow>(r.content), mapD, load, nullptr);
        for (const ThrottleBand& b : g->bands) {
          reasons |= b.reasons & throttle::kSlowdownMask;
          otherBand = otherBand || (b.reasons & throttle::kSlowdownMask) == 0;
        }
      }
    }
    for (size_t c = 0; c < kKernelClassCount; ++c)
      if (classes[c])
        legend.push_back({th.kernelClass[c],
                          QString::fromUtf8(kernelClassName(static_cast<KernelClass>(c)).data())});
    for (const auto& def : throttle::reasons())
      if (reasons & def.bit)
        legend.push_back(
            {th.reasonColor(def.bit),
             QObject::tr("throttled: %1")
                 .arg(QString::fromUtf8(def.label.data(), static_cast<int>(def.label.size())))});
    if (otherBand) legend.push_back({th.reasonColor(0), QObject::tr("throttled: other")});
  }
  double top = body.top();
  if (!legend.empty()) {
    p.setFont(small);
    double x = contentLeft, y = top;
    const double sw = sm.height() * 0.75;
    for (const LegendItem& it : legend) {
      const double w = sw + 4 + sm.horizontalAdvance(it.label) + 14;
      if (x + w > body.right() && x > contentLeft) {
        x = contentLeft;
        y += sm.height() + 3;
      }
      const QRectF swatch(x, y + (sm.height() - sw) / 2, sw, sw);
      p.fillRect(swatch, th.background);
      p.fillRect(swatch, it.colour);
      p.setPen(QPen(th.separator, hair));
      p.setBrush(Qt::NoBrush);
      p.drawRect(swatch);
      p.setPen(th.text);
      p.drawText(QRectF(x + sw + 4, y, w, sm.height()), Qt::AlignLeft | Qt::AlignVCenter, it.label);
      x += w;
    }
    top = y + sm.height() + 6;
  }

  // Rows share the height left after the time axis, in proportion to their natural heights.
  const double axisH = tickLen + sm.height() + 4 + tm.height() + 2;
  const double rowsH = std::max(10.0, body.bottom() - axisH - top);
  double natural = 0;
  for (const TrackRow& r : spec_.rows)
    natural += r.kind() == RowKind::GroupHeader || r.kind() == RowKind::RunHeader
                   ? std::max(r.height, 18)
                   : (r.kind() == RowKind::Counter ? std::max(r.height, 56) : r.height);
  const double k = natural > 0 ? rowsH / natural : 1.0;

  double y = top;
  const double contentRight = contentLeft + contentW;
  for (const TrackRow& r : spec_.rows) {
    const double nat = r.kind() == RowKind::GroupHeader || r.kind() == RowKind::RunHeader
                           ? std::max(r.height, 18)
                           : (r.kind() == RowKind::Counter ? std::max(r.height, 56) : r.height);
    const double h = nat * k;
    const QRectF label(body.left(), y, labelW, h);
    const QRectF content(contentLeft, y, contentW, h);
    y += h;
    if (r.kind() == RowKind::GroupHeader || r.kind() == RowKind::RunHeader) {
      if (!canvas.publication)
        p.fillRect(QRectF(body.left(), label.top(), labelW + contentW, h), th.headerBackground);
      p.setFont(bold);
      p.setPen(th.text);
      const QString head = r.label;
      const double hw = bm.horizontalAdvance(head);
      p.drawText(QRectF(body.left() + 2, label.top(), labelW + contentW, h),
                 Qt::AlignLeft | Qt::AlignBottom, head);
      if (!r.detail.isEmpty()) {
        p.setFont(small);
        p.setPen(th.mutedText);
        p.drawText(QRectF(body.left() + 2 + hw + 8, label.top(), labelW + contentW - hw - 10, h),
                   Qt::AlignLeft | Qt::AlignBottom,
                   sm.elidedText(r.detail, Qt::ElideRight, labelW + contentW - hw - 10));
      }
      continue;
    }
    if (!isContent(r)) continue;

    // Content.
    const RunFile& run = store.run(r.run());
    if (r.kind() == RowKind::Steps) {
      p.save();
      p.setFont(small);
      renderer_->paintContent(p, r, content, mapL, load, nullptr, {});
      p.restore();
    } else if (!canvas.vector) {
      // Per device pixel, exactly as the screen draws it.
      p.save();
      const QTransform t = p.transform();
      const QRectF dev = t.mapRect(content);
      const QRectF devSnapped(std::round(dev.left()), std::round(dev.top()), devW,
                              std::max(1.0, std::round(dev.height())));
      p.resetTransform();
      QFont f = small;
      f.setPixelSize(std::max(1, static_cast<int>(std::lround(small.pixelSize() * canvas.scale))));
      p.setFont(f);
      renderer_->paintContent(p, r, devSnapped, mapD, load, nullptr, {});
      p.restore();
    } else if (r.kind() == RowKind::Counter) {
      const CounterRow& cr = std::get<CounterRow>(r.content);
      const CounterGeometry* g = renderer_->counterGeometry(cr, mapD, load, nullptr);
      const ValueRange vr = renderer_->valueRange(cr, g);
      p.fillRect(content, th.trackBackground);
      paintThrottleBandsVector(p, content, g->bands, th);
      const QRectF data = content.adjusted(0, kDataTop, 0, -kDataBottom);
      p.setPen(QPen(th.gridLine, hair, Qt::DotLine));
      for (double v : niceTicks(vr.min, vr.max, 2)) {
        const double gy = vr.y(v, data);
        if (gy > data.top() + 2 && gy < data.bottom() - 2)
          p.drawLine(QPointF(content.left(), gy), QPointF(content.right(), gy));
      }
      const std::string& id = run.series().metrics[static_cast<size_t>(cr.metric)].id;
      paintCounterVector(p, data, *g, vr, th.metricColor(id), 0.6);
    } else if (r.kind() == RowKind::Kernels) {
      const KernelGeometry* g =
          renderer_->kernelGeometry(std::get<KernelsRow>(r.content), mapD, load, nullptr);
      p.fillRect(content, th.trackAltBackground);
      p.save();
      p.setFont(small);
      paintKernelsVector(p, content, *g, th,
                         [&run](uint32_t id) { return QString::fromStdString(run.str(id)); });
      p.restore();
    } else {
      p.save();
      renderer_->paintContent(p, r, content, mapL, load, nullptr, {});
      p.restore();
    }

    // Label column.
    p.setPen(QPen(th.separator, hair));
    const double axisX = contentLeft - 0.5 * hair;
    switch (r.kind()) {
      case RowKind::Counter: {
        const CounterRow& cr = std::get<CounterRow>(r.content);
        const ValueRange vr =
            renderer_->valueRange(cr, renderer_->counterGeometry(cr, mapD, load, nullptr));
        // The value mapping of the drawn rows (raster rows: device pixels, see kDataTop).
        const double mt = kDataTop / (canvas.vector ? 1.0 : canvas.scale);
        const double mb = kDataBottom / (canvas.vector ? 1.0 : canvas.scale);
        const QRectF data = content.adjusted(0, mt, 0, -mb);
        const int approx = std::max(2, static_cast<int>(h / (1.8 * sm.height())));
        std::vector<AxisTick> ticks = valueTicks(vr.min, vr.max, approx);
        p.setPen(QPen(th.text, hair));
        p.drawLine(QPointF(axisX, content.top() + 0.5), QPointF(axisX, content.bottom() - 0.5));
        p.setFont(small);
        double lastTop = INFINITY;
        for (const AxisTick& t : ticks) {
          const double ty = vr.y(t.pos, data);
          if (ty < content.top() - 0.5 || ty > content.bottom() + 0.5) continue;
          p.setPen(QPen(th.text, hair));
          p.drawLine(QPointF(axisX - tickLen, ty), QPointF(axisX, ty));
          QRectF box(axisX - tickLen - 2 - tickW, ty - sm.height() / 2, tickW, sm.height());
          if (box.top() < content.top()) box.moveTop(content.top());
          if (box.bottom() > content.bottom()) box.moveBottom(content.bottom());
          if (box.bottom() > lastTop + 0.5) continue;  // would overlap the label above
          p.drawText(box, Qt::AlignRight | Qt::AlignVCenter, t.label);
          lastTop = box.top();
        }
        p.setFont(text);
        p.setPen(th.text);
        const double titleRoom = labelW - tickW - tickLen - 8;
        p.drawText(QRectF(label.left() + 2, label.top(), titleRoom, h),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   tm.elidedText(counterTitle(r), Qt::ElideRight, titleRoom));
        break;
      }
      case RowKind::Heatmap: {
        const QString title = heatmapTitle(run, r);
        p.setFont(text);
        p.setPen(th.text);
        const double room = labelW - tickW - tickLen - 8;
        p.drawText(QRectF(label.left() + 2, label.top(), room, tm.height()),
                   Qt::AlignLeft | Qt::AlignTop, tm.elidedText(title, Qt::ElideRight, room));
        // Colour bar with the value range.
        const ValueRange vr =
            renderer_->heatmapRange(r.run(), std::get<HeatmapRow>(r.content).metric);
        const QRectF bar(label.left() + 2, label.top() + tm.height() + 4, std::min(room, 120.0),
                         std::max(6.0, sm.height() * 0.7));
        if (bar.bottom() + sm.height() < label.bottom()) {
          QLinearGradient grad(bar.topLeft(), bar.topRight());
          for (double s : {0.0, 0.25, 0.5, 0.75, 1.0})
            grad.setColorAt(s, th.heat(s));
          p.fillRect(bar, grad);
          p.setFont(small);
          p.setPen(th.text);
          const double step = std::fabs(vr.max - vr.min) / 10;
          p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), sm.height()),
                     Qt::AlignLeft | Qt::AlignTop, tickValueText(vr.min, step));
          p.drawText(QRectF(bar.left(), bar.bottom() + 1, bar.width(), sm.height()),
                     Qt::AlignRight | Qt::AlignTop, tickValueText(vr.max, step));
        }
        // GPU axis: every n-th GPU so labels do not overlap.
        const size_t gpus = run.gpus().size();
        if (gpus > 0) {
          const double rowH = h / static_cast<double>(gpus);
          const auto every =
              static_cast<size_t>(std::max(1.0, std::ceil(sm.height() * 1.1 / rowH)));
          size_t nice = 1;
          for (size_t n : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048})
            if (n >= every) {
              nice = n;
              break;
            }
          p.setPen(QPen(th.text, hair));
          p.drawLine(QPointF(axisX, content.top()), QPointF(axisX, content.bottom()));
          p.setFont(small);
          for (size_t gi = 0; gi < gpus; gi += nice) {
            const double cy = content.top() + (static_cast<double>(gi) + 0.5) * rowH;
            p.drawLine(QPointF(axisX - tickLen, cy), QPointF(axisX, cy));
            p.drawText(
                QRectF(axisX - tickLen - 2 - tickW, cy - sm.height() / 2, tickW, sm.height()),
                Qt::AlignRight | Qt::AlignVCenter, QObject::tr("GPU %1").arg(run.gpus()[gi].id));
          }
        }
        break;
      }
      case RowKind::Kernels:
      case RowKind::Steps:
      case RowKind::Difference: {  // A - B, symmetric around zero (see differenceRange)
        p.setFont(text);
        p.setPen(th.text);
        p.drawText(QRectF(label.left() + 2, label.top(), labelW - 8, h),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   tm.elidedText(r.label, Qt::ElideRight, labelW - 8));
        break;
      }
      default:
        break;
    }
    // A hairline under each content row.
    p.setPen(QPen(th.gridLine, hair));
    p.drawLine(QPointF(contentLeft, content.bottom()), QPointF(contentRight, content.bottom()));
  }

  // Time axis.
  const double axisY = y;
  p.setPen(QPen(th.text, hair));
  p.drawLine(QPointF(contentLeft, axisY), QPointF(contentRight, axisY));
  const TimeAxis axis =
      timeAxis(mapL, spec_.origin, sm.horizontalAdvance(QStringLiteral("00000")) * 1.8);
  p.setFont(small);
  for (const AxisTick& t : axis.ticks) {
    const double x = contentLeft + t.pos;
    if (x < contentLeft - 0.5 || x > contentRight + 0.5) continue;
    p.setPen(QPen(th.text, hair));
    p.drawLine(QPointF(x, axisY), QPointF(x, axisY + (t.major ? tickLen : tickLen / 2)));
    if (!t.major) continue;
    const double w = sm.horizontalAdvance(t.label) + 2;
    QRectF box(x - w / 2, axisY + tickLen + 1, w, sm.height());
    if (box.right() > body.right()) box.moveRight(body.right());
    p.drawText(box, Qt::AlignCenter, t.label);
  }
  p.setFont(text);
  p.setPen(th.text);
  p.drawText(QRectF(contentLeft, axisY + tickLen + sm.height() + 3, contentW, tm.height()),
             Qt::AlignHCenter | Qt::AlignTop, timeAxisTitle(axis));
}

}  // namespace wl
