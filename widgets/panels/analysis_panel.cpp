// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/panels/analysis_panel.h"

#include <QChartView>
#include <QColor>
#include <QComboBox>
#include <QCoreApplication>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "loaders/core/error.h"
#include "loaders/core/free_memory.h"
#include "loaders/core/time_format.h"
#include "widgets/charts/analysis_charts.h"
#include "widgets/export/export_dialog.h"

namespace wl {
namespace {

constexpr int kDebounceMs = 200;

QStandardItem* cell(double value, int decimals, const QString& suffix = {}) {
  auto* item = new QStandardItem(
      std::isfinite(value) ? QString::number(value, 'f', decimals) + suffix : QStringLiteral("–"));
  item->setData(std::isfinite(value) ? QVariant(value) : QVariant(-INFINITY), Qt::UserRole);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setEditable(false);
  return item;
}

QStandardItem* textCell(const QString& text) {
  auto* item = new QStandardItem(text);
  item->setData(text, Qt::UserRole);
  item->setEditable(false);
  return item;
}

// One part of the energy ledger: "123.4 ± 5.6" joules; a part finer than the sensor resolves is
// shown as an approximate value in grey italics, never as an exact one, and says why.
QStandardItem* ledgerCell(const LedgerValue& v, const EnergyLedger& l) {
  if (!std::isfinite(v.j)) return cell(NAN, 0);
  const bool fine = !v.resolved;
  auto* item =
      new QStandardItem((fine ? QStringLiteral("≈ ") : QString()) + QString::number(v.j, 'f', 1) +
                        QStringLiteral(" ± ") + QString::number(v.u_j, 'f', 1));
  item->setData(v.j, Qt::UserRole);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setEditable(false);
  const QString sensor =
      l.sensor.average
          ? QCoreApplication::translate("AnalysisPanel", "a %1 s average").arg(l.sensor.window_s)
          : QCoreApplication::translate("AnalysisPanel", "an instantaneous reading");
  if (fine) {
    QFont f = item->font();
    f.setItalic(true);
    item->setFont(f);
    item->setForeground(QColor(128, 128, 128));
    item->setToolTip(QCoreApplication::translate(
                         "AnalysisPanel",
                         "Not resolved: %1 ms of this iteration, less than the %2 ms the power "
                         "sensor resolves (%3, samples every %4 ms). No sample saw this part apart "
                         "from the rest: the value is the fitted class power times its duration, "
                         "the ± the GPU's whole power range.")
                         .arg(v.s * 1e3, 0, 'f', 1)
                         .arg(l.resolution_s * 1e3, 0, 'f', 0)
                         .arg(sensor)
                         .arg(l.sample_interval_s * 1e3, 0, 'f', 0));
  } else {
    item->setToolTip(QCoreApplication::translate(
                         "AnalysisPanel",
                         "%1 ms of this iteration at %2 W (class power fitted through the sensor "
                         "model: %3); ± about 95 %: the class power's standard error and the "
                         "samples' scatter about the model")
                         .arg(v.s * 1e3, 0, 'f', 1)
                         .arg(v.s > 0 ? v.j / v.s : 0.0, 0, 'f', 0)
                         .arg(sensor));
  }
  return item;
}

QStandardItemModel* makeModel(QObject* parent, const QStringList& headers) {
  auto* m = new QStandardItemModel(0, static_cast<int>(headers.size()), parent);
  m->setHorizontalHeaderLabels(headers);
  return m;
}

QTableView* makeView(QAbstractItemModel* model, QWidget* parent, const QString& exportName) {
  auto* v = new QTableView(parent);
  installTableExportMenu(v, exportName);  // right click: export as CSV / JSON, copy
  v->setModel(model);
  v->setSortingEnabled(true);
  v->sortByColumn(0, Qt::AscendingOrder);
  v->setSelectionBehavior(QAbstractItemView::SelectRows);
  v->setSelectionMode(QAbstractItemView::SingleSelection);
  v->verticalHeader()->hide();
  v->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  v->horizontalHeader()->setStretchLastSection(true);
  return v;
}

QString num(double v, int decimals) {
  return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("–");
}

QString html(const RunAnalysis& a) {
  const RunInfo& i = a.info;
  const RunTotals& t = a.totals;
  QString s;
  s += QStringLiteral("<h3>%1%2</h3>")
           .arg(QString::fromStdString(i.name).toHtmlEscaped(),
                i.simulated && i.name.find("(simulated)") == std::string::npos
                    ? QStringLiteral(" <i>(simulated)</i>")
                    : QString());
  s += QStringLiteral("<p>%1 &ndash; %2 (%3), %4 GPUs, %5 ranks</p>")
           .arg(QString::fromStdString(formatUtc(a.range.t0)),
                QString::fromStdString(formatUtc(std::min(a.range.t1, i.end_ns))),
                QString::fromStdString(formatDuration(static_cast<int64_t>(a.duration_s * 1e9))))
           .arg(a.gpus.size())
           .arg(a.ranks.size());
  if (!a.quality.valid) {
    s += QStringLiteral("<p><b>Invalid run:</b> ");
    for (const std::string& r : a.quality.invalid_reasons)
      s += QString::fromStdString(r).toHtmlEscaped() + QStringLiteral("; ");
    s += QStringLiteral("</p>");
  }
  // What heat and power limits cost the job, first: the verdict of `wattline explain`, its
  // headline in bold.
  s += QStringLiteral("<h4>Cost of heat and power limits</h4>");
  const std::vector<std::string> verdict = explainCost(a.cost);
  for (size_t k = 0; k < verdict.size(); ++k)
    s += (k == 0 ? QStringLiteral("<p><b>%1</b></p>") : QStringLiteral("<p>%1</p>"))
             .arg(QString::fromStdString(verdict[k]).toHtmlEscaped());
  s += QStringLiteral("<h4>Totals</h4><table>");
  auto row = [&](const QString& k, const QString& v) {
    s += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr>").arg(k, v);
  };
  row(QStringLiteral("Energy"), num(t.energy_j * 1e-3, 2) + QStringLiteral(" kJ"));
  row(QStringLiteral("Mean power (mean over GPUs)"), num(t.mean_power_w, 1) + QStringLiteral(" W"));
  row(QStringLiteral("Peak power"), num(t.peak_power_w, 1) + QStringLiteral(" W"));
  row(QStringLiteral("Throttled share of kernel time"),
      num(t.throttled_fraction * 100, 2) + QStringLiteral(" %"));
  for (size_t c = 0; c < kThrottleCauseCount; ++c)
    if (std::isfinite(t.by_cause_fraction[c]) && t.by_cause_fraction[c] > 0)
      row(QStringLiteral("&nbsp;&nbsp;") +
              QString::fromUtf8(throttleCauseLabel(static_cast<ThrottleCause>(c)).data()),
          num(t.by_cause_fraction[c] * 100, 2) + QStringLiteral(" %"));
  if (t.iterations > 0) {
    row(QStringLiteral("Iterations"), QString::number(t.iterations));
    row(QStringLiteral("Iteration time"), num(t.iteration_time_s, 3) + QStringLiteral(" s"));
    row(QStringLiteral("Throughput"), num(t.throughput_samples_per_s, 2) +
                                          QStringLiteral(" samples/s, ") + num(t.tokens_per_s, 0) +
                                          QStringLiteral(" tokens/s"));
    row(QStringLiteral("Energy per iteration"),
        num(t.energy_per_iteration_j * 1e-3, 2) + QStringLiteral(" kJ"));
    row(QStringLiteral("Energy per token"), num(t.energy_per_token_j, 4) + QStringLiteral(" J"));
    row(QStringLiteral("Efficiency"),
        num(t.efficiency_samples_per_s_mj, 2) + QStringLiteral(" samples/(s·MJ)"));
  }
  if (a.cost.iterations > 0)
    row(QStringLiteral("Kernel traces"),
        a.cost.traced_iterations == 0
            ? QStringLiteral("no iteration traced on every rank")
            : QStringLiteral("step%1 %2 (%3 of %4 iterations)")
                  .arg(a.cost.traced_iterations == 1 ? QString() : QStringLiteral("s"),
                       QString::fromStdString(a.cost.tracedSteps()))
                  .arg(a.cost.traced_iterations)
                  .arg(a.cost.iterations));
  const StragglerReport& st = a.stragglers;
  if (st.straggler_rank >= 0)
    row(QStringLiteral("Straggler"),
        QStringLiteral("rank %1 (GPU %2), last at %3 % of %4 collectives: %5")
            .arg(st.straggler_rank)
            .arg(st.straggler_gpu)
            .arg(num(st.straggler_share * 100, 0))
            .arg(st.instances)
            .arg(QString::fromStdString(st.likely_cause).toHtmlEscaped()));
  s += QStringLiteral("</table>");
  if (!a.quality.notes.empty()) {
    s += QStringLiteral("<h4>Data quality</h4><ul>");
    for (const QualityNote& n : a.quality.notes)
      s += QStringLiteral("<li>%1%2: %3</li>")
               .arg(n.severity == Severity::Warning ? QStringLiteral("&#9888; ") : QString(),
                    QString::fromStdString(n.subject).toHtmlEscaped(),
                    QString::fromStdString(n.message).toHtmlEscaped());
    s += QStringLiteral("</ul>");
  }
  for (const std::string& n : a.notes)
    s += QStringLiteral("<p><i>%1</i></p>").arg(QString::fromStdString(n).toHtmlEscaped());
  return s;
}

}  // namespace

AnalysisPanel::AnalysisPanel(QWidget* parent) : QWidget(parent) {
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kDebounceMs);
  connect(debounce_, &QTimer::timeout, this, &AnalysisPanel::start);
  connect(job_, &BackgroundJob::failed, this, &AnalysisPanel::failed);
  connect(job_, &BackgroundJob::progressChanged, this,
          [this](double f) { progress_->setValue(static_cast<int>(f * 100)); });

