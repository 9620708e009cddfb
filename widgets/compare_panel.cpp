// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

#include "core/metrics.h"
#include "core/time_format.h"
#include "export/export_dialog.h"
#include "range_summary.h"

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
  const RunSide B = side(b, gb, TimeRange{display.t0 - s.offsetB, display.t1 - s.offsetB});
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
      debounce_(new QTimer(this)) {
  installTableExportMenu(table_, QStringLiteral("comparison"));  // right click: CSV / JSON
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  auto* form = new QFormLayout;
  auto* runs = new QHBoxLayout;
  runs->addWidget(runA_, 1);
  auto* swap = new QPushButton(tr("⇅ Swap"), this);
  swap->setToolTip(tr("Exchange A and B (differences change sign)"));
  runs->addWidget(swap);
  form->addRow(tr("A"), runs);
  form->addRow(tr("B"), runB_);
  align_->addItem(tr("Iteration"), static_cast<int>(AlignMode::Iteration));
  align_->addItem(tr("Run starts"), static_cast<int>(AlignMode::Start));
  align_->addItem(tr("Selected kernels"), static_cast<int>(AlignMode::Event));
  align_->addItem(tr("Absolute time"), static_cast<int>(AlignMode::Absolute));
  align_->setToolTip(
      tr("How B is placed on A's clock: iteration k of B under iteration k of A, "
         "the starts together, a kernel of each together, or wall-clock time"));
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
  lay->addWidget(table_, 1);
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
  if (watcher_) watcher_->waitForFinished();
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
    // Until the timeline draws warps (issue 12, gui), the warp default shows as its shift.
    const AlignMode shown = mode == AlignMode::Warp ? AlignMode::Iteration : mode;
    align_->setCurrentIndex(align_->findData(static_cast<int>(shown)));
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
  switch (s.align) {
    case AlignMode::Absolute:
      s.offsetB = 0;
      break;
    case AlignMode::Start:
      s.offsetB = alignAtStart(a, b);
      break;
    case AlignMode::Warp:  // not offered yet (see setRuns): the shift at the step
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
  s.pairBy = static_cast<PairBy>(pairBy_->currentData().toInt());
  s.pairs = pairGpus(a, b, s.pairBy);
  if (s.pairs.empty() && s.pairBy == PairBy::Rank) {
    s.pairs = pairGpus(a, b, PairBy::Index);
    note += tr(" The GPUs have no ranks to pair by; paired by index.");
  }
  for (const auto& [box, id] : metricBoxes_)
    if (box->isChecked() && a.series().metric(id) && b.series().metric(id))
      s.differenceMetrics.push_back(id);
  status_->setText(tr("B shifted by %1 onto A's clock; %2 GPU pairs.%3")
                       .arg(QString::fromStdString(formatDuration(s.offsetB)))
                       .arg(s.pairs.size())
                       .arg(note.isEmpty() ? QString() : QStringLiteral(" ") + note));
  settings_ = std::move(s);
  emit settingsChanged();
  debounce_->start();
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
  if (watcher_) {
    debounce_->start();
    return;
  }
  auto a = runs_[static_cast<size_t>(settings_.runA)];
  auto b = runs_[static_cast<size_t>(settings_.runB)];
  const CompareSettings s = settings_;
  const TimeRange r = visible_;
  watcher_ = new QFutureWatcher<std::vector<CompareDelta>>(this);
  connect(watcher_, &QFutureWatcher<std::vector<CompareDelta>>::finished, this, [this] {
    auto* w = watcher_;
    watcher_ = nullptr;
    w->deleteLater();
    try {
      fillDeltas(w->result());
      emit deltasReady();
    } catch (const std::exception& e) {
      status_->setText(tr("Cannot compare: %1").arg(QString::fromUtf8(e.what())));
    }
  });
  watcher_->setFuture(QtConcurrent::run([a, b, s, r] { return compareRange(*a, *b, s, r); }));
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
