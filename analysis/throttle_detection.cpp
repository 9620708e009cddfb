// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/throttle_detection.h"

#include <algorithm>
#include <cmath>

#include "analysis/range_plan.h"
#include "analysis/telemetry_stats.h"
#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"

namespace wl {
namespace {

struct CauseDef {
  ThrottleCause cause;
  std::string_view id, label;
  uint32_t bit;  // 0 for inferred causes
};

constexpr std::array<CauseDef, kThrottleCauseCount> kCauses = {{
    {ThrottleCause::SwPowerCap, "sw_power_cap", "SW power cap", throttle::kSwPowerCap},
    {ThrottleCause::HwSlowdown, "hw_slowdown", "HW slowdown", throttle::kHwSlowdown},
    {ThrottleCause::SwThermal, "sw_thermal", "SW thermal slowdown", throttle::kSwThermal},
    {ThrottleCause::HwThermal, "hw_thermal", "HW thermal slowdown", throttle::kHwThermal},
    {ThrottleCause::HwPowerBrake, "hw_power_brake", "HW power brake", throttle::kHwPowerBrake},
    {ThrottleCause::ThermalInferred, "thermal_inferred", "thermal (inferred)", 0},
    {ThrottleCause::PowerCapInferred, "power_cap_inferred", "power cap (inferred)", 0},
    {ThrottleCause::Unknown, "unknown", "unknown", 0},
}};

uint16_t causeBit(ThrottleCause c) {
  return static_cast<uint16_t>(1u << static_cast<unsigned>(c));
}

bool finite(std::span<const double> col, size_t i) {
  return i < col.size() && std::isfinite(col[i]);
}

constexpr uint16_t kPowerCauses = (1u << static_cast<unsigned>(ThrottleCause::SwPowerCap)) |
                                  (1u << static_cast<unsigned>(ThrottleCause::HwPowerBrake)) |
                                  (1u << static_cast<unsigned>(ThrottleCause::PowerCapInferred));

// The values of `src` at times `t`: each source sample's value held until the next valid one, for
// at most maxAgeNs; NaN before the first, after a longer pause, or without a valid sample.
std::vector<double> heldAt(std::span<const int64_t> t, const Samples& src, int64_t maxAgeNs) {
  std::vector<double> out(t.size(), kNaN);
  size_t j = 0;
  double last = kNaN;
  int64_t lastT = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    while (j < src.t_ns.size() && src.t_ns[j] <= t[i]) {
      if (std::isfinite(src.v[j])) last = src.v[j], lastT = src.t_ns[j];
      ++j;
    }
    if (std::isfinite(last) && t[i] - lastT <= maxAgeNs) out[i] = last;
  }
  return out;
}

}  // namespace

std::string_view throttleCauseId(ThrottleCause c) {
  return kCauses[static_cast<size_t>(c)].id;
}
std::string_view throttleCauseLabel(ThrottleCause c) {
  return kCauses[static_cast<size_t>(c)].label;
}
bool isThermalCause(ThrottleCause c) {
  return c == ThrottleCause::SwThermal || c == ThrottleCause::HwThermal ||
         c == ThrottleCause::ThermalInferred || c == ThrottleCause::HwSlowdown;
}
bool isPowerCause(ThrottleCause c) {
  return c == ThrottleCause::SwPowerCap || c == ThrottleCause::HwPowerBrake ||
         c == ThrottleCause::PowerCapInferred;
}

std::string_view busySourceId(BusySource s) {
  switch (s) {
    case BusySource::Utilization:
      return "utilization";
    case BusySource::IdleReasonBit:
      return "idle_reason_bit";
    case BusySource::AssumedBusy:
      return "assumed";
  }
  return "assumed";
}

