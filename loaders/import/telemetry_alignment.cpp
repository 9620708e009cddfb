// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/telemetry_alignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace wl::import {
namespace {

constexpr int64_t kBinNs = 1'000'000;  // the activity grid: 1 ms
constexpr double kNoScore = -std::numeric_limits<double>::infinity();

// The traced activity on a 1 ms grid over [lo, hi): the mean over ranks of the busy share of each
// bin, as a running sum so that any window's mean is two look-ups.
class ActivityModel {
 public:
  ActivityModel(const std::vector<TracedActivity>& ranks, int64_t lo, int64_t hi)
      : lo_(lo), bins_(static_cast<size_t>((hi - lo) / kBinNs)) {
    std::vector<double> a(bins_, 0.0);
    for (const TracedActivity& r : ranks) {
      std::vector<std::pair<int64_t, int64_t>> k = r.kernels;
      std::sort(k.begin(), k.end());
      int64_t covered = lo;  // union: each instant counted once per rank
      for (auto [s, e] : k) {
        s = std::max({s, covered, lo});
        e = std::min(e, hi);
        if (e <= s) continue;
        covered = e;
        addBusy(a, s, e, 1.0 / static_cast<double>(ranks.size()));
      }
    }
    sum_.assign(bins_ + 1, 0.0);
    for (size_t i = 0; i < bins_; ++i)
      sum_[i + 1] = sum_[i] + a[i];
  }

  // The window [t - w, t] as regressors: the traced activity inside the trace's span divided by
  // w, and the shares of the window before and after the span (activity there is unknown: each
  // side gets a level of its own). False when the window lies wholly outside [lo - margin, hi +
  // margin].
  bool window(double tNs, double wNs, double marginNs, double& inside, double& before,
              double& after) const {
    const double x1 = (tNs - static_cast<double>(lo_)) / kBinNs;
    const double x0 = x1 - wNs / kBinNs;
    const double n = static_cast<double>(bins_), m = marginNs / kBinNs;
    if (x1 < -m || x0 > n + m) return false;
    const double w = x1 - x0;
    const double a = std::clamp(x0, 0.0, n), b = std::clamp(x1, 0.0, n);
    inside = (at(b) - at(a)) / w;
    before = (std::min(x1, 0.0) - std::min(x0, 0.0)) / w;
    after = (std::max(x1, n) - std::max(x0, n)) / w;
    return true;
  }

 private:
  void addBusy(std::vector<double>& a, int64_t s, int64_t e, double weight) const {
    for (int64_t b = (s - lo_) / kBinNs; b < static_cast<int64_t>(bins_); ++b) {
      const int64_t b0 = lo_ + b * kBinNs, b1 = b0 + kBinNs;
      if (b0 >= e) break;
      const int64_t overlap = std::min(e, b1) - std::max(s, b0);
      if (overlap > 0) a[static_cast<size_t>(b)] += weight * static_cast<double>(overlap) / kBinNs;
    }
  }
  double at(double x) const {  // the running sum at a fractional bin position
    const auto i = static_cast<size_t>(std::min(std::floor(x), static_cast<double>(bins_ - 1)));
    return sum_[i] + (x - static_cast<double>(i)) * (sum_[i + 1] - sum_[i]);
  }

