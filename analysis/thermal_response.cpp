// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/thermal_response.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "analysis/range_plan.h"
#include "loaders/core/metrics.h"

namespace wl {
namespace {

constexpr size_t kMinPairs = 10;

// Solves the n x n system m x = r by Gaussian elimination with partial pivoting.
template <size_t N>
bool solve(std::array<std::array<double, N>, N> m, std::array<double, N> r,
           std::array<double, N>& x) {
  for (size_t c = 0; c < N; ++c) {
    size_t piv = c;
    for (size_t i = c + 1; i < N; ++i)
      if (std::fabs(m[i][c]) > std::fabs(m[piv][c])) piv = i;
    if (std::fabs(m[piv][c]) < 1e-12) return false;
    std::swap(m[c], m[piv]);
    std::swap(r[c], r[piv]);
    for (size_t i = c + 1; i < N; ++i) {
      const double f = m[i][c] / m[c][c];
      for (size_t k = c; k < N; ++k)
        m[i][k] -= f * m[c][k];
      r[i] -= f * r[c];
    }
  }
  for (size_t c = N; c-- > 0;) {
    double s = r[c];
    for (size_t k = c + 1; k < N; ++k)
      s -= m[c][k] * x[k];
    x[c] = s / m[c][c];
  }
  return true;
}

}  // namespace

FirstOrderFit fitFirstOrder(std::span<const double> temp, std::span<const double> power,
                            double dtS) {
  FirstOrderFit f;
  const size_t n = std::min(temp.size(), power.size());
  auto usable = [&](size_t i) {
    return std::isfinite(temp[i]) && std::isfinite(power[i]) && std::isfinite(temp[i + 1]) &&
           std::isfinite(power[i + 1]);
  };
  // Centre the data for conditioning; the intercept absorbs the shift.
  double tMean = 0, pMean = 0;
  size_t cnt = 0;
  for (size_t i = 0; i + 1 < n; ++i)
    if (usable(i)) {
      tMean += temp[i];
      pMean += power[i];
      ++cnt;
    }
  if (cnt < kMinPairs) return f;
  tMean /= static_cast<double>(cnt);
  pMean /= static_cast<double>(cnt);
  // Regressors T[n], P[n], P[n+1], 1: bucket means of a first-order system see the input of both
  // buckets (with point samples and a held input, the P[n+1] weight comes out as zero).
  std::array<std::array<double, 4>, 4> m{};
  std::array<double, 4> r{};
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!usable(i)) continue;
    const std::array<double, 4> x = {temp[i] - tMean, power[i] - pMean, power[i + 1] - pMean, 1.0};
    const double y = temp[i + 1] - tMean;
    for (size_t a = 0; a < 4; ++a) {
      for (size_t b = 0; b < 4; ++b)
        m[a][b] += x[a] * x[b];
      r[a] += x[a] * y;
    }
  }
  std::array<double, 4> sol{};
  if (!solve<4>(m, r, sol)) {
    // A constant or held input: fall back to T[n+1] = a T[n] + b P[n] + c.
    std::array<std::array<double, 3>, 3> m3{};
    std::array<double, 3> r3{}, s3{};
    for (size_t a = 0; a < 3; ++a) {
      const size_t ia = a < 2 ? a : 3;
      for (size_t b = 0; b < 3; ++b)
        m3[a][b] = m[ia][b < 2 ? b : 3];
      r3[a] = r[ia];
    }
    if (!solve<3>(m3, r3, s3)) return f;
    sol = {s3[0], s3[1], 0.0, s3[2]};
  }
  f.a = sol[0];
  f.b = sol[1] + sol[2];  // steady-state gain per W is b / (1 - a)
  f.c = sol[3] + tMean * (1 - sol[0]) - (sol[1] + sol[2]) * pMean;
  f.pairs = cnt;
  double ssRes = 0, ssTot = 0, yMean = 0;
  for (size_t i = 0; i + 1 < n; ++i)
    if (usable(i)) yMean += temp[i + 1];
  yMean /= static_cast<double>(cnt);
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!usable(i)) continue;
    const double pred = tMean + sol[0] * (temp[i] - tMean) + sol[1] * (power[i] - pMean) +
                        sol[2] * (power[i + 1] - pMean) + sol[3];
    ssRes += (temp[i + 1] - pred) * (temp[i + 1] - pred);
    ssTot += (temp[i + 1] - yMean) * (temp[i + 1] - yMean);
  }
  if (ssTot > 0) f.r2 = 1.0 - ssRes / ssTot;
  if (f.a > 0 && f.a < 1) f.tau_s = -dtS / std::log(f.a);
  return f;
}