void detectThrottleInSamples(const ThrottleColumns& c, const ThrottleParams& p,
                             const Interval& piece, const TimeRange& range, GpuThrottle& out) {
  const size_t n = std::min(c.t.size(), c.clock.size());
  // A sample's weight is the share of its period with a kernel running (utilization / 100);
  // it is busy for throttle intervals when its utilization reaches the busy threshold.
  auto weightAt = [&](size_t i) {
    if (finite(c.util, i)) return std::clamp(c.util[i] / 100.0, 0.0, 1.0);
    if (i < c.masks.size() && c.masks[i] != throttle::kUnknown)
      return (c.masks[i] & throttle::kGpuIdle) ? 0.0 : 1.0;
    return 1.0;
  };
  auto busyAt = [&](size_t i) {
    if (finite(c.util, i)) return c.util[i] >= p.busy_util_pct;
    return weightAt(i) > 0.0;
  };
  size_t prev = SIZE_MAX;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(c.clock[j])) continue;
    if (prev != SIZE_MAX) {
      const size_t i = prev;
      const int64_t d = c.t[j] - c.t[i];
      const int64_t a = std::max(c.t[i], range.t0);
      const int64_t b = std::min(c.t[j], range.t1);
      if (c.t[i] >= piece.start && c.t[i] < piece.end && d > 0 && d <= p.gap_threshold_ns &&
          b > a) {
        const double ds = static_cast<double>(b - a) * 1e-9;
        const double w = weightAt(i);
        if (p.busy_source != BusySource::Utilization) out.busy_s += w * ds;
        if (c.clock[i] < p.threshold_mhz && busyAt(i)) {
          ThrottleSegment seg{a, b, static_cast<float>(c.clock[i]), 0, 0, static_cast<float>(w)};
          const uint32_t mask = i < c.masks.size() ? c.masks[i] : throttle::kUnknown;
          if (mask != throttle::kUnknown) seg.recorded_reasons = mask & throttle::kSlowdownMask;
          // Recovery: the source records reasons and names none, right after a throttled
          // sample that had some. The clock is climbing back at a limited rate after the limit
          // lifted (NVML reports no reason meanwhile): the time belongs to that cause.
          const bool recovering = mask != throttle::kUnknown && seg.recorded_reasons == 0 &&
                                  !out.segments.empty() && out.segments.back().end_ns == a &&
                                  out.segments.back().recorded_reasons != 0;
          if (seg.recorded_reasons != 0) {
            for (const CauseDef& cd : kCauses)
              if (cd.bit & seg.recorded_reasons) seg.causes |= causeBit(cd.cause);
          } else if (recovering) {
            seg.causes = out.segments.back().causes;
            seg.recorded_reasons = out.segments.back().recorded_reasons;
          } else if (finite(c.temp, i) && std::isfinite(p.slowdown_temp_c) &&
                     c.temp[i] >= p.slowdown_temp_c) {
            seg.causes = causeBit(ThrottleCause::ThermalInferred);
          } else if (finite(c.power, i) && std::isfinite(p.power_limit_w) &&
                     c.power[i] >= p.power_cap_fraction * p.power_limit_w) {
            seg.causes = causeBit(ThrottleCause::PowerCapInferred);
          } else {
            seg.causes = causeBit(ThrottleCause::Unknown);
          }
          out.throttled_s += w * ds;
          for (size_t k = 0; k < kThrottleCauseCount; ++k)
            if (seg.causes & (1u << k)) out.by_cause_s[k] += w * ds;
          if (seg.causes & kPowerCauses) out.power_throttled_s += w * ds;
          out.clock_deficit_mhz_s += (p.reference_clock_mhz - c.clock[i]) * w * ds;
          out.segments.push_back(seg);
        }
      }
    }
    prev = j;
  }
}

void finishThrottle(GpuThrottle& g) {
  std::sort(
      g.segments.begin(), g.segments.end(),
      [](const ThrottleSegment& a, const ThrottleSegment& b) { return a.start_ns < b.start_ns; });
  g.intervals.clear();
  size_t k = 0;
  while (k < g.segments.size()) {
    ThrottleInterval iv;
    iv.gpu = g.gpu;
    iv.start_ns = g.segments[k].start_ns;
    std::array<double, kThrottleCauseCount> causeS{};
    double wsum = 0.0, dt = 0.0, minClock = INFINITY;
    size_t m = k;
    for (; m < g.segments.size(); ++m) {
      const ThrottleSegment& s = g.segments[m];
      if (m > k && s.start_ns != g.segments[m - 1].end_ns) break;
      const double ds = static_cast<double>(s.end_ns - s.start_ns) * 1e-9;
      wsum += s.clock_mhz * ds;
      dt += ds;
      minClock = std::min(minClock, static_cast<double>(s.clock_mhz));
      iv.recorded_reasons |= s.recorded_reasons;
      for (size_t c = 0; c < kThrottleCauseCount; ++c)
        if (s.causes & (1u << c)) causeS[c] += ds;
      iv.deficit_mhz_s += (g.reference_clock_mhz - s.clock_mhz) * ds;
      iv.end_ns = s.end_ns;
    }
    iv.min_clock_mhz = minClock;
    iv.mean_clock_mhz = dt > 0 ? wsum / dt : kNaN;
    iv.cause =
        static_cast<ThrottleCause>(std::max_element(causeS.begin(), causeS.end()) - causeS.begin());
    g.intervals.push_back(iv);
    k = m;
  }
}

