// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/study/study_view.h"

#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include "loaders/core/error.h"
#include "widgets/export/export_dialog.h"

namespace wl {
namespace {

constexpr int kRefreshMs = 200;
constexpr int kChartDebounceMs = 80;

std::string canonical(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

}  // namespace

// Runs loaded by the worker and not yet taken by the UI.
struct StudyView::Pending {
  std::mutex mutex;
  std::vector<std::pair<size_t, StudyRun>> runs;  // (place in the load's file order, run)
  double fraction = 0.0;
};

// The loading bar: add runs or a folder, cancel, progress and status.
void StudyView::buildLoadingBar() {
  addFiles_ = new QPushButton(tr("Add runs…"), this);
  addFolder_ = new QPushButton(tr("Add folder…"), this);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  cancelButton_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setMaximumHeight(14);
  progress_->setTextVisible(false);
  progress_->hide();
  status_ = new QLabel(tr("No runs: add run files or a folder of runs"), this);
  connect(addFiles_, &QPushButton::clicked, this, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Add runs"), QString(), tr("Wattline runs (*.h5);;All files (*)"));
    if (!files.isEmpty()) addRuns(files);
  });
  connect(addFolder_, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a folder of runs"));
    if (!dir.isEmpty()) addRuns({dir});
  });
  connect(cancelButton_, &QPushButton::clicked, this, &StudyView::cancelLoading);
}

// The filter bar: filter, baseline, normalization, per device or package, display mode.
void StudyView::buildFilterBar() {
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("filter, e.g. model=gpt3-175b,tp=4,overlap=true"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::editingFinished, this, [this] { setFilter(filter_->text()); });
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& t) {
    if (t.isEmpty()) setFilter(t);
  });
  baseline_ = new QComboBox(this);
  baseline_->setMinimumContentsLength(16);
  baseline_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  baseline_->addItem(tr("(no baseline)"), QString());
  connect(baseline_, &QComboBox::activated, this,
          [this](int i) { setBaseline(baseline_->itemData(i).toString()); });
  normalization_ = new QComboBox(this);
  normalization_->addItem(tr("as measured"), static_cast<int>(Normalization::None));
  normalization_->addItem(tr("per GPU"), static_cast<int>(Normalization::PerGpu));
  normalization_->addItem(tr("per token"), static_cast<int>(Normalization::PerToken));
  normalization_->addItem(tr("per iteration"), static_cast<int>(Normalization::PerIteration));
  connect(normalization_, &QComboBox::activated, this, [this](int i) {
    setNormalization(static_cast<Normalization>(normalization_->itemData(i).toInt()));
  });
  per_ = new QComboBox(this);
  per_->addItem(tr("per device (GCD on MI250)"), static_cast<int>(PerUnit::Device));
  per_->addItem(tr("per package (board on H100/H200)"), static_cast<int>(PerUnit::Package));
  per_->setToolTip(
      tr("What \"per GPU\" and mean power are per: a device (an MI250 GCD) or a power domain "
         "(an MI250 package of two GCDs; an H100/H200 board)"));
  connect(per_, &QComboBox::activated, this,
          [this](int i) { setPer(static_cast<PerUnit>(per_->itemData(i).toInt())); });
  display_ = new QComboBox(this);
  display_->addItem(tr("values"), static_cast<int>(StudyTableModel::DisplayMode::Value));
  display_->addItem(tr("Δ to baseline"), static_cast<int>(StudyTableModel::DisplayMode::Delta));
  display_->addItem(tr("Δ % to baseline"),
                    static_cast<int>(StudyTableModel::DisplayMode::RelativeDelta));
  display_->addItem(tr("ranks"), static_cast<int>(StudyTableModel::DisplayMode::Rank));
  connect(display_, &QComboBox::activated, this, [this](int i) {
    setDisplayMode(static_cast<StudyTableModel::DisplayMode>(display_->itemData(i).toInt()));
  });
}

