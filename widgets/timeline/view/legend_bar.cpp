// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/legend_bar.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "widgets/timeline/render/frame.h"

namespace wl {

LegendBar::LegendBar(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(22);
  setMaximumHeight(22);
}

std::vector<LegendEntry> LegendBar::entries() const {
  return screenLegend(theme_, bands_);
}

QFont LegendBar::legendFont() const {
  QFont f = font();
  f.setPointSizeF((f.pointSizeF() > 0 ? f.pointSizeF() : 9.0) * 0.85);
  return f;
}

void LegendBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), theme_.labelBackground);
  const QFont f = legendFont();
  paintLegend(p, placeLegend(entries(), rect(), f, FrameStyle::Screen), theme_, FrameStyle::Screen,
              1.0, f);
  p.setPen(theme_.separator);
  p.drawLine(0, 0, width(), 0);
}

bool LegendBar::event(QEvent* ev) {
  if (ev->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(ev);
    for (const PlacedLegendEntry& e :
         placeLegend(entries(), rect(), legendFont(), FrameStyle::Screen))
      if (he->pos().x() >= e.swatch.left() && he->pos().x() < e.text.right()) {
        QToolTip::showText(he->globalPos(), e.entry.tooltip, this);
        return true;
      }
    QToolTip::hideText();
    return true;
  }
  return QWidget::event(ev);
}

}  // namespace wl
