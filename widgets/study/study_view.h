// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The study view: many runs compared at once (docs/compare.md, "In the GUI"). A tool bar to add
// runs (files or a folder) with progress and cancel; a filter bar (the `--filter` syntax of
// `wattline compare`), a baseline chooser, a normalization chooser (none / per GPU / per token /
// per iteration) and what the metric cells show (value, delta, delta %, rank); the comparison table
// (StudyTableModel, sortable by header click); and a figures area with the study charts
// (study_charts.h) of the runs the table shows, in its order.
//
// Runs load off the UI thread through loadStudy() (summary cache, else analyzeRun()); each run
// appears as soon as it is loaded, and Cancel keeps the runs loaded so far. Double-clicking a row
// emits runActivated() with the run's file (the main window opens it in the timeline).

#include <QStringList>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

#include "analysis/study/study.h"
#include "widgets/background_job.h"
#include "widgets/charts/study_charts.h"
#include "widgets/study/study_table_model.h"

class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;

namespace wl {

class StudyView : public QWidget {
  Q_OBJECT
 public:
  explicit StudyView(QWidget* parent = nullptr);
  ~StudyView() override;

  // Adds run files and folders (searched recursively for *.h5); runs already in the study are
  // skipped. Loading starts at once, off the UI thread; loadingFinished() tells when it is done.
  void addRuns(const QStringList& paths);
  // Removes every run.
  void clear();
  // Stops the loading under way; the runs loaded so far stay.
  void cancelLoading();
  // Makes the run that `name` names (label, run name, file name or path) the baseline of the
  // deltas; an empty name removes the baseline. Returns false (and says why in the status line)
  // when no run or several match.
  bool setBaseline(const QString& name);
  QString baseline() const;  // the baseline's label, or empty
  void setNormalization(Normalization n);
  // What "per GPU" and mean power are per (table and power bars): device or package.
  void setPer(PerUnit per);
  void setFilter(const QString& filter);  // the --filter syntax; a bad filter shows its error
  void setDisplayMode(StudyTableModel::DisplayMode m);
  // Which chart the figures area shows, and its options.
  void setChart(StudyChart chart);
  void setChartOptions(const StudyChartOptions& options);

  const Study& study() const { return *study_; }
  StudyTableModel* tableModel() const { return model_; }
  QTableView* tableView() const { return table_; }
  // The chart on screen (owned by the view's QChartView).
  QChart* chart() const;
  StudyChart currentChart() const;
  bool busy() const { return loading_; }
  QString statusText() const;
  // The options loadStudy() gets (cache location, threads, analysis options).
  void setLoadOptions(const StudyLoadOptions& options) { loadOptions_ = options; }

 signals:
  void runActivated(const QString& path);
  void loadingStarted();
  void loadingFinished();
  void loadFailed(const QString& message);
  void baselineChanged(const QString& label);

 private:
  struct Pending;
  void buildLoadingBar();
  void buildFilterBar();
  void buildTable();
  QWidget* buildFigures();
  void startLoading(const QStringList& paths);
  void takeLoaded();
  void loadDone(const QString& error, bool cancelled);
  void studyChanged();
  void refreshBaselines();
  void refreshChart();
  void setStatus(const QString& text, bool error = false);

  std::shared_ptr<Study> study_;
  StudyLoadOptions loadOptions_;
  std::shared_ptr<Pending> pending_;
  QStringList queued_;  // added while a load was under way: loaded next
  // The runs of the load under way start at study_->runs[batchStart_]; batchIndex_ holds each
  // one's place in the load's file order (runs arrive in the order they finish).
  size_t batchStart_ = 0;
  std::vector<size_t> batchIndex_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  BackgroundJob* job_ = new BackgroundJob(this);
  bool loading_ = false;

  StudyTableModel* model_;
  QTableView* table_;
  QPushButton* addFiles_;
  QPushButton* addFolder_;
  QPushButton* cancelButton_;
  QProgressBar* progress_;
  QLabel* status_;
  QLineEdit* filter_;
  QComboBox* baseline_;
  QComboBox* normalization_;
  QComboBox* per_;
  QComboBox* display_;
  QComboBox* chartPicker_;
  QComboBox* heatmapMetric_;
  QComboBox* categoryOrder_;
  QComboBox* scaleMetric_;
  QChartView* chartView_;
  QTimer* refresh_;                  // takes loaded runs into the table while loading
  QTimer* chartTimer_;               // rebuilds the chart once after a burst of table changes
  ThroughputEnergyScatter scatter_;  // of the Pareto chart on screen, for its tooltips
  StudyChartOptions chartOptions_;
};

}  // namespace wl
