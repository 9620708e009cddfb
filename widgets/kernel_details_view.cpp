// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernel_details_view.h"

#include <cmath>

#include "core/time_format.h"

namespace wl {
namespace {

QString esc(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

}  // namespace

QString kernelDetailsHtml(const RunFile& run, int track, long event, const KernelEvent& e,
                          const CollectiveInfo* c, float truthClockMhz) {
  const TrackInfo& t = run.tracks()[static_cast<size_t>(track)];
  QString h = QStringLiteral("<p style='word-wrap:break-word'><b>%1</b></p><table cellspacing=3>")
                  .arg(esc(run.str(e.name)));
  auto row = [&](const QString& k, const QString& v) {
    h += QStringLiteral("<tr><td style='color:gray'>%1</td><td>%2</td></tr>").arg(k, v);
  };
  row(QObject::tr("duration"), QString::fromStdString(formatDuration(e.dur_ns)));
  row(QObject::tr("start"), QStringLiteral("+%1").arg(QString::fromStdString(
                                formatDuration(e.start_ns - run.info().start_ns))));
  row(QObject::tr("start (UTC)"), QString::fromStdString(formatUtc(e.start_ns, 9)));
  row(QObject::tr("class"), QString::fromUtf8(kernelClassName(e.cls).data()));
  row(QObject::tr("rank"), QString::number(t.rank));
  row(QObject::tr("stream"), QString::number(t.stream));
  if (t.device >= 0) row(QObject::tr("device"), QString::number(t.device));
  if (e.correlation >= 0) row(QObject::tr("correlation"), QString::number(e.correlation));
  row(QObject::tr("event"), QObject::tr("%L1 of %L2 on this stream").arg(event + 1).arg(t.count));
  if (std::isfinite(truthClockMhz))
    row(QObject::tr("SM clock (simulated truth)"),
        QStringLiteral("%1 MHz").arg(truthClockMhz, 0, 'f', 0));
  if (c) {
    row(QObject::tr("collective"), esc(run.str(c->collective)));
    if (c->in_nelems >= 0) row(QObject::tr("in elements"), QStringLiteral("%L1").arg(c->in_nelems));
    if (c->out_nelems >= 0)
      row(QObject::tr("out elements"), QStringLiteral("%L1").arg(c->out_nelems));
    if (c->dtype) row(QObject::tr("dtype"), esc(run.str(c->dtype)));
    if (c->group_size >= 0) row(QObject::tr("group size"), QString::number(c->group_size));
    if (c->pg_name) row(QObject::tr("process group"), esc(run.str(c->pg_name)));
    if (c->pg_desc) row(QObject::tr("group description"), esc(run.str(c->pg_desc)));
    if (c->pg_ranks) row(QObject::tr("group ranks"), esc(run.str(c->pg_ranks)));
    if (c->seq >= 0) row(QObject::tr("sequence"), QString::number(c->seq));
  }
  h += QStringLiteral("</table>");
  return h;
}

KernelDetailsView::KernelDetailsView(QWidget* parent) : QTextBrowser(parent) {
  setPlaceholderText(tr("Click a kernel on the timeline to see its details."));
}

void KernelDetailsView::setRuns(std::vector<std::shared_ptr<const RunFile>> runs) {
  runs_ = std::move(runs);
  collectives_.clear();
  clear();
}

const CollectiveInfo* KernelDetailsView::collectiveOf(int run, int track, long event) {
  auto it = collectives_.find(run);
  if (it == collectives_.end()) {
    std::unordered_map<uint64_t, CollectiveInfo> m;
    for (const CollectiveRecord& r : runs_[static_cast<size_t>(run)]->collectives())
      m.emplace((static_cast<uint64_t>(r.track) << 32) | r.event, r.info);
    it = collectives_.emplace(run, std::move(m)).first;
  }
  auto c = it->second.find((static_cast<uint64_t>(track) << 32) | static_cast<uint64_t>(event));
  return c == it->second.end() ? nullptr : &c->second;
}

void KernelDetailsView::showKernel(const KernelRef& k) {
  if (!k.valid() || static_cast<size_t>(k.run) >= runs_.size()) {
    clear();
    return;
  }
  const RunFile& run = *runs_[static_cast<size_t>(k.run)];
  // The full event (the timeline's reference carries only what it drew).
  KernelEvent e = k.data;
  float clock = kNaNf;
  const auto slice = run.readKernels(static_cast<size_t>(k.track), k.data.start_ns,
                                     k.data.start_ns + std::max<int64_t>(k.data.dur_ns, 1));
  for (size_t i = 0; i < slice.events.size(); ++i)
    if (static_cast<long>(slice.index[i]) == k.event) e = slice.events[i];
  if (run.hasGroundTruth()) {
    const auto clocks = run.readTruthClock(static_cast<size_t>(k.track));
    if (static_cast<size_t>(k.event) < clocks.size()) clock = clocks[static_cast<size_t>(k.event)];
  }
  setHtml(
      kernelDetailsHtml(run, k.track, k.event, e, collectiveOf(k.run, k.track, k.event), clock));
}

}  // namespace wl