  int64_t lo_;
  size_t bins_;
  std::vector<double> sum_;
};

struct Sample {
  double t, v;
};

struct Score {
  double r = kNoScore;  // the square root of the fit's R^2 (signed by the activity's slope)
  double gain = 0;      // R^2 of the fit minus R^2 of the free levels alone (no activity)
  size_t n = 0;
};

// Solves the 4x4 system a x = b in place (Gaussian elimination with pivoting); false if singular.
bool solve4(double a[4][4], double b[4]) {
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    if (std::abs(a[p][c]) < 1e-12) return false;
    std::swap(a[p], a[c]), std::swap(b[p], b[c]);
    for (int r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < 4; ++k)
        a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (int c = 0; c < 4; ++c)
    b[c] /= a[c][c];
  return true;
}

// The least-squares fit of the normal equations (xx, xy) with the regressors not in `use` pinned
// to 0: the explained sum of squares (b . xy) and the coefficients; false if singular.
bool fit(const double xx[4][4], const double xy[4], const bool use[4], double& explained,
         double coef[4]) {
  double a[4][4];
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j)
      a[i][j] = use[i] && use[j] ? xx[i][j] : 0.0;
    a[i][i] = use[i] ? xx[i][i] : 1.0;
    coef[i] = use[i] ? xy[i] : 0.0;
  }
  if (!solve4(a, coef)) return false;
  explained = 0;
  for (int i = 0; i < 4; ++i)
    explained += coef[i] * xy[i];
  return true;
}

// The least-squares fit of the samples to level + slope x activity (+ a level for the unknown
// activity before and after the trace) at (sample time - offset); scored by its R^2. With
// `withGain`, also the fit of the three levels alone, without the activity: what the traced
// kernels explain beyond a step at the trace's edges.
Score correlate(const std::vector<Sample>& samples, const ActivityModel& model, double offsetNs,
                double windowNs, size_t minSamples, bool withGain = false) {
  constexpr double kMarginNs = 1e9;
  double xx[4][4] = {}, xy[4] = {}, sy = 0, syy = 0, n = 0;
  for (const Sample& s : samples) {
    double x[4] = {1, 0, 0, 0};
    if (!model.window(s.t - offsetNs, windowNs, kMarginNs, x[1], x[2], x[3])) continue;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j)
        xx[i][j] += x[i] * x[j];
      xy[i] += x[i] * s.v;
    }
    sy += s.v, syy += s.v * s.v, n += 1;
  }
  Score out;
  out.n = static_cast<size_t>(n);
  if (out.n < minSamples) return out;
  const double total = syy - sy * sy / n;
  if (total <= 1e-12 * n) return out;
  // Regressors that never vary (no window reaches before or after the trace) are dropped.
  bool use[4] = {true, true, true, true};
  for (int i = 2; i < 4; ++i)
    use[i] = xx[i][i] >= 1e-9;
  double explained = 0, coef[4];
  if (!fit(xx, xy, use, explained, coef)) return out;
  // Residual sum of squares = syy - b . xy (normal equations).
  const double r2 = std::clamp(1.0 - (syy - explained) / total, 0.0, 1.0);
  if (coef[1] <= 0) return out;  // more kernels must not mean less power or utilization
  out.r = std::sqrt(r2);
  if (withGain) {
    use[1] = false;
    double levels = 0;
    out.gain = fit(xx, xy, use, levels, coef)
                   ? r2 - std::clamp(1.0 - (syy - levels) / total, 0.0, 1.0)
                   : 0.0;
  }
  return out;
}

}  // namespace

