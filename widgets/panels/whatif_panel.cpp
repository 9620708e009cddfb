// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/panels/whatif_panel.h"

#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

#include "analysis/projected_run.h"
#include "analysis/whatif_pareto.h"
#include "widgets/charts/whatif_chart.h"
#include "widgets/export/export_dialog.h"

namespace wl {

struct WhatifPanel::JobResult {
  std::shared_ptr<const Calibration> calibration;  // set by the run's first job
  WhatifProjection projection;  // measured, model, the sweep's settings (if any), the setting
  WhatifSetting setting;
  bool withSweep = false;
  std::optional<double> sweepInlet;
  size_t sweepCount = 0;
};

namespace {

constexpr int kDebounceMs = 150;

std::vector<WhatifSetting> sweepSettings(double limit, std::optional<double> inlet) {
  std::vector<WhatifSetting> out;
  for (double w : powerLimitSweep(limit)) {
    WhatifSetting s;
    s.power_limit_w = w;
    s.inlet_temp_c = inlet;
    out.push_back(s);
  }
  return out;
}

// Projects `setting`, and the sweep at its inlet when `withSweep`.
WhatifPanel::JobResult project(const RunFile& run, std::shared_ptr<const Calibration> cal,
                               const WhatifSetting& setting, bool withSweep) {
  WhatifPanel::JobResult r;
  r.setting = setting;
  r.withSweep = withSweep;
  std::vector<WhatifSetting> settings;
  if (withSweep) {
    r.sweepInlet = setting.inlet_temp_c;
    settings = sweepSettings(measuredPowerLimit(*cal), setting.inlet_temp_c);
    r.sweepCount = settings.size();
  }
  settings.push_back(setting);
  r.projection = projectRun(run, *cal, settings);
  return r;
}

QString number(double v, int digits) {
  return std::isfinite(v) ? QString::number(v, 'f', digits) : QStringLiteral("—");
}

// "value ± uncertainty", "value" without one, "—" when unknown.
QString withUncertainty(double v, double u, int digits) {
  if (!std::isfinite(v)) return QStringLiteral("—");
  return std::isfinite(u) ? QStringLiteral("%1 ± %2").arg(number(v, digits), number(u, digits))
                          : number(v, digits);
}

QString settingText(const WhatifRow& r) {
  return QStringLiteral("%1 W, inlet %2 °C")
      .arg(number(r.power_limit_w, 0), number(r.inlet_temp_c, 1));
}

QString rowToolTip(const WhatifRow& r, const QString& kind) {
  const WhatifOutcome &v = r.value, &u = r.uncertainty;
  return QStringLiteral(
             "%1: %2\nstep %3 s, %4 tokens/s\nenergy per token %5 J\npeak %6 °C, "
             "throttled %7 %")
      .arg(kind, settingText(r), withUncertainty(v.step_s, u.step_s, 3),
           withUncertainty(v.tokens_per_s, u.tokens_per_s, 0),
           withUncertainty(v.energy_per_token_j, u.energy_per_token_j, 4),
           withUncertainty(v.peak_temp_c, u.peak_temp_c, 1),
           withUncertainty(v.throttled_fraction * 100, u.throttled_fraction * 100, 0));
}

bool finitePoint(const WhatifRow& r) {
  return std::isfinite(r.value.step_s) && std::isfinite(r.value.energy_per_token_j);
}

QPointF point(const WhatifRow& r) {
  return {r.value.step_s, r.value.energy_per_token_j};
}

// A scatter series of `chart` by its objectName (whatif_chart.h).
QScatterSeries* scatterOf(const QChart* chart, const char* id) {
  for (QAbstractSeries* s : chart->series())
    if (s->objectName() == QLatin1String(id)) return qobject_cast<QScatterSeries*>(s);
  return nullptr;
}

}  // namespace

WhatifPanel::WhatifPanel(QWidget* parent)
    : QWidget(parent),
      job_(new BackgroundJob(this)),
      writeJob_(new BackgroundJob(this)),
      debounce_(new QTimer(this)) {
  debounce_->setSingleShot(true);
  debounce_->setInterval(kDebounceMs);
  connect(debounce_, &QTimer::timeout, this, &WhatifPanel::startProjection);
  connect(job_, &BackgroundJob::failed, this, &WhatifPanel::failed);
  connect(job_, &BackgroundJob::progressChanged, this, [this](double, const QString& stage) {
    if (!stage.isEmpty()) status_->setText(stage + QStringLiteral("…"));
  });
  makeControls();
  connect(job_, &BackgroundJob::busyChanged, this, [this](bool busy) {
    progress_->setVisible(busy || writeJob_->busy());
    updateOpenButton();
  });
  connect(writeJob_, &BackgroundJob::busyChanged, this, [this](bool busy) {
    progress_->setVisible(busy || job_->busy());
    updateOpenButton();
  });
  connect(writeJob_, &BackgroundJob::failed, this,
          [this](const QString& message) { status_->setText(message); });
  setRun(nullptr);
}

WhatifPanel::~WhatifPanel() = default;  // the job's destruction drops the work under way

void WhatifPanel::makeControls() {
  caption_ = new QLabel(tr("<i>A projection from this run's own calibration (wattline "
                           "calibrate), not a measurement. ± is one standard error from the "
                           "calibration's fit errors.</i>"),
                        this);
  caption_->setWordWrap(true);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 0);  // busy: calibration and projection report no fraction
  progress_->setMaximumHeight(10);
  progress_->setTextVisible(false);
  progress_->hide();

