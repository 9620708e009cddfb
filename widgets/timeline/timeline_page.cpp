// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timeline_page.h"

#include <QTimer>
#include <QVBoxLayout>

namespace wl {

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent),
      viewport_(new Viewport(this)),
      store_(new TileStore(this)),
      overview_(new OverviewStrip(viewport_, store_, TimelineView::kLabelWidth, this)),
      ruler_(new TimeRuler(viewport_, TimelineView::kLabelWidth, this)),
      view_(new TimelineView(viewport_, store_, this)),
      find_(new FindBar(this)) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addWidget(overview_);
  lay->addWidget(ruler_);
  lay->addWidget(view_, 1);
  lay->addWidget(find_);
  find_->hide();
  connect(view_, &TimelineView::hoverTimeChanged, ruler_, &TimeRuler::setHoverTime);
  connect(find_, &FindBar::matchActivated, this, [this](const KernelMatch& m) {
    KernelRef k;
    k.run = m.run;
    k.track = m.track;
    k.event = m.event;
    k.data = m.data;
    view_->revealKernel(k);
  });
  setTheme(Theme::fromPalette(palette()));
  // Visible progress of tile loading without blocking: poll the store's queue a few times a second.
  auto* poll = new QTimer(this);
  poll->setInterval(150);
  connect(poll, &QTimer::timeout, this, [this] {
    const int pending = static_cast<int>(store_->pending());
    if (pending != lastPending_) {
      lastPending_ = pending;
      emit loadingChanged(pending);
    }
  });
  poll->start();
}

int TimelinePage::addRun(const std::shared_ptr<const RunFile>& run) {
  const int index = store_->addRun(run);
  TimeRange bounds{run->info().start_ns, run->info().end_ns};
  for (const auto& r : store_->runs()) {
    bounds.t0 = std::min(bounds.t0, r->info().start_ns);
    bounds.t1 = std::max(bounds.t1, r->info().end_ns);
  }
  viewport_->setBounds(bounds);
  ruler_->setRunStart(store_->run(0).info().start_ns);
  overview_->refresh();
  find_->setRuns(store_->runs());
  return index;
}

void TimelinePage::clearRuns() {
  view_->setRows({});
  view_->renderer().clearCaches();
  store_->clear();
  overview_->refresh();
  find_->setRuns({});
  find_->hide();
}

void TimelinePage::setTheme(const Theme& theme) {
  view_->setTheme(theme);
  ruler_->setTheme(theme);
  overview_->setTheme(theme);
}

}  // namespace wl
