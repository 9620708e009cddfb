// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/energy_attribution.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "loaders/format/run_file.h"

namespace wl {

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
                                  const RankBreakdown& b, const ClassStateTotals& st,
                                  const std::vector<Iteration>& iterations,
                                  const std::vector<std::pair<std::string, IntervalSet>>& phases) {
  EnergyAttribution e;
  e.rank = b.rank;
  e.gpu = b.gpu;
  e.total_j = power.between(range.t0, range.t1);
  if (b.first_ns >= 0 && st.has_energy) {
    e.compute_j = st.joulesWhere(kStateCompute);
    e.exposed_comm_j = st.joulesWhere(kStateComm, kStateCompute);
    e.exposed_memory_j = st.joulesWhere(kStateMemory, kStateCompute | kStateComm);
    e.other_events_j = st.joulesWhere(kStateOther, kStateCompute | kStateComm | kStateMemory);
    e.idle_j = power.between(b.first_ns, b.last_ns) - st.joulesWhere(0);
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

std::vector<std::pair<std::string, IntervalSet>> phasesOfRank(const RunFile& run, int rank) {
  std::map<std::string, std::vector<Interval>> byPhase;
  for (const Annotation& an : run.annotations()) {
    if (an.rank != rank) continue;
    const std::string ph = phaseOf(run.str(an.name));
    if (!ph.empty()) byPhase[ph].push_back({an.start_ns, an.start_ns + an.dur_ns});
  }
  std::vector<std::pair<std::string, IntervalSet>> phases;
  for (auto& [name, ivs] : byPhase)
    phases.emplace_back(name, unionOf(std::move(ivs)));
  return phases;
}

}  // namespace wl
