// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/panels/kernel_details_view.h"

#include <algorithm>
#include <cmath>

#include "loaders/core/time_format.h"

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

KernelDetailsView::KernelDetailsView(QWidget* parent)
    : QTextBrowser(parent), job_(new BackgroundJob(this)) {
  setPlaceholderText(tr("Click a kernel on the timeline to see its details."));
  connect(job_, &BackgroundJob::failed, this, &KernelDetailsView::showReadFailure);
}

void KernelDetailsView::showReadFailure(const QString& what) {
  if (!current_.valid() || static_cast<size_t>(current_.run) >= runs_.size()) return;
  const KernelRef& k = current_;
  const RunFile& run = *runs_[static_cast<size_t>(k.run)];
  const QString message =
      tr("%1: cannot read the details of kernel %L2 of track %3 at +%4: %5")
          .arg(QString::fromStdString(run.path().filename().string()))
          .arg(k.event + 1)
          .arg(k.track)
          .arg(QString::fromStdString(formatDuration(k.data.start_ns - run.info().start_ns)), what);
  append(QStringLiteral("<p style='color:#d62728'><b>%1</b></p>").arg(message.toHtmlEscaped()));
  if (store_) {
    ReadFailure f;
    f.key = TileKey{k.run, TileKind::KernelRaw, k.track, -1, -1, -1};
    f.t0 = k.data.start_ns;
    f.t1 = k.data.start_ns + std::max<int64_t>(k.data.dur_ns, 1);
    f.message = message.toStdString();
    store_->reportFailure(std::move(f));
  }
  emit readFailed(message);
}

void KernelDetailsView::setRuns(std::vector<std::shared_ptr<const RunFile>> runs) {
  job_->cancel();
  runs_ = std::move(runs);
  collectives_ = std::make_shared<CollectiveCache>();
  clear();
}

KernelDetailsView::Details KernelDetailsView::readDetails(const RunFile& run, const KernelRef& k,
                                                          CollectiveCache& cache) {
  Details d;
  // The full event (the timeline's reference carries only what it drew).
  d.event = k.data;
  const auto slice = run.readKernels(static_cast<size_t>(k.track), k.data.start_ns,
                                     k.data.start_ns + std::max<int64_t>(k.data.dur_ns, 1));
  for (size_t i = 0; i < slice.events.size(); ++i)
    if (static_cast<long>(slice.index[i]) == k.event) d.event = slice.events[i];
  if (run.hasGroundTruth()) {
    const auto clocks = run.readTruthClock(static_cast<size_t>(k.track));
    if (static_cast<size_t>(k.event) < clocks.size())
      d.clock = clocks[static_cast<size_t>(k.event)];
  }
  std::shared_ptr<const CollectiveMap> map;
  {
    std::lock_guard lock(cache.mutex);
    auto it = cache.byRun.find(k.run);
    if (it != cache.byRun.end()) map = it->second;
  }
  if (!map) {
    auto m = std::make_shared<CollectiveMap>();
    for (const CollectiveRecord& r : run.collectives())
      m->emplace((static_cast<uint64_t>(r.track) << 32) | r.event, r.info);
    std::lock_guard lock(cache.mutex);
    map = cache.byRun.emplace(k.run, std::move(m)).first->second;
  }
  auto c = map->find((static_cast<uint64_t>(k.track) << 32) | static_cast<uint64_t>(k.event));
  if (c != map->end()) d.collective = c->second;
  return d;
}

void KernelDetailsView::showKernel(const KernelRef& k) {
  if (!k.valid() || static_cast<size_t>(k.run) >= runs_.size()) {
    job_->cancel();
    current_ = KernelRef{};
    clear();
    return;
  }
  std::shared_ptr<const RunFile> run = runs_[static_cast<size_t>(k.run)];
  current_ = k;
  // What the timeline drew, at once; the rest when the read is back.
  setHtml(kernelDetailsHtml(*run, k.track, k.event, k.data, nullptr, kNaNf));
  auto cache = collectives_;
  job_->start(
      [run, k, cache](const BackgroundJob::Context&) { return readDetails(*run, k, *cache); },
      [this, run, k](Details d) {
        setHtml(kernelDetailsHtml(*run, k.track, k.event, d.event,
                                  d.collective ? &*d.collective : nullptr, d.clock));
      });
}

}  // namespace wl
