// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The numbers of the timeline's selected range: per GPU the mean / min / max of every metric, its
// energy and its throttled fraction by reason; per rank the kernel time by class. They come from
// the analysis library (summarizeRange), so they equal `wattline analyze --range` on the same
// range. Computed off the UI thread after each selection change.

#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

#include "analysis/range_summary.h"
#include "loaders/core/time_range.h"
#include "loaders/format/run_file.h"
#include "widgets/background_job.h"

class QLabel;
class QTreeWidget;

namespace wl {

class SelectionSummaryView : public QWidget {
  Q_OBJECT
 public:
  explicit SelectionSummaryView(QWidget* parent = nullptr);
  ~SelectionSummaryView() override;

  void setRun(std::shared_ptr<const RunFile> run);
  // Summarizes [t0, t1) (debounced); nullopt clears the view.
  void setRange(std::optional<TimeRange> range);
  // The latest finished summary (nullptr before the first).
  const RangeSummary* summary() const { return summary_.get(); }
  QTreeWidget* tree() const { return tree_; }
  // Computes synchronously (tests).
  void summarizeNow();

 signals:
  void summaryReady();
  void gpuActivated(int gpu);

 private:
  void start();
  void fill();

  std::shared_ptr<const RunFile> run_;
  std::optional<TimeRange> range_;
  std::shared_ptr<const RangeSummary> summary_;
  QLabel* header_;
  QTreeWidget* tree_;
  QTimer* debounce_;
  BackgroundJob* job_ = new BackgroundJob(this);
  uint64_t generation_ = 0;
};

// Formatting shared by the view and its tests: a value with its unit ("312.4 W"), "—" for NaN.
QString summaryValueText(double v, const std::string& unit);

}  // namespace wl
