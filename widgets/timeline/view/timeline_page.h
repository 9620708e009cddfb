// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The timeline page: overview strip, time ruler, the tracks and the find bar, all following one
// Viewport and drawing from one TileStore.

#include <QWidget>

#include <memory>
#include <vector>

#include "widgets/background_job.h"
#include "widgets/timeline/view/find_bar.h"
#include "widgets/timeline/view/legend_bar.h"
#include "widgets/timeline/view/overview_strip.h"
#include "widgets/timeline/view/time_ruler.h"
#include "widgets/timeline/view/timeline_view.h"

namespace wl {

class TimelinePage : public QWidget {
  Q_OBJECT
 public:
  explicit TimelinePage(QWidget* parent = nullptr);

  Viewport* viewport() const { return viewport_; }
  TileStore* store() const { return store_; }
  TimelineView* view() const { return view_; }
  FindBar* findBar() const { return find_; }
  TimeRuler* ruler() const { return ruler_; }
  OverviewStrip* overview() const { return overview_; }

  // Adds a run; returns its index in the store. The view's bounds become the union of all runs.
  int addRun(const std::shared_ptr<const RunFile>& run);
  void clearRuns();
  // Recomputes the viewport's bounds: the union of every run's span on the display clock (each
  // run shifted by its alignment offset).
  void updateBounds();
  void setRows(std::vector<TrackRow> rows) { view_->setRows(std::move(rows)); }
  void setTheme(const Theme& theme);
  // View > Throttle Bands Behind Tracks: the renderer's tint and the legend's entries.
  void setThrottleTint(bool on);

 signals:
  // Tiles waiting to be read (0 when the view is complete); polled while the store is busy.
  void loadingChanged(int pendingTiles);
  // A read of run data failed (a tile, the overview, a kernel's details): the message names the
  // file, what and where; the span is hatched on the timeline (TileStore::failures()).
  void readFailed(const QString& message);

 private:
  void computeThrottle(int index, const std::shared_ptr<const RunFile>& run);
  int lastPending_ = 0;
  std::vector<BackgroundJob*> throttleJobs_;  // per run index: its throttle intervals
  Viewport* viewport_;
  TileStore* store_;
  OverviewStrip* overview_;
  TimeRuler* ruler_;
  TimelineView* view_;
  FindBar* find_;
  LegendBar* legend_;
};

}  // namespace wl
