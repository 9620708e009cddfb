// SPDX-License-Identifier: GPL-3.0-or-later
// The piecewise-linear map of B's clock onto A's, and the iteration warp built from two runs'
// iterations, phase annotations and communication kernels (time_warp.h).
#include "analysis/compare/time_warp.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <string>

#include "analysis/energy_attribution.h"
#include "loaders/core/error.h"

namespace wl {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// x + d, saturated at the int64 range (views may reach INT64_MIN / INT64_MAX).
int64_t addSat(int64_t x, int64_t d) {
  int64_t r = 0;
  if (__builtin_add_overflow(x, d, &r)) return d > 0 ? kMax : kMin;
  return r;
}

// y0 + (x - x0) (y1 - y0) / (x1 - x0), rounded to the nearest ns; exact at x0 and x1.
int64_t lerp(int64_t x, int64_t x0, int64_t x1, int64_t y0, int64_t y1) {
  if (x == x0) return y0;
  if (x == x1) return y1;
  const double f = static_cast<double>(x - x0) / static_cast<double>(x1 - x0);
  return y0 + std::llround(f * static_cast<double>(y1 - y0));
}

}  // namespace

TimeWarp TimeWarp::shift(int64_t offsetNs) {
  TimeWarp w;
  w.knots_ = {Knot{0, offsetNs}};
  return w;
}

TimeWarp TimeWarp::fromKnots(std::vector<Knot> knots) {
  TimeWarp w;
  if (knots.empty()) return w;
  std::sort(knots.begin(), knots.end(),
            [](const Knot& x, const Knot& y) { return x.b_ns < y.b_ns; });
  for (size_t i = 1; i < knots.size(); ++i) {
    const Knot& p = knots[i - 1];
    const Knot& k = knots[i];
    if (k.b_ns <= p.b_ns || k.a_ns <= p.a_ns)
      throw Error(fmt::format(
          "time warp: knots must increase strictly in both clocks, but knot (b {} ns, a {} ns) "
          "follows (b {} ns, a {} ns)",
          k.b_ns, k.a_ns, p.b_ns, p.a_ns));
  }
  w.knots_ = std::move(knots);
  const int64_t off = w.knots_.front().a_ns - w.knots_.front().b_ns;
  w.shift_ = std::all_of(w.knots_.begin(), w.knots_.end(),
                         [off](const Knot& k) { return k.a_ns - k.b_ns == off; });
  return w;
}

namespace {

// x on the `from` clock to the `to` clock through the knots (sorted on both clocks).
int64_t mapThrough(const std::vector<TimeWarp::Knot>& knots, int64_t x,
                   int64_t TimeWarp::Knot::*from, int64_t TimeWarp::Knot::*to) {
  const TimeWarp::Knot& f = knots.front();
  if (x <= f.*from) return addSat(x, f.*to - f.*from);
  const TimeWarp::Knot& l = knots.back();
  if (x >= l.*from) return addSat(x, l.*to - l.*from);
  const auto it =
      std::upper_bound(knots.begin(), knots.end(), x,
                       [from](int64_t v, const TimeWarp::Knot& k) { return v < k.*from; });
  const TimeWarp::Knot& k0 = *std::prev(it);
  return lerp(x, k0.*from, (*it).*from, k0.*to, (*it).*to);
}

}  // namespace

int64_t TimeWarp::toA(int64_t b) const {
  return mapThrough(knots_, b, &Knot::b_ns, &Knot::a_ns);
}

int64_t TimeWarp::toB(int64_t a) const {
  return mapThrough(knots_, a, &Knot::a_ns, &Knot::b_ns);
}

double TimeWarp::stretchAtA(int64_t a) const {
  if (shift_ || a < knots_.front().a_ns || a >= knots_.back().a_ns) return 1.0;
  const auto it = std::upper_bound(knots_.begin(), knots_.end(), a,
                                   [](int64_t x, const Knot& k) { return x < k.a_ns; });
  const Knot& k0 = *std::prev(it);
  return static_cast<double>(it->a_ns - k0.a_ns) / static_cast<double>(it->b_ns - k0.b_ns);
}

