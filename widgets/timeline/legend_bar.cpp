// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/legend_bar.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "core/throttle_reasons.h"

namespace wl {
namespace {
constexpr int kSwatch = 11;
constexpr int kGap = 14;
}  // namespace

LegendBar::LegendBar(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(22);
  setMaximumHeight(22);
}

std::vector<LegendBar::Entry> LegendBar::entries() const {
  std::vector<Entry> e;
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto cls = static_cast<KernelClass>(c);
    e.push_back({QString::fromUtf8(kernelClassName(cls).data()), theme_.classColor(cls),
                 tr("kernel class (first match wins): communication = NCCL/RCCL, memory = "
                    "memcpy/memset, compute = other kernels")});
  }
  const std::pair<uint32_t, QString> reasons[] = {{throttle::kSwPowerCap, tr("power cap")},
                                                  {throttle::kSwThermal, tr("SW thermal")},
                                                  {throttle::kHwThermal, tr("HW thermal")},
                                                  {throttle::kHwSlowdown, tr("HW slowdown")},
                                                  {throttle::kHwPowerBrake, tr("power brake")}};
  for (const auto& [bit, label] : reasons)
    e.push_back({tr("throttled: %1").arg(label), theme_.reasonColor(bit, true),
                 tr("busy with the SM clock below its threshold (strong band), by reason")});
  e.push_back({tr("reason bit only"), theme_.reasonColor(throttle::kSwPowerCap, false),
               tr("a throttle reason bit is set but the clock stayed near its maximum: not "
                  "counted as throttling (faint band)")});
  return e;
}

void LegendBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), theme_.labelBackground);
  QFont f = font();
  f.setPointSizeF((f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.85);
  p.setFont(f);
  const QFontMetrics fm(f);
  int x = 8;
  const int y = (height() - kSwatch) / 2;
  for (const Entry& e : entries()) {
    const int w = kSwatch + 4 + fm.horizontalAdvance(e.label);
    if (x + w > width()) break;
    p.fillRect(QRect(x, y, kSwatch, kSwatch), theme_.trackBackground);
    p.fillRect(QRect(x, y, kSwatch, kSwatch), e.colour);
    p.setPen(theme_.separator);
    p.drawRect(QRect(x, y, kSwatch - 1, kSwatch - 1));
    p.setPen(theme_.mutedText);
    p.drawText(QRect(x + kSwatch + 4, 0, w, height()), Qt::AlignVCenter | Qt::AlignLeft, e.label);
    x += w + kGap;
  }
  p.setPen(theme_.separator);
  p.drawLine(0, 0, width(), 0);
}

bool LegendBar::event(QEvent* ev) {
  if (ev->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(ev);
    QFont f = font();
    f.setPointSizeF((f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.85);
    const QFontMetrics fm(f);
    int x = 8;
    for (const Entry& e : entries()) {
      const int w = kSwatch + 4 + fm.horizontalAdvance(e.label);
      if (he->pos().x() >= x && he->pos().x() < x + w) {
        QToolTip::showText(he->globalPos(), e.tooltip, this);
        return true;
      }
      x += w + kGap;
    }
    QToolTip::hideText();
    return true;
  }
  return QWidget::event(ev);
}

}  // namespace wl
