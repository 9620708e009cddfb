// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/timeline_view.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/core/time_format.h"
#include "widgets/timeline/render/frame.h"
#include "widgets/timeline/render/read_failures.h"
#include "widgets/timeline/render/trace_coverage.h"

namespace wl {
namespace {

constexpr double kZoomStep = 0.8;  // W / S and one wheel notch
constexpr double kPanStep = 0.15;  // A / D: this fraction of the visible span
constexpr int kDragThreshold = 4;  // pixels before a press becomes a drag

QString esc(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

QString timeText(const RunFile& run, int64_t t) {
  return QStringLiteral("+%1 &nbsp;<span style='color:gray'>%2</span>")
      .arg(QString::fromStdString(formatDuration(t - run.info().start_ns)),
           QString::fromStdString(formatUtc(t, 3)));
}

QString valueText(double v, const std::string& unit) {
  const double a = std::fabs(v);
  const int digits = a >= 100 ? 0 : (a >= 10 ? 1 : 2);
  return QStringLiteral("%1 %2").arg(QString::number(v, 'f', digits), QString::fromStdString(unit));
}

QString reasonsText(uint32_t mask) {
  QStringList parts;
  for (const auto& r : throttle::reasons())
    if (mask & r.bit) parts << QString::fromUtf8(r.label.data(), static_cast<int>(r.label.size()));
  return parts.join(QStringLiteral(", "));
}

}  // namespace

TimelineView::TimelineView(Viewport* viewport, TileStore* store, QWidget* parent)
    : QAbstractScrollArea(parent),
      vp_(viewport),
      store_(store),
      renderer_(*store, TimelineRenderer::TileReads::Queue) {  // paint never reads the file
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  this->viewport()->setMouseTracking(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  verticalScrollBar()->setSingleStep(20);
  RenderStyle style;
  style.theme = Theme::fromPalette(palette());
  renderer_.setStyle(style);
  connect(vp_, &Viewport::rangeChanged, this, [this] {
    this->viewport()->update();
    // The time under a still mouse moved with the view (keys, N, history): the readout follows.
    if (hoverX_) emit hoverTimeChanged(mapping().t(*hoverX_));
  });
  connect(vp_, &Viewport::selectionChanged, this, [this] { this->viewport()->update(); });
  connect(store_, &TileStore::tilesArrived, this, [this] {
    renderer_.bumpEpoch();
    this->viewport()->update();
  });
  connect(verticalScrollBar(), &QScrollBar::valueChanged, this,
          [this] { this->viewport()->update(); });
}

void TimelineView::setRows(std::vector<TrackRow> rows) {
  rows_ = std::move(rows);
  relayout();
  viewport()->update();
}

void TimelineView::setTheme(const Theme& theme) {
  RenderStyle style = renderer_.style();
  style.theme = theme;
  renderer_.setStyle(style);
  viewport()->update();
}

void TimelineView::setYMode(YMode mode) {
  RenderStyle style = renderer_.style();
  style.yMode = mode;
  renderer_.setStyle(style);
  viewport()->update();
}

TimeMapping TimelineView::mapping() const {
  const TimeRange r = vp_->range();
  return TimeMapping{r.t0, r.t1,
                     std::max(1.0, static_cast<double>(viewport()->width() - kLabelWidth))};
}

TileFetch TimelineView::uiFetch() const {
  TileStore* store = store_;
  return [store](const TileKey& k) { return store->find(k); };
}

void TimelineView::setCollapsed(const QString& groupKey, bool collapsed) {
  if (collapsed)
    collapsed_.insert(groupKey);
  else
    collapsed_.erase(groupKey);
  relayout();
  viewport()->update();
}

FrameLayout TimelineView::frame(double scroll) const {
  FrameSpec spec;
  spec.style = FrameStyle::Screen;
  spec.theme = renderer_.style().theme;
  spec.fonts.text = viewport()->font();
  spec.collapsed = collapsed_;
  return planFrame(rows_, vp_->range(), spec, QRectF(viewport()->rect()), scroll);
}

void TimelineView::relayout() {
  visibleRows_ = unfoldedRows(rows_, collapsed_);
  const FrameLayout f = frame(0);
  totalHeight_ = f.scrollHeight;
  pinnedHeight_ = f.pinnedHeight;
  const double avail = viewport()->height() - pinnedHeight_;
  verticalScrollBar()->setRange(0, std::max(0, static_cast<int>(std::ceil(totalHeight_ - avail))));
  verticalScrollBar()->setPageStep(static_cast<int>(std::max(20.0, avail)));
}

double TimelineView::pinnedHeight() const {
  return pinnedHeight_;
}

const TrackRow* TimelineView::rowAt(QPoint pos, QRectF* rowRect) const {
  const FrameLayout f = frame(verticalScrollBar()->value());
  for (const FrameRow& fr : f.rows) {
    if (pos.y() >= fr.label.top() && pos.y() < fr.label.bottom()) {
      if (!fr.pinned && pos.y() < f.pinnedHeight) continue;
      if (rowRect) *rowRect = QRectF(0, fr.label.top(), viewport()->width(), fr.label.height());
      return fr.row;
    }
  }
  return nullptr;
}

void TimelineView::setNotes(std::vector<NoteMark> notes) {
  notes_ = std::move(notes);
  viewport()->update();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(viewport());
  const Theme& th = renderer_.style().theme;
  p.fillRect(viewport()->rect(), th.background);
  if (rows_.empty() || store_->runs().empty()) {
    p.setPen(th.mutedText);
    p.drawText(viewport()->rect(), Qt::AlignCenter,
               tr("Open a run (File > Open) or drop a .h5 file here."));
    return;
  }
  const TimeMapping map = mapping();
  const double w = viewport()->width();
  const TimelineRenderer::Highlight hl{selected_.run, selected_.track, selected_.event};
  FrameLayout f = frame(verticalScrollBar()->value());
  f.failures = store_->failures();
  f.notes = notes_;
  // Every visible row's geometry and image (counters on both cores), and the one list of tiles
  // that were not in memory.
  const std::vector<TileKey> missing = prepareFrame(f, renderer_, uiFetch());
  paintFrame(p, f, renderer_, hl);

  // Selection and cursor over the content area.
  const QRectF content(kLabelWidth, 0, w - kLabelWidth, viewport()->height());
  p.setClipRect(content);
  if (const auto sel = vp_->selection()) {
    const double x0 = kLabelWidth + map.x(sel->t0), x1 = kLabelWidth + map.x(sel->t1);
    p.fillRect(QRectF(QPointF(x0, 0), QPointF(x1, content.bottom())), th.selectionFill);
    p.setPen(QPen(th.selectionEdge, 1.0));
    p.drawLine(QPointF(x0, 0), QPointF(x0, content.bottom()));
    p.drawLine(QPointF(x1, 0), QPointF(x1, content.bottom()));
    const QString label = QString::fromStdString(formatDuration(sel->span()));
    const QFontMetricsF fm(p.font());
    const double tw = fm.horizontalAdvance(label) + 10;
    const QRectF box((x0 + x1) / 2 - tw / 2, 2, tw, fm.height() + 4);
    p.fillRect(box, th.selectionEdge);
    p.setPen(Qt::white);
    p.drawText(box, Qt::AlignCenter, label);
  }
  if (hoverX_ && drag_ != Drag::Pan) {
    p.setPen(QPen(th.cursor, 1.0, Qt::DashLine));
    p.drawLine(QPointF(kLabelWidth + *hoverX_, 0),
               QPointF(kLabelWidth + *hoverX_, content.bottom()));
  }
  std::vector<const TrackRow*> visible;
  visible.reserve(f.rows.size());
  for (const FrameRow& fr : f.rows)
    visible.push_back(fr.row);
  renderer_.retainOnly(visible);  // the caches hold this screen's rows, not every row drawn
  if (!missing.empty()) store_->request(missing);
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  relayout();
}

std::optional<KernelRef> TimelineView::kernelAt(QPoint pos) {
  QRectF rr;
  const TrackRow* row = rowAt(pos, &rr);
  const KernelsRow* kr = row ? row->as<KernelsRow>() : nullptr;
  if (!kr || pos.x() < kLabelWidth) return std::nullopt;
  const double cx = contentX(pos);
  // The run's own clock at the cursor (for a warped run, the warp's piece under it).
  const KernelGeometry* g =
      renderer_.geometry(*kr, renderer_.displays().rowMappingAt(*row, mapping(), cx), uiFetch())
          .kernels;
  const KernelBox* best = nullptr;
  for (const KernelBox& b : g->boxes)
    if (cx >= b.x0 - 1 && cx < b.x1 + 1 && (!best || b.x1 - b.x0 < best->x1 - best->x0)) best = &b;
  if (!best) return std::nullopt;
  KernelRef k;
  k.run = kr->run;
  k.track = kr->track;
  k.event = static_cast<long>(best->event);
  k.data.start_ns = best->start_ns;
  k.data.dur_ns = best->dur_ns;
  k.data.name = best->name;
  k.data.cls = best->cls;
  return k;
}

void TimelineView::selectKernel(const KernelRef& k) {
  selected_ = k;
  viewport()->update();
  emit kernelSelected(k);
}

void TimelineView::revealKernel(const KernelRef& k) {
  double y = 0;
  for (size_t i : visibleRows_) {
    const TrackRow& r = rows_[i];
    if (r.pinned) continue;
    const KernelsRow* kr = r.as<KernelsRow>();
    if (kr && kr->run == k.run && kr->track == k.track) {
      const double top = verticalScrollBar()->value();
      const double avail = viewport()->height() - pinnedHeight_;
      if (y < top || y + r.height > top + avail)
        verticalScrollBar()->setValue(static_cast<int>(y - avail / 3));
      break;
    }
    y += r.height;
  }
  const TimeRange cur = vp_->range();
  int64_t span = cur.span();
  if (k.data.dur_ns * 3 > span) span = std::max<int64_t>(k.data.dur_ns * 3, Viewport::kMinSpanNs);
  const int64_t mid = renderer_.displays().toDisplay(k.run, k.data.start_ns + k.data.dur_ns / 2);
  vp_->setRange({mid - span / 2, mid - span / 2 + span});
  selectKernel(k);
}

void TimelineView::scrollToGpu(int run, int gpu) {
  double y = 0;
  for (size_t i : visibleRows_) {
    const TrackRow& r = rows_[i];
    if (r.pinned) continue;
    const GroupHeaderRow* h = r.as<GroupHeaderRow>();
    if (h && h->run == run && h->gpu == gpu) {
      verticalScrollBar()->setValue(static_cast<int>(y));
      return;
    }
    y += r.height;
  }
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  setFocus();
  pressPos_ = e->pos();
  pressTime_ = mapping().t(contentX(e->pos()));
  if (e->pos().x() < kLabelWidth) {
    if (e->button() == Qt::LeftButton) {
      const TrackRow* row = rowAt(e->pos());
      if (row && row->kind() == RowKind::GroupHeader)
        setCollapsed(row->key, !isCollapsed(row->key));
    }
    return;
  }
  if (e->button() == Qt::MiddleButton ||
      (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier))) {
    drag_ = Drag::Pan;
    viewport()->setCursor(Qt::ClosedHandCursor);
  } else if (e->button() == Qt::LeftButton) {
    drag_ = Drag::Maybe;
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  const TimeMapping map = mapping();
  hoverPos_ = e->pos();
  if (e->pos().x() >= kLabelWidth) {
    hoverX_ = contentX(e->pos());
    emit hoverTimeChanged(map.t(*hoverX_));
  } else {
    hoverX_.reset();
    emit hoverTimeChanged(std::nullopt);
  }
  if (drag_ == Drag::Maybe && (e->pos() - pressPos_).manhattanLength() > kDragThreshold)
    drag_ = Drag::Select;
  if (drag_ == Drag::Select) {
    const int64_t t = map.t(std::clamp(contentX(e->pos()), 0.0, map.width));
    vp_->setSelection(TimeRange{std::min(pressTime_, t), std::max(pressTime_, t)});
  } else if (drag_ == Drag::Pan) {
    const double dx = e->pos().x() - pressPos_.x();
    pressPos_ = e->pos();
    vp_->pan(static_cast<int64_t>(std::llround(-dx * map.nsPerPx())));
  } else if (!(e->buttons() & Qt::LeftButton)) {
    const QString tip = tooltipAt(e->pos());
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(e->globalPosition().toPoint() + QPoint(14, 14), tip, this);
  }
  viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  QRectF rr;
  const TrackRow* row = rowAt(e->pos(), &rr);
  if (drag_ == Drag::Maybe && e->button() == Qt::LeftButton && row &&
      row->kind() == RowKind::ThrottleHeatmap && e->pos().x() >= kLabelWidth) {
    // A click in the reason heatmap zooms to the interval under it (or 4x around the point).
    int run = row->run();
    const int gpu = gpuAt(e->pos(), &run);
    const TimeMapping map = renderer_.displays().rowMapping(*row, mapping());
    const double cx = contentX(e->pos());
    if (const ThrottleInterval* iv = gpu >= 0 ? throttleIntervalNear(run, gpu, map, cx) : nullptr)
      showThrottleInterval(run, gpu, *iv);
    else
      vp_->zoom(0.25, mapping().t(cx));
    drag_ = Drag::None;
    return;
  }
  if (drag_ == Drag::Maybe && e->button() == Qt::LeftButton) {
    if (auto k = kernelAt(e->pos())) {
      selectKernel(*k);
    } else {
      vp_->setSelection(std::nullopt);
      if (selected_.valid()) selectKernel(KernelRef{});
    }
  }
  drag_ = Drag::None;
  viewport()->unsetCursor();
  viewport()->update();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (auto k = kernelAt(e->pos())) {
    const int64_t pad = std::max<int64_t>(k->data.dur_ns / 4, Viewport::kMinSpanNs);
    const int64_t start = renderer_.displays().toDisplay(k->run, k->data.start_ns);
    const int64_t end = renderer_.displays().toDisplay(k->run, k->data.start_ns + k->data.dur_ns);
    vp_->setRange({start - pad, end + pad});
    selectKernel(*k);
  }
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const TimeMapping map = mapping();
  const QPoint d = e->angleDelta();
  if (e->modifiers() & Qt::ControlModifier) {
    const double notches = d.y() / 120.0;
    const double x = std::clamp(e->position().x() - kLabelWidth, 0.0, map.width);
    vp_->zoom(std::pow(kZoomStep, notches), map.t(x));
    e->accept();
    return;
  }
  if ((e->modifiers() & Qt::ShiftModifier) || std::abs(d.x()) > std::abs(d.y())) {
    const double notches = (d.x() != 0 ? d.x() : d.y()) / 120.0;
    vp_->pan(static_cast<int64_t>(-notches * 0.1 * static_cast<double>(map.span())));
    e->accept();
    return;
  }
  QAbstractScrollArea::wheelEvent(e);
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  const TimeMapping map = mapping();
  const int64_t anchor = hoverX_ ? map.t(*hoverX_) : map.t0 + map.span() / 2;
  const auto step = static_cast<int64_t>(kPanStep * static_cast<double>(map.span()));
  switch (e->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      vp_->zoom(kZoomStep, anchor);
      break;
    case Qt::Key_S:
    case Qt::Key_Minus:
      vp_->zoom(1.0 / kZoomStep, anchor);
      break;
    case Qt::Key_A:
    case Qt::Key_Left:
      vp_->pan(-step);
      break;
    case Qt::Key_D:
    case Qt::Key_Right:
      vp_->pan(step);
      break;
    case Qt::Key_F:
      if (vp_->selection())
        vp_->fitSelection();
      else if (selected_.valid())
        revealKernel(selected_);
      else
        vp_->fitAll();
      break;
    case Qt::Key_0:
    case Qt::Key_Home:
      vp_->fitAll();
      break;
    case Qt::Key_N:
      jumpToThrottle(!(e->modifiers() & Qt::ShiftModifier));
      break;
    case Qt::Key_Escape:
      vp_->setSelection(std::nullopt);
      if (selected_.valid()) selectKernel(KernelRef{});
      break;
    default:
      QAbstractScrollArea::keyPressEvent(e);
      return;
  }
  e->accept();
}

void TimelineView::leaveEvent(QEvent* e) {
  hoverX_.reset();
  hoverPos_.reset();
  emit hoverTimeChanged(std::nullopt);
  viewport()->update();
  QAbstractScrollArea::leaveEvent(e);
}

void TimelineView::contextMenuEvent(QContextMenuEvent* e) {
  const QPoint vpos = viewport()->mapFrom(this, e->pos());
  if (const TrackRow* row = rowAt(vpos)) emit rowsContextMenu(*row, e->globalPos());
}

bool TimelineView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip) return true;  // tooltips follow the mouse (mouseMoveEvent)
  return QAbstractScrollArea::viewportEvent(event);
}

QString TimelineView::tooltipAt(QPoint pos) {
  QRectF rr;
  const TrackRow* row = rowAt(pos, &rr);
  if (!row || store_->runs().empty()) return {};
  if (pos.x() < kLabelWidth) {
    if (row->detail.isEmpty()) return row->label.toHtmlEscaped();
    return QStringLiteral("<b>%1</b><br>%2")
        .arg(row->label.toHtmlEscaped(), row->detail.toHtmlEscaped());
  }
  const RunFile& run = store_->run(row->run());
  const double cx = contentX(pos);
  // The run's own clock (for a warped run, the warp's piece under the cursor).
  const TimeMapping map = renderer_.displays().rowMappingAt(*row, mapping(), cx);
  QString tip;
  if (const auto* c = row->as<CounterRow>())
    tip = counterTip(*c, map, cx);
  else if (const auto* k = row->as<KernelsRow>())
    tip = kernelTip(*k, pos, map, cx);
  else if (const auto* s = row->as<StepsRow>())
    tip = stepsTip(*s, map.t(cx));
  else if (const auto* h = row->as<HeatmapRow>())
    tip = heatmapTip(*h, map, cx, (pos.y() - rr.top()) / rr.height());
  else if (const auto* d = row->as<DifferenceRow>())
    tip = differenceTip(*row, *d, cx);
  else if (const auto* ts = row->as<ThrottleStripRow>())
    tip = throttleStripTip(*ts, map, cx);
  else if (const auto* th = row->as<ThrottleHeatmapRow>())
    tip = throttleHeatmapTip(*th, map, cx, (pos.y() - rr.top()) / rr.height());
  else
    return row->label.toHtmlEscaped();
  // The notes over the cursor first: what the user wrote about this place.
  for (size_t i : notesAt(*row, renderer_.displays().rowMapping(*row, mapping()), cx, notes_))
    tip = tr("<b>Note:</b> %1<br>").arg(notes_[i].text.toHtmlEscaped()) + tip;
  if (!tip.isEmpty())
    tip +=
        QStringLiteral("<br><span style='color:gray'>at %1</span>").arg(timeText(run, map.t(cx)));
  if (!tip.isEmpty() && !row->as<DifferenceRow>() && renderer_.displays().warped(row->run()))
    tip +=
        tr("<br><span style='color:gray'>warped onto A's clock: stretched ×%1 here</span>")
            .arg(renderer_.displays().runWarp(row->run()).stretchAtA(mapping().t(cx)), 0, 'f', 3);
  return tip;
}

QString TimelineView::counterTip(const CounterRow& row, const TimeMapping& map, double cx) {
  const RunFile& run = store_->run(row.run);
  const MetricInfo& m = run.series().metrics[static_cast<size_t>(row.metric)];
  const CounterGeometry* g = renderer_.geometry(row, map, uiFetch()).counter;
  QString tip = QStringLiteral("<b>GPU %1 · %2</b><br>").arg(row.gpu).arg(esc(m.label));
  if (g->raw()) {
    // Sample-and-hold: the last sample at or before the cursor, within its segment.
    auto it = std::upper_bound(g->points.begin(), g->points.end(), cx,
                               [](double x, const CounterGeometry::Point& p) { return x < p.x; });
    if (it != g->points.begin()) {
      const size_t i = static_cast<size_t>(it - g->points.begin()) - 1;
      const bool segmentEnd = std::find(g->segmentStarts.begin(), g->segmentStarts.end(), i + 1) !=
                                  g->segmentStarts.end() ||
                              i + 1 == g->points.size();
      if (!segmentEnd || cx - g->points[i].x < 3)
        tip += valueText(g->points[i].v, m.unit);
      else
        tip += tr("no sample (gap)");
    } else {
      tip += tr("no sample");
    }
  } else {
    const auto c = static_cast<size_t>(std::max(0.0, cx));
    if (c < g->lo.size() && !std::isnan(g->lo[c])) {
      tip += g->lo[c] == g->hi[c]
                 ? valueText(g->lo[c], m.unit)
                 : QStringLiteral("%1 – %2 <span style='color:gray'>(min–max over %3)</span>")
                       .arg(valueText(g->lo[c], m.unit), valueText(g->hi[c], m.unit),
                            QString::fromStdString(
                                formatDuration(static_cast<int64_t>(map.nsPerPx()))));
    } else {
      tip += tr("no samples (gap)");
    }
  }
  // Throttling once: the analysis's interval here (reasons, duration, deficit), else the reason
  // bits of the bands under the cursor (the reason bit and the interval's band both cover a
  // throttled sample; each reason is named once).
  if (const ThrottleInterval* iv = throttleIntervalNear(row.run, row.gpu, map, cx)) {
    const RunThrottleView* tv = renderer_.displays().throttleView(row.run);
    tip += QStringLiteral("<br><span style='color:#c04000'>%1</span>")
               .arg(throttleIntervalText(*iv, tv->gpus[static_cast<size_t>(row.gpu)].referenceMhz));
  } else {
    uint32_t reasons = 0;
    bool any = false;
    for (const ThrottleBand& b : g->bands)
      if (cx >= b.x0 && cx < b.x1) {
        reasons |= b.reasons;
        any = true;
      }
    if (any)
      tip += QStringLiteral("<br><span style='color:#c04000'>%1</span>")
                 .arg(tr("reason bit set: %1 (clock near its maximum)").arg(reasonsText(reasons)));
  }
  return tip;
}

const ThrottleInterval* TimelineView::throttleIntervalNear(int run, int gpu, const TimeMapping& map,
                                                           double cx) const {
  const RunThrottleView* tv = renderer_.displays().throttleView(run);
  if (!tv || gpu < 0 || static_cast<size_t>(gpu) >= tv->gpus.size()) return nullptr;
  const GpuThrottleView& g = tv->gpus[static_cast<size_t>(gpu)];
  if (const ThrottleInterval* iv = throttleIntervalAt(g, map.t(cx))) return iv;
  // Zoomed out, an interval may be narrower than the pixel: take one starting in the column.
  const int64_t a = map.t(std::floor(cx)), b = map.t(std::floor(cx) + 1);
  auto it = std::lower_bound(g.intervals.begin(), g.intervals.end(), a,
                             [](const ThrottleInterval& iv, int64_t t) { return iv.end_ns <= t; });
  return it != g.intervals.end() && it->start_ns < b ? &*it : nullptr;
}

QString TimelineView::throttleStripTip(const ThrottleStripRow& row, const TimeMapping& map,
                                       double cx) {
  QString tip = tr("<b>GPU %1 · throttling</b><br>").arg(row.gpu);
  const RunThrottleView* tv = renderer_.displays().throttleView(row.run);
  if (!tv) return tip + tr("throttle analysis running…");
  const ThrottleStripGeometry* g = renderer_.geometry(row, map, {}).strip;
  const auto c = static_cast<size_t>(std::max(0.0, cx));
  const ThrottleInterval* iv = throttleIntervalNear(row.run, row.gpu, map, cx);
  if (!iv || c >= g->deficit.size() || g->deficit[c] <= 0) return tip + tr("not throttled");
  const double ref = tv->gpus[static_cast<size_t>(row.gpu)].referenceMhz;
  tip += throttleIntervalText(*iv, ref);
  tip += QStringLiteral("<br>") + tr("deepest here: %1 % below the reference clock")
                                      .arg(static_cast<double>(g->deficit[c]) * 100, 0, 'f', 1);
  return tip;
}

QString TimelineView::throttleHeatmapTip(const ThrottleHeatmapRow& row, const TimeMapping& map,
                                         double cx, double yFraction) {
  const RunFile& run = store_->run(row.run);
  const ThrottleHeatmapGeometry* g = renderer_.geometry(row, map, {}).throttleHeatmap;
  if (g->rows == 0) return {};
  const auto r = static_cast<size_t>(std::max(0.0, yFraction) * static_cast<double>(g->rows));
  const auto c = static_cast<size_t>(std::max(0.0, cx));
  if (r >= g->rows || c >= g->columns || r >= run.gpus().size()) return {};
  const GpuInfo& gi = run.gpus()[r];
  QString tip = QStringLiteral("<b>GPU %1</b> (node %2, local %3)<br>")
                    .arg(gi.id)
                    .arg(gi.node)
                    .arg(gi.local_index);
  const RunThrottleView* tv = renderer_.displays().throttleView(row.run);
  if (!tv) return tip + tr("throttle analysis running…");
  const float d = g->deficit[r * g->columns + c];
  const ThrottleInterval* iv = throttleIntervalNear(row.run, static_cast<int>(r), map, cx);
  if (d <= 0 || !iv) return tip + tr("not throttled");
  tip += throttleIntervalText(*iv, tv->gpus[r].referenceMhz);
  tip += QStringLiteral("<br>") + tr("deepest here: %1 % below the reference clock")
                                      .arg(static_cast<double>(d) * 100, 0, 'f', 1);
  return tip + QStringLiteral("<br><span style='color:gray'>%1</span>").arg(tr("click to zoom"));
}

int TimelineView::gpuAt(QPoint pos, int* run) const {
  QRectF rr;
  const TrackRow* row = rowAt(pos, &rr);
  if (!row) return -1;
  *run = row->run();
  if (const auto* c = row->as<CounterRow>()) return c->gpu;
  if (const auto* s = row->as<ThrottleStripRow>()) return s->gpu;
  if (const auto* h = row->as<GroupHeaderRow>()) return h->gpu2 < 0 ? h->gpu : -1;
  if (row->kind() == RowKind::Heatmap || row->kind() == RowKind::ThrottleHeatmap) {
    const size_t n = store_->run(*run).gpus().size();
    const auto r = static_cast<size_t>(std::max(0.0, (pos.y() - rr.top()) / rr.height()) *
                                       static_cast<double>(n));
    return r < n ? static_cast<int>(r) : -1;
  }
  int rank = -1;
  if (const auto* k = row->as<KernelsRow>()) rank = k->rank;
  if (const auto* st = row->as<StepsRow>()) rank = st->rank;
  for (const RankInfo& ri : store_->run(*run).ranks())
    if (ri.rank == rank) return ri.gpu;
  return -1;
}

bool TimelineView::jumpToThrottle(bool forward) {
  if (store_->runs().empty()) return false;
  int run = 0, gpu = -1;
  if (hoverPos_) gpu = gpuAt(*hoverPos_, &run);
  if (gpu < 0 && selected_.valid()) {
    run = selected_.run;
    const RunFile& rf = store_->run(run);
    const int rank = rf.tracks()[static_cast<size_t>(selected_.track)].rank;
    for (const RankInfo& ri : rf.ranks())
      if (ri.rank == rank) gpu = ri.gpu;
  }
  const RunThrottleView* tv = renderer_.displays().throttleView(run);
  if (!tv) {
    emit notice(
        tr("No throttle intervals to step through yet: the run has no SM clock, or its "
           "throttling is still being found"));
    return false;
  }
  // From the last interval while the view still shows it, else from the centre (run clock).
  const TimeRange cur = vp_->range();
  int64_t from = cur.t0 + cur.span() / 2 - renderer_.displays().runOffset(run);
  if (lastJump_ && lastJump_->shown == cur) from = lastJump_->start;
  // Backward from the centre: an interval starting just left of it is the one shown; step past.
  const ThrottleJump j = findThrottleInterval(*tv, gpu, from, forward);
  if (!j.interval) {
    const bool gpuHasNone = gpu >= 0 && static_cast<size_t>(gpu) < tv->gpus.size() &&
                            tv->gpus[static_cast<size_t>(gpu)].intervals.empty();
    const QString where = gpu >= 0 ? tr("on GPU %1").arg(gpu) : tr("on any GPU");
    if (gpuHasNone)
      emit notice(tr("GPU %1 has no throttle intervals (point at another GPU's rows, or away "
                     "from the GPUs, to step through all of them)")
                      .arg(gpu));
    else
      emit notice(forward ? tr("No throttle interval after this point %1").arg(where)
                          : tr("No throttle interval before this point %1").arg(where));
    return false;
  }
  showThrottleInterval(run, j.gpu, *j.interval);
  return true;
}

void TimelineView::showThrottleInterval(int run, int gpu, const ThrottleInterval& iv) {
  const int64_t dur = std::max<int64_t>(iv.end_ns - iv.start_ns, 1);
  // The interval in the middle third: a third of context on each side.
  const int64_t span = std::max<int64_t>(3 * dur, Viewport::kMinSpanNs);
  const int64_t mid = iv.start_ns + dur / 2 + renderer_.displays().runOffset(run);
  vp_->setRange({mid - span / 2, mid - span / 2 + span});
  lastJump_ = LastJump{iv.start_ns, vp_->range()};
  // Bring the GPU's rows into view when they are off screen.
  double y = 0;
  for (size_t i : visibleRows_) {
    const TrackRow& r = rows_[i];
    if (r.pinned) continue;
    const GroupHeaderRow* h = r.as<GroupHeaderRow>();
    if (h && h->run == run && h->gpu == gpu && h->gpu2 < 0) {
      const double top = verticalScrollBar()->value();
      const double avail = viewport()->height() - pinnedHeight_;
      if (y < top || y + 60 > top + avail) verticalScrollBar()->setValue(static_cast<int>(y));
      break;
    }
    y += r.height;
  }
  viewport()->update();
  noteTraceCoverage(run, gpu, iv);
  emit throttleIntervalActivated(run, gpu, iv.start_ns, iv.end_ns);
}

void TimelineView::noteTraceCoverage(int run, int gpu, const ThrottleInterval& iv) {
  const RunFile& rf = store_->run(run);
  if (rf.kernelCount() == 0) return;
  int rank = -1;
  for (const RankInfo& ri : rf.ranks())
    if (ri.gpu == gpu) rank = ri.rank;
  const auto secs = [&](int64_t t) {
    return QString::number(static_cast<double>(t - rf.info().start_ns) * 1e-9, 'f', 1);
  };
  const QString at = tr("GPU %1 throttled at %2 s").arg(gpu).arg(secs(iv.start_ns));
  if (rank < 0) {
    emit notice(tr("%1; no rank's kernel trace is known for this GPU").arg(at));
    return;
  }
  const std::vector<TimeSpan> windows = traceWindows(rf, rank);
  if (inTracedTime(windows, iv.start_ns, iv.end_ns)) {
    emit notice(
        tr("%1, in traced time: rank %2's kernels are in the rows below").arg(at).arg(rank));
    return;
  }
  QString covered;
  for (const TimeSpan& w : windows)
    covered += (covered.isEmpty() ? QString() : QStringLiteral(", ")) +
               tr("%1-%2 s").arg(secs(w.first), secs(w.second));
  emit notice(windows.empty() ? tr("%1; rank %2 has no kernel trace").arg(at).arg(rank)
                              : tr("%1, not traced: rank %2's kernel trace covers %3 only")
                                    .arg(at)
                                    .arg(rank)
                                    .arg(covered));
}

QString TimelineView::kernelTip(const KernelsRow& row, QPoint pos, const TimeMapping& map,
                                double cx) {
  const RunFile& run = store_->run(row.run);
  const TrackInfo& ti = run.tracks()[static_cast<size_t>(row.track)];
  if (auto k = kernelAt(pos))
    return QStringLiteral("<b>%1</b><br>%2 · %3<br>start %4<br>rank %5 · stream %6")
        .arg(esc(run.str(k->data.name)), QString::fromStdString(formatDuration(k->data.dur_ns)),
             QString::fromUtf8(kernelClassName(k->data.cls).data()),
             timeText(run, k->data.start_ns))
        .arg(ti.rank)
        .arg(ti.stream);
  const KernelGeometry* g = renderer_.geometry(row, map, uiFetch()).kernels;
  const auto c = static_cast<size_t>(std::max(0.0, cx));
  if (c >= g->busy[0].size()) return {};
  double total = 0;
  QStringList parts;
  for (size_t cl = 0; cl < kKernelClassCount; ++cl) {
    const double f = g->busy[cl][c];
    total += f;
    if (f > 0.005)
      parts << QStringLiteral("%1 %2%")
                   .arg(QString::fromUtf8(kernelClassName(static_cast<KernelClass>(cl)).data()))
                   .arg(std::min(100.0, f * 100), 0, 'f', 0);
  }
  QString tip = QStringLiteral("<b>rank %1 · stream %2</b><br>").arg(ti.rank).arg(ti.stream);
  tip += total > 0.005
             ? tr("busy %1% (%2) over %3")
                   .arg(std::min(100.0, total * 100), 0, 'f', 0)
                   .arg(parts.join(QStringLiteral(", ")),
                        QString::fromStdString(formatDuration(static_cast<int64_t>(map.nsPerPx()))))
             : tr("idle");
  return tip;
}

QString TimelineView::stepsTip(const StepsRow& row, int64_t t) {
  const RunFile& run = store_->run(row.run);
  QString tip;
  for (const Iteration& it : run.iterations())
    if (it.rank == row.rank && t >= it.start_ns && t < it.end_ns)
      tip = tr("<b>step %1</b> on rank %2<br>%3")
                .arg(it.step)
                .arg(it.rank)
                .arg(QString::fromStdString(formatDuration(it.end_ns - it.start_ns)));
  for (const Annotation& a : run.annotations())
    if (a.rank == row.rank && t >= a.start_ns && t < a.start_ns + a.dur_ns)
      tip += QStringLiteral("%1<b>%2</b> %3")
                 .arg(tip.isEmpty() ? "" : "<br>", esc(run.str(a.name)),
                      QString::fromStdString(formatDuration(a.dur_ns)));
  return tip;
}

QString TimelineView::heatmapTip(const HeatmapRow& row, const TimeMapping& map, double cx,
                                 double yFraction) {
  const RunFile& run = store_->run(row.run);
  const HeatmapGeometry* g = renderer_.geometry(row, map, uiFetch()).heatmap;
  if (g->rows == 0) return {};
  const auto r = static_cast<size_t>(yFraction * static_cast<double>(g->rows));
  const auto c = static_cast<size_t>(std::max(0.0, cx));
  if (r >= g->rows || c >= g->columns) return {};
  const MetricInfo& m = run.series().metrics[static_cast<size_t>(row.metric)];
  const float v = g->values[r * g->columns + c];
  const GpuInfo& gi = run.gpus()[r];
  if (row.domainPower && isPackage(run.domainOf(static_cast<int>(r))))
    return tr("<b>GCD %1</b> (node %2, package %3)<br>Package power: %4")
        .arg(r)
        .arg(gi.node)
        .arg(QString::fromStdString(run.domainOf(static_cast<int>(r)).name))
        .arg(std::isnan(v) ? tr("no data") : valueText(v, m.unit));
  return QStringLiteral("<b>GPU %1</b> (node %2, local %3)<br>%4: %5")
      .arg(r)
      .arg(gi.node)
      .arg(gi.local_index)
      .arg(esc(m.label), std::isnan(v) ? tr("no data") : valueText(v, m.unit));
}

QString TimelineView::differenceTip(const TrackRow& row, const DifferenceRow& d, double cx) {
  const DifferenceGeometry* g = renderer_.geometry(d, mapping(), uiFetch()).difference;
  const std::string unit = row.detail.toStdString();
  QString tip = QStringLiteral("<b>%1</b><br>").arg(row.label.toHtmlEscaped());
  if (g->samples) {
    auto it = std::upper_bound(g->points.begin(), g->points.end(), cx,
                               [](double x, const CounterGeometry::Point& p) { return x < p.x; });
    tip += it == g->points.begin()
               ? tr("no sample of A here")
               : tr("A − B = %1 at A's sample").arg(valueText(std::prev(it)->v, unit));
  } else {
    const auto c = static_cast<size_t>(std::max(0.0, cx));
    tip += c < g->column.size() && !std::isnan(g->column[c])
               ? tr("mean A − mean B = %1 over %2")
                     .arg(valueText(g->column[c], unit),
                          QString::fromStdString(
                              formatDuration(static_cast<int64_t>(mapping().nsPerPx()))))
               : tr("no data in both runs");
  }
  return tip;
}

}  // namespace wl