double observedMaxClock(const RunFile& run) {
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (!meta.metric(metric::kSmClock) || meta.grid.levels() == 0 || meta.entities == 0) return kNaN;
  const size_t top = meta.grid.levels() - 1;
  const LodBlock b = run.readLod(SeriesKind::Gpu, metric::kSmClock, top, 0, meta.entities, 0,
                                 meta.grid.buckets[top]);
  double mx = -INFINITY;
  for (size_t i = 0; i < b.max.size(); ++i)
    if (b.count[i] > 0) mx = std::max(mx, static_cast<double>(b.max[i]));
  return std::isfinite(mx) ? mx : kNaN;
}

ThrottleParams throttleParams(const RunFile& run, int gpu, const AnalysisOptions& o,
                              double observedMax) {
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  const GpuInfo& gi = run.gpus()[static_cast<size_t>(gpu)];
  ThrottleParams p;
  p.reference_clock_mhz = observedMax;
  if (o.clockReference == ClockReference::Nominal && std::isfinite(gi.max_sm_clock_mhz) &&
      gi.max_sm_clock_mhz > 0)
    p.reference_clock_mhz = gi.max_sm_clock_mhz;
  p.threshold_mhz = o.clockThresholdFraction * p.reference_clock_mhz;
  p.busy_util_pct = o.busyUtilPct;
  // Power and its cap are the power domain's: a package's cap, and for a GCD without power of its
  // own, the power of the GCD that reports the package's.
  const PowerDomain& dom = run.domainOf(gpu);
  const PowerRole role = powerRole(dom, gpu);
  p.power_limit_w = role != PowerRole::Share && std::isfinite(dom.power_limit_w) ? dom.power_limit_w
                                                                                 : gi.power_limit_w;
  if (role == PowerRole::None) p.domain_power_gpu = dom.power_gpu;
  p.power_cap_fraction = o.powerCapFraction;
  p.slowdown_temp_c = gi.slowdown_temp_c;
  p.gap_threshold_ns = meta.gapThresholdNs[static_cast<size_t>(gpu)];
  if (meta.metric(metric::kUtil)) {
    p.busy_source = BusySource::Utilization;
  } else if (meta.hasThrottle) {
    p.busy_source = BusySource::IdleReasonBit;
  } else {
    p.busy_source = BusySource::AssumedBusy;
  }
  return p;
}

