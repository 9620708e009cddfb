// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/panels/compare_panel.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "analysis/compare/iteration_profile.h"
#include "analysis/range_summary.h"
#include "loaders/core/metrics.h"
#include "loaders/core/time_format.h"
#include "widgets/charts/compare_charts.h"
#include "widgets/export/export_dialog.h"

namespace wl {
namespace {

struct Agg {
  double sum = 0;
  int n = 0;
  void add(double v) {
    if (std::isfinite(v)) sum += v, ++n;
  }
  double mean() const { return n ? sum / n : kNaN; }
};

// Over the paired GPUs of one run: mean of per-GPU means, total energy, throttled share.
struct RunSide {
  Agg power, temp, clock;
  double energy = 0;
  bool anyEnergy = false;
  double busy = 0, throttled = 0;
};

RunSide side(const RunFile& run, const std::vector<int>& gpus, TimeRange r) {
  RunSide s;
  if (r.empty()) return s;
  const RangeSummary sum = summarizeRange(run, r.t0, r.t1, gpus, {});
  for (const GpuRangeSummary& g : sum.gpus) {
    if (const MetricStats* m = g.metric(metric::kPower)) s.power.add(m->mean);
    if (const MetricStats* m = g.metric(metric::kTemp)) s.temp.add(m->mean);
    if (const MetricStats* m = g.metric(metric::kSmClock)) s.clock.add(m->mean);
    if (std::isfinite(g.energy_j)) s.energy += g.energy_j, s.anyEnergy = true;
    s.busy += g.busy_s;
    s.throttled += g.throttled_s;
  }
  return s;
}

}  // namespace

std::vector<CompareDelta> compareRange(const RunFile& a, const RunFile& b, const CompareSettings& s,
                                       TimeRange display) {
  std::vector<int> ga, gb;
  for (const auto& [x, y] : s.pairs)
    ga.push_back(x), gb.push_back(y);
  const RunSide A = side(a, ga, display);
  // B's part of the display range: through the warp, or back by the shift.
  const TimeRange rb = s.warp.isShift() ? TimeRange{display.t0 - s.offsetB, display.t1 - s.offsetB}
                                        : TimeRange{s.warp.toB(display.t0), s.warp.toB(display.t1)};
  const RunSide B = side(b, gb, rb);
  auto frac = [](const RunSide& x) { return x.busy > 0 ? 100.0 * x.throttled / x.busy : kNaN; };
  return {
      {"Power (mean)", "W", A.power.mean(), B.power.mean()},
      {"GPU temperature (mean)", "C", A.temp.mean(), B.temp.mean()},
      {"SM clock (mean)", "MHz", A.clock.mean(), B.clock.mean()},
      {"Energy (paired GPUs)", "J", A.anyEnergy ? A.energy : kNaN, B.anyEnergy ? B.energy : kNaN},
      {"Throttled (of busy time)", "%", frac(A), frac(B)}};
}

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent),
      runA_(new QComboBox(this)),
      runB_(new QComboBox(this)),
      align_(new QComboBox(this)),
      pairBy_(new QComboBox(this)),
      step_(new QSpinBox(this)),
      status_(new QLabel(this)),
      table_(new QTableWidget(this)),
      debounce_(new QTimer(this)),
      diffLabel_(new QLabel(this)),
      tabs_(new QTabWidget(this)),
      iterColumn_(new QComboBox(this)),
      iterTable_(new QTableWidget(this)),
      iterStatus_(new QLabel(this)),
      profilePair_(new QComboBox(this)),
      profileMetric_(new QComboBox(this)),
      profileView_(new QChartView(this)) {
  makeJobs();
  installTableExportMenu(table_, QStringLiteral("comparison"));  // right click: CSV / JSON
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  diffLabel_->setWordWrap(true);
  diffLabel_->setTextFormat(Qt::RichText);
  lay->addWidget(diffLabel_);
  auto* form = new QFormLayout;
  auto* runs = new QHBoxLayout;
  runs->addWidget(runA_, 1);
  auto* swap = new QPushButton(tr("⇅ Swap"), this);
  swap->setToolTip(tr("Exchange A and B (differences change sign)"));
  runs->addWidget(swap);
  form->addRow(tr("A"), runs);
  form->addRow(tr("B"), runB_);
  align_->addItem(tr("Warp (every iteration)"), static_cast<int>(AlignMode::Warp));
  align_->addItem(tr("Shift at iteration"), static_cast<int>(AlignMode::Iteration));
  align_->addItem(tr("Run starts"), static_cast<int>(AlignMode::Start));
  align_->addItem(tr("Selected kernels"), static_cast<int>(AlignMode::Event));
  align_->addItem(tr("Absolute time"), static_cast<int>(AlignMode::Absolute));
  align_->setToolTip(
      tr("How B is placed on A's clock: every iteration of B stretched onto the same "
         "iteration of A (and its forward / backward / optimizer phases), B shifted so that "
         "iteration k lines up, the starts together, a kernel of each together, or wall-clock "
         "time"));
  auto* alignRow = new QHBoxLayout;
  alignRow->addWidget(align_, 1);
  step_->setPrefix(tr("step "));
  step_->setRange(0, 1'000'000);
  step_->setToolTip(tr("The iteration (ProfilerStep number) to align"));
  alignRow->addWidget(step_);
  form->addRow(tr("Align"), alignRow);
  pairBy_->addItem(tr("Rank"), static_cast<int>(PairBy::Rank));
  pairBy_->addItem(tr("Chassis slot (node, local index)"), static_cast<int>(PairBy::Slot));
  pairBy_->addItem(tr("GPU index"), static_cast<int>(PairBy::Index));
  form->addRow(tr("Pair GPUs by"), pairBy_);
  auto* diffs = new QHBoxLayout;
  for (const auto& [id, label] : {std::pair{std::string(metric::kPower), tr("Power")},
                                  std::pair{std::string(metric::kTemp), tr("Temperature")},
                                  std::pair{std::string(metric::kSmClock), tr("SM clock")}}) {
    auto* box = new QCheckBox(label, this);
    box->setChecked(id != metric::kSmClock);
    diffs->addWidget(box);
    metricBoxes_.emplace_back(box, id);
    connect(box, &QCheckBox::toggled, this, &ComparePanel::recompute);
  }
  form->addRow(tr("A − B tracks"), diffs);
  lay->addLayout(form);
  status_->setWordWrap(true);
  lay->addWidget(status_);
  table_->setColumnCount(4);
  table_->setHorizontalHeaderLabels({tr("Visible range"), tr("A"), tr("B"), tr("A − B")});
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  tabs_->addTab(table_, tr("Visible range"));
  tabs_->addTab(makeIterationsTab(), tr("Iterations"));
  tabs_->addTab(makeProfileTab(), tr("Typical iteration"));
  lay->addWidget(tabs_, 1);
  status_->setText(tr("Open a second run to compare it with the first, side by side."));
  setEnabled(false);

  connect(swap, &QPushButton::clicked, this, &ComparePanel::swapRuns);
  for (QComboBox* c : {runA_, runB_, align_, pairBy_})
    connect(c, &QComboBox::currentIndexChanged, this, &ComparePanel::recompute);
  connect(step_, &QSpinBox::valueChanged, this, &ComparePanel::recompute);
  debounce_->setSingleShot(true);
  debounce_->setInterval(200);
  connect(debounce_, &QTimer::timeout, this, &ComparePanel::startDeltas);
}