AlignmentEstimate estimateAlignment(const std::vector<MetricSamples>& series,
                                    const std::vector<TracedActivity>& ranks,
                                    const AlignmentOptions& o) {
  AlignmentEstimate e;
  if (ranks.empty()) {
    e.reason = "no kernel trace to align to";
    return e;
  }
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  for (const TracedActivity& r : ranks)
    lo = std::max(lo, r.lo), hi = std::min(hi, r.hi);
  if (hi - lo < 2 * kBinNs) {
    e.reason = "the traced ranks share no span";
    return e;
  }
  std::vector<Sample> samples;
  for (const MetricSamples& s : series)
    for (size_t i = 0; i < s.t_ns.size() && i < s.v.size(); ++i)
      if (std::isfinite(s.v[i])) samples.push_back({static_cast<double>(s.t_ns[i]), s.v[i]});
  const ActivityModel model(ranks, lo, hi);

  // Coarse: every window, offsets every 10 ms; then the best window's offset to 1 ms.
  const double step = 10e6, search = o.searchS * 1e9;
  const int steps = static_cast<int>(std::floor(search / step));
  std::vector<std::vector<Score>> grid(o.windowsS.size());
  double bestR = kNoScore, bestX = 0;
  size_t bestW = 0;
  for (size_t w = 0; w < o.windowsS.size(); ++w)
    for (int k = -steps; k <= steps; ++k) {
      const double wNs = std::max(o.windowsS[w] * 1e9, static_cast<double>(kBinNs));
      grid[w].push_back(correlate(samples, model, k * step, wNs, o.minSamples));
      if (grid[w].back().r > bestR) bestR = grid[w].back().r, bestX = k * step, bestW = w;
    }
  if (bestR == kNoScore) {
    e.reason = fmt::format("fewer than {} samples fall inside the traced span", o.minSamples);
    return e;
  }
  const double wNs = std::max(o.windowsS[bestW] * 1e9, static_cast<double>(kBinNs));
  Score best = correlate(samples, model, bestX, wNs, o.minSamples);
  for (double x = bestX - 10e6; x <= bestX + 10e6; x += 1e6) {
    const Score s = correlate(samples, model, x, wNs, o.minSamples);
    if (s.r > best.r) best = s, bestX = x;
  }
  best = correlate(samples, model, bestX, wNs, o.minSamples, true);
  e.estimated = true;
  e.telemetry_ahead_ns = static_cast<int64_t>(std::llround(bestX));
  e.window_s = o.windowsS[bestW];
  e.correlation = best.r;
  e.samples = best.n;
  e.activity_gain = best.gain;
  e.runner_up = kNoScore;
  for (size_t w = 0; w < grid.size(); ++w)
    for (int k = -steps; k <= steps; ++k)
      if (std::abs(k * step - bestX) > kSeparationS * 1e9)
        e.runner_up = std::max(e.runner_up, grid[w][static_cast<size_t>(k + steps)].r);
  // Uncertainty: the contiguous offsets of the best window whose unexplained variance (1 - R^2)
  // is at most 10 % above the best's.
  const std::vector<Score>& g = grid[bestW];
  const double resid = 1 - best.r * best.r;
  auto close = [&](int k) {
    const double r = g[static_cast<size_t>(k)].r;
    return r != kNoScore && 1 - r * r <= resid * 1.1 + 1e-9;
  };
  const auto at = static_cast<int>(std::llround(bestX / step)) + steps;
  int left = std::clamp(at, 0, 2 * steps), right = left;
  while (left > 0 && close(left - 1))
    --left;
  while (right < 2 * steps && close(right + 1))
    ++right;
  e.uncertainty_s = std::max(0.001, (right - left) * step / 2e9);
  // Confident: a good fit, and every offset more than kSeparationS away leaves at least twice
  // as much unexplained, and a share of the variance more (two perfect fits far apart, a step
  // that either edge of a short trace explains, identify nothing).
  const double runnerResid = e.runner_up == kNoScore ? 1.0 : 1 - e.runner_up * e.runner_up;
  e.confident = e.correlation >= o.minCorrelation && runnerResid >= o.minSeparation * resid &&
                runnerResid - resid >= o.minSeparationGap && e.uncertainty_s <= 0.1 &&
                e.samples >= o.minConfidentSamples;
  return e;
}

std::string describe(const AlignmentEstimate& e) {
  if (!e.estimated) return "no estimate (" + e.reason + ")";
  return fmt::format(
      "telemetry {:+.0f} ms from the traces (sensor window {:g} s, correlation {:.2f} against "
      "{:.2f} at the best offset {:g} ms or more away, +-{:.0f} ms, {} samples)",
      static_cast<double>(e.telemetry_ahead_ns) / 1e6, e.window_s, e.correlation, e.runner_up,
      kSeparationS * 1e3, e.uncertainty_s * 1e3, e.samples);
}

}  // namespace wl::import
