// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/timeline_page.h"

#include <QTimer>

#include <QVBoxLayout>
#include "analysis/throttle_detection.h"
#include "loaders/core/throttle_reasons.h"

namespace wl {

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent),
      viewport_(new Viewport(this)),
      store_(new TileStore(this)),
      overview_(new OverviewStrip(viewport_, store_, TimelineView::kLabelWidth, this)),
      ruler_(new TimeRuler(viewport_, TimelineView::kLabelWidth, this)),
      view_(new TimelineView(viewport_, store_, this)),
      find_(new FindBar(this)),
      legend_(new LegendBar(this)) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addWidget(overview_);
  lay->addWidget(ruler_);
  lay->addWidget(view_, 1);
  lay->addWidget(legend_);
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
  connect(store_, &TileStore::readFailed, this, [this](const QString& message) {
    view_->viewport()->update();
    emit readFailed(message);
  });
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
  updateBounds();
  ruler_->setRunStart(store_->run(0).info().start_ns);
  overview_->refresh();
  find_->setRuns(store_->runs());
  computeThrottle(index, run);
  return index;
}

namespace {

uint32_t reasonBits(const ThrottleInterval& iv) {
  if (iv.recorded_reasons) return iv.recorded_reasons;
  switch (iv.cause) {
    case ThrottleCause::ThermalInferred:
      return throttle::kSwThermal;
    case ThrottleCause::PowerCapInferred:
      return throttle::kSwPowerCap;
    default:
      return 0;
  }
}

}  // namespace

void TimelinePage::computeThrottle(int index, const std::shared_ptr<const RunFile>& run) {
  // The analysis's throttle intervals, off the UI thread (a 1,024-GPU hour takes seconds).
  using Spans = std::vector<std::vector<ThrottleSpan>>;
  using Found = std::pair<Spans, std::shared_ptr<const RunThrottleView>>;
  if (throttleJobs_.size() <= static_cast<size_t>(index))
    throttleJobs_.resize(static_cast<size_t>(index) + 1, nullptr);
  BackgroundJob*& job = throttleJobs_[static_cast<size_t>(index)];
  if (!job) job = new BackgroundJob(this);
  // A failure leaves the strong bands and the strip out; the reason bits are still drawn.
  job->start(
      [run](const BackgroundJob::Context&) -> Found {
        std::vector<int> gpus;
        for (const GpuInfo& g : run->gpus())
          gpus.push_back(g.id);
        const auto found = detectThrottle(*run, gpus, TimeRange{}, AnalysisOptions{});
        auto view =
            std::make_shared<const RunThrottleView>(makeThrottleView(found, run->gpus().size()));
        Spans out(run->gpus().size());
        for (const GpuThrottle& g : found)
          for (const ThrottleInterval& iv : g.intervals)
            out[static_cast<size_t>(g.gpu)].push_back({iv.start_ns, iv.end_ns, reasonBits(iv)});
        for (auto& v : out)
          std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.t0 < b.t0; });
        return Found{std::move(out), std::move(view)};
      },
      [this, index](Found found) {
        Spans spans = std::move(found.first);
        std::vector<TimeRange> all;
        for (const auto& g : spans)
          for (const auto& s : g)
            all.push_back({s.t0, s.t1});
        TimelineRenderer& r = view_->renderer();
        r.setRunDisplay(index, r.displays()
                                   .of(index)
                                   .withThrottle(std::move(found.second))
                                   .withThrottleSpans(std::move(spans)));
        if (index == 0) overview_->setThrottled(std::move(all));
        view_->viewport()->update();
      });
}

void TimelinePage::updateBounds() {
  TimeRange bounds{INT64_MAX, INT64_MIN};
  for (size_t i = 0; i < store_->runs().size(); ++i) {
    const RunInfo& info = store_->runs()[i]->info();
    const TimelineRenderer& r = view_->renderer();
    bounds.t0 = std::min(bounds.t0, r.displays().toDisplay(static_cast<int>(i), info.start_ns));
    bounds.t1 = std::max(bounds.t1, r.displays().toDisplay(static_cast<int>(i), info.end_ns));
  }
  if (bounds.t0 > bounds.t1) return;
  viewport_->setBounds(bounds);
}

void TimelinePage::clearRuns() {
  // Deleting the jobs drops the results of their running work (the runs are closed).
  for (BackgroundJob* job : throttleJobs_)
    delete job;
  throttleJobs_.clear();
  view_->setRows({});
  view_->renderer().clearCaches();
  store_->clear();
  overview_->refresh();
  find_->setRuns({});
  find_->hide();
}

void TimelinePage::setThrottleTint(bool on) {
  RenderStyle style = view_->renderer().style();
  style.throttleTint = on;
  view_->renderer().setStyle(style);
  legend_->setThrottleBands(on);
  view_->viewport()->update();
}

void TimelinePage::setTheme(const Theme& theme) {
  view_->setTheme(theme);
  ruler_->setTheme(theme);
  overview_->setTheme(theme);
  legend_->setTheme(theme);
}

}  // namespace wl