// The study table (sortable, a double click opens the run).
void StudyView::buildTable() {
  table_ = new QTableView(this);
  table_->setModel(model_);
  // No sort indicator before sorting is enabled: enabling it sorts by the indicator's column,
  // and the study order (the files' order) is the one to start with.
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  table_->horizontalHeader()->setSortIndicatorShown(true);
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setDefaultSectionSize(96);
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideMiddle);  // long run labels differ at their ends
  // Runs are known by their labels: give them room (again after each reset of the model).
  auto widenRunColumn = [this] {
    if (table_->columnWidth(StudyTableModel::ColRun) < 200)
      table_->setColumnWidth(StudyTableModel::ColRun, 280);
  };
  widenRunColumn();
  connect(model_, &StudyTableModel::tableChanged, this, widenRunColumn);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    emit runActivated(model_->data(i, StudyTableModel::PathRole).toString());
  });
}

// The figure panel: the chart picker, its options and the chart.
QWidget* StudyView::buildFigures() {
  auto* figures = new QWidget(this);
  chartPicker_ = new QComboBox(figures);
  for (int c = 0; c < kStudyChartCount; ++c)
    chartPicker_->addItem(studyChartTitle(static_cast<StudyChart>(c)), c);
  heatmapMetric_ = new QComboBox(figures);
  for (int m = 0; m < kHeatmapMetricCount; ++m) {
    const std::string_view l = heatmapMetricLabel(static_cast<HeatmapMetric>(m));
    heatmapMetric_->addItem(QString::fromUtf8(l.data(), static_cast<qsizetype>(l.size())), m);
  }
  categoryOrder_ = new QComboBox(figures);
  categoryOrder_->addItem(tr("seed paper categories"), static_cast<int>(CategoryOrder::SeedPaper));
  categoryOrder_->addItem(tr("corrected categories"), static_cast<int>(CategoryOrder::Corrected));
  scaleMetric_ = new QComboBox(figures);
  scaleMetric_->addItem(tr("energy per token"), static_cast<int>(ScaleMetric::EnergyPerToken));
  scaleMetric_->addItem(tr("tokens/s per GPU"),
                        static_cast<int>(ScaleMetric::TokensPerSecondPerGpu));
  scaleMetric_->addItem(tr("GPU-seconds per token"),
                        static_cast<int>(ScaleMetric::GpuSecondsPerToken));
  auto options = [this] {
    StudyChartOptions o;
    o.heatmap = static_cast<HeatmapMetric>(heatmapMetric_->currentData().toInt());
    o.categories = static_cast<CategoryOrder>(categoryOrder_->currentData().toInt());
    o.scale = static_cast<ScaleMetric>(scaleMetric_->currentData().toInt());
    o.per = static_cast<PerUnit>(per_->currentData().toInt());
    setChartOptions(o);
  };
  connect(chartPicker_, &QComboBox::currentIndexChanged, this, [this] { refreshChart(); });
  for (QComboBox* c : {heatmapMetric_, categoryOrder_, scaleMetric_})
    connect(c, &QComboBox::currentIndexChanged, this, options);
  chartView_ = new QChartView(new QChart, figures);
  chartView_->setRenderHint(QPainter::Antialiasing);
  chartView_->setMinimumHeight(240);
  // Right click: export the figure (PNG, SVG, PDF) or copy it; the table exports as CSV / JSON.
  installChartExportMenu(chartView_, [this] {
    // The chart carries its own title: the caption says what the study holds.
    const QString f = filter_->text().trimmed();
    return std::pair<QString, QString>{tr("Study of %n run(s)", nullptr, model_->rowCount()),
                                       f.isEmpty() ? QString() : tr("filter: %1").arg(f)};
  });
  installTableExportMenu(table_, QStringLiteral("study"));
  auto* pick = new QHBoxLayout;
  pick->addWidget(chartPicker_, 1);
  pick->addWidget(heatmapMetric_);
  pick->addWidget(categoryOrder_);
  pick->addWidget(scaleMetric_);
  auto* fl = new QVBoxLayout(figures);
  fl->setContentsMargins(0, 0, 0, 0);
  fl->addLayout(pick);
  fl->addWidget(chartView_, 1);

  return figures;
}