ComparePanel::~ComparePanel() {
  // The work holds the runs, not the panel; waiting keeps HDF5 reads from outliving the window.
  for (BackgroundJob* job : {warpJob_, deltaJob_, iterJob_, profileJob_})
    job->waitForFinished();
}

void ComparePanel::makeJobs() {
  warpJob_ = new BackgroundJob(this);
  deltaJob_ = new BackgroundJob(this);
  iterJob_ = new BackgroundJob(this);
  profileJob_ = new BackgroundJob(this);
  connect(warpJob_, &BackgroundJob::failed, this, [this](const QString& message) {
    warpCache_.ready = true;
    warpCache_.error = message;
    if (settings_.align == AlignMode::Warp) recompute();
  });
  connect(deltaJob_, &BackgroundJob::failed, this, [this](const QString& message) {
    status_->setText(tr("Cannot compare: %1").arg(message));
  });
  connect(iterJob_, &BackgroundJob::failed, this, [this](const QString& message) {
    iterStatus_->setText(tr("Cannot compare the steps: %1").arg(message));
    fillIterations();
    emit iterationsReady();
  });
  connect(profileJob_, &BackgroundJob::failed, this, [this](const QString&) {
    profiles_.reset();
    fillProfileChart();
    emit profilesReady();
  });
}

