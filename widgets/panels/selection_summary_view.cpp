// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/panels/selection_summary_view.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

#include "loaders/core/metrics.h"
#include "loaders/core/time_format.h"

namespace wl {

QString summaryValueText(double v, const std::string& unit) {
  if (!std::isfinite(v)) return QStringLiteral("—");
  const double a = std::fabs(v);
  const int digits = a >= 1000 ? 0 : (a >= 100 ? 1 : 2);
  return QStringLiteral("%1 %2")
      .arg(QString::number(v, 'f', digits), QString::fromStdString(unit))
      .trimmed();
}

SelectionSummaryView::SelectionSummaryView(QWidget* parent)
    : QWidget(parent),
      header_(new QLabel(this)),
      tree_(new QTreeWidget(this)),
      debounce_(new QTimer(this)) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  header_->setWordWrap(true);
  header_->setText(tr("Drag across the timeline to select a time range; its numbers appear here."));
  lay->addWidget(header_);
  lay->addWidget(tree_, 1);
  tree_->setColumnCount(4);
  tree_->setHeaderLabels({tr("Item"), tr("Mean"), tr("Min"), tr("Max")});
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->setAlternatingRowColors(true);
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(tree_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    QMenu menu(this);
    menu.addAction(tr("Copy as Text (tab-separated)"), this, [this] {
      QString out;
      std::function<void(QTreeWidgetItem*, int)> walk = [&](QTreeWidgetItem* it, int depth) {
        QStringList cols;
        for (int c = 0; c < tree_->columnCount(); ++c)
          cols << it->text(c);
        out += QString(depth * 2, ' ') + cols.join('\t') + '\n';
        for (int i = 0; i < it->childCount(); ++i)
          walk(it->child(i), depth + 1);
      };
      for (int i = 0; i < tree_->topLevelItemCount(); ++i)
        walk(tree_->topLevelItem(i), 0);
      QApplication::clipboard()->setText(header_->text() + '\n' + out);
    });
    menu.exec(tree_->viewport()->mapToGlobal(pos));
  });
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* it) {
    while (it->parent())
      it = it->parent();
    const QVariant gpu = it->data(0, Qt::UserRole);
    if (gpu.isValid()) emit gpuActivated(gpu.toInt());
  });
  debounce_->setSingleShot(true);
  debounce_->setInterval(150);
  connect(debounce_, &QTimer::timeout, this, &SelectionSummaryView::start);
  connect(job_, &BackgroundJob::failed, this, [this](const QString& message) {
    header_->setText(tr("Cannot summarize: %1").arg(message));
  });
}

SelectionSummaryView::~SelectionSummaryView() = default;

void SelectionSummaryView::setRun(std::shared_ptr<const RunFile> run) {
  run_ = std::move(run);
  summary_.reset();
  fill();
  if (range_) debounce_->start();
}

void SelectionSummaryView::setRange(std::optional<TimeRange> range) {
  range_ = range;
  ++generation_;
  if (!range_ || !run_) {
    summary_.reset();
    fill();
    return;
  }
  header_->setText(
      tr("Summarizing %1…").arg(QString::fromStdString(formatDuration(range_->span()))));
  debounce_->start();
}

namespace {

std::shared_ptr<const RangeSummary> compute(const std::shared_ptr<const RunFile>& run,
                                            TimeRange r) {
  std::vector<int> gpus, ranks;
  for (const GpuInfo& g : run->gpus())
    gpus.push_back(g.id);
  for (const TrackInfo& t : run->tracks())
    if (std::find(ranks.begin(), ranks.end(), t.rank) == ranks.end()) ranks.push_back(t.rank);
  return std::make_shared<const RangeSummary>(summarizeRange(*run, r.t0, r.t1, gpus, ranks));
}

}  // namespace

void SelectionSummaryView::summarizeNow() {
  if (!run_ || !range_) return;
  summary_ = compute(run_, *range_);
  fill();
  emit summaryReady();
}

void SelectionSummaryView::start() {
  if (!run_ || !range_) return;
  if (job_->busy()) {  // a newer range is waiting: run it when this one ends
    debounce_->start();
    return;
  }
  const uint64_t gen = generation_;
  auto run = run_;
  const TimeRange r = *range_;
  job_->start([run, r](const BackgroundJob::Context&) { return compute(run, r); },
              [this, gen](std::shared_ptr<const RangeSummary> s) {
                if (gen != generation_) return;  // the selection moved on; its own run is scheduled
                summary_ = std::move(s);
                fill();
                emit summaryReady();
              });
}

