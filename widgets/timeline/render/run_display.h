// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How each open run is displayed on the timeline, as plain values the renderer is given (never
// state of its paint passes): the run's alignment onto the display clock (a shift or a warp), what
// an overlay's legend calls it, and its throttle analysis (strips, reason heatmap, tooltips, and
// the bands behind counters). RunDisplays answers the time questions of every row: where a row's
// own clock sits for a display mapping, and a time on either clock.

#include <QString>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "analysis/compare/time_warp.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/throttle_strip.h"
#include "widgets/timeline/model/time_mapping.h"
#include "widgets/timeline/model/warp_spans.h"

namespace wl {

// A throttle interval the analysis found (busy, clock below its threshold) on a GPU: drawn as a
// strong band over the weak bands of the recorded reason bits.
struct ThrottleSpan {
  int64_t t0 = 0, t1 = 0;
  uint32_t reasons = 0;  // NVML bits (inferred causes mapped onto them)
  bool operator==(const ThrottleSpan&) const = default;
};

struct RunDisplay {
  // Display time = warp.toA(run time): a comparison's run B on A's clock, so that the same phase
  // of the same iteration lines up (compare/time_warp.h); a shift for a plain offset. A warp that
  // is not a shift is drawn piece by piece.
  TimeWarp warp;
  QString label;  // what an overlaid comparison's legend calls the run (e.g. "mbs4")
  // The analysis's throttle segments and intervals (nullptr until computed), and its intervals
  // per GPU as spans for the bands behind counters.
  std::shared_ptr<const RunThrottleView> throttle;
  std::vector<std::vector<ThrottleSpan>> throttleSpans;

  RunDisplay withWarp(TimeWarp w) && {
    warp = std::move(w);
    return std::move(*this);
  }
  RunDisplay withOffset(int64_t offsetNs) && {
    return std::move(*this).withWarp(TimeWarp::shift(offsetNs));
  }
  RunDisplay withLabel(QString l) && {
    label = std::move(l);
    return std::move(*this);
  }
  RunDisplay withThrottle(std::shared_ptr<const RunThrottleView> v) && {
    throttle = std::move(v);
    return std::move(*this);
  }
  RunDisplay withThrottleSpans(std::vector<std::vector<ThrottleSpan>> s) && {
    throttleSpans = std::move(s);
    return std::move(*this);
  }
};

class RunDisplays {
 public:
  // The run's display (the identity warp, no label, no analysis when none was set), a copy to
  // change with the with...() calls and hand back to TimelineRenderer::setRunDisplay.
  RunDisplay of(int run) const {
    auto it = runs_.find(run);
    return it == runs_.end() ? RunDisplay{} : it->second;
  }
  void set(int run, RunDisplay d) { runs_[run] = std::move(d); }

  const RunThrottleView* throttleView(int run) const {
    const RunDisplay* d = find(run);
    return d ? d->throttle.get() : nullptr;
  }
  std::shared_ptr<const RunThrottleView> sharedThrottleView(int run) const {
    const RunDisplay* d = find(run);
    return d ? d->throttle : nullptr;
  }
  const std::vector<std::vector<ThrottleSpan>>* throttleSpans(int run) const {
    const RunDisplay* d = find(run);
    return d && !d->throttleSpans.empty() ? &d->throttleSpans : nullptr;
  }
  QString runLabel(int run) const {
    const RunDisplay* d = find(run);
    return d ? d->label : QString();
  }
  // The run's warp (the identity when none was set).
  TimeWarp runWarp(int run) const {
    const RunDisplay* d = find(run);
    return d ? d->warp : TimeWarp{};
  }
  // The run's offset (for a warp, the one at display time 0 of its first knot).
  int64_t runOffset(int run) const {
    const RunDisplay* d = find(run);
    return d ? d->warp.offsetAtA(d->warp.knots().front().a_ns) : 0;
  }
  // True when the run is drawn through a warp that is not a shift.
  bool warped(int run) const {
    const RunDisplay* d = find(run);
    return d && !d->warp.isShift();
  }
  // A time of a run's own clock on the display clock, and back.
  int64_t toDisplay(int run, int64_t t) const {
    const RunDisplay* d = find(run);
    return d ? d->warp.toA(t) : t;
  }
  int64_t fromDisplay(int run, int64_t t) const {
    const RunDisplay* d = find(run);
    return d ? d->warp.toB(t) : t;
  }
  // The mapping of a row's own clock for a display mapping. For a warped run it is the linear
  // map of the warp's piece under pixel x (extended over the width): exact inside that piece,
  // which is what hit tests and tooltips at x need.
  TimeMapping rowMapping(const TrackRow& row, const TimeMapping& display) const {
    return rowMappingAt(row, display, display.width / 2);
  }
  TimeMapping rowMappingAt(const TrackRow& row, const TimeMapping& display, double x) const {
    const RunDisplay* d = find(row.run());
    if (!d) return display;
    if (d->warp.isShift()) {
      const int64_t off = runOffset(row.run());
      return TimeMapping{display.t0 - off, display.t1 - off, display.width};
    }
    return warpMappingAt(d->warp, display, x);
  }
  // The mapping a row's content is drawn with: its own clock, except differences, which mix two
  // runs and place each themselves, and rows of a warped run, drawn piece by piece (both take
  // the display clock).
  TimeMapping contentMapping(const TrackRow& row, const TimeMapping& display) const {
    if (row.kind() == RowKind::Difference || row.kind() == RowKind::Overlay ||
        (!row.isHeader() && warped(row.run())))
      return display;
    return rowMapping(row, display);
  }

 private:
  const RunDisplay* find(int run) const {
    auto it = runs_.find(run);
    return it == runs_.end() ? nullptr : &it->second;
  }
  std::map<int, RunDisplay> runs_;
};

}  // namespace wl