QWidget* ComparePanel::makeIterationsTab() {
  auto* w = new QWidget(this);
  auto* l = new QVBoxLayout(w);
  l->setContentsMargins(0, 4, 0, 0);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Show"), w));
  for (const IterationColumnInfo& c : iterationColumns())
    iterColumn_->addItem(c.unit.empty() ? QString::fromUtf8(c.label.data(), c.label.size())
                                        : QStringLiteral("%1 (%2)").arg(
                                              QString::fromUtf8(c.label.data(), c.label.size()),
                                              QString::fromUtf8(c.unit.data(), c.unit.size())));
  top->addWidget(iterColumn_, 1);
  l->addLayout(top);
  iterTable_->setColumnCount(5);
  iterTable_->setHorizontalHeaderLabels({tr("Step"), tr("A"), tr("B"), tr("A − B"), tr("%")});
  iterTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  iterTable_->verticalHeader()->hide();
  iterTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  iterTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  iterTable_->setToolTip(tr("Click a step to show it in both runs"));
  installTableExportMenu(iterTable_, QStringLiteral("iterations"));
  l->addWidget(iterTable_, 1);
  iterStatus_->setWordWrap(true);
  l->addWidget(iterStatus_);
  connect(iterColumn_, &QComboBox::currentIndexChanged, this, &ComparePanel::fillIterations);
  connect(iterTable_, &QTableWidget::cellClicked, this, [this](int row, int) {
    const QTableWidgetItem* it = iterTable_->item(row, 0);
    if (!it || !it->data(Qt::UserRole).isValid()) return;  // the mean ± stddev row
    const TimeRange r = iterationDisplayRange(it->data(Qt::UserRole).toLongLong());
    if (!r.empty()) emit zoomRequested(r.t0, r.t1);
  });
  return w;
}

QWidget* ComparePanel::makeProfileTab() {
  auto* w = new QWidget(this);
  auto* l = new QVBoxLayout(w);
  l->setContentsMargins(0, 4, 0, 0);
  auto* top = new QHBoxLayout;
  top->addWidget(profilePair_, 1);
  for (const auto& [id, label] : {std::pair{std::string(metric::kPower), tr("Power")},
                                  std::pair{std::string(metric::kTemp), tr("Temperature")},
                                  std::pair{std::string(metric::kSmClock), tr("SM clock")}})
    profileMetric_->addItem(label, QString::fromStdString(id));
  top->addWidget(profileMetric_);
  l->addLayout(top);
  profileView_->setRenderHint(QPainter::Antialiasing);
  profileView_->setMinimumHeight(220);
  profileView_->setToolTip(
      tr("Mean (line) and min–max (band) over the steps, at each point of the step's phase"));
  l->addWidget(profileView_, 1);
  connect(profilePair_, &QComboBox::currentIndexChanged, this, &ComparePanel::fillProfileChart);
  connect(profileMetric_, &QComboBox::currentIndexChanged, this, &ComparePanel::fillProfileChart);
  return w;
}

void ComparePanel::setRuns(std::vector<std::shared_ptr<const RunFile>> runs) {
  runs_ = std::move(runs);
  updating_ = true;
  runA_->clear();
  runB_->clear();
  for (const auto& r : runs_) {
    const QString name = QString::fromStdString(
        r->info().name.empty() ? r->path().filename().string() : r->info().name);
    runA_->addItem(name);
    runB_->addItem(name);
  }
  runA_->setCurrentIndex(0);
  runB_->setCurrentIndex(runs_.size() > 1 ? 1 : 0);
  setEnabled(active());
  if (active()) {
    // Default: the second common iteration (past warm-up) when both runs have iterations.
    int64_t step = 0;
    const auto [mode, offset] = defaultAlignment(*runs_[0], *runs_[1], &step);
    (void)offset;
    align_->setCurrentIndex(align_->findData(static_cast<int>(mode)));
    step_->setValue(static_cast<int>(step));
  }
  updating_ = false;
  recompute();
}

