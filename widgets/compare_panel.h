// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Side-by-side comparison of two open runs: which run is A and which B, how B is aligned on A's
// clock (at the starts, at iteration k, at a chosen kernel of each, or by absolute time), how
// their GPUs pair up (by rank, chassis slot or index), which difference tracks (A - B) to show,
// and the deltas of the visible range (means of power, temperature and SM clock over the paired
// GPUs, energy, throttled fraction), computed by the analysis library off the UI thread.

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time_range.h"
#include "format/run_file.h"
#include "run_alignment.h"

class QCheckBox;
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
  int64_t offsetB = 0;  // display time = B's time + offsetB
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
  // The visible range (display clock): its deltas are recomputed after a short pause.
  void setVisibleRange(TimeRange display);
  QTableWidget* deltaTable() const { return table_; }
  void computeDeltasNow();

 signals:
  void settingsChanged();
  void deltasReady();

 private:
  void recompute();
  void startDeltas();
  void fillDeltas(const std::vector<CompareDelta>& d);

  std::vector<std::shared_ptr<const RunFile>> runs_;
  CompareSettings settings_;
  std::optional<int64_t> eventOffset_;
  TimeRange visible_;
  QComboBox *runA_, *runB_, *align_, *pairBy_;
  QSpinBox* step_;
  std::vector<std::pair<QCheckBox*, std::string>> metricBoxes_;
  QLabel* status_;
  QTableWidget* table_;
  QTimer* debounce_;
  QFutureWatcher<std::vector<CompareDelta>>* watcher_ = nullptr;
  bool updating_ = false;
};

}  // namespace wl