  power_ = new QSlider(Qt::Horizontal, this);
  power_->setObjectName(QStringLiteral("powerLimit"));
  power_->setSingleStep(5);
  power_->setPageStep(25);
  power_->setToolTip(tr("The power limit per GPU to project to (per package on MI250)"));
  inlet_ = new QSlider(Qt::Horizontal, this);
  inlet_->setObjectName(QStringLiteral("inletTemp"));
  inlet_->setSingleStep(5);  // tenths of a degree
  inlet_->setPageStep(10);
  inlet_->setToolTip(tr("The cold-aisle inlet air temperature to project to"));
  powerValue_ = new QLabel(this);
  inletValue_ = new QLabel(this);
  for (QLabel* l : {powerValue_, inletValue_})
    l->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("700 W (100 % of 700 W)")));
  auto sliderRow = [this](QSlider* s, QLabel* value) {
    auto* row = new QHBoxLayout;
    row->addWidget(s, 1);
    row->addWidget(value);
    connect(s, &QSlider::valueChanged, this, [this] {
      updateSliderLabels();
      debounce_->start();
    });
    return row;
  };
  auto* form = new QFormLayout;
  form->addRow(tr("Power limit"), sliderRow(power_, powerValue_));
  form->addRow(tr("Inlet air"), sliderRow(inlet_, inletValue_));

  table_ = new QTableWidget(RowCount, 3, this);
  table_->setObjectName(QStringLiteral("whatifTable"));
  const QString rows[RowCount][2] = {
      {tr("step (s)"), tr("Step time: one training iteration, averaged over the whole ones")},
      {tr("tokens/s"), tr("Throughput: tokens per step (global batch × sequence) per second")},
      {tr("J/token"), tr("Energy per token: the GPUs' energy per step over its tokens")},
      {tr("peak (°C)"), tr("Peak GPU temperature")},
      {tr("throttled (%)"),
       tr("Share of busy samples whose clock a power or thermal limit lowered")}};
  for (int r = 0; r < RowCount; ++r) {
    auto* h = new QTableWidgetItem(rows[r][0]);
    h->setToolTip(rows[r][1]);
    table_->setVerticalHeaderItem(r, h);
  }
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  table_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

  chartView_ = new QChartView(this);
  chartView_->setRenderHint(QPainter::Antialiasing);
  chartView_->setMinimumHeight(240);
  installChartExportMenu(chartView_, [this] {
    if (!run_) return std::pair<QString, QString>{};
    return std::pair<QString, QString>{QString::fromStdString(run_->info().name),
                                       tr("What if: power-limit sweep (projected)")};
  });
  legend_ = new QLabel(this);
  legend_->setWordWrap(true);
  notes_ = new QLabel(this);
  notes_->setWordWrap(true);
  openB_ = new QPushButton(tr("Open as B"), this);
  openB_->setToolTip(
      tr("Write the projected run of this setting to a temporary file and open it beside the "
         "measured run: the Compare dock compares them (a projection, not a measurement)"));
  connect(openB_, &QPushButton::clicked, this, &WhatifPanel::openAsB);
  save_ = new QPushButton(tr("Save Projection As…"), this);
  save_->setToolTip(
      tr("Copy the projected run compared as B (a temporary file, removed when Wattline exits) "
         "to a file of your choice; File > Save Projection As… does the same"));
  save_->setEnabled(false);
  connect(save_, &QPushButton::clicked, this, &WhatifPanel::saveProjectionRequested);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(save_);
  buttons->addWidget(openB_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addWidget(status_);
  layout->addWidget(progress_);
  layout->addLayout(form);
  layout->addWidget(table_);
  layout->addWidget(chartView_, 1);
  layout->addWidget(legend_);
  layout->addWidget(notes_);
  layout->addLayout(buttons);
}