void ComparePanel::setAlignment(AlignMode mode, int64_t step) {
  updating_ = true;
  align_->setCurrentIndex(align_->findData(static_cast<int>(mode)));
  step_->setValue(static_cast<int>(step));
  updating_ = false;
  recompute();
}

void ComparePanel::alignAtEvents(int64_t startA, int64_t startB) {
  eventOffset_ = startA - startB;
  setAlignment(AlignMode::Event);
}

void ComparePanel::setPairBy(PairBy by) {
  pairBy_->setCurrentIndex(pairBy_->findData(static_cast<int>(by)));
}

void ComparePanel::swapRuns() {
  updating_ = true;
  const int a = runA_->currentIndex();
  runA_->setCurrentIndex(runB_->currentIndex());
  runB_->setCurrentIndex(a);
  if (eventOffset_) eventOffset_ = -*eventOffset_;
  updating_ = false;
  recompute();
}

bool ComparePanel::setRunPair(int a, int b) {
  const int n = static_cast<int>(runs_.size());
  if (a < 0 || b < 0 || a >= n || b >= n || a == b) return false;
  updating_ = true;
  runA_->setCurrentIndex(a);
  runB_->setCurrentIndex(b);
  eventOffset_.reset();  // chosen for another pair
  int64_t step = 0;
  const auto [mode, offset] =
      defaultAlignment(*runs_[static_cast<size_t>(a)], *runs_[static_cast<size_t>(b)], &step);
  (void)offset;
  align_->setCurrentIndex(align_->findData(static_cast<int>(mode)));
  step_->setValue(static_cast<int>(step));
  updating_ = false;
  recompute();
  return true;
}

void ComparePanel::setDifferenceMetrics(const std::vector<std::string>& ids) {
  updating_ = true;
  for (const auto& [box, id] : metricBoxes_)
    box->setChecked(std::find(ids.begin(), ids.end(), id) != ids.end());
  updating_ = false;
  recompute();
}

bool ComparePanel::alignmentPending() const {
  return active() && settings_.align == AlignMode::Warp && !warpCache_.ready;
}

void ComparePanel::startWarp() {
  auto ra = runs_[static_cast<size_t>(std::max(0, runA_->currentIndex()))];
  auto rb = runs_[static_cast<size_t>(std::max(0, runB_->currentIndex()))];
  warpJob_->start([ra, rb](const BackgroundJob::Context&) { return iterationWarp(*ra, *rb); },
                  [this, pa = ra.get(), pb = rb.get()](std::optional<TimeWarp> warp) {
                    if (warpCache_.a != pa || warpCache_.b != pb) return;
                    warpCache_.ready = true;
                    warpCache_.warp = std::move(warp);
                    // Another alignment chosen meanwhile: nothing to redraw (a recompute would
                    // reset the timeline's range).
                    if (settings_.align == AlignMode::Warp) recompute();
                  });
}