  status_ = new QLabel(tr("No run"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  progress_->setMaximumHeight(12);
  progress_->setTextVisible(false);
  progress_->hide();
  tabs_ = new QTabWidget(this);

  summary_ = new QTextBrowser(this);
  tabs_->addTab(summary_, tr("Summary"));

  gpuModel_ =
      makeModel(this, {tr("GPU"), tr("node"), tr("slot"), tr("energy kJ"), tr("P mean W"),
                       tr("P peak W"), tr("T mean °C"), tr("T max °C"), tr("clock MHz"),
                       tr("throttled %"), tr("deficit MHz·s"), tr("peak/avg"), tr("excursions")});
  gpuProxy_ = new QSortFilterProxyModel(this);
  gpuProxy_->setSourceModel(gpuModel_);
  gpuProxy_->setSortRole(Qt::UserRole);
  gpuView_ = makeView(gpuProxy_, this, QStringLiteral("gpus"));
  connect(gpuView_, &QTableView::clicked, this, [this](const QModelIndex& i) {
    const QModelIndex src = gpuProxy_->mapToSource(i);
    emit gpuActivated(gpuModel_->item(src.row(), GpuId)->data(Qt::UserRole).toInt());
  });
  tabs_->addTab(gpuView_, tr("GPUs"));

  throttleModel_ = makeModel(this, {tr("GPU"), tr("start s"), tr("duration s"), tr("cause"),
                                    tr("min clock MHz"), tr("mean clock MHz")});
  throttleProxy_ = new QSortFilterProxyModel(this);
  throttleProxy_->setSourceModel(throttleModel_);
  throttleProxy_->setSortRole(Qt::UserRole);
  throttleView_ = makeView(throttleProxy_, this, QStringLiteral("throttling"));
  connect(throttleView_, &QTableView::clicked, this, [this](const QModelIndex& i) {
    const QStandardItem* first = throttleModel_->item(throttleProxy_->mapToSource(i).row(), ThrGpu);
    emit rangeActivated(first->data(StartRole).toLongLong(), first->data(EndRole).toLongLong());
  });
  tabs_->addTab(throttleView_, tr("Throttling"));

  rankModel_ = makeModel(this, {tr("rank"), tr("GPU"), tr("kernels"), tr("span ms"), tr("idle ms"),
                                tr("compute ms"), tr("non-compute ms"), tr("comm ms"),
                                tr("exposed comm ms"), tr("memory ms"), tr("overlap %")});
  kernelModel_ = makeModel(this, {tr("kernel"), tr("class"), tr("count"), tr("total ms"),
                                  tr("mean µs"), tr("min µs"), tr("max µs")});
  auto* rankProxy = new QSortFilterProxyModel(this);
  rankProxy->setSourceModel(rankModel_);
  rankProxy->setSortRole(Qt::UserRole);
  auto* kernelProxy = new QSortFilterProxyModel(this);
  kernelProxy->setSourceModel(kernelModel_);
  kernelProxy->setSortRole(Qt::UserRole);
  auto* kernels = new QSplitter(Qt::Vertical, this);
  kernels->addWidget(makeView(rankProxy, kernels, QStringLiteral("ranks")));
  kernels->addWidget(makeView(kernelProxy, kernels, QStringLiteral("kernels")));
  tabs_->addTab(kernels, tr("Kernels"));

  ledgerModel_ =
      makeModel(this, {tr("rank"), tr("step"), tr("compute J"), tr("comm J"), tr("idle J"),
                       tr("optimizer J"), tr("total J"), tr("forward J"), tr("backward J")});
  const QStringList ledgerTips = {
      tr("The traced rank (its GPU's power)"),
      tr("The iteration"),
      tr("Joules while a kernel other than communication runs (outside the optimizer)"),
      tr("Joules while only communication kernels run"),
      tr("Joules while no kernel runs"),
      tr("Joules inside the optimizer's annotations"),
      tr("The iteration's joules, ± the parts' uncertainties in quadrature"),
      tr("Joules inside the forward pass's annotations (its time in each part at that part's "
         "power)"),
      tr("Joules inside the backward pass's annotations (its time in each part at that part's "
         "power)")};
  for (int c = 0; c < LedColumnCount; ++c)
    ledgerModel_->horizontalHeaderItem(c)->setToolTip(
        ledgerTips[c] + tr(". Grey ≈ values are finer than the power sensor resolves."));
  auto* ledgerProxy = new QSortFilterProxyModel(this);
  ledgerProxy->setSourceModel(ledgerModel_);
  ledgerProxy->setSortRole(Qt::UserRole);
  tabs_->addTab(makeView(ledgerProxy, this, QStringLiteral("energy ledger")), tr("Energy"));

  auto* charts = new QWidget(this);
  chartPicker_ = new QComboBox(charts);
  for (int c = 0; c < kAnalysisChartCount; ++c)
    chartPicker_->addItem(analysisChartTitle(static_cast<AnalysisChart>(c)));
  chartView_ = new QChartView(charts);
  chartView_->setRenderHint(QPainter::Antialiasing);
  // Right click: export the chart (PNG, SVG, PDF) or copy it, captioned with the run's name.
  installChartExportMenu(chartView_, [this] {
    if (!run_) return std::pair<QString, QString>{};
    return std::pair<QString, QString>{QString::fromStdString(run_->info().name),
                                       chartPicker_->currentText()};
  });
  auto* cl = new QVBoxLayout(charts);
  cl->addWidget(chartPicker_);
  cl->addWidget(chartView_, 1);
  connect(chartPicker_, &QComboBox::currentIndexChanged, this, &AnalysisPanel::showChart);
  tabs_->addTab(charts, tr("Charts"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(status_);
  layout->addWidget(progress_);
  layout->addWidget(tabs_, 1);
}

AnalysisPanel::~AnalysisPanel() = default;  // the job's destruction stops the analysis

void AnalysisPanel::setRun(std::shared_ptr<const RunFile> run) {
  run_ = std::move(run);
  range_.reset();
  gpus_.clear();
  ranks_.clear();
  debounce_->stop();
  start();
}

void AnalysisPanel::setRange(int64_t t0, int64_t t1) {
  range_ = TimeRange{std::min(t0, t1), std::max(t0, t1)};
  schedule();
}

void AnalysisPanel::clearRange() {
  range_.reset();
  schedule();
}

void AnalysisPanel::setSelection(std::vector<int> gpus, std::vector<int> ranks) {
  gpus_ = std::move(gpus);
  ranks_ = std::move(ranks);
  schedule();
}

void AnalysisPanel::setOptions(const AnalysisOptions& options) {
  options_ = options;
  schedule();
}

void AnalysisPanel::schedule() {
  debounce_->start();
}

void AnalysisPanel::start() {
  if (!run_) {
    job_->cancel();
    running_ = false;
    result_.reset();
    fill();
    status_->setText(tr("No run"));
    progress_->hide();
    return;
  }
  AnalysisScope scope;
  if (range_) scope.range = *range_;
  scope.gpus = gpus_;
  scope.ranks = ranks_;
  running_ = true;
  status_->setText(range_ ? tr("Analysing the selection…") : tr("Analysing the run…"));
  progress_->setValue(0);
  progress_->show();
  emit analysisStarted();
  // Starting supersedes the analysis under way: its progress callback sees the job cancelled and
  // stops it (Cancelled), and its result is dropped.
  job_->start(
      [run = run_, scope, options = options_](const BackgroundJob::Context& ctx) {
        auto report = [&ctx](double f, std::string_view) {
          if (ctx.cancelled()) return false;
          ctx.progress(f);
          return true;
        };
        auto result =
            std::make_shared<const RunAnalysis>(analyzeRun(*run, scope, options, Progress(report)));
        // The analysis's working memory and the chunks its reads cached (~300 MB on a
        // 10^8-kernel run) back to the system.
        run->releaseDatasetCaches();
        releaseFreedMemory();
        return result;
      },
      [this](std::shared_ptr<const RunAnalysis> analysis) { finished(std::move(analysis)); });
}

void AnalysisPanel::failed(const QString& message) {
  running_ = false;
  progress_->hide();
  status_->setText(message);
  emit analysisFailed(message);
}

void AnalysisPanel::finished(std::shared_ptr<const RunAnalysis> analysis) {
  running_ = false;
  progress_->hide();
  result_ = std::move(analysis);
  fill();
  if (range_) {
    status_->setText(
        tr("Selection: %1 s – %2 s")
            .arg(num(static_cast<double>(result_->range.t0 - result_->info.start_ns) * 1e-9, 3),
                 num(static_cast<double>(result_->range.t1 - result_->info.start_ns) * 1e-9, 3)));
  } else {
    status_->setText(tr("Whole run"));
  }
  emit analysisFinished();
}

void AnalysisPanel::fill() {
  for (QStandardItemModel* m : {gpuModel_, throttleModel_, rankModel_, kernelModel_, ledgerModel_})
    m->removeRows(0, m->rowCount());
  if (!result_) {
    summary_->clear();
    showChart();
    return;
  }
  const RunAnalysis& a = *result_;
  summary_->setHtml(html(a));
  for (const GpuAnalysis& g : a.gpus) {
    const Burstiness& b = g.burstiness;
    gpuModel_->appendRow(
        {cell(g.info.id, 0), cell(g.info.node, 0),
         cell(g.info.slot >= 0 ? g.info.slot : g.info.local_index, 0), cell(g.energy_j * 1e-3, 2),
         cell(g.power.mean, 1), cell(g.power.max, 1), cell(g.temp.mean, 1), cell(g.temp.max, 1),
         cell(g.sm_clock.mean, 0), cell(g.throttle.fraction() * 100, 2),
         cell(g.throttle.has_clock ? g.throttle.clock_deficit_mhz_s : NAN, 0),
         cell(b.peak_to_average, 2),
         cell(std::isfinite(b.power_limit_w) ? static_cast<double>(b.excursions) : NAN, 0)});
    for (const ThrottleInterval& iv : g.throttle.intervals) {
      QStandardItem* first = cell(iv.gpu, 0);
      first->setData(QVariant::fromValue<qlonglong>(iv.start_ns), StartRole);
      first->setData(QVariant::fromValue<qlonglong>(iv.end_ns), EndRole);
      throttleModel_->appendRow({first,
                                 cell(static_cast<double>(iv.start_ns - a.range.t0) * 1e-9, 3),
                                 cell(static_cast<double>(iv.end_ns - iv.start_ns) * 1e-9, 3),
                                 textCell(QString::fromUtf8(throttleCauseLabel(iv.cause).data())),
                                 cell(iv.min_clock_mhz, 0), cell(iv.mean_clock_mhz, 0)});
    }
  }
  for (const RankAnalysis& r : a.ranks) {
    const RankBreakdown& b = r.breakdown;
    rankModel_->appendRow({cell(b.rank, 0), cell(b.gpu >= 0 ? b.gpu : NAN, 0),
                           cell(static_cast<double>(b.kernels), 0), cell(b.span_ns * 1e-6, 2),
                           cell(b.idle_ns * 1e-6, 2), cell(b.compute_ns * 1e-6, 2),
                           cell(b.non_compute_ns * 1e-6, 2), cell(b.comm_ns * 1e-6, 2),
                           cell(b.exposed_comm_ns * 1e-6, 2), cell(b.memory_ns * 1e-6, 2),
                           cell(b.overlap_ratio * 100, 1)});
  }
  for (const RankAnalysis& r : a.ranks) {
    if (!r.ledger) continue;
    const EnergyLedger& l = *r.ledger;
    for (const LedgerIteration& it : l.iterations) {
      QList<QStandardItem*> row = {cell(l.rank, 0), cell(static_cast<double>(it.step), 0)};
      for (const LedgerValue& v : it.parts)
        row.append(ledgerCell(v, l));
      LedgerValue total;
      total.s = static_cast<double>(it.end_ns - it.start_ns) * 1e-9;
      total.j = it.total_j, total.u_j = it.total_u_j;
      total.resolved = total.s >= l.resolution_s;
      row.append(ledgerCell(total, l));
      for (LedgerPhase q : {LedgerPhase::Forward, LedgerPhase::Backward})
        row.append(ledgerCell(it.phases[static_cast<size_t>(q)], l));
      ledgerModel_->appendRow(row);
    }
  }
  for (const KernelStat& k : a.top_kernels)
    kernelModel_->appendRow(
        {textCell(QString::fromStdString(k.name_text)),
         textCell(k.others ? QString() : QString::fromUtf8(kernelClassName(k.cls).data())),
         cell(static_cast<double>(k.count), 0), cell(k.total_ns * 1e-6, 2),
         cell(k.mean_ns() * 1e-3, 1), cell(k.min_ns * 1e-3, 1), cell(k.max_ns * 1e-3, 1)});
  showChart();
}

void AnalysisPanel::showChart() {
  QChart* old = chartView_->chart();
  chartView_->setChart(result_ ? makeAnalysisChart(*result_, static_cast<AnalysisChart>(
                                                                 chartPicker_->currentIndex()))
                               : new QChart);
  delete old;
}

bool AnalysisPanel::selectThrottleInterval(int gpu, int64_t start) {
  int found = -1;
  for (int r = 0; r < throttleModel_->rowCount(); ++r) {
    const QStandardItem* first = throttleModel_->item(r, ThrGpu);
    if (first->data(Qt::UserRole).toDouble() != gpu) continue;
    const qlonglong s0 = first->data(StartRole).toLongLong(),
                    s1 = first->data(EndRole).toLongLong();
    if (s0 == start || (found < 0 && s0 <= start && start < s1)) found = r;
    if (s0 == start) break;
  }
  if (found < 0) return false;
  const QModelIndex i = throttleProxy_->mapFromSource(throttleModel_->index(found, 0));
  throttleView_->selectionModel()->select(
      i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  throttleView_->setCurrentIndex(i);
  throttleView_->scrollTo(i);
  return true;
}

int AnalysisPanel::selectedThrottleRow() const {
  const QModelIndexList rows = throttleView_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return -1;
  return throttleProxy_->mapToSource(rows.front()).row();
}

}  // namespace wl
