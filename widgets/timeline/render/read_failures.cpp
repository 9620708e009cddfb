// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/read_failures.h"

#include <QFontMetricsF>

#include <algorithm>

namespace wl {

bool failureConcernsRow(const ReadFailure& f, const TrackRow& row) {
  const TileKey& k = f.key;
  switch (k.kind) {
    case TileKind::CounterLod:
    case TileKind::CounterRaw:
    case TileKind::ThrottleLod:
    case TileKind::ThrottleRaw: {
      const auto* c = row.as<CounterRow>();
      // Throttle tiles (metric -1) feed every counter row of the GPU.
      return c && c->run == k.run && c->gpu == k.entity && (k.metric < 0 || c->metric == k.metric);
    }
    case TileKind::KernelLod:
    case TileKind::KernelRaw: {
      const auto* kr = row.as<KernelsRow>();
      return kr && kr->run == k.run && kr->track == k.entity;
    }
    case TileKind::Heatmap: {
      const auto* h = row.as<HeatmapRow>();
      return h && h->run == k.run && h->metric == k.metric;
    }
  }
  return false;
}

QColor readFailureColor() {
  // The same red in light and dark palettes: it has to read as "broken", not as data.
  return QColor(214, 39, 40);
}

QBrush readFailureBrush() {
  return QBrush(readFailureColor(), Qt::BDiagPattern);
}

int paintReadFailures(QPainter& p, const TrackRow& row, const QRectF& content,
                      const TimeMapping& map, const std::vector<ReadFailure>& failures) {
  int drawn = 0;
  for (const ReadFailure& f : failures) {
    if (f.t1 < map.t0 || f.t0 > map.t1 || !failureConcernsRow(f, row)) continue;
    const double x0 = std::max(content.left(), content.left() + map.x(f.t0));
    const double x1 = std::min(content.right(), std::max(content.left() + map.x(f.t1), x0 + 2));
    const QRectF r(QPointF(x0, content.top()), QPointF(x1, content.bottom() - 1));
    p.save();
    QColor wash = readFailureColor();
    wash.setAlpha(40);
    p.fillRect(r, wash);
    p.fillRect(r, readFailureBrush());
    const QString text = QObject::tr("unreadable");
    const QFontMetricsF fm(p.font());
    if (r.width() > fm.horizontalAdvance(text) + 8 && r.height() > fm.height()) {
      p.setPen(readFailureColor());
      p.drawText(r, Qt::AlignCenter, text);
    }
    p.restore();
    ++drawn;
  }
  return drawn;
}

}  // namespace wl