void ComparePanel::recompute() {
  if (updating_) return;
  if (!active()) {
    settings_ = CompareSettings{};
    emit settingsChanged();
    return;
  }
  CompareSettings s;
  s.runA = std::max(0, runA_->currentIndex());
  s.runB = std::max(0, runB_->currentIndex());
  const RunFile& a = *runs_[static_cast<size_t>(s.runA)];
  const RunFile& b = *runs_[static_cast<size_t>(s.runB)];
  s.align = static_cast<AlignMode>(align_->currentData().toInt());
  s.step = step_->value();
  step_->setEnabled(s.align == AlignMode::Iteration);
  QString note;
  bool haveWarp = false;
  switch (s.align) {
    case AlignMode::Absolute:
      s.offsetB = 0;
      break;
    case AlignMode::Start:
      s.offsetB = alignAtStart(a, b);
      break;
    case AlignMode::Warp:
      if (warpCache_.a != &a || warpCache_.b != &b) {
        warpCache_ = {&a, &b, false, std::nullopt, {}};
        startWarp();
      }
      if (warpCache_.warp) {
        s.warp = *warpCache_.warp;
        haveWarp = true;
        s.offsetB = s.warp.offsetAtA(s.warp.knots().front().a_ns);
      } else {
        s.offsetB = alignAtStart(a, b);
        note = !warpCache_.ready ? tr("Computing the warp from both runs' steps; meanwhile "
                                      "aligned at the starts.")
               : !warpCache_.error.isEmpty()
                   ? tr("Cannot warp (%1); aligned at the starts.").arg(warpCache_.error)
                   : tr("The runs share no iteration; aligned at the starts.");
      }
      break;
    case AlignMode::Iteration:
      if (auto off = alignAtIteration(a, b, s.step)) {
        s.offsetB = *off;
      } else {
        s.offsetB = alignAtStart(a, b);
        note = tr("Step %1 is not in both runs; aligned at the starts.").arg(s.step);
      }
      break;
    case AlignMode::Event:
      if (eventOffset_) {
        s.offsetB = *eventOffset_;
      } else {
        s.offsetB = alignAtStart(a, b);
        note =
            tr("Select a kernel of A, then one of B, and choose \"Align at these kernels\" "
               "from the kernel's context menu; meanwhile aligned at the starts.");
      }
      break;
  }
  if (!haveWarp) s.warp = TimeWarp::shift(s.offsetB);
  s.pairBy = static_cast<PairBy>(pairBy_->currentData().toInt());
  s.pairs = pairGpus(a, b, s.pairBy);
  if (s.pairs.empty() && s.pairBy == PairBy::Rank) {
    s.pairs = pairGpus(a, b, PairBy::Index);
    note += tr(" The GPUs have no ranks to pair by; paired by index.");
  }
  for (const auto& [box, id] : metricBoxes_)
    if (box->isChecked() && a.series().metric(id) && b.series().metric(id))
      s.differenceMetrics.push_back(id);
  const QString how =
      s.warp.isShift()
          ? tr("B shifted by %1 onto A's clock")
                .arg(QString::fromStdString(formatDuration(s.offsetB)))
          : tr("B warped onto A's clock at %1 boundaries (iterations and their phases)")
                .arg(s.warp.knots().size());
  status_->setText(tr("%1; %2 GPU pairs.%3")
                       .arg(how)
                       .arg(s.pairs.size())
                       .arg(note.isEmpty() ? QString() : QStringLiteral(" ") + note));
  settings_ = std::move(s);
  // New runs or a new pairing of their GPUs: the table, the profiles and the header again.
  if (computedPair_ != std::pair{settings_.runA, settings_.runB} ||
      computedGpuPairs_ != settings_.pairs)
    runsPairChanged();
  emit settingsChanged();
  debounce_->start();
}

namespace {

QString htmlList(const std::vector<RunDifference>& d) {
  QStringList parts;
  for (const RunDifference& x : d)
    parts << QStringLiteral("%1 <b>%2</b> vs <b>%3</b>")
                 .arg(QString::fromStdString(x.label).toHtmlEscaped(),
                      QString::fromStdString(x.a).toHtmlEscaped(),
                      QString::fromStdString(x.b).toHtmlEscaped());
  return parts.join(QStringLiteral(" · "));
}

}  // namespace

void ComparePanel::runsPairChanged() {
  computedPair_ = {settings_.runA, settings_.runB};
  computedGpuPairs_ = settings_.pairs;
  const RunFile& a = *runs_[static_cast<size_t>(settings_.runA)];
  const RunFile& b = *runs_[static_cast<size_t>(settings_.runB)];
  differences_ = runDifferences(a, b);
  QString html = tr("<b>A</b> %1 · <b>B</b> %2")
                     .arg(QString::fromStdString(differences_.label_a).toHtmlEscaped(),
                          QString::fromStdString(differences_.label_b).toHtmlEscaped());
  if (!differences_.config.empty())
    html += tr("<br>Configuration: %1").arg(htmlList(differences_.config));
  if (!differences_.data.empty()) html += tr("<br>Data: %1").arg(htmlList(differences_.data));
  for (const std::string& w : differences_.warnings)
    html += QStringLiteral("<br><span style='color:#c04000'>⚠ %1</span>")
                .arg(QString::fromStdString(w).toHtmlEscaped());
  diffLabel_->setText(html);
  iterations_.reset();
  profiles_.reset();
  fillIterations();
  iterStatus_->setText(tr("Computing the steps of both runs…"));
  profilePair_->blockSignals(true);
  profilePair_->clear();
  for (const auto& [ga, gb] : settings_.pairs)
    profilePair_->addItem(tr("GPU %1 (A) · GPU %2 (B)").arg(ga).arg(gb));
  profilePair_->blockSignals(false);
  fillProfileChart();
  auto ra = runs_[static_cast<size_t>(settings_.runA)];
  auto rb = runs_[static_cast<size_t>(settings_.runB)];
  const auto pairs = settings_.pairs;
  // Both read every step of both runs; a newer pair supersedes what is still running.
  iterJob_->start([ra, rb](const BackgroundJob::Context&) { return compareIterations(*ra, *rb); },
                  [this](IterationComparison result) {
                    iterations_ = std::move(result);
                    iterStatus_->clear();
                    fillIterations();
                    emit iterationsReady();
                  });
  profileJob_->start(
      [ra, rb, pairs](const BackgroundJob::Context&) { return iterationProfiles(*ra, *rb, pairs); },
      [this](IterationProfiles result) {
        profiles_ = std::move(result);
        fillProfileChart();
        emit profilesReady();
      });
}

