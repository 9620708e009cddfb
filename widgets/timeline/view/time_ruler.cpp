// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/time_ruler.h"

#include <QMouseEvent>
#include <QPainter>

#include <cmath>

#include "loaders/core/time_format.h"
#include "widgets/timeline/render/frame.h"
#include "widgets/timeline/model/time_mapping.h"

namespace wl {

TimeRuler::TimeRuler(Viewport* viewport, int labelWidth, QWidget* parent)
    : QWidget(parent), vp_(viewport), labelWidth_(labelWidth) {
  setMinimumHeight(40);
  setMaximumHeight(40);
  setMouseTracking(true);
  setToolTip(tr("Drag on the ruler to select a time range"));
  connect(vp_, &Viewport::rangeChanged, this, qOverload<>(&QWidget::update));
  connect(vp_, &Viewport::selectionChanged, this, qOverload<>(&QWidget::update));
}

QString TimeRuler::tickLabel(int64_t offset, int64_t step) {
  return rulerTickLabel(offset, step);
}

int64_t TimeRuler::timeAt(double x) const {
  const TimeRange r = vp_->range();
  const TimeMapping map{r.t0, r.t1, std::max(1.0, static_cast<double>(width() - labelWidth_))};
  return map.t(std::clamp(x - labelWidth_, 0.0, map.width));
}

void TimeRuler::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), theme_.labelBackground);
  const TimeRange r = vp_->range();
  const TimeMapping map{r.t0, r.t1, std::max(1.0, static_cast<double>(width() - labelWidth_))};
  QFont f = font();
  const double base = f.pointSizeF() > 0 ? f.pointSizeF() : 9.0;
  f.setPointSizeF(base * 0.85);
  p.setFont(f);

  // Label column: the absolute time of the left edge, or of the cursor.
  const int64_t shown = hover_.value_or(r.t0);
  const QString abs = QString::fromStdString(formatUtc(shown, map.nsPerPx() < 1e6 ? 6 : 3));
  p.setPen(theme_.mutedText);
  p.drawText(QRectF(6, 2, labelWidth_ - 10, 16), Qt::AlignLeft | Qt::AlignVCenter,
             hover_ ? tr("cursor") : tr("view starts"));
  p.setPen(theme_.text);
  p.drawText(QRectF(6, 18, labelWidth_ - 10, 18), Qt::AlignLeft | Qt::AlignVCenter,
             abs.left(abs.size() - 4));

  const QRectF content(labelWidth_, 0, width() - labelWidth_, height());
  p.setClipRect(content);
  if (const auto sel = vp_->selection()) {
    const double x0 = labelWidth_ + map.x(sel->t0), x1 = labelWidth_ + map.x(sel->t1);
    p.fillRect(QRectF(QPointF(x0, 0), QPointF(x1, height())), theme_.selectionFill);
  }
  paintRulerTicks(p, rulerAxis(map, runStart_), labelWidth_, height(), theme_);
  if (hover_) {
    const double x = labelWidth_ + map.x(*hover_);
    p.setPen(QPen(theme_.cursor, 1.0));
    p.drawLine(QPointF(x, 0), QPointF(x, height()));
  }
  p.setClipping(false);
  p.setPen(QPen(theme_.separator, 1.0));
  p.drawLine(QPointF(0, height() - 0.5), QPointF(width(), height() - 0.5));
  p.drawLine(QPointF(labelWidth_ - 0.5, 0), QPointF(labelWidth_ - 0.5, height()));
}

void TimeRuler::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && e->position().x() >= labelWidth_)
    dragStart_ = timeAt(e->position().x());
}

void TimeRuler::mouseMoveEvent(QMouseEvent* e) {
  if (dragStart_ && (e->buttons() & Qt::LeftButton)) {
    const int64_t t = timeAt(e->position().x());
    vp_->setSelection(TimeRange{std::min(*dragStart_, t), std::max(*dragStart_, t)});
  }
}

void TimeRuler::mouseReleaseEvent(QMouseEvent*) {
  dragStart_.reset();
}

}  // namespace wl
