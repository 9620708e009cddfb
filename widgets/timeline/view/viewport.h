// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one viewport every view follows: the visible time range, the selected range, and the zoom
// history (back / forward), within the bounds of the open runs. Views never keep their own range;
// they read it here and repaint on rangeChanged().
//
// Continuous gestures (wheel zoom, drag pan, held W/A/S/D) are recorded in the history once per
// gesture: a range is pushed when the previous push is older than kHistoryCoalesceMs.

#include <QElapsedTimer>
#include <QObject>

#include <cstdint>
#include <optional>
#include <vector>

#include "loaders/core/time_range.h"

namespace wl {

class Viewport : public QObject {
  Q_OBJECT
 public:
  static constexpr int64_t kMinSpanNs = 100;      // the deepest zoom: 100 ns across the view
  static constexpr int kHistoryCoalesceMs = 600;  // one history entry per gesture
  static constexpr size_t kHistoryLimit = 200;

  explicit Viewport(QObject* parent = nullptr);

  // The whole extent of the open runs; also shows all of it and clears the history.
  void setBounds(TimeRange bounds);
  TimeRange bounds() const { return bounds_; }
  TimeRange range() const { return range_; }

  // Shows [start, end) (clamped to the bounds, at least kMinSpanNs wide).
  void setRange(TimeRange r);
  // Zooms by `factor` (< 1 zooms in) keeping `anchor` at the same screen position.
  void zoom(double factor, int64_t anchor);
  // Moves the view by `delta` ns (clamped at the bounds).
  void pan(int64_t delta);
  void fitAll();

  std::optional<TimeRange> selection() const { return selection_; }
  void setSelection(std::optional<TimeRange> s);
  // Shows the selection with a small margin; does nothing without one.
  void fitSelection();

  bool canGoBack() const { return !back_.empty(); }
  bool canGoForward() const { return !forward_.empty(); }
  void goBack();
  void goForward();

 signals:
  void rangeChanged(wl::TimeRange range);
  void selectionChanged(std::optional<wl::TimeRange> selection);
  void boundsChanged(wl::TimeRange bounds);
  void historyChanged();

 private:
  TimeRange clamp(TimeRange r) const;
  void apply(TimeRange r, bool coalesce);

  TimeRange bounds_{0, 1};
  TimeRange range_{0, 1};
  std::optional<TimeRange> selection_;
  std::vector<TimeRange> back_, forward_;
  QElapsedTimer lastPush_;
};

}  // namespace wl

Q_DECLARE_METATYPE(wl::TimeRange)