void SelectionSummaryView::fill() {
  tree_->clear();
  if (!summary_ || !run_) {
    if (!range_)
      header_->setText(
          tr("Drag across the timeline to select a time range; its numbers appear here."));
    return;
  }
  const RangeSummary& s = *summary_;
  const RunInfo& info = run_->info();
  header_->setText(tr("<b>%1</b> selected: %2 to %3 after the run start")
                       .arg(QString::fromStdString(formatDuration(s.range.span())),
                            QString::fromStdString(formatDuration(s.range.t0 - info.start_ns)),
                            QString::fromStdString(formatDuration(s.range.t1 - info.start_ns))));
  for (const GpuRangeSummary& g : s.gpus) {
    auto* gi = new QTreeWidgetItem(tree_);
    gi->setData(0, Qt::UserRole, g.gpu);
    QString title = tr("GPU %1").arg(g.gpu);
    if (std::isfinite(g.energy_j)) title += tr(" · %1").arg(summaryValueText(g.energy_j, "J"));
    if (std::isfinite(g.throttled_fraction) && g.throttled_fraction > 0)
      title += tr(" · throttled %1%").arg(g.throttled_fraction * 100, 0, 'f', 1);
    gi->setText(0, title);
    gi->setToolTip(0, tr("Double-click to show this GPU's tracks"));
    for (const auto& [id, st] : g.metrics) {
      const std::string unit(metricUnit(id));
      auto* mi = new QTreeWidgetItem(gi);
      mi->setText(0, QString::fromStdString(metricLabel(id)));
      mi->setText(1, summaryValueText(st.mean, unit));
      mi->setText(2, summaryValueText(st.min, unit));
      mi->setText(3, summaryValueText(st.max, unit));
      mi->setToolTip(
          1,
          tr("time-weighted mean over %1 covered (gaps excluded), %2 samples")
              .arg(QString::fromStdString(formatDuration(static_cast<int64_t>(st.covered_s * 1e9))))
              .arg(st.samples));
    }
    auto* ei = new QTreeWidgetItem(gi);
    ei->setText(0, tr("Energy"));
    ei->setText(1, summaryValueText(g.energy_j, "J"));
    ei->setToolTip(1, tr("trapezoidal integral of power over the selection, gaps excluded"));
    if (g.has_clock) {
      auto* ti = new QTreeWidgetItem(gi);
      ti->setText(0, tr("Throttled (of busy time)"));
      ti->setText(1, std::isfinite(g.throttled_fraction)
                         ? QStringLiteral("%1%").arg(g.throttled_fraction * 100, 0, 'f', 1)
                         : QStringLiteral("—"));
      for (size_t c = 0; c < kThrottleCauseCount; ++c) {
        if (g.by_cause_s[c] <= 0) continue;
        auto* ci = new QTreeWidgetItem(ti);
        ci->setText(0, QString::fromUtf8(throttleCauseLabel(static_cast<ThrottleCause>(c)).data()));
        ci->setText(1, QStringLiteral("%1%").arg(g.by_cause_fraction[c] * 100, 0, 'f', 1));
        ci->setText(
            2, QString::fromStdString(formatDuration(static_cast<int64_t>(g.by_cause_s[c] * 1e9))));
      }
    }
  }
  for (const RankRangeSummary& r : s.ranks) {
    auto* ri = new QTreeWidgetItem(tree_);
    ri->setText(0, tr("Rank %1 · %L2 kernels started").arg(r.rank).arg(r.events));
    for (size_t c = 0; c < kKernelClassCount; ++c) {
      auto* ci = new QTreeWidgetItem(ri);
      ci->setText(0, tr("%1 time").arg(
                         QString::fromUtf8(kernelClassName(static_cast<KernelClass>(c)).data())));
      ci->setText(1, QString::fromStdString(formatDuration(r.stream_busy_ns[c])));
      ci->setToolTip(
          1,
          tr("summed over the rank's %1 streams (overlapping streams count twice)").arg(r.streams));
    }
  }
  tree_->expandToDepth(0);
}

}  // namespace wl
