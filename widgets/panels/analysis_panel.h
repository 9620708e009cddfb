// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The analysis panel: the report of analyzeRun() (the same numbers as `wattline analyze --json`)
// for a run, or for the timeline's selected time range, GPUs and ranks. Meant to live in a
// QDockWidget. Tabs: run summary, a sortable per-GPU table, the throttle intervals, the kernel
// tables (HTA breakdown per rank, top kernels), and Qt Charts charts.
//
// The analysis runs off the UI thread (a BackgroundJob). A new run, range or selection cancels the
// analysis under way; range and selection changes are debounced so that dragging a selection
// starts one analysis, not one per mouse move. Clicking a GPU row emits gpuActivated(); clicking
// a throttle interval emits rangeActivated() with its span (the main window zooms to it).

#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/run_analysis.h"
#include "loaders/format/run_file.h"
#include "widgets/background_job.h"

class QChartView;
class QComboBox;
class QLabel;
class QProgressBar;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTimer;

namespace wl {

class AnalysisPanel : public QWidget {
  Q_OBJECT
 public:
  // Table columns. Every cell holds its exact value in Qt::UserRole (what sorting uses) and its
  // formatted text in Qt::DisplayRole.
  enum GpuColumn {
    GpuId,
    GpuNode,
    GpuSlot,
    GpuEnergyKj,
    GpuPowerMean,
    GpuPowerMax,
    GpuTempMean,
    GpuTempMax,
    GpuClockMean,
    GpuThrottledPct,
    GpuDeficit,
    GpuPeakToAverage,
    GpuExcursions,
    GpuColumnCount
  };
  enum ThrottleColumn {
    ThrGpu,
    ThrStartS,
    ThrDurationS,
    ThrCause,
    ThrMinClock,
    ThrMeanClock,
    ThrColumnCount
  };
  enum RankColumn {
    RankId,
    RankGpu,
    RankKernels,
    RankSpanMs,
    RankIdleMs,
    RankComputeMs,
    RankNonComputeMs,
    RankCommMs,
    RankExposedCommMs,
    RankMemoryMs,
    RankOverlapPct,
    RankColumnCount
  };
  enum KernelColumn {
    KerName,
    KerClass,
    KerCount,
    KerTotalMs,
    KerMeanUs,
    KerMinUs,
    KerMaxUs,
    KerColumnCount
  };
  enum LedgerColumn {
    LedRank,
    LedStep,
    LedCompute,
    LedCommunication,
    LedIdle,
    LedOptimizer,
    LedTotal,
    LedForward,
    LedBackward,
    LedColumnCount
  };
  // Extra roles of a throttle row's first cell: the interval's start and end (ns).
  enum { StartRole = Qt::UserRole + 1, EndRole };

  explicit AnalysisPanel(QWidget* parent = nullptr);
  ~AnalysisPanel() override;

  // The run to analyse (nullptr clears the panel); analyses the whole run at once.
  void setRun(std::shared_ptr<const RunFile> run);
  // Scopes the analysis to [t0, t1) (ns on the run clock) after a short debounce.
  void setRange(int64_t t0, int64_t t1);
  // Back to the whole run.
  void clearRange();
  // GPUs and ranks to cover; empty vectors mean all.
  void setSelection(std::vector<int> gpus, std::vector<int> ranks);
  void setOptions(const AnalysisOptions& options);

  // The latest finished analysis (nullptr before the first one).
  const RunAnalysis* analysis() const { return result_.get(); }
  bool busy() const { return running_; }
  std::optional<TimeRange> range() const { return range_; }

  // Selects (and scrolls to) the throttling table's row of GPU `gpu`'s interval starting at
  // `start` (or the one covering it), without emitting rangeActivated; false if there is none.
  bool selectThrottleInterval(int gpu, int64_t start);
  // The source row of the selected throttle interval, or -1.
  int selectedThrottleRow() const;

  QStandardItemModel* gpuTable() const { return gpuModel_; }
  QStandardItemModel* throttleTable() const { return throttleModel_; }
  QStandardItemModel* rankTable() const { return rankModel_; }
  QStandardItemModel* kernelTable() const { return kernelModel_; }

 signals:
  void gpuActivated(int gpu);
  void rangeActivated(int64_t t0, int64_t t1);
  void analysisStarted();
  void analysisFinished();
  void analysisFailed(const QString& message);

 private:
  void schedule();
  void start();
  void finished(std::shared_ptr<const RunAnalysis> analysis);
  void failed(const QString& message);
  void fill();
  void showChart();

  std::shared_ptr<const RunFile> run_;
  std::optional<TimeRange> range_;
  std::vector<int> gpus_, ranks_;
  AnalysisOptions options_;
  std::shared_ptr<const RunAnalysis> result_;
  BackgroundJob* job_ = new BackgroundJob(this);
  bool running_ = false;

  QTimer* debounce_;
  QLabel* status_;
  QProgressBar* progress_;
  QTabWidget* tabs_;
  QTextBrowser* summary_;
  QStandardItemModel* gpuModel_;
  QStandardItemModel* throttleModel_;
  QStandardItemModel* rankModel_;
  QStandardItemModel* kernelModel_;
  QStandardItemModel* ledgerModel_;  // the energy ledger (analysis/energy_ledger.h)
  QSortFilterProxyModel* gpuProxy_;
  QSortFilterProxyModel* throttleProxy_;
  QTableView* gpuView_;
  QTableView* throttleView_;
  QComboBox* chartPicker_;
  QChartView* chartView_;
};

}  // namespace wl