std::vector<GpuThrottle> detectThrottle(const RunFile& run, const std::vector<int>& gpus,
                                        TimeRange range, const AnalysisOptions& options,
                                        const std::vector<MetricStats>* utilStats) {
  std::vector<GpuThrottle> out(gpus.size());
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  const bool hasClock = meta.metric(metric::kSmClock) != nullptr;
  for (size_t k = 0; k < gpus.size(); ++k) {
    out[k].gpu = gpus[k];
    out[k].has_clock = hasClock;
  }
  if (!hasClock || meta.grid.levels() == 0) return out;
  const double observed = observedMaxClock(run);
  const RangePlan plan = planRange(meta.grid, run.info().start_ns, run.info().end_ns, range);
  if (plan.range.empty()) return out;
  const bool hasUtil = meta.metric(metric::kUtil) != nullptr;
  const PyramidRows clockRows(run, SeriesKind::Gpu, metric::kSmClock, plan.level, gpus, plan.b0,
                              plan.b1);
  // With utilization recorded, busy time is its time-weighted integral / 100 (pyramid + edges).
  std::vector<MetricStats> util;
  if (hasUtil) util = utilStats ? *utilStats : metricStats(run, metric::kUtil, gpus, range);

  for (size_t k = 0; k < gpus.size(); ++k) {
    const int g = gpus[k];
    if (g < 0 || static_cast<size_t>(g) >= meta.entities) continue;
    GpuThrottle& res = out[k];
    const ThrottleParams p = throttleParams(run, g, options, observed);
    res.busy_source = p.busy_source;
    res.reference_clock_mhz = p.reference_clock_mhz;
    res.threshold_mhz = p.threshold_mhz;
    if (!std::isfinite(p.threshold_mhz) || meta.samples(static_cast<size_t>(g)) == 0) continue;
    if (p.busy_source == BusySource::Utilization)
      res.busy_s = util[k].covered_s > 0 ? util[k].mean * util[k].covered_s / 100.0 : 0.0;

    // Whole buckets whose lowest clock is at or above the threshold hold no throttled sample;
    // the others are read raw.
    std::vector<bool> raw(plan.buckets(), false);
    for (size_t b = plan.b0; b < plan.b1; ++b) {
      const auto clk = clockRows.at(g, b);
      if (clk.count == 0) continue;
      switch (p.busy_source) {
        case BusySource::Utilization:
          raw[b - plan.b0] = static_cast<double>(clk.min) < p.threshold_mhz;
          break;
        case BusySource::IdleReasonBit:
          raw[b - plan.b0] = true;
          break;
        case BusySource::AssumedBusy:
          if (static_cast<double>(clk.min) < p.threshold_mhz) {
            raw[b - plan.b0] = true;
          } else {
            res.busy_s += clk.dt;
          }
          break;
      }
    }

    const int64_t thr = p.gap_threshold_ns;
    for (const Interval& piece : rawPieces(plan, meta.grid, raw)) {
      const Interval w = rawWindow(piece, plan.range, thr);
      const auto gi = static_cast<size_t>(g);
      const Samples clock =
          run.readSamples(SeriesKind::Gpu, gi, metric::kSmClock, w.start, w.end, false);
      if (clock.t_ns.empty()) continue;
      auto col = [&](std::string_view m) {
        return meta.metric(m) ? run.readSamples(SeriesKind::Gpu, gi, m, w.start, w.end, false).v
                              : std::vector<double>{};
      };
      const std::vector<double> util = hasUtil ? col(metric::kUtil) : std::vector<double>{};
      // Columns are read only as far as they matter: with utilization recorded, a window without
      // a busy sample below the threshold adds nothing (its busy time is already counted).
      bool candidate = p.busy_source != BusySource::Utilization;
      for (size_t i = 0; i < clock.v.size() && !candidate; ++i)
        candidate = clock.v[i] < p.threshold_mhz &&
                    (i >= util.size() || !std::isfinite(util[i]) || util[i] >= p.busy_util_pct);
      if (!candidate) continue;
      const std::vector<uint32_t> masks = run.readThrottle(gi, clock.first, clock.t_ns.size());
      // Power and temperature only matter for throttled samples without a recorded reason.
      bool infer = false;
      for (size_t i = 0; i < clock.v.size() && !infer; ++i) {
        if (!(clock.v[i] < p.threshold_mhz)) continue;
        infer = i >= masks.size() || masks[i] == throttle::kUnknown ||
                (masks[i] & throttle::kSlowdownMask) == 0;
      }
      std::vector<double> power;
      if (infer && p.domain_power_gpu >= 0 && meta.metric(metric::kPower)) {
        const auto pg = static_cast<size_t>(p.domain_power_gpu);
        const Samples dp = run.readSamples(SeriesKind::Gpu, pg, metric::kPower,
                                           w.start - meta.gapThresholdNs[pg], w.end, false);
        power = heldAt(clock.t_ns, dp, meta.gapThresholdNs[pg]);
      } else if (infer) {
        power = col(metric::kPower);
      }
      const std::vector<double> temp = infer ? col(metric::kTemp) : std::vector<double>{};
      const ThrottleColumns cols{clock.t_ns, clock.v, util, power, temp, masks};
      detectThrottleInSamples(cols, p, piece, plan.range, res);
    }
    finishThrottle(res);
  }
  return out;
}

ThrottleSlowdown estimateSlowdown(const GpuThrottle& g, const IntervalSet& compute) {
  ThrottleSlowdown s;
  if (!std::isfinite(g.reference_clock_mhz) || g.reference_clock_mhz <= 0) return s;
  size_t j = 0;
  for (const ThrottleSegment& seg : g.segments) {
    while (j < compute.size() && compute[j].end <= seg.start_ns)
      ++j;
    for (size_t k = j; k < compute.size() && compute[k].start < seg.end_ns; ++k) {
      const int64_t lo = std::max(compute[k].start, seg.start_ns);
      const int64_t hi = std::min(compute[k].end, seg.end_ns);
      if (hi <= lo) continue;
      s.throttled_compute_ns += hi - lo;
      s.lost_ns += static_cast<double>(hi - lo) * (1.0 - seg.clock_mhz / g.reference_clock_mhz);
    }
  }
  return s;
}

}  // namespace wl
