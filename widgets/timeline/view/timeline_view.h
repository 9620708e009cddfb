// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The timeline: rows of counters, kernels, steps and heatmaps on one time axis that follows the
// shared Viewport. Painting replays cached geometry from TimelineRenderer and asks the TileStore
// for missing tiles; it never waits for data.
//
// Navigation follows Perfetto and Tracy: W/S zoom, A/D pan, Ctrl+wheel zooms at the cursor, the
// wheel scrolls rows, Shift+wheel pans, Shift+drag or middle-drag pans, a left drag selects a time
// range, F fits the selection (or everything), Esc clears it. Clicking a kernel selects it;
// double-clicking zooms to it; clicking a group header folds it. N / Shift+N centre the next /
// previous throttle interval; a click in the reason heatmap zooms to the interval under it.

#include <QAbstractScrollArea>

#include <optional>
#include <set>

#include "widgets/timeline/render/frame.h"
#include "widgets/timeline/render/note_bands.h"
#include "widgets/timeline/render/timeline_renderer.h"
#include "widgets/timeline/view/viewport.h"

namespace wl {

struct KernelRef {
  int run = -1;
  int track = -1;
  long event = -1;  // index within the track
  KernelEvent data;
  bool valid() const { return run >= 0 && track >= 0 && event >= 0; }
};

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT
 public:
  TimelineView(Viewport* viewport, TileStore* store, QWidget* parent = nullptr);

  void setRows(std::vector<TrackRow> rows);
  const std::vector<TrackRow>& rows() const { return rows_; }
  TimelineRenderer& renderer() { return renderer_; }
  void setTheme(const Theme& theme);
  void setYMode(YMode mode);

  static constexpr int kLabelWidth = static_cast<int>(kScreenLabelWidth);
  // The time <-> x mapping of the content area (x = 0 at the content's left edge).
  TimeMapping mapping() const;

  // Notes drawn as bands over their rows (note_bands.h), and in their tooltips.
  void setNotes(std::vector<NoteMark> notes);
  const std::vector<NoteMark>& notes() const { return notes_; }

  KernelRef selectedKernel() const { return selected_; }
  void selectKernel(const KernelRef& k);
  // Scrolls so that the row of `track` is visible and centres the view on the event.
  void revealKernel(const KernelRef& k);
  // Scrolls so that the first row of a GPU is at the top.
  void scrollToGpu(int run, int gpu);
  bool isCollapsed(const QString& groupKey) const { return collapsed_.count(groupKey) > 0; }
  void setCollapsed(const QString& groupKey, bool collapsed);

  // N / Shift+N: centres the next (previous) throttle interval, with its context, of the GPU
  // under the cursor, else of the selected kernel's GPU, else of any GPU; returns false when
  // there is none (or the throttle analysis has not finished), and then says why (notice()).
  bool jumpToThrottle(bool forward);

  // Row under a point of the viewport widget (nullptr if none).
  const TrackRow* rowAt(QPoint pos, QRectF* rowRect = nullptr) const;
  // Text of the tooltip at a point (for tests and the hover tooltip).
  QString tooltipAt(QPoint pos);

 signals:
  void kernelSelected(const wl::KernelRef& kernel);
  void hoverTimeChanged(std::optional<int64_t> t);
  void rowsContextMenu(const wl::TrackRow& row, QPoint globalPos);
  // A throttle interval was jumped to (N / Shift+N) or clicked in the reason heatmap.
  void throttleIntervalActivated(int run, int gpu, qint64 start, qint64 end);
  // A key did nothing, and this says why (for the status bar): N over a GPU without throttle
  // intervals, N past the last one.
  void notice(const QString& text);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  bool viewportEvent(QEvent* event) override;

 private:
  // The frame at a scroll position (frame.h's planFrame, screen style).
  FrameLayout frame(double scroll) const;
  void relayout();
  double pinnedHeight() const;
  std::optional<KernelRef> kernelAt(QPoint pos);
  double contentX(QPoint pos) const { return pos.x() - kLabelWidth; }
  TileFetch uiFetch() const;
  // Tooltips per kind of row at content x `cx`.
  QString counterTip(const CounterRow& row, const TimeMapping& map, double cx);
  QString kernelTip(const KernelsRow& row, QPoint pos, const TimeMapping& map, double cx);
  QString stepsTip(const StepsRow& row, int64_t t);
  QString heatmapTip(const HeatmapRow& row, const TimeMapping& map, double cx, double yFraction);
  QString differenceTip(const TrackRow& row, const DifferenceRow& d, double cx);
  QString throttleStripTip(const ThrottleStripRow& row, const TimeMapping& map, double cx);
  QString throttleHeatmapTip(const ThrottleHeatmapRow& row, const TimeMapping& map, double cx,
                             double yFraction);
  // The throttle interval of a GPU over content column cx (at its time, else any in the column).
  const ThrottleInterval* throttleIntervalNear(int run, int gpu, const TimeMapping& map,
                                               double cx) const;
  // The GPU a point of the viewport stands for (its row's GPU; a heatmap's GPU row), or -1.
  int gpuAt(QPoint pos, int* run) const;
  // Centres an interval with its context and brings its GPU's rows into view.
  void showThrottleInterval(int run, int gpu, const ThrottleInterval& iv);
  // Says in the status bar whether the interval lies in the GPU's rank's traced time.
  void noteTraceCoverage(int run, int gpu, const ThrottleInterval& iv);

  Viewport* vp_;
  TileStore* store_;
  TimelineRenderer renderer_;
  std::vector<TrackRow> rows_;
  std::vector<size_t> visibleRows_;  // indices into rows_ not hidden by a folded group
  std::set<QString> collapsed_;
  double totalHeight_ = 0;
  double pinnedHeight_ = 0;

  KernelRef selected_;
  std::vector<NoteMark> notes_;
  std::optional<double> hoverX_;
  std::optional<QPoint> hoverPos_;
  // The last interval jumped to, and the range it was shown in: N continues from it while the
  // view has not moved, else from the view's centre.
  struct LastJump {
    int64_t start = 0;
    TimeRange shown{};
  };
  std::optional<LastJump> lastJump_;
  enum class Drag { None, Maybe, Select, Pan } drag_ = Drag::None;
  QPoint pressPos_;
  int64_t pressTime_ = 0;
  int64_t panAnchorStart_ = 0;
};

}  // namespace wl