void WhatifPanel::setRun(std::shared_ptr<const RunFile> run) {
  run_ = std::move(run);
  job_->cancel();
  writeJob_->cancel();
  debounce_->stop();
  cal_.reset();
  state_.reset();
  error_.clear();
  limitW_ = inletC_ = kNaN;
  power_->setEnabled(false);
  inlet_->setEnabled(false);
  fillTable();
  fillChart();
  updateSliderLabels();
  updateOpenButton();
  pending_ = run_ != nullptr;
  if (!run_) {
    status_->setText(tr("No run"));
    return;
  }
  status_->setText(tr("Calibrates when shown"));
  if (isVisible()) startCalibration();
}

void WhatifPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (pending_) startCalibration();
}

void WhatifPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) fillChart();  // light or dark theme
}

void WhatifPanel::startCalibration() {
  pending_ = false;
  if (!run_) return;
  status_->setText(tr("Calibrating the run's model…"));
  job_->start(
      [run = run_](const BackgroundJob::Context& ctx) {
        ctx.progress(0, "Calibrating the run's model");
        auto cal = std::make_shared<const Calibration>(calibrateRun(*run));
        if (ctx.cancelled()) return JobResult{};
        ctx.progress(0.5, "Projecting the power-limit sweep");
        JobResult r = project(*run, cal, WhatifSetting{}, true);
        r.calibration = std::move(cal);
        return r;
      },
      [this](JobResult r) { finished(std::move(r)); });
}

WhatifSetting WhatifPanel::sliderSetting() const {
  WhatifSetting s;
  if (std::isfinite(limitW_) && power_->value() != power_->maximum())
    s.power_limit_w = power_->value();
  if (std::isfinite(inletC_) && inlet_->value() != inletTick_)
    s.inlet_temp_c = inlet_->value() / 10.0;
  return s;
}

void WhatifPanel::setPowerLimit(double watts) {
  if (!std::isfinite(limitW_) || !std::isfinite(watts)) return;
  power_->setValue(watts >= limitW_ - 0.5 ? power_->maximum()
                                          : static_cast<int>(std::lround(std::max(watts, 0.0))));
}

void WhatifPanel::setInletTemp(double celsius) {
  if (!std::isfinite(inletC_) || !std::isfinite(celsius)) return;
  inlet_->setValue(static_cast<int>(std::lround(std::clamp(celsius, -100.0, 200.0) * 10)));
}

void WhatifPanel::projectNow() {
  debounce_->stop();
  startProjection();
}

void WhatifPanel::startProjection() {
  if (!run_ || !cal_) return;
  const WhatifSetting s = sliderSetting();
  // The sweep follows the inlet; a new power limit alone projects one setting.
  const bool withSweep = !state_ || state_->sweepInlet != s.inlet_temp_c;
  status_->setText(tr("Projecting %1 W, inlet %2 °C…")
                       .arg(number(s.power_limit_w.value_or(limitW_), 0),
                            number(s.inlet_temp_c.value_or(inletC_), 1)));
  // Starting supersedes the projection under way: its result is dropped.
  job_->start([run = run_, cal = cal_, s, withSweep](
                  const BackgroundJob::Context&) { return project(*run, cal, s, withSweep); },
              [this](JobResult r) { finished(std::move(r)); });
}

void WhatifPanel::finished(JobResult r) {
  if (r.calibration) cal_ = r.calibration;
  const std::vector<WhatifRow>& rows = r.projection.rows;
  if (rows.size() != 3 + r.sweepCount) {  // measured, model, the sweep, the setting
    failed(tr("The projection returned %1 rows, not %2").arg(rows.size()).arg(3 + r.sweepCount));
    return;
  }
  WhatifPanelState st = state_ && !r.withSweep ? *state_ : WhatifPanelState{};
  st.calibration = cal_;
  st.measured = rows[0];
  st.model = rows[1];
  if (r.withSweep) {
    st.sweepInlet = r.sweepInlet;
    st.sweep.assign(rows.begin() + 2, rows.end() - 1);
    std::vector<TradeoffPoint> pts;
    for (const WhatifRow& w : st.sweep)
      pts.push_back({w.value.step_s, w.value.energy_per_token_j});
    st.pareto = paretoFront(pts);
  }
  st.setting = r.setting;
  st.current = rows.back();
  st.notes = r.projection.notes;
  state_ = std::move(st);
  error_.clear();
  if (r.calibration) configureSliders();
  status_->setText(tr("%1: %2 whole iterations, %3 tokens per step")
                       .arg(QString::fromStdString(run_->info().name))
                       .arg(r.projection.steps)
                       .arg(number(r.projection.tokens_per_step, 0)));
  QStringList notes;
  for (const std::string& n : state_->notes)
    notes << tr("Note: %1").arg(QString::fromStdString(n));
  notes_->setText(notes.join(QLatin1Char('\n')));
  fillTable();
  fillChart();
  updateOpenButton();
  emit projectionReady();
}

