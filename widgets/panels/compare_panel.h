// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Side-by-side comparison of two open runs: which run is A and which B, how B is aligned on A's
// clock (at the starts, at iteration k, at a chosen kernel of each, or by absolute time), how
// their GPUs pair up (by rank, chassis slot or index), which difference tracks (A - B) to show,
// and the deltas of the visible range (means of power, temperature and SM clock over the paired
// GPUs, energy, throttled fraction), computed by the analysis library off the UI thread.

#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare/config_diff.h"
#include "analysis/compare/iteration_compare.h"
#include "analysis/compare/iteration_profile.h"
#include "analysis/compare/time_warp.h"
#include "analysis/run_alignment.h"
#include "loaders/core/time_range.h"
#include "loaders/format/run_file.h"
#include "widgets/background_job.h"

class QChart;
class QChartView;
class QCheckBox;
class QTabWidget;
class QComboBox;
class QLabel;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace wl {

struct CompareSettings {
  int runA = 0, runB = 1;  // indices of the open runs
  AlignMode align = AlignMode::Start;
  int64_t step = 0;     // iteration aligned, for AlignMode::Iteration
  int64_t offsetB = 0;  // display time = B's time + offsetB (for a warp: at A's first step)
  // B's time onto the display clock (A's): the iteration warp for AlignMode::Warp, else the shift
  // by offsetB. The timeline draws B through it.
  TimeWarp warp;
  PairBy pairBy = PairBy::Rank;
  std::vector<std::pair<int, int>> pairs;      // (GPU of A, GPU of B)
  std::vector<std::string> differenceMetrics;  // metric ids with a difference track
};

// The deltas of one range (exposed for tests).
struct CompareDelta {
  std::string label, unit;
  double a = kNaN, b = kNaN;
};
std::vector<CompareDelta> compareRange(const RunFile& a, const RunFile& b, const CompareSettings& s,
                                       TimeRange display);

class ComparePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePanel(QWidget* parent = nullptr);
  ~ComparePanel() override;

  // The open runs (comparison needs two or more).
  void setRuns(std::vector<std::shared_ptr<const RunFile>> runs);
  const CompareSettings& settings() const { return settings_; }
  bool active() const { return runs_.size() >= 2; }
  // Aligns at a kernel of each run (their starts coincide); switches the mode to Event.
  void alignAtEvents(int64_t startA, int64_t startB);
  void setAlignment(AlignMode mode, int64_t step = 0);
  void setPairBy(PairBy by);
  void swapRuns();
  // Chooses A and B among the open runs (indices into setRuns' list) and aligns them as a new
  // pair is aligned by default; false (nothing changes) when either is out of range or they are
  // the same run.
  bool setRunPair(int a, int b);
  // The A - B tracks (metric ids among power, temperature and SM clock; others are ignored).
  void setDifferenceMetrics(const std::vector<std::string>& ids);
  // True while B waits for the iteration warp (AlignMode::Warp, computed off the UI thread):
  // settingsChanged() follows with the warp.
  bool alignmentPending() const;
  // The visible range (display clock): its deltas are recomputed after a short pause.
  void setVisibleRange(TimeRange display);
  QTableWidget* deltaTable() const { return table_; }
  void computeDeltasNow();
  // The per-iteration table (steps both runs completed, then mean ± stddev), the quantity it
  // shows, and its computation (normally off the UI thread when the runs change).
  QTableWidget* iterationTable() const { return iterTable_; }
  QComboBox* iterationQuantity() const { return iterColumn_; }
  void computeIterationsNow();
  // The typical-iteration chart of the chosen GPU pair and metric.
  QChartView* profileView() const { return profileView_; }
  void computeProfilesNow();
  // The header naming what differs between the runs, with its warnings.
  QLabel* differencesLabel() const { return diffLabel_; }
  QTabWidget* tabs() const { return tabs_; }
  // The display range showing step `step` of both runs (A's window and B's through the
  // alignment); empty when the step is not in the table.
  TimeRange iterationDisplayRange(int64_t step) const;

 signals:
  void settingsChanged();
  void deltasReady();
  void iterationsReady();
  void profilesReady();
  // A row of the iteration table was clicked: show [t0, t1) of the display clock (both runs).
  void zoomRequested(qint64 t0, qint64 t1);

 private:
  void makeJobs();
  void recompute();
  void startDeltas();
  void fillDeltas(const std::vector<CompareDelta>& d);
  QWidget* makeIterationsTab();
  QWidget* makeProfileTab();
  void runsPairChanged();
  void fillIterations();
  void fillProfileChart();

  std::vector<std::shared_ptr<const RunFile>> runs_;
  CompareSettings settings_;
  std::optional<int64_t> eventOffset_;
  // The iteration warp of the current pair of runs, computed once per pair off the UI thread (it
  // reads both runs' kernels); until it is ready, B is aligned at the starts.
  struct WarpCache {
    const RunFile *a = nullptr, *b = nullptr;
    bool ready = false;
    std::optional<TimeWarp> warp;
    QString error;
  } warpCache_;
  void startWarp();
  TimeRange visible_;
  QComboBox *runA_, *runB_, *align_, *pairBy_;
  QSpinBox* step_;
  std::vector<std::pair<QCheckBox*, std::string>> metricBoxes_;
  QLabel* status_;
  QTableWidget* table_;
  QTimer* debounce_;
  // Work off the UI thread (widgets/background_job.h): the warp, the visible range's deltas, the
  // per-iteration table and the typical-iteration profiles.
  BackgroundJob* warpJob_ = nullptr;
  BackgroundJob* deltaJob_ = nullptr;
  bool updating_ = false;
  // The runs the iteration table and profiles were computed for.
  std::pair<int, int> computedPair_{-1, -1};
  std::vector<std::pair<int, int>> computedGpuPairs_;
  QLabel* diffLabel_;
  QTabWidget* tabs_;
  QComboBox* iterColumn_;
  QTableWidget* iterTable_;
  QLabel* iterStatus_;
  std::optional<IterationComparison> iterations_;
  BackgroundJob* iterJob_ = nullptr;
  QComboBox *profilePair_, *profileMetric_;
  QChartView* profileView_;
  std::optional<IterationProfiles> profiles_;
  BackgroundJob* profileJob_ = nullptr;
  RunDifferences differences_;
};

}  // namespace wl