void ComparePanel::computeIterationsNow() {
  if (!active()) return;
  iterJob_->waitForFinished();
  iterJob_->cancel();
  iterStatus_->clear();
  iterations_ = compareIterations(*runs_[static_cast<size_t>(settings_.runA)],
                                  *runs_[static_cast<size_t>(settings_.runB)]);
  fillIterations();
}

void ComparePanel::computeProfilesNow() {
  if (!active()) return;
  profileJob_->waitForFinished();
  profileJob_->cancel();
  profiles_ = iterationProfiles(*runs_[static_cast<size_t>(settings_.runA)],
                                *runs_[static_cast<size_t>(settings_.runB)], settings_.pairs);
  fillProfileChart();
}

void ComparePanel::fillIterations() {
  iterTable_->setRowCount(0);
  if (!iterations_) return;
  const auto col = static_cast<size_t>(std::max(0, iterColumn_->currentIndex()));
  const IterationColumnInfo& info = iterationColumns()[col];
  auto num = [&info](double v) {
    return std::isfinite(v) ? QString::number(v, 'f', info.digits) : QStringLiteral("—");
  };
  auto pct = [](double v) {
    return std::isfinite(v) ? QStringLiteral("%1%2").arg(v >= 0 ? "+" : "").arg(v, 0, 'f', 1)
                            : QStringLiteral("—");
  };
  const auto& rows = iterations_->rows;
  iterTable_->setRowCount(static_cast<int>(rows.size()) + 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<int>(i);
    auto* step = new QTableWidgetItem(QString::number(rows[i].step));
    step->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(rows[i].step));
    iterTable_->setItem(r, 0, step);
    iterTable_->setItem(r, 1, new QTableWidgetItem(num(rows[i].a.v[col])));
    iterTable_->setItem(r, 2, new QTableWidgetItem(num(rows[i].b.v[col])));
    iterTable_->setItem(r, 3, new QTableWidgetItem(num(rows[i].delta[col])));
    iterTable_->setItem(r, 4, new QTableWidgetItem(pct(rows[i].delta_pct[col])));
  }
  // The last row: mean ± stddev over the steps.
  auto spread = [&num](const SpreadStats& st) {
    return std::isfinite(st.mean) ? QStringLiteral("%1 ± %2").arg(num(st.mean), num(st.stddev))
                                  : QStringLiteral("—");
  };
  const int last = static_cast<int>(rows.size());
  iterTable_->setItem(last, 0, new QTableWidgetItem(tr("mean ± sd")));
  iterTable_->setItem(last, 1, new QTableWidgetItem(spread(iterations_->a[col])));
  iterTable_->setItem(last, 2, new QTableWidgetItem(spread(iterations_->b[col])));
  iterTable_->setItem(last, 3, new QTableWidgetItem(spread(iterations_->delta[col])));
  iterTable_->setItem(last, 4, new QTableWidgetItem(pct(iterations_->mean_delta_pct[col])));
  if (rows.empty()) iterStatus_->setText(tr("The runs share no completed step."));
}