void WhatifPanel::failed(const QString& message) {
  error_ = message;
  state_.reset();
  status_->setText(message);
  notes_->clear();
  fillTable();
  fillChart();
  updateOpenButton();
  emit projectionFailed(message);
}

void WhatifPanel::updateOpenButton() {
  // The setting shown (not one still being projected), one file at a time.
  openB_->setEnabled(state_.has_value() && cal_ && !job_->busy() && !writeJob_->busy());
}

void WhatifPanel::setSaveProjectionEnabled(bool on) {
  save_->setEnabled(on);
}

void WhatifPanel::openAsB() {
  if (!run_ || !cal_ || !state_) return;
  if (!tempDir_) tempDir_ = std::make_unique<QTemporaryDir>();
  if (!tempDir_->isValid()) {
    status_->setText(tr("Cannot create a temporary folder: %1").arg(tempDir_->errorString()));
    return;
  }
  const WhatifSetting s = state_->setting;
  const QString path = tempDir_->filePath(QStringLiteral("projected-%1.h5").arg(++written_));
  status_->setText(tr("Writing the projected run of %1…").arg(settingText(state_->current)));
  writeJob_->start(
      [run = run_, cal = cal_, s, out = path.toStdString()](const BackgroundJob::Context& ctx) {
        writeProjectedRun(*run, *cal, s, out, Progress([&ctx](double f, std::string_view) {
          ctx.progress(f);
          return !ctx.cancelled();
        }));
      },
      [this, path] {
        status_->setText(
            tr("Projected run written to %1 and compared as B; it is temporary: Save Projection "
               "As… keeps it")
                .arg(path));
        emit openRunRequested(path);
      });
}

void WhatifPanel::configureSliders() {
  const WhatifRow& m = state_->measured;
  limitW_ = m.power_limit_w > 0 && m.power_limit_w < 1e5 ? m.power_limit_w : kNaN;
  inletC_ = std::isfinite(m.inlet_temp_c) ? m.inlet_temp_c : kNaN;
  const QSignalBlocker blockPower(power_), blockInlet(inlet_);
  if (std::isfinite(limitW_)) {
    const int top = static_cast<int>(std::lround(limitW_));
    power_->setRange(static_cast<int>(std::lround(0.5 * limitW_)), top);
    power_->setValue(top);
  }
  if (std::isfinite(inletC_)) {
    // 15 to 45 C, widened to hold the calibrated inlet (within -20 to 80 C, as the CLI's).
    inletTick_ = static_cast<int>(std::lround(std::clamp(inletC_, -20.0, 80.0) * 10));
    inlet_->setRange(std::min(150, inletTick_), std::max(450, inletTick_));
    inlet_->setValue(inletTick_);
  }
  power_->setEnabled(std::isfinite(limitW_));
  inlet_->setEnabled(std::isfinite(inletC_));
  updateSliderLabels();
}

void WhatifPanel::updateSliderLabels() {
  if (!std::isfinite(limitW_)) {
    powerValue_->setText(cal_ ? tr("no limit recorded") : QStringLiteral("—"));
  } else if (power_->value() == power_->maximum()) {
    powerValue_->setText(tr("%1 W (measured)").arg(number(limitW_, 0)));
  } else {
    powerValue_->setText(
        tr("%1 W (%2 % of %3 W)")
            .arg(power_->value())
            .arg(number(100.0 * power_->value() / limitW_, 0), number(limitW_, 0)));
  }
  if (!std::isfinite(inletC_))
    inletValue_->setText(cal_ ? tr("not calibrated") : QStringLiteral("—"));
  else if (inlet_->value() == inletTick_)
    inletValue_->setText(tr("%1 °C (calibrated)").arg(number(inletC_, 1)));
  else
    inletValue_->setText(tr("%1 °C").arg(number(inlet_->value() / 10.0, 1)));
}