std::vector<TimeWarp::Piece> TimeWarp::pieces(int64_t a0, int64_t a1) const {
  std::vector<Piece> out;
  if (a1 <= a0) return out;
  // Breakpoints on A's clock: the knots inside (a0, a1) (none for a shift: one piece).
  std::vector<int64_t> cuts{a0};
  if (!shift_)
    for (const Knot& k : knots_)
      if (k.a_ns > a0 && k.a_ns < a1) cuts.push_back(k.a_ns);
  cuts.push_back(a1);
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    out.push_back({cuts[i], cuts[i + 1], toB(cuts[i]), toB(cuts[i + 1])});
  return out;
}

namespace {

// Job-level boundaries of one run's steps: the earliest start and latest end over its ranks.
struct StepWindow {
  int64_t start = kMax, end = kMin;
};
std::map<int64_t, StepWindow> stepWindows(const RunFile& run) {
  std::map<int64_t, StepWindow> out;
  for (const Iteration& it : run.iterations()) {
    StepWindow& w = out[it.step];
    w.start = std::min(w.start, it.start_ns);
    w.end = std::max(w.end, it.end_ns);
  }
  return out;
}

// Phase boundaries of one step: per phase (forward, backward, optimizer), the first start and the
// last end over the ranks of the annotations that start inside the step's window.
constexpr std::array<const char*, 3> kPhases{"forward", "backward", "optimizer"};
struct PhaseBounds {
  std::array<int64_t, 3> first{kMax, kMax, kMax};
  std::array<int64_t, 3> last{kMin, kMin, kMin};
  bool any() const { return first[0] != kMax || first[1] != kMax || first[2] != kMax; }
};

std::map<int64_t, PhaseBounds> phaseBounds(const RunFile& run,
                                           const std::map<int64_t, StepWindow>& steps) {
  std::map<int64_t, PhaseBounds> out;
  // Phase of each string id, computed once.
  std::map<uint32_t, int> phaseOfName;
  std::vector<std::pair<int64_t, int64_t>> windows;  // (start, step) sorted by start
  for (const auto& [step, w] : steps)
    windows.emplace_back(w.start, step);
  std::sort(windows.begin(), windows.end());
  for (const Annotation& an : run.annotations()) {
    auto [pit, inserted] = phaseOfName.try_emplace(an.name, -1);
    if (inserted) {
      const std::string p = phaseOf(run.str(an.name));
      for (size_t i = 0; i < kPhases.size(); ++i)
        if (p == kPhases[i]) pit->second = static_cast<int>(i);
    }
    if (pit->second < 0) continue;
    // The step whose window holds the annotation's start (the latest window starting at or
    // before it).
    auto w = std::upper_bound(windows.begin(), windows.end(),
                              std::make_pair(an.start_ns, std::numeric_limits<int64_t>::max()));
    if (w == windows.begin()) continue;
    const int64_t step = std::prev(w)->second;
    const StepWindow& sw = steps.at(step);
    if (an.start_ns >= sw.end) continue;
    PhaseBounds& pb = out[step];
    const auto p = static_cast<size_t>(pit->second);
    pb.first[p] = std::min(pb.first[p], an.start_ns);
    pb.last[p] = std::max(pb.last[p], an.start_ns + an.dur_ns);
  }
  return out;
}

// Per step, the start of the first communication kernel inside its window (earliest over the
// traced ranks); steps without one are left out.
std::map<int64_t, int64_t> firstCommunication(const RunFile& run,
                                              const std::map<int64_t, StepWindow>& steps,
                                              const std::vector<int64_t>& wanted) {
  std::map<int64_t, int64_t> out;
  if (wanted.empty()) return out;
  for (size_t t = 0; t < run.tracks().size(); ++t) {
    const TrackInfo& info = run.tracks()[t];
    if (info.classCount[static_cast<size_t>(KernelClass::Communication)] == 0) continue;
    std::vector<int64_t> starts;
    for (const KernelEvent& e : run.readAllKernels(t, RunFile::kKernelClass))
      if (e.cls == KernelClass::Communication) starts.push_back(e.start_ns);
    std::sort(starts.begin(), starts.end());
    for (int64_t step : wanted) {
      const StepWindow& w = steps.at(step);
      const auto it = std::lower_bound(starts.begin(), starts.end(), w.start);
      if (it == starts.end() || *it >= w.end) continue;
      auto [o, inserted] = out.try_emplace(step, *it);
      if (!inserted) o->second = std::min(o->second, *it);
    }
  }
  return out;
}

// Knots keyed by A's time; a candidate is placed only where it keeps both clocks strictly
// increasing with its neighbours.
class KnotSet {
 public:
  void add(int64_t a, int64_t b) {
    if (a == kMax || a == kMin || b == kMax || b == kMin) return;
    auto next = knots_.lower_bound(a);
    if (next != knots_.end() && (next->first == a || next->second <= b)) return;
    if (next != knots_.begin()) {
      const auto prev = std::prev(next);
      if (prev->second >= b) return;
    }
    knots_.emplace_hint(next, a, b);
  }
  std::vector<TimeWarp::Knot> knots() const {
    std::vector<TimeWarp::Knot> out;
    for (const auto& [a, b] : knots_)
      out.push_back({b, a});
    return out;
  }

