// SPDX-License-Identifier: GPL-3.0-or-later
#include "energy_attribution.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace wl {

EnergyIntegral::EnergyIntegral(std::vector<int64_t> t, std::vector<double> p, int64_t gap)
    : gap_(gap) {
  // Keep the valid samples only.
  for (size_t i = 0; i < std::min(t.size(), p.size()); ++i)
    if (std::isfinite(p[i])) {
      t_.push_back(t[i]);
      p_.push_back(p[i]);
    }
  cum_.assign(t_.size(), 0.0);
  gapAfter_.assign(t_.size(), 1);
  for (size_t i = 0; i + 1 < t_.size(); ++i) {
    const int64_t d = t_[i + 1] - t_[i];
    double e = 0.0;
    if (d > 0 && d <= gap_) {
      e = 0.5 * (p_[i] + p_[i + 1]) * static_cast<double>(d) * 1e-9;
      gapAfter_[i] = 0;
    }
    cum_[i + 1] = cum_[i] + e;
  }
}

double EnergyIntegral::cumulativeAt(int64_t x) const {
  if (t_.empty() || x <= t_.front()) return 0.0;
  if (x >= t_.back()) return cum_.back();
  const size_t j = static_cast<size_t>(std::upper_bound(t_.begin(), t_.end(), x) - t_.begin());
  const size_t i = j - 1;  // t_[i] <= x < t_[j]
  if (gapAfter_[i]) return cum_[i];
  const double d = static_cast<double>(t_[j] - t_[i]);
  const double u = static_cast<double>(x - t_[i]);
  const double px = p_[i] + (p_[j] - p_[i]) * u / d;
  return cum_[i] + 0.5 * (p_[i] + px) * u * 1e-9;
}

double EnergyIntegral::between(int64_t a, int64_t b) const {
  return b > a ? cumulativeAt(b) - cumulativeAt(a) : 0.0;
}

double EnergyIntegral::over(const IntervalSet& set) const {
  double e = 0.0;
  for (const Interval& iv : set)
    e += between(iv.start, iv.end);
  return e;
}

std::string phaseOf(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto has = [&](std::string_view p) { return n.find(p) != std::string::npos; };
  if (has("backward") || has("bwd")) return "backward";
  if (has("forward") || has("fwd")) return "forward";
  if (has("optimizer") || has("optim") || has("adam")) return "optimizer";
  return "";
}

EnergyAttribution attributeEnergy(const EnergyIntegral& power, TimeRange range,
                                  const RankBreakdown& b, const ClassUnions& u,
                                  const std::vector<Iteration>& iterations,
                                  const std::vector<std::pair<std::string, IntervalSet>>& phases) {
  EnergyAttribution e;
  e.rank = b.rank;
  e.gpu = b.gpu;
  e.total_j = power.between(range.t0, range.t1);
  if (b.first_ns >= 0) {
    const IntervalSet cc = unite(u.compute, u.communication);
    const IntervalSet ccm = unite(cc, u.memory);
    e.compute_j = power.over(u.compute);
    e.exposed_comm_j = power.over(subtract(u.communication, u.compute));
    e.exposed_memory_j = power.over(subtract(u.memory, cc));
    e.other_events_j = power.over(subtract(u.other, ccm));
    e.idle_j = power.over(subtract(IntervalSet{{b.first_ns, b.last_ns}}, u.all));
    e.outside_span_j = power.between(range.t0, b.first_ns) + power.between(b.last_ns, range.t1);
  }
  std::vector<double> it;
  for (const Iteration& i : iterations)
    if (i.start_ns >= range.t0 && i.end_ns <= range.t1 && i.end_ns > i.start_ns)
      it.push_back(power.between(i.start_ns, i.end_ns));
  e.iteration_j = spreadOf(it);
  for (const auto& [name, set] : phases)
    e.phases_j.emplace_back(name, power.over(clip(set, range.t0, range.t1)));
  return e;
}

}  // namespace wl
