// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/note_bands.h"

#include <QFontMetricsF>

#include <algorithm>

namespace wl {
namespace {

bool has(const std::vector<int>& ids, int id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::vector<NoteMark> noteMarks(int run, const std::vector<Note>& notes, int64_t runStart) {
  std::vector<NoteMark> marks;
  for (const Note& n : notes)
    marks.push_back({run, noteRange(n, runStart), n.gpus, n.ranks, QString::fromStdString(n.text)});
  return marks;
}

bool noteConcernsRow(const NoteMark& n, const TrackRow& row) {
  if (row.run() != n.run || row.kind() == RowKind::RunHeader) return false;
  if (n.gpus.empty() && n.ranks.empty()) return true;
  if (const auto* c = row.as<CounterRow>()) return has(n.gpus, c->gpu);
  if (const auto* t = row.as<ThrottleStripRow>()) return has(n.gpus, t->gpu);
  if (const auto* h = row.as<GroupHeaderRow>())
    return (h->gpu >= 0 && has(n.gpus, h->gpu)) || (h->rank >= 0 && has(n.ranks, h->rank));
  if (const auto* k = row.as<KernelsRow>()) return has(n.ranks, k->rank);
  if (const auto* s = row.as<StepsRow>()) return has(n.ranks, s->rank);
  if (const auto* d = row.as<DifferenceRow>()) return has(n.gpus, d->a.gpu);
  if (const auto* o = row.as<OverlayRow>()) return has(n.gpus, o->a.gpu);
  // Heatmaps draw every GPU of the run: a note of some of them shows there too.
  return !n.gpus.empty();
}

QColor noteColor() {
  return QColor(0x00, 0x96, 0x88);
}

int paintNoteBands(QPainter& p, const TrackRow& row, const QRectF& content, const TimeMapping& map,
                   const std::vector<NoteMark>& notes, std::vector<bool>& labelled) {
  int drawn = 0;
  labelled.resize(notes.size(), false);
  for (size_t i = 0; i < notes.size(); ++i) {
    const NoteMark& n = notes[i];
    if (n.range.t1 < map.t0 || n.range.t0 > map.t1 || !noteConcernsRow(n, row)) continue;
    const double x0 = std::max(content.left(), content.left() + map.x(n.range.t0));
    const double x1 =
        std::min(content.right(), std::max(content.left() + map.x(n.range.t1), x0 + 2));
    if (x1 <= x0) continue;
    const QRectF r(QPointF(x0, content.top()), QPointF(x1, content.bottom()));
    p.save();
    QColor wash = noteColor();
    wash.setAlpha(45);
    p.fillRect(r, wash);
    p.setPen(QPen(noteColor(), 1.0));
    if (content.left() + map.x(n.range.t0) >= content.left())
      p.drawLine(QPointF(x0, r.top()), QPointF(x0, r.bottom()));
    if (content.left() + map.x(n.range.t1) <= content.right())
      p.drawLine(QPointF(x1, r.top()), QPointF(x1, r.bottom()));
    if (!labelled[i]) {
      const QFontMetricsF fm(p.font());
      const double room = r.width() - 6;
      if (room > fm.horizontalAdvance(QStringLiteral("M…")) && r.height() >= fm.height()) {
        const QString text = fm.elidedText(n.text, Qt::ElideRight, room);
        const QRectF box(r.left() + 2, r.top() + 1, fm.horizontalAdvance(text) + 4, fm.height());
        QColor back = noteColor();
        back.setAlpha(220);
        p.fillRect(box, back);
        p.setPen(Qt::black);
        p.drawText(box, Qt::AlignCenter, text);
        labelled[i] = true;
      }
    }
    p.restore();
    ++drawn;
  }
  return drawn;
}

std::vector<size_t> notesAt(const TrackRow& row, const TimeMapping& map, double cx,
                            const std::vector<NoteMark>& notes) {
  std::vector<size_t> out;
  const int64_t t = map.t(cx);
  for (size_t i = 0; i < notes.size(); ++i)
    if (t >= notes[i].range.t0 && t < notes[i].range.t1 && noteConcernsRow(notes[i], row))
      out.push_back(i);
  return out;
}

}  // namespace wl