void WhatifPanel::fillTable() {
  table_->clearContents();
  const QString tips[] = {tr("The run as recorded"),
                          tr("The calibrated model replaying the run at its own setting: how far "
                             "the model is from the measurement"),
                          tr("The calibrated model at the sliders' setting")};
  const QString names[] = {tr("measured"), tr("model"), tr("projected")};
  const WhatifRow* cols[] = {state_ ? &state_->measured : nullptr,
                             state_ ? &state_->model : nullptr,
                             state_ ? &state_->current : nullptr};
  for (int c = 0; c < 3; ++c) {
    // Three short lines: a narrow dock shows the three columns whole.
    auto* h = new QTableWidgetItem(cols[c] ? QStringLiteral("%1\n%2 W\n%3 °C")
                                                 .arg(names[c], number(cols[c]->power_limit_w, 0),
                                                      number(cols[c]->inlet_temp_c, 1))
                                           : names[c]);
    h->setToolTip(tips[c]);
    table_->setHorizontalHeaderItem(c, h);
  }
  if (!state_) return;
  for (int c = 0; c < 3; ++c) {
    const WhatifOutcome &v = cols[c]->value, &u = cols[c]->uncertainty;
    const struct {
      double value, sd, scale;
      int digits;
    } cells[RowCount] = {{v.step_s, u.step_s, 1, 3},
                         {v.tokens_per_s, u.tokens_per_s, 1, 0},
                         {v.energy_per_token_j, u.energy_per_token_j, 1, 4},
                         {v.peak_temp_c, u.peak_temp_c, 1, 1},
                         {v.throttled_fraction, u.throttled_fraction, 100, 0}};
    for (int r = 0; r < RowCount; ++r) {
      const auto& x = cells[r];
      // The uncertainty on a line of its own under the value (narrow columns).
      auto* item =
          new QTableWidgetItem(withUncertainty(x.value * x.scale, x.sd * x.scale, x.digits)
                                   .replace(QStringLiteral(" ± "), QStringLiteral("\n± ")));
      item->setData(Qt::UserRole, x.value);  // the exact value (NaN: unknown)
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (!std::isfinite(x.value)) item->setToolTip(tr("unknown"));
      table_->setItem(r, c, item);
    }
  }
}

void WhatifPanel::fillChart() {
  QChart* old = chartView_->chart();
  const QPalette pal = palette();
  QChart* chart =
      state_ ? makeWhatifSweepChart(state_->sweep, state_->pareto, state_->measured,
                                    state_->current, state_->sweepInlet.value_or(inletC_), pal)
             : makeWhatifSweepChart({}, {}, WhatifRow{}, WhatifRow{}, kNaN, pal);
  if (!state_) chart->setTitle(run_ ? tr("No projection yet") : tr("No run"));
  legend_->setText(whatifChartLegend(pal));
  connectToolTips(scatterOf(chart, "sweepPoints"), scatterOf(chart, "pareto"),
                  scatterOf(chart, "measured"), scatterOf(chart, "current"));
  chartView_->setChart(chart);
  if (old) old->deleteLater();
}

// Tooltips: the setting and its values.
void WhatifPanel::connectToolTips(QScatterSeries* points, QScatterSeries* pareto,
                                  QScatterSeries* meas, QScatterSeries* cur) {
  auto tip = [this](QScatterSeries* s, auto row) {
    connect(s, &QScatterSeries::hovered, this, [this, row](const QPointF& p, bool on) {
      const std::optional<std::pair<WhatifRow, QString>> r = state_ ? row(p) : std::nullopt;
      if (on && r)
        QToolTip::showText(QCursor::pos(), rowToolTip(r->first, r->second), chartView_);
      else
        QToolTip::hideText();
    });
  };
  auto sweepRow = [this](const QPointF& p) -> std::optional<std::pair<WhatifRow, QString>> {
    for (size_t i = 0; i < state_->sweep.size(); ++i)
      if (finitePoint(state_->sweep[i]) && point(state_->sweep[i]) == p) {
        const bool onFront =
            std::find(state_->pareto.begin(), state_->pareto.end(), i) != state_->pareto.end();
        return std::pair{state_->sweep[i],
                         onFront ? tr("projected, on the Pareto front") : tr("projected")};
      }
    return std::nullopt;
  };
  tip(points, sweepRow);
  tip(pareto, sweepRow);
  tip(meas, [this](const QPointF&) {
    return std::optional{std::pair{state_->measured, tr("measured")}};
  });
  tip(cur, [this](const QPointF&) {
    return std::optional{std::pair{state_->current, tr("this setting (projected)")}};
  });
}

}  // namespace wl
