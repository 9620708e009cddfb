// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/model/warp_spans.h"

#include <algorithm>
#include <cmath>

namespace wl {
namespace {

// The run's time at display pixel x on the line through (a0, b0) and (a1, b1) (A's clock to B's).
int64_t lineAt(const TimeMapping& display, double x, const TimeWarp::Piece& pc) {
  const double a = static_cast<double>(display.t0 - pc.a0) + x * display.nsPerPx();
  const double slope = static_cast<double>(pc.b1 - pc.b0) / static_cast<double>(pc.a1 - pc.a0);
  return pc.b0 + static_cast<int64_t>(std::llround(a * slope));
}

}  // namespace

std::vector<WarpSpan> warpSpans(const TimeWarp& warp, const TimeMapping& display, double minPx) {
  std::vector<WarpSpan> out;
  if (display.span() <= 0 || display.width <= 0) return out;
  const std::vector<TimeWarp::Piece> pieces = warp.pieces(display.t0, display.t1);
  size_t i = 0;
  while (i < pieces.size()) {
    // Merge from piece i until the span is minPx wide (or the pieces run out).
    TimeWarp::Piece pc = pieces[i];
    while (display.x(pc.a1) - display.x(pc.a0) < minPx && i + 1 < pieces.size()) {
      ++i;
      pc.a1 = pieces[i].a1;
      pc.b1 = pieces[i].b1;
    }
    ++i;
    WarpSpan s;
    s.x0 = display.x(pc.a0);
    s.x1 = display.x(pc.a1);
    s.px0 = static_cast<int>(std::floor(s.x0));
    const int px1 = std::max(s.px0 + 1, static_cast<int>(std::ceil(s.x1)));
    s.local = TimeMapping{lineAt(display, s.px0, pc), lineAt(display, px1, pc),
                          static_cast<double>(px1 - s.px0)};
    if (s.local.t1 <= s.local.t0) s.local.t1 = s.local.t0 + 1;
    out.push_back(s);
  }
  return out;
}

TimeMapping warpMappingAt(const TimeWarp& warp, const TimeMapping& display, double x) {
  const int64_t a = display.t(std::clamp(x, 0.0, display.width));
  // The piece holding a: between the knots around it; slope 1 beyond the ends and for a shift.
  const auto& knots = warp.knots();
  auto next = std::upper_bound(knots.begin(), knots.end(), a,
                               [](int64_t v, const TimeWarp::Knot& k) { return v < k.a_ns; });
  TimeWarp::Piece pc{a, a + 1'000'000, warp.toB(a), warp.toB(a) + 1'000'000};
  if (!warp.isShift() && next != knots.begin() && next != knots.end()) {
    const auto prev = std::prev(next);
    pc = {prev->a_ns, next->a_ns, prev->b_ns, next->b_ns};
  }
  return TimeMapping{lineAt(display, 0, pc), lineAt(display, display.width, pc), display.width};
}

}  // namespace wl