TimeRange ComparePanel::iterationDisplayRange(int64_t step) const {
  if (!iterations_) return {};
  for (const IterationComparisonRow& r : iterations_->rows) {
    if (r.step != step) continue;
    // A's window is on the display clock; B's goes through its alignment. Both shown, with a
    // margin of 5 % on each side.
    const int64_t b0 = settings_.warp.toA(r.b.start_ns), b1 = settings_.warp.toA(r.b.end_ns);
    const int64_t t0 = std::min(r.a.start_ns, b0), t1 = std::max(r.a.end_ns, b1);
    const int64_t pad = (t1 - t0) / 20;
    return {t0 - pad, t1 + pad};
  }
  return {};
}

void ComparePanel::fillProfileChart() {
  QChart* old = profileView_->chart();
  const int pair = profilePair_->currentIndex();
  const std::string metric = profileMetric_->currentData().toString().toStdString();
  QChart* chart = nullptr;
  if (profiles_ && pair >= 0 && static_cast<size_t>(pair) < profiles_->pairs.size()) {
    const PairProfile& pp = profiles_->pairs[static_cast<size_t>(pair)];
    for (const MetricProfilePair& m : pp.metrics)
      if (m.metric == metric)
        chart = makeIterationProfileChart(m, pp.gpu_a, pp.gpu_b,
                                          QString::fromStdString(differences_.label_a),
                                          QString::fromStdString(differences_.label_b));
  }
  if (!chart) {
    chart = new QChart;
    chart->setTitle(profiles_ ? tr("No steps or no such metric in both runs")
                              : tr("Computing the typical iteration…"));
  }
  // The dock's palette (light or dark) without a chart theme, which would recolour A and B.
  const QPalette pal = palette();
  chart->setBackgroundBrush(pal.base());
  chart->setTitleBrush(pal.text());
  chart->legend()->setLabelColor(pal.text().color());
  for (QAbstractAxis* ax : chart->axes()) {
    ax->setLabelsColor(pal.text().color());
    ax->setTitleBrush(pal.text());
  }
  profileView_->setChart(chart);
  if (old) old->deleteLater();
}

void ComparePanel::setVisibleRange(TimeRange display) {
  visible_ = display;
  if (active()) debounce_->start();
}

void ComparePanel::computeDeltasNow() {
  if (!active() || visible_.empty()) return;
  fillDeltas(compareRange(*runs_[static_cast<size_t>(settings_.runA)],
                          *runs_[static_cast<size_t>(settings_.runB)], settings_, visible_));
  emit deltasReady();
}

void ComparePanel::startDeltas() {
  if (!active() || visible_.empty()) return;
  if (deltaJob_->busy()) {  // one range at a time: ask again once the running one is done
    debounce_->start();
    return;
  }
  auto a = runs_[static_cast<size_t>(settings_.runA)];
  auto b = runs_[static_cast<size_t>(settings_.runB)];
  const CompareSettings s = settings_;
  const TimeRange r = visible_;
  deltaJob_->start(
      [a, b, s, r](const BackgroundJob::Context&) { return compareRange(*a, *b, s, r); },
      [this](std::vector<CompareDelta> deltas) {
        fillDeltas(deltas);
        emit deltasReady();
      });
}

void ComparePanel::fillDeltas(const std::vector<CompareDelta>& d) {
  table_->setRowCount(static_cast<int>(d.size()));
  auto text = [](double v, const std::string& unit) {
    if (!std::isfinite(v)) return QStringLiteral("—");
    const double a = std::fabs(v);
    return QStringLiteral("%1 %2").arg(QString::number(v, 'f', a >= 1000 ? 0 : (a >= 100 ? 1 : 2)),
                                       QString::fromStdString(unit));
  };
  for (size_t i = 0; i < d.size(); ++i) {
    const int r = static_cast<int>(i);
    table_->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(d[i].label)));
    table_->setItem(r, 1, new QTableWidgetItem(text(d[i].a, d[i].unit)));
    table_->setItem(r, 2, new QTableWidgetItem(text(d[i].b, d[i].unit)));
    const double delta = d[i].a - d[i].b;
    QString dt = text(delta, d[i].unit);
    if (std::isfinite(delta) && std::isfinite(d[i].b) && d[i].b != 0 && d[i].unit != "%")
      dt += QStringLiteral(" (%1%2%)")
                .arg(delta >= 0 ? "+" : "")
                .arg(100.0 * delta / d[i].b, 0, 'f', 1);
    table_->setItem(r, 3, new QTableWidgetItem(dt));
  }
}

}  // namespace wl