LagEstimate powerTemperatureLag(std::span<const double> temp, std::span<const double> power,
                                double dtS, double maxLagS) {
  LagEstimate best;
  const size_t n = std::min(temp.size(), power.size());
  if (dtS <= 0 || n < kMinPairs) return best;
  const auto maxLag = static_cast<size_t>(std::max(0.0, std::floor(maxLagS / dtS)));
  for (size_t lag = 0; lag <= maxLag && lag + kMinPairs <= n; ++lag) {
    double sp = 0, st = 0, spp = 0, stt = 0, spt = 0;
    size_t c = 0;
    for (size_t i = 0; i + lag < n; ++i) {
      const double p = power[i], t = temp[i + lag];
      if (!std::isfinite(p) || !std::isfinite(t)) continue;
      sp += p, st += t, spp += p * p, stt += t * t, spt += p * t;
      ++c;
    }
    if (c < kMinPairs) continue;
    const double cn = static_cast<double>(c);
    const double cov = spt - sp * st / cn;
    const double vp = spp - sp * sp / cn, vt = stt - st * st / cn;
    if (vp <= 0 || vt <= 0) continue;
    const double corr = cov / std::sqrt(vp * vt);
    if (std::isnan(best.correlation) || corr > best.correlation) {
      best.correlation = corr;
      best.lag_s = static_cast<double>(lag) * dtS;
    }
  }
  return best;
}

std::vector<ThermalFitResult> thermalFits(const RunFile& run, const std::vector<int>& gpus,
                                          TimeRange range, const AnalysisOptions& options,
                                          double* resolutionS) {
  std::vector<ThermalFitResult> out(gpus.size());
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (!meta.metric(metric::kTemp) || !meta.metric(metric::kPower) || meta.grid.levels() == 0)
    return out;
  const LodGrid& grid = meta.grid;
  size_t level = grid.levels() - 1;
  const size_t n = std::max<size_t>(gpus.size(), 1);
  for (size_t k = 0; k < grid.levels(); ++k)
    if (static_cast<double>(grid.widths_ns[k]) * 1e-9 >= options.thermalFitMinBucketS &&
        grid.buckets[k] * n <= options.thermalFitMaxCells) {
      level = k;
      break;
    }
  const double dtS = static_cast<double>(grid.widths_ns[level]) * 1e-9;
  if (resolutionS) *resolutionS = dtS;
  // Whole buckets of that level inside the range.
  const int64_t w = grid.widths_ns[level];
  const auto nb = static_cast<int64_t>(grid.buckets[level]);
  const int64_t lo = std::max(range.t0, grid.origin_ns);
  const int64_t first = std::clamp<int64_t>((lo - grid.origin_ns + w - 1) / w, 0, nb);
  const int64_t last = range.t1 >= grid.bucketStart(level, grid.buckets[level])
                           ? nb
                           : std::clamp<int64_t>((range.t1 - grid.origin_ns) / w, 0, nb);
  if (last - first < static_cast<int64_t>(kMinPairs)) return out;
  const auto b0 = static_cast<size_t>(first), b1 = static_cast<size_t>(last);
  const PyramidRows tRows(run, SeriesKind::Gpu, metric::kTemp, level, gpus, b0, b1);
  const PyramidRows pRows(run, SeriesKind::Gpu, metric::kPower, level, gpus, b0, b1);
  std::vector<double> tm(b1 - b0), pm(b1 - b0);
  for (size_t k = 0; k < gpus.size(); ++k) {
    const int g = gpus[k];
    if (!tRows.has(g) || !pRows.has(g)) continue;
    for (size_t b = b0; b < b1; ++b) {
      const auto tc = tRows.at(g, b), pc = pRows.at(g, b);
      tm[b - b0] = tc.dt > 0 ? tc.wsum / tc.dt : kNaN;
      pm[b - b0] = pc.dt > 0 ? pc.wsum / pc.dt : kNaN;
    }
    out[k].fit = fitFirstOrder(tm, pm, dtS);
    out[k].lag = powerTemperatureLag(tm, pm, dtS, options.thermalMaxLagS);
  }
  return out;
}

}  // namespace wl