StudyView::StudyView(QWidget* parent) : QWidget(parent), study_(std::make_shared<Study>()) {
  model_ = new StudyTableModel(this);
  buildLoadingBar();
  buildFilterBar();
  buildTable();
  QWidget* figures = buildFigures();

  refresh_ = new QTimer(this);
  refresh_->setInterval(kRefreshMs);
  connect(refresh_, &QTimer::timeout, this, &StudyView::takeLoaded);
  chartTimer_ = new QTimer(this);
  chartTimer_->setSingleShot(true);
  chartTimer_->setInterval(kChartDebounceMs);
  connect(chartTimer_, &QTimer::timeout, this, &StudyView::refreshChart);
  connect(model_, &StudyTableModel::tableChanged, chartTimer_, qOverload<>(&QTimer::start));

  auto* top = new QHBoxLayout;
  top->addWidget(addFiles_);
  top->addWidget(addFolder_);
  top->addWidget(cancelButton_);
  top->addWidget(status_, 1);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Filter:"), this));
  bar->addWidget(filter_, 2);
  bar->addWidget(new QLabel(tr("Baseline:"), this));
  bar->addWidget(baseline_, 1);
  bar->addWidget(normalization_);
  bar->addWidget(per_);
  bar->addWidget(display_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(figures);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(top);
  layout->addWidget(progress_);
  layout->addLayout(bar);
  layout->addWidget(split, 1);
  refreshChart();
}

StudyView::~StudyView() {
  if (cancel_) cancel_->store(true);
}

void StudyView::addRuns(const QStringList& paths) {
  if (paths.isEmpty()) return;
  if (loading_) {
    queued_ << paths;
    return;
  }
  startLoading(paths);
}

void StudyView::clear() {
  cancelLoading();
  queued_.clear();
  if (loading_) {
    // Forget the load under way: its runs and its end are ignored.
    job_->cancel();
    pending_.reset();
    refresh_->stop();
    loading_ = false;
    cancelButton_->setEnabled(false);
    progress_->hide();
    emit loadingFinished();
  }
  study_ = std::make_shared<Study>();
  studyChanged();
  setStatus(tr("No runs: add run files or a folder of runs"));
}

void StudyView::cancelLoading() {
  if (cancel_) cancel_->store(true);
  queued_.clear();
}

void StudyView::startLoading(const QStringList& paths) {
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto pending = std::make_shared<Pending>();
  cancel_ = cancel;
  pending_ = pending;
  loading_ = true;
  cancelButton_->setEnabled(true);
  progress_->setValue(0);
  progress_->show();
  setStatus(tr("Loading runs…"));
  emit loadingStarted();

  std::vector<std::filesystem::path> inputs;
  for (const QString& p : paths)
    inputs.emplace_back(p.toStdString());
  std::set<std::string> known;
  for (const StudyRun& r : study_->runs)
    known.insert(canonical(r.summary.path));
  StudyLoadOptions options = loadOptions_;
  options.onLoaded = [pending](size_t index, const StudyRun& run) {
    std::lock_guard lock(pending->mutex);
    pending->runs.emplace_back(index, run);
  };
  batchStart_ = study_->runs.size();
  batchIndex_.clear();
  struct Outcome {
    QString error;
    bool cancelled = false;
  };
  auto work = [inputs, known, options, pending, cancel]() {
    Outcome o;
    try {
      std::vector<std::filesystem::path> runs;
      for (const std::filesystem::path& p : expandRunPaths(inputs))
        if (!known.count(canonical(p.string()))) runs.push_back(p);
      loadStudy(runs, options, Progress([pending, cancel](double f, std::string_view) {
                  {
                    std::lock_guard lock(pending->mutex);
                    pending->fraction = f;
                  }
                  return !cancel->load();
                }));
    } catch (const Cancelled&) {
      o.cancelled = true;
    } catch (const std::exception& e) {
      o.error = QString::fromUtf8(e.what());
    }
    return o;
  };
  // A user's cancel stops the load through `cancel` and still reports it; clear() drops it.
  job_->start([work](const BackgroundJob::Context&) { return work(); },
              [this](const Outcome& o) { loadDone(o.error, o.cancelled); });
  refresh_->start();
}

void StudyView::takeLoaded() {
  if (!pending_) return;
  std::vector<std::pair<size_t, StudyRun>> runs;
  double fraction = 0;
  {
    std::lock_guard lock(pending_->mutex);
    runs.swap(pending_->runs);
    fraction = pending_->fraction;
  }
  progress_->setValue(static_cast<int>(fraction * 1000));
  if (runs.empty()) return;
  // Keep the load's runs in file order, whatever order they finished in.
  std::vector<std::pair<size_t, StudyRun>> batch;
  for (size_t k = batchStart_; k < study_->runs.size(); ++k)
    batch.emplace_back(batchIndex_[k - batchStart_], std::move(study_->runs[k]));
  for (auto& r : runs)
    batch.push_back(std::move(r));
  std::stable_sort(batch.begin(), batch.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  study_->runs.resize(batchStart_);
  batchIndex_.clear();
  for (auto& [index, run] : batch) {
    batchIndex_.push_back(index);
    study_->runs.push_back(std::move(run));
  }
  assignLabels(study_->runs);
  studyChanged();
  setStatus(tr("Loading runs… %1 loaded").arg(study_->runs.size()));
}

void StudyView::loadDone(const QString& error, bool cancelled) {
  takeLoaded();
  refresh_->stop();
  pending_.reset();
  loading_ = false;
  cancelButton_->setEnabled(false);
  progress_->hide();
  const size_t n = study_->runs.size();
  QString text = tr("%1 runs: %2 from the summary cache, %3 analysed")
                     .arg(n)
                     .arg(study_->count(SummarySource::Cache))
                     .arg(study_->count(SummarySource::Analyzed));
  if (const size_t u = study_->count(SummarySource::Unreadable))
    text += tr(", %1 unreadable").arg(u);
  size_t invalid = 0;
  for (const StudyRun& r : study_->runs)
    invalid += !r.summary.valid;
  if (invalid) text += tr("; %1 invalid (greyed)").arg(invalid);
  if (cancelled) text = tr("Loading cancelled. ") + text;
  if (!error.isEmpty()) {
    setStatus(error, true);
    emit loadFailed(error);
  } else {
    setStatus(text);
  }
  emit loadingFinished();
  if (!queued_.isEmpty()) {
    const QStringList next = queued_;
    queued_.clear();
    startLoading(next);
  }
}

void StudyView::studyChanged() {
  model_->setStudy(study_);
  refreshBaselines();
}

void StudyView::refreshBaselines() {
  const QString current = baseline();
  baseline_->clear();
  baseline_->addItem(tr("(no baseline)"), QString());
  for (const StudyRun& r : study_->runs) {
    const QString label = QString::fromStdString(r.label);
    baseline_->addItem(label, label);
  }
  const int i = baseline_->findData(current);
  baseline_->setCurrentIndex(i >= 0 ? i : 0);
}

bool StudyView::setBaseline(const QString& name) {
  try {
    model_->setBaseline(name);
  } catch (const Error& e) {
    setStatus(QString::fromUtf8(e.what()), true);
    return false;
  }
  const QString label = baseline();
  const int i = baseline_->findData(label);
  baseline_->setCurrentIndex(i >= 0 ? i : 0);
  if (display_->currentData().toInt() == static_cast<int>(StudyTableModel::DisplayMode::Value) &&
      !label.isEmpty())
    setStatus(tr("Baseline '%1': choose Δ or Δ % to see the deltas").arg(label));
  emit baselineChanged(label);
  return true;
}

QString StudyView::baseline() const {
  const int b = model_->table().baseline;
  return b >= 0 ? QString::fromStdString(study_->runs[static_cast<size_t>(b)].label) : QString();
}

void StudyView::setNormalization(Normalization n) {
  model_->setNormalization(n);
  normalization_->setCurrentIndex(normalization_->findData(static_cast<int>(n)));
}

void StudyView::setPer(PerUnit per) {
  model_->setPer(per);
  per_->setCurrentIndex(per_->findData(static_cast<int>(per)));
  chartOptions_.per = per;
  refreshChart();
}

void StudyView::setFilter(const QString& filter) {
  try {
    model_->setFilter(filter);
    filter_->setStyleSheet(QString());
    filter_->setToolTip(QString());
  } catch (const Error& e) {
    filter_->setStyleSheet(QStringLiteral("QLineEdit { background: #ffe0e0; }"));
    filter_->setToolTip(QString::fromUtf8(e.what()));
    setStatus(QString::fromUtf8(e.what()), true);
    return;
  }
  if (filter_->text() != filter) filter_->setText(filter);
}

void StudyView::setDisplayMode(StudyTableModel::DisplayMode m) {
  model_->setDisplayMode(m);
  display_->setCurrentIndex(display_->findData(static_cast<int>(m)));
}

void StudyView::setChart(StudyChart chart) {
  chartPicker_->setCurrentIndex(static_cast<int>(chart));
  refreshChart();
}

void StudyView::setChartOptions(const StudyChartOptions& options) {
  chartOptions_ = options;
  heatmapMetric_->setCurrentIndex(heatmapMetric_->findData(static_cast<int>(options.heatmap)));
  categoryOrder_->setCurrentIndex(categoryOrder_->findData(static_cast<int>(options.categories)));
  scaleMetric_->setCurrentIndex(scaleMetric_->findData(static_cast<int>(options.scale)));
  refreshChart();
}

QChart* StudyView::chart() const {
  return chartView_->chart();
}

StudyChart StudyView::currentChart() const {
  return static_cast<StudyChart>(chartPicker_->currentData().toInt());
}

QString StudyView::statusText() const {
  return status_->text();
}

void StudyView::refreshChart() {
  chartTimer_->stop();
  const StudyChart which = currentChart();
  heatmapMetric_->setVisible(which == StudyChart::Heatmap);
  categoryOrder_->setVisible(which == StudyChart::CategoriesByConfig ||
                             which == StudyChart::CategoriesByStage);
  scaleMetric_->setVisible(which == StudyChart::ScaleUpVsOut);
  const std::vector<size_t> runs = tableRuns(model_->table());
  QChart* chart = makeStudyChart(*study_, runs, which, chartOptions_);
  if (which == StudyChart::Pareto) {
    scatter_ = throughputEnergyScatter(*study_, runs);
    // Hovering a point names its run.
    for (QAbstractSeries* s : chart->series())
      if (auto* sc = qobject_cast<QScatterSeries*>(s))
        connect(sc, &QScatterSeries::hovered, this, [this](const QPointF& p, bool on) {
          if (!on) return QToolTip::hideText();
          for (const ScatterPoint& q : scatter_.points)
            if (q.tokens_per_s == p.x() && q.energy_per_token_j == p.y()) {
              QToolTip::showText(QCursor::pos(),
                                 QStringLiteral("%1\n%2 tokens/s, %3 J/token%4")
                                     .arg(QString::fromStdString(q.label))
                                     .arg(q.tokens_per_s, 0, 'f', 0)
                                     .arg(q.energy_per_token_j, 0, 'g', 4)
                                     .arg(q.on_front ? tr("\non the Pareto front") : QString()));
              return;
            }
        });
  }
  QChart* old = chartView_->chart();
  chartView_->setChart(chart);
  delete old;
}

void StudyView::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
}

}  // namespace wl
