// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/stragglers.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "loaders/core/metrics.h"

namespace wl {
namespace {

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  return lo + 1 < v.size() ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

// The latest valid value of a metric at or before t (within the gap threshold).
double valueAt(const RunFile& run, int gpu, std::string_view metric, int64_t t) {
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (gpu < 0 || static_cast<size_t>(gpu) >= meta.entities || !meta.metric(metric)) return kNaN;
  const int64_t thr = meta.gapThresholdNs[static_cast<size_t>(gpu)];
  const Samples s =
      run.readSamples(SeriesKind::Gpu, static_cast<size_t>(gpu), metric, t - thr, t, false);
  for (size_t i = s.v.size(); i-- > 0;)
    if (std::isfinite(s.v[i])) return s.v[i];
  return kNaN;
}

}  // namespace

CollectiveMatcher::CollectiveMatcher(const RunFile& run) : run_(run) {
  blocks_ = run.collectiveBlocks();
  if (!blocks_) keysByTrack_ = run.collectiveKeysByTrack();
}

void CollectiveMatcher::addTrack(size_t order, size_t track, size_t firstEvent,
                                 std::span<const KernelEvent> events, TimeRange range) {
  if (track >= run_.tracks().size() || events.empty()) return;
  std::vector<CollectiveKey> read;
  if (blocks_) read = run_.collectiveKeys(track, (*blocks_)[track]);
  const std::vector<CollectiveKey>& keys = blocks_ ? read : keysByTrack_[track];
  const int rank = run_.tracks()[track].rank;
  struct Arrival {
    const CollectiveKey* key;
    int64_t start_ns;
  };
  std::vector<Arrival> arrivals;
  auto it = std::lower_bound(keys.begin(), keys.end(), firstEvent,
                             [](const CollectiveKey& k, size_t e) { return k.event < e; });
  for (; it != keys.end() && it->event < firstEvent + events.size(); ++it) {
    const KernelEvent& e = events[it->event - firstEvent];
    if (it->seq < 0 || !range.contains(e.start_ns)) continue;
    arrivals.push_back({&*it, e.start_ns});
  }
  std::lock_guard lock(mutex_);
  for (const Arrival& a : arrivals) {
    Folded& f = folded_[Key{a.key->pg_name, a.key->seq}];
    const Stamp stamp{order, track, a.key->event};
    if (f.arrivals == 0 || f.named < stamp) {
      f.collective = a.key->collective;
      f.named = stamp;
    }
    if (f.arrivals == 0) f.first_rank = rank;
    ++f.arrivals;
    ++arrivalsByRank_[rank];
    f.earliest_ns = std::min(f.earliest_ns, a.start_ns);
    if (a.start_ns > f.latest_ns) {
      f.latest_ns = a.start_ns;
      f.latest_rank = rank;
      f.latest_ties = 1;
    } else if (a.start_ns == f.latest_ns) {
      ++f.latest_ties;
    }
  }
}

MatchedCollectives CollectiveMatcher::result() const {
  std::lock_guard lock(mutex_);
  MatchedCollectives out;
  out.arrivalsByRank = arrivalsByRank_;
  for (const auto& [key, f] : folded_) {
    if (f.arrivals < 2) {
      // A kernel alone is no instance: its rank's arrival does not count.
      auto r = out.arrivalsByRank.find(f.first_rank);
      if (r != out.arrivalsByRank.end() && --r->second == 0) out.arrivalsByRank.erase(r);
      continue;
    }
    CollectiveInstance inst;
    inst.pg_name = key.pg;
    inst.seq = key.seq;
    inst.collective = f.collective;
    inst.arrivals = f.arrivals;
    inst.earliest_ns = f.earliest_ns;
    inst.latest_ns = f.latest_ns;
    inst.skew_ns = f.latest_ns - f.earliest_ns;
    inst.last_rank = f.latest_ties == 1 ? f.latest_rank : -1;
    out.instances.push_back(inst);
  }
  std::sort(out.instances.begin(), out.instances.end(),
            [](const CollectiveInstance& a, const CollectiveInstance& b) {
              if (a.earliest_ns != b.earliest_ns) return a.earliest_ns < b.earliest_ns;
              return a.seq != b.seq ? a.seq < b.seq : a.pg_name < b.pg_name;
            });
  return out;
}

StragglerReport analyzeStragglers(const RunFile& run, const MatchedCollectives& matched,
                                  const std::vector<GpuCondition>& conditions,
                                  size_t worstInstances) {
  const std::vector<CollectiveInstance>& instances = matched.instances;
  StragglerReport r;
  r.instances = instances.size();
  if (instances.empty()) return r;
  std::vector<double> skews;
  std::map<int, RankArrivals> ranks;
  for (const auto& [rank, n] : matched.arrivalsByRank) {
    RankArrivals& ra = ranks[rank];
    ra.rank = rank;
    ra.instances = n;
  }
  for (const CollectiveInstance& inst : instances) {
    skews.push_back(static_cast<double>(inst.skew_ns));
    if (inst.last_rank >= 0) {
      RankArrivals& ra = ranks[inst.last_rank];
      ++ra.last;
      ra.caused_skew_ns += inst.skew_ns;
    }
  }
  double sum = 0;
  for (double s : skews)
    sum += s;
  r.skew_mean_ns = sum / static_cast<double>(skews.size());
  r.skew_p50_ns = quantile(skews, 0.5);
  r.skew_p99_ns = quantile(skews, 0.99);
  r.skew_max_ns = *std::max_element(skews.begin(), skews.end());
  for (auto& [rank, ra] : ranks) {
    for (const RankInfo& ri : run.ranks())
      if (ri.rank == rank) ra.gpu = ri.gpu;
    r.ranks.push_back(ra);
  }
  const auto best = std::max_element(
      r.ranks.begin(), r.ranks.end(), [](const RankArrivals& a, const RankArrivals& b) {
        return a.last != b.last ? a.last < b.last : a.caused_skew_ns < b.caused_skew_ns;
      });
  if (best == r.ranks.end() || best->last == 0) return r;
  r.straggler_rank = best->rank;
  r.straggler_gpu = best->gpu;
  r.straggler_share = static_cast<double>(best->last) / static_cast<double>(r.instances);

  // Its GPU against the median of the others.
  std::vector<double> clk, tmp, pwr, thr;
  for (const GpuCondition& c : conditions) {
    if (c.gpu == r.straggler_gpu) {
      r.straggler = c;
      continue;
    }
    clk.push_back(c.clock_mhz);
    tmp.push_back(c.temp_c);
    pwr.push_back(c.power_w);
    thr.push_back(c.throttled_fraction);
  }
  r.others.clock_mhz = median(clk);
  r.others.temp_c = median(tmp);
  r.others.power_w = median(pwr);
  r.others.throttled_fraction = median(thr);
  const GpuCondition& s = r.straggler;
  if (r.straggler_gpu < 0 || s.gpu < 0) {
    r.likely_cause = "unknown: the straggler rank has no GPU telemetry";
  } else if (std::isfinite(s.throttled_fraction) &&
             s.throttled_fraction >
                 (std::isfinite(r.others.throttled_fraction) ? r.others.throttled_fraction : 0.0) +
                     0.05) {
    r.likely_cause =
        "throttling (" + (s.dominant_cause.empty() ? "unknown" : s.dominant_cause) + ")";
  } else if (std::isfinite(s.clock_mhz) && std::isfinite(r.others.clock_mhz) &&
             s.clock_mhz < 0.97 * r.others.clock_mhz) {
    r.likely_cause = "lower SM clock";
  } else if (std::isfinite(s.temp_c) && std::isfinite(r.others.temp_c) &&
             s.temp_c > r.others.temp_c + 5.0) {
    r.likely_cause = "hotter GPU";
  } else {
    r.likely_cause = "no GPU-side cause visible (host, input pipeline or network)";
  }

  // The most skewed instances the straggler arrived last at, joined with its GPU's telemetry.
  std::vector<const CollectiveInstance*> mine;
  for (const CollectiveInstance& inst : instances)
    if (inst.last_rank == r.straggler_rank) mine.push_back(&inst);
  std::sort(mine.begin(), mine.end(), [](const auto* a, const auto* b) {
    return a->skew_ns != b->skew_ns ? a->skew_ns > b->skew_ns : a->earliest_ns < b->earliest_ns;
  });
  mine.resize(std::min(mine.size(), worstInstances));
  for (const CollectiveInstance* inst : mine) {
    StragglerSample smp;
    smp.at_ns = inst->latest_ns;
    smp.skew_ns = inst->skew_ns;
    smp.rank = r.straggler_rank;
    smp.gpu = r.straggler_gpu;
    smp.collective = run.str(inst->collective);
    smp.clock_mhz = valueAt(run, smp.gpu, metric::kSmClock, smp.at_ns);
    smp.temp_c = valueAt(run, smp.gpu, metric::kTemp, smp.at_ns);
    smp.power_w = valueAt(run, smp.gpu, metric::kPower, smp.at_ns);
    r.worst.push_back(std::move(smp));
  }
  return r;
}

}  // namespace wl
