// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The What-if panel (docs/user-guide.md#what-if-another-power-limit-or-inlet-temperature): what the
// open run would do at another power limit or inlet temperature, projected with the run's own
// calibration (analysis/calibration.h, analysis/whatif.h; the same numbers as `wattline whatif`).
// Two sliders choose the setting; a table shows the measured run, the model at the measured setting
// and the projection side by side with their uncertainties; a chart shows a power-limit sweep (step
// time against energy per token) with the measured point, the Pareto front
// (analysis/whatif_pareto.h) and the chosen setting (built by widgets/charts/whatif_chart.h).
//
// Calibration and projection run off the UI thread (one BackgroundJob): the run is calibrated
// once, when the panel is first shown with it, and reused; a moved slider starts a new projection
// after a short pause, which supersedes the one under way (its result is dropped). A run that
// cannot be calibrated shows the one-line reason in the panel.
//
// "Open as B" writes the projected run of the sliders' setting (analysis/projected_run.h) to a
// temporary file off the UI thread and asks for it to be opened (openRunRequested): the main
// window opens it beside the measured run, which the Compare dock compares.

#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/calibration.h"
#include "analysis/whatif.h"
#include "loaders/format/run_file.h"
#include "widgets/background_job.h"

class QChartView;
class QTemporaryDir;
class QLabel;
class QProgressBar;
class QScatterSeries;
class QPushButton;
class QSlider;
class QTableWidget;
class QTimer;

namespace wl {

// What the panel shows (exposed for tests).
struct WhatifPanelState {
  std::shared_ptr<const Calibration> calibration;
  WhatifRow measured;     // the run itself
  WhatifRow model;        // the model at the measured setting
  WhatifSetting setting;  // the sliders' setting (unset: the measured limit, the calibrated inlet)
  WhatifRow current;      // its projection
  std::optional<double> sweepInlet;  // the inlet the sweep was projected at (unset: calibrated)
  std::vector<WhatifRow> sweep;      // projected rows of the power-limit sweep, by limit
  std::vector<size_t> pareto;        // indices into sweep on the Pareto front
  std::vector<std::string> notes;
};

class WhatifPanel : public QWidget {
  Q_OBJECT
 public:
  // Rows of the table (its columns: measured, model at the measured setting, projected).
  enum Row { StepRow, TokensRow, EnergyRow, PeakTempRow, ThrottledRow, RowCount };

  explicit WhatifPanel(QWidget* parent = nullptr);
  ~WhatifPanel() override;

  // The run to project (nullptr clears the panel). It is calibrated when the panel is visible.
  void setRun(std::shared_ptr<const RunFile> run);
  std::shared_ptr<const RunFile> run() const { return run_; }

  // Move the sliders (clamped to their range); the projection follows after the pause.
  void setPowerLimit(double watts);
  void setInletTemp(double celsius);
  // The setting the sliders choose now (unset: the measured limit, the calibrated inlet).
  WhatifSetting sliderSetting() const;
  // Starts the projection of the sliders' setting now instead of after the pause.
  void projectNow();
  // Writes the projected run of the shown setting to a temporary file (off the UI thread), then
  // emits openRunRequested with its path.
  void openAsB();

  // The latest finished projection (nullptr before the first one, or after a failure).
  const WhatifPanelState* state() const { return state_ ? &*state_ : nullptr; }
  bool busy() const { return job_->busy(); }
  // The failure shown in the panel (empty when none).
  QString error() const { return error_; }

  QSlider* powerSlider() const { return power_; }
  QSlider* inletSlider() const { return inlet_; }
  QTableWidget* table() const { return table_; }
  QChartView* chartView() const { return chartView_; }
  QLabel* statusLabel() const { return status_; }
  QPushButton* openAsBButton() const { return openB_; }
  // "Save Projection As…": asks the window to keep the projection compared as B
  // (saveProjectionRequested); the window enables it while B is one of this panel's files.
  QPushButton* saveProjectionButton() const { return save_; }
  void setSaveProjectionEnabled(bool on);

  // What one job of the panel returns (defined in the .cpp).
  struct JobResult;

 signals:
  void projectionReady();
  void projectionFailed(const QString& message);
  // A projected run was written to `path` (Open as B).
  void openRunRequested(const QString& path);
  // Save Projection As… was clicked.
  void saveProjectionRequested();

 protected:
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void makeControls();
  void startCalibration();
  void startProjection();
  void finished(JobResult result);
  void failed(const QString& message);
  void configureSliders();
  void updateSliderLabels();
  void fillTable();
  void fillChart();
  void connectToolTips(QScatterSeries* points, QScatterSeries* pareto, QScatterSeries* measured,
                       QScatterSeries* current);
  void updateOpenButton();

  std::shared_ptr<const RunFile> run_;
  bool pending_ = false;                    // a run waits for the panel to be shown
  std::shared_ptr<const Calibration> cal_;  // the run's, once calibrated
  std::optional<WhatifPanelState> state_;
  QString error_;
  double limitW_ = kNaN;     // the power slider's top: the run's power limit (NaN: none recorded)
  double inletC_ = kNaN;     // the calibrated inlet (the inlet slider's default)
  int inletTick_ = 0;        // its slider position (tenths of a degree)
  BackgroundJob* job_;       // calibration and projection
  BackgroundJob* writeJob_;  // Open as B's projected run
  std::unique_ptr<QTemporaryDir> tempDir_;  // where Open as B writes (removed with the panel)
  int written_ = 0;
  QTimer* debounce_;
  QLabel* caption_;
  QLabel* status_;
  QProgressBar* progress_;
  QSlider* power_;
  QSlider* inlet_;
  QLabel* powerValue_;
  QLabel* inletValue_;
  QTableWidget* table_;
  QChartView* chartView_;
  QLabel* legend_;  // what the chart's marks are
  QLabel* notes_;
  QPushButton* openB_;
  QPushButton* save_;
};

}  // namespace wl
