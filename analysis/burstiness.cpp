// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/burstiness.h"

#include <algorithm>
#include <cmath>

#include "analysis/threshold_time.h"
#include "loaders/core/metrics.h"

namespace wl {
namespace {

// numpy.percentile's default ("linear") on an unsorted copy.
double percentile(std::vector<double>& x, double q) {
  if (x.empty()) return kNaN;
  const double pos = q * static_cast<double>(x.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(lo), x.end());
  const double a = x[lo];
  if (frac == 0.0 || lo + 1 >= x.size()) return a;
  const double b = *std::min_element(x.begin() + static_cast<std::ptrdiff_t>(lo) + 1, x.end());
  return a + frac * (b - a);
}

}  // namespace

void Histogram::add(double x, double w) {
  if (values.empty() || !std::isfinite(x)) return;
  const double pos = log10 ? (x > 0 ? std::log10(x / lo) / step : -1.0) : (x - lo) / step;
  const double last = static_cast<double>(values.size() - 1);
  values[static_cast<size_t>(std::clamp(std::floor(pos), 0.0, last))] += w;
}

Histogram& Histogram::operator+=(const Histogram& o) {
  if (values.empty()) {
    *this = o;
  } else if (o.values.size() == values.size()) {
    for (size_t i = 0; i < values.size(); ++i)
      values[i] += o.values[i];
  }
  return *this;
}

Histogram powerHistogram() {
  Histogram h;
  h.lo = 0.0;
  h.step = 10.0;
  for (int i = 0; i <= 150; ++i)
    h.edges.push_back(10.0 * i);
  h.values.assign(150, 0.0);
  return h;
}

Histogram rampHistogram() {
  Histogram h;
  h.log10 = true;
  h.lo = 1.0;
  h.step = 0.1;
  for (int i = 0; i <= 60; ++i)
    h.edges.push_back(std::pow(10.0, i / 10.0));
  h.values.assign(60, 0.0);
  return h;
}

RampStats rampStats(std::span<const int64_t> t, std::span<const double> p, int64_t gapThresholdNs,
                    TimeRange range, Histogram* powerHist, Histogram* rampHist) {
  RampStats r;
  std::vector<double> ramps;
  const size_t n = std::min(t.size(), p.size());
  ramps.reserve(n);
  size_t prev = SIZE_MAX;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(p[j]) || !range.contains(t[j])) continue;
    if (prev != SIZE_MAX) {
      const int64_t d = t[j] - t[prev];
      if (d > 0 && d <= gapThresholdNs) {
        const double ds = static_cast<double>(d) * 1e-9;
        const double ramp = std::fabs(p[j] - p[prev]) / ds;
        ramps.push_back(ramp);
        if (powerHist) powerHist->add(p[prev], ds);
        if (rampHist) rampHist->add(std::max(ramp, 1.0), 1.0);
      }
    }
    prev = j;
  }
  r.segments = ramps.size();
  if (ramps.empty()) return r;
  r.max = *std::max_element(ramps.begin(), ramps.end());
  r.p50 = percentile(ramps, 0.50);
  r.p90 = percentile(ramps, 0.90);
  r.p99 = percentile(ramps, 0.99);
  return r;
}

BurstinessResult analyzeBurstiness(const RunFile& run, const std::vector<int>& gpus,
                                   const std::vector<MetricStats>& power, TimeRange range,
                                   bool rawBudgetOk) {
  BurstinessResult res;
  res.gpus.resize(gpus.size());
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (!meta.metric(metric::kPower)) return res;
  std::vector<double> limits(gpus.size(), kNaN);
  for (size_t k = 0; k < gpus.size(); ++k) {
    const int g = gpus[k];
    if (g < 0 || static_cast<size_t>(g) >= run.gpus().size()) continue;
    const float lim = run.gpus()[static_cast<size_t>(g)].power_limit_w;
    if (std::isfinite(lim) && lim > 0) limits[k] = lim;
  }
  const std::vector<ThresholdTime> above =
      timeAbove(run, metric::kPower, gpus, limits, false, range);
  res.raw_computed = rawBudgetOk;
  if (rawBudgetOk) {
    res.power_hist = powerHistogram();
    res.ramp_hist = rampHistogram();
  }
  for (size_t k = 0; k < gpus.size(); ++k) {
    Burstiness& b = res.gpus[k];
    const MetricStats& ps = k < power.size() ? power[k] : MetricStats{};
    if (std::isfinite(ps.mean) && ps.mean > 0 && std::isfinite(ps.max))
      b.peak_to_average = ps.max / ps.mean;
    b.power_limit_w = limits[k];
    if (std::isfinite(limits[k])) {
      b.excursions = static_cast<uint32_t>(above[k].count());
      b.excursion_s = above[k].time_s;
      b.excursion_peak_w = above[k].peak;
      b.excursion_runs = above[k].runs;
    }
    const int g = gpus[k];
    if (rawBudgetOk && g >= 0 && static_cast<size_t>(g) < meta.entities) {
      const auto gi = static_cast<size_t>(g);
      const Samples s = run.readSamples(SeriesKind::Gpu, gi, metric::kPower, range.t0,
                                        range.t1 == INT64_MAX ? INT64_MAX : range.t1 - 1, false);
      b.ramp =
          rampStats(s.t_ns, s.v, meta.gapThresholdNs[gi], range, &res.power_hist, &res.ramp_hist);
      b.ramp_computed = true;
    }
  }
  return res;
}

}  // namespace wl
