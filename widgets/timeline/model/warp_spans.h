// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Drawing a run through a time warp (a comparison's run B on A's clock, compare/time_warp.h):
// the display is cut at the warp's knots into spans, each drawn with its own linear mapping of
// the run's clock, so the geometry builders (which take one linear TimeMapping) draw warped
// tracks unchanged. Pure, tested in tests/timeline/warp_spans_test.cpp.

#include <vector>

#include "analysis/compare/time_warp.h"
#include "widgets/timeline/model/time_mapping.h"

namespace wl {

struct WarpSpan {
  double x0 = 0, x1 = 0;  // the span's pixels on the display (fractional; clip to them)
  int px0 = 0;            // first whole pixel column of `local`
  TimeMapping local;      // the run's clock over whole pixels [px0, px0 + local.width)
};

// The spans covering the display. Pieces narrower than minPx are merged with their neighbours
// (drawn with the linear map from the merged start to its end: at most minPx off), so a zoomed
// out view of many iterations costs at most width / minPx spans. A shift gives one span.
std::vector<WarpSpan> warpSpans(const TimeWarp& warp, const TimeMapping& display,
                                double minPx = 2.0);

// The linear mapping of the run's clock that agrees with the warp in the piece under display
// pixel x, extended over the display's width.
TimeMapping warpMappingAt(const TimeWarp& warp, const TimeMapping& display, double x);

}  // namespace wl
