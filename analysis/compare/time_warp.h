// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Putting run B on run A's clock so that the same phase of the same iteration lines up
// (docs/compare.md, "Two runs"): a strictly increasing piecewise-linear map from B's time to A's.
//
// A plain shift (a = b + offset) aligns one instant; two configurations with different step times
// then drift apart after one iteration. iterationWarp() places knots at every common iteration's
// start and end and, where both runs have them, at the phase boundaries inside the iteration, so
// iteration k of B is stretched onto iteration k of A. Beyond the first and last knot the map has
// slope 1 (B's idle lead-in and lead-out keep their own length).
//
// Times are int64 ns; the map is evaluated in double inside a piece (exact at the knots) and
// rounded to the nearest ns, so toA(toB(a)) is within 1 ns of a wherever the stretch dA/dB is
// below 3 (and within ceil(stretch / 2) ns in general).

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/run_alignment.h"
#include "loaders/format/run_file.h"

namespace wl {

class TimeWarp {
 public:
  struct Knot {
    int64_t b_ns = 0, a_ns = 0;
    bool operator==(const Knot&) const = default;
  };
  // One linear piece: [b0, b1] of B drawn on [a0, a1] of A (a0 < a1, b0 < b1).
  struct Piece {
    int64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    bool operator==(const Piece&) const = default;
  };

  TimeWarp() = default;                     // the identity
  static TimeWarp shift(int64_t offsetNs);  // a = b + offset everywhere
  // Knots strictly increasing in both b and a (their order in the vector does not matter); slope 1
  // beyond the ends. Throws wl::Error naming the first pair of knots that is not. No knots: the
  // identity.
  static TimeWarp fromKnots(std::vector<Knot> knots);

  int64_t toA(int64_t b) const;
  int64_t toB(int64_t a) const;
  // The local stretch dA/dB of the piece holding a (the piece to the right at a knot); 1 for a
  // shift and beyond the ends.
  double stretchAtA(int64_t a) const;
  // The linear pieces covering [a0, a1) of A, clipped to it, in increasing time (consecutive
  // pieces share an end). Empty when a1 <= a0.
  std::vector<Piece> pieces(int64_t a0, int64_t a1) const;
  // True when every knot has the same offset a - b (the map is a shift).
  bool isShift() const { return shift_; }
  int64_t offsetAtA(int64_t a) const { return a - toB(a); }
  // The knots as given (sorted); a shift has one knot {0, offset}.
  const std::vector<Knot>& knots() const { return knots_; }

  bool operator==(const TimeWarp& o) const { return knots_ == o.knots_; }

 private:
  std::vector<Knot> knots_{Knot{}};
  bool shift_ = true;
};

enum class WarpBoundaries { Iterations, IterationsAndPhases };

// B's time onto A's through the iterations both runs recorded (paired by step number; runs with
// different iteration counts pair the common steps). Knots, in this order of precedence (a
// boundary that would break strict monotonicity with those already placed is dropped):
//   1. every common step's start (the earliest start over its ranks, iterationStart()),
//   2. every common step's end (the latest end over its ranks),
//   3. with IterationsAndPhases, inside step k where both runs have forward / backward /
//      optimizer annotations in it (energy_attribution.h's phaseOf()): the first start over the
//      ranks of backward, then optimizer, the last end of backward, of forward, the first start
//      of forward, the last end of optimizer; where either run lacks phase annotations in step k,
//      the start of the first communication kernel of step k (earliest over the traced ranks)
//      when both runs have one there.
// nullopt when the runs share no step.
std::optional<TimeWarp> iterationWarp(
    const RunFile& a, const RunFile& b,
    WarpBoundaries boundaries = WarpBoundaries::IterationsAndPhases);

// The warp of any alignment mode: iterationWarp() for Warp (the shift at the starts when the runs
// share no step), a shift for the others: Absolute 0, Start alignAtStart(), Iteration
// alignAtIteration(step) (the starts when that step is not in both), Event eventOffsetNs.
TimeWarp alignmentWarp(const RunFile& a, const RunFile& b, AlignMode mode, int64_t step = 0,
                       int64_t eventOffsetNs = 0);

}  // namespace wl
