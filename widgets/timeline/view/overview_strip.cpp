// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/overview_strip.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <cmath>

#include "loaders/core/metrics.h"
#include "widgets/timeline/render/read_failures.h"

namespace wl {

OverviewStrip::OverviewStrip(Viewport* viewport, TileStore* store, int labelWidth, QWidget* parent)
    : QWidget(parent),
      vp_(viewport),
      store_(store),
      labelWidth_(labelWidth),
      job_(new BackgroundJob(this)) {
  setMinimumHeight(46);
  setMaximumHeight(46);
  setToolTip(
      tr("The whole run: click to centre the view, drag the box to move it, drag elsewhere "
         "to show a range"));
  connect(vp_, &Viewport::rangeChanged, this, qOverload<>(&QWidget::update));
  connect(vp_, &Viewport::selectionChanged, this, qOverload<>(&QWidget::update));
  connect(vp_, &Viewport::boundsChanged, this, qOverload<>(&QWidget::update));
}

void OverviewStrip::setThrottled(std::vector<TimeRange> spans) {
  throttled_ = std::move(spans);
  update();
}

void OverviewStrip::refresh() {
  points_.clear();
  throttled_.reset();
  metricLabel_.clear();
  unit_.clear();
  maxValue_ = 1;
  failed_ = false;
  job_->cancel();
  update();
  if (store_->runs().empty()) return;
  std::shared_ptr<const RunFile> run = store_->runs().front();
  job_->start([run](const BackgroundJob::Context&) { return summarize(*run); },
              [this, run](Summary s) {
                points_ = std::move(s.points);
                maxValue_ = s.maxValue;
                metricLabel_ = s.metricLabel;
                unit_ = s.unit;
                if (!s.error.empty()) {
                  failed_ = true;
                  const bool kernels = s.metric < 0;
                  ReadFailure f;
                  f.key = TileKey{
                      0, kernels ? TileKind::KernelLod : TileKind::Heatmap, -1, s.metric, 0, -1};
                  f.t0 = run->info().start_ns;
                  f.t1 = run->info().end_ns;
                  // The reader's message starts with the file's path: said once, by name.
                  std::string reason = s.error;
                  const std::string prefix = run->path().string() + ": ";
                  if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
                  f.message =
                      run->path().filename().string() + ": cannot read the overview: " + reason;
                  store_->reportFailure(std::move(f));
                }
                update();
              });
}

OverviewStrip::Summary OverviewStrip::summarize(const RunFile& run) {
  Summary out;
  const SeriesGroupMeta& tel = run.series();
  int metric = -1;
  for (const char* want : {"power_w", "temp_c", "util_pct", "sm_clock_mhz"}) {
    for (size_t i = 0; i < tel.metrics.size() && metric < 0; ++i)
      if (tel.metrics[i].id == want) metric = static_cast<int>(i);
    if (metric >= 0) break;
  }
  if (metric < 0 || tel.grid.levels() == 0) {
    summarizeKernels(run, out);
    return out;
  }
  out.metric = metric;
  out.metricLabel = QString::fromStdString(tel.metrics[static_cast<size_t>(metric)].label);
  const int top = static_cast<int>(tel.grid.levels()) - 1;
  const LodGrid& g = tel.grid;
  try {
    const TilePtr tp =
        TileStore::readTileOf(run, TileKey{0, TileKind::Heatmap, -1, metric, top, 0});
    const auto& t = std::get<HeatmapTile>(*tp);
    for (size_t b = 0; b < t.buckets; ++b) {
      double sum = 0;
      int n = 0;
      float mx = kNaNf;
      for (size_t e = 0; e < t.entities; ++e) {
        const float m = t.mean[e * t.buckets + b];
        if (std::isnan(m)) continue;
        sum += m;
        ++n;
        const float x = t.max[e * t.buckets + b];
        mx = std::isnan(mx) ? x : std::max(mx, x);
      }
      Point p{g.bucketStart(static_cast<size_t>(top), b),
              g.bucketStart(static_cast<size_t>(top), b + 1),
              n ? static_cast<float>(sum / n) : kNaNf, mx, false};
      if (!std::isnan(mx)) out.maxValue = std::max(out.maxValue, mx);
      out.points.push_back(p);
    }
    // Where any GPU throttled (throttle pyramid of every GPU, top level).
    if (tel.hasThrottleLod) {
      const auto block = run.readThrottleLod(static_cast<size_t>(top), 0, tel.entities, 0,
                                             g.buckets[static_cast<size_t>(top)]);
      for (size_t b = 0; b < out.points.size() && b < block.buckets; ++b)
        for (size_t e = 0; e < block.entities; ++e)
          if (block.throttled[e * block.buckets + b] > 0) out.points[b].throttled = true;
    }
  } catch (const std::exception& e) {
    out.points.clear();
    out.error = e.what();
  }
  return out;
}

void OverviewStrip::summarizeKernels(const RunFile& run, Summary& out) {
  // No telemetry: the share of all streams busy with kernels, from the kernels' top pyramid level.
  const LodGrid& g = run.kernelGrid();
  if (g.levels() == 0 || run.tracks().empty()) return;
  const size_t top = g.levels() - 1;
  std::vector<double> busy(g.buckets[top], 0.0);
  try {
    for (size_t t = 0; t < run.tracks().size(); ++t) {
      const KernelLodBlock b = run.readKernelLod(t, top, 0, g.buckets[top]);
      for (size_t i = 0; i < b.buckets; ++i)
        for (size_t c = 0; c < kKernelClassCount; ++c)
          busy[i] += b.busy[c][i];
    }
  } catch (const std::exception& e) {
    out.error = e.what();
    return;
  }
  const auto tracks = static_cast<double>(run.tracks().size());
  for (size_t i = 0; i < busy.size(); ++i) {
    const auto v = static_cast<float>(100.0 * busy[i] / tracks);
    out.points.push_back({g.bucketStart(top, i), g.bucketStart(top, i + 1), v, v, false});
  }
  out.maxValue = 100;
  out.metricLabel = tr("kernel activity");
  out.unit = QStringLiteral("%");
}

double OverviewStrip::xOf(int64_t t) const {
  const TimeRange b = vp_->bounds();
  const double w = std::max(1, width() - labelWidth_);
  return labelWidth_ +
         static_cast<double>(t - b.t0) / static_cast<double>(std::max<int64_t>(1, b.span())) * w;
}

int64_t OverviewStrip::timeAt(double x) const {
  const TimeRange b = vp_->bounds();
  const double w = std::max(1, width() - labelWidth_);
  const double f = std::clamp((x - labelWidth_) / w, 0.0, 1.0);
  return b.t0 + static_cast<int64_t>(std::llround(f * static_cast<double>(b.span())));
}

void OverviewStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), theme_.labelBackground);
  p.fillRect(QRectF(labelWidth_, 0, width() - labelWidth_, height()), theme_.trackAltBackground);
  QFont f = font();
  f.setPointSizeF((f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.85);
  p.setFont(f);
  p.setPen(theme_.mutedText);
  p.drawText(QRectF(6, 2, labelWidth_ - 10, height() - 4), Qt::AlignLeft | Qt::AlignVCenter,
             metricLabel_.isEmpty() ? tr("Overview")
                                    : (unit_ == QStringLiteral("%")
                                           ? tr("Overview\n%1 (all streams)").arg(metricLabel_)
                                           : tr("Overview\n%1: mean, max").arg(metricLabel_)));
  const QRectF area(labelWidth_, 3, width() - labelWidth_, height() - 6);
  if (failed_) {
    QColor wash = readFailureColor();
    wash.setAlpha(40);
    p.fillRect(area, wash);
    p.fillRect(area, readFailureBrush());
    p.setPen(readFailureColor());
    p.drawText(area, Qt::AlignCenter, tr("overview unreadable"));
  }
  if (throttled_) {
    for (const TimeRange& s : *throttled_)
      p.fillRect(QRectF(QPointF(xOf(s.t0), area.top()),
                        QPointF(std::max(xOf(s.t1), xOf(s.t0) + 1), area.bottom())),
                 theme_.reasonColor(0x4));
  } else {
    for (const Point& pt : points_)
      if (pt.throttled)
        p.fillRect(QRectF(QPointF(xOf(pt.t0), area.top()), QPointF(xOf(pt.t1), area.bottom())),
                   theme_.reasonColor(0x4, false));
  }
  auto y = [&](float v) {
    return area.bottom() - static_cast<double>(v) / maxValue_ * area.height();
  };
  QPainterPath meanPath, maxPath;
  bool open = false;
  for (const Point& pt : points_) {
    if (std::isnan(pt.mean)) {
      open = false;
      continue;
    }
    const double x = (xOf(pt.t0) + xOf(pt.t1)) / 2;
    if (!open) {
      meanPath.moveTo(x, y(pt.mean));
      maxPath.moveTo(x, y(pt.max));
      open = true;
    } else {
      meanPath.lineTo(x, y(pt.mean));
      maxPath.lineTo(x, y(pt.max));
    }
  }
  const QColor c = theme_.metricColor("power_w");
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(c.lighter(130), 1.0, Qt::DotLine));
  p.drawPath(maxPath);
  p.setPen(QPen(c, 1.5));
  p.drawPath(meanPath);
  p.setRenderHint(QPainter::Antialiasing, false);
  if (const auto sel = vp_->selection())
    p.fillRect(QRectF(QPointF(xOf(sel->t0), 0), QPointF(xOf(sel->t1), height())),
               theme_.selectionFill);
  const TimeRange r = vp_->range();
  const QRectF box(QPointF(xOf(r.t0), 1),
                   QPointF(std::max(xOf(r.t1), xOf(r.t0) + 3), height() - 1));
  QColor shade = theme_.background;
  shade.setAlpha(110);
  p.fillRect(QRectF(QPointF(labelWidth_, 0), QPointF(box.left(), height())), shade);
  p.fillRect(QRectF(QPointF(box.right(), 0), QPointF(width(), height())), shade);
  p.setPen(QPen(theme_.selectionEdge, 1.5));
  p.setBrush(Qt::NoBrush);
  p.drawRect(box);
  p.setPen(QPen(theme_.separator, 1.0));
  p.drawLine(QPointF(0, height() - 0.5), QPointF(width(), height() - 0.5));
}

void OverviewStrip::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton || e->position().x() < labelWidth_) return;
  const int64_t t = timeAt(e->position().x());
  const TimeRange r = vp_->range();
  if (t >= r.t0 && t <= r.t1) {
    drag_ = Drag::Move;
    grabOffset_ = t - r.t0;
  } else {
    drag_ = Drag::Range;
    dragStart_ = t;
    // A click outside the box centres the view there.
    vp_->setRange({t - r.span() / 2, t - r.span() / 2 + r.span()});
  }
}

void OverviewStrip::mouseMoveEvent(QMouseEvent* e) {
  const int64_t t = timeAt(e->position().x());
  if (drag_ == Drag::Move) {
    const TimeRange r = vp_->range();
    vp_->pan(t - grabOffset_ - r.t0);
  } else if (drag_ == Drag::Range && std::abs(xOf(t) - xOf(dragStart_)) > 4) {
    vp_->setRange({std::min(t, dragStart_), std::max(t, dragStart_)});
  }
}

void OverviewStrip::mouseReleaseEvent(QMouseEvent*) {
  drag_ = Drag::None;
}

}  // namespace wl