 private:
  std::map<int64_t, int64_t> knots_;  // a -> b
};

}  // namespace

std::optional<TimeWarp> iterationWarp(const RunFile& a, const RunFile& b,
                                      WarpBoundaries boundaries) {
  const std::vector<int64_t> steps = commonSteps(a, b);
  if (steps.empty()) return std::nullopt;
  const auto wa = stepWindows(a);
  const auto wb = stepWindows(b);
  KnotSet set;
  for (int64_t s : steps)
    set.add(wa.at(s).start, wb.at(s).start);
  for (int64_t s : steps)
    set.add(wa.at(s).end, wb.at(s).end);
  if (boundaries == WarpBoundaries::IterationsAndPhases) {
    const auto pa = phaseBounds(a, wa);
    const auto pb = phaseBounds(b, wb);
    std::vector<int64_t> noPhases;
    for (int64_t s : steps) {
      const auto ia = pa.find(s), ib = pb.find(s);
      if (ia == pa.end() || ib == pb.end() || !ia->second.any() || !ib->second.any()) {
        noPhases.push_back(s);
        continue;
      }
      const PhaseBounds &x = ia->second, &y = ib->second;
      // Precedence: backward's first start, optimizer's first start, the last ends of backward
      // and forward, forward's first start, optimizer's last end (fwd 0, bwd 1, opt 2).
      set.add(x.first[1], y.first[1]);
      set.add(x.first[2], y.first[2]);
      set.add(x.last[1], y.last[1]);
      set.add(x.last[0], y.last[0]);
      set.add(x.first[0], y.first[0]);
      set.add(x.last[2], y.last[2]);
    }
    const auto ca = firstCommunication(a, wa, noPhases);
    const auto cb = firstCommunication(b, wb, noPhases);
    for (int64_t s : noPhases) {
      const auto ia = ca.find(s), ib = cb.find(s);
      if (ia != ca.end() && ib != cb.end()) set.add(ia->second, ib->second);
    }
  }
  return TimeWarp::fromKnots(set.knots());
}

TimeWarp alignmentWarp(const RunFile& a, const RunFile& b, AlignMode mode, int64_t step,
                       int64_t eventOffsetNs) {
  switch (mode) {
    case AlignMode::Absolute:
      return TimeWarp::shift(0);
    case AlignMode::Start:
      return TimeWarp::shift(alignAtStart(a, b));
    case AlignMode::Iteration:
      return TimeWarp::shift(alignAtIteration(a, b, step).value_or(alignAtStart(a, b)));
    case AlignMode::Event:
      return TimeWarp::shift(eventOffsetNs);
    case AlignMode::Warp:
      if (auto w = iterationWarp(a, b)) return *std::move(w);
      return TimeWarp::shift(alignAtStart(a, b));
  }
  return TimeWarp::shift(alignAtStart(a, b));
}

}  // namespace wl
