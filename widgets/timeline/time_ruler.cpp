// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/time_ruler.h"

#include <QMouseEvent>
#include <QPainter>

#include <cmath>

#include "core/time_format.h"
#include "timeline/time_mapping.h"
#include "timeline/track_painter.h"

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
  const int64_t step = niceTimeStep(map.nsPerPx(), 90);
  const int64_t minor = step / 5 > 0 ? step / 5 : step;
  const int64_t rel0 = r.t0 - runStart_;
  // Ticks at multiples of the step counted from the run start.
  auto firstTick = [&](int64_t s) {
    const int64_t k = rel0 >= 0 ? (rel0 + s - 1) / s : rel0 / s;
    return runStart_ + k * s;
  };
  p.setPen(QPen(theme_.separator, 1.0));
  for (int64_t t = firstTick(minor); t <= r.t1; t += minor) {
    const double x = labelWidth_ + map.x(t);
    p.drawLine(QPointF(x, height() - 5), QPointF(x, height()));
  }
  for (int64_t t = firstTick(step); t <= r.t1; t += step) {
    const double x = labelWidth_ + map.x(t);
    p.setPen(QPen(theme_.separator, 1.0));
    p.drawLine(QPointF(x, height() - 12), QPointF(x, height()));
    p.setPen(theme_.text);
    p.drawText(QRectF(x + 3, 4, 120, 18), Qt::AlignLeft | Qt::AlignVCenter,
               tickLabel(t - runStart_, step));
  }
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
