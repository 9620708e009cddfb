// SPDX-License-Identifier: GPL-3.0-or-later
// Analyses per power domain (domain_analysis.h).
#include "analysis/domain_analysis.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace wl {

std::string_view shareBasisId(ShareBasis b) {
  switch (b) {
    case ShareBasis::Measured:
      return "measured";
    case ShareBasis::Utilization:
      return "utilization";
    case ShareBasis::Equal:
      return "equal";
  }
  return "measured";
}

std::vector<int> domainsOfGpus(const RunFile& run, const std::vector<int>& gpus) {
  std::set<int> ids;
  for (int g : gpus)
    ids.insert(run.domainOf(g).id);
  return {ids.begin(), ids.end()};
}

std::vector<int> powerGpusOf(const RunFile& run, const std::vector<int>& domains) {
  std::set<int> out;
  for (int id : domains) {
    const PowerDomain& d = run.domains()[static_cast<size_t>(id)];
    if (d.power_gpu >= 0) {
      out.insert(d.power_gpu);
    } else {
      out.insert(d.gpus.begin(), d.gpus.end());
    }
  }
  return {out.begin(), out.end()};
}

std::vector<int> membersOf(const RunFile& run, const std::vector<int>& domains) {
  std::set<int> out;
  for (int id : domains) {
    const PowerDomain& d = run.domains()[static_cast<size_t>(id)];
    out.insert(d.gpus.begin(), d.gpus.end());
  }
  return {out.begin(), out.end()};
}

std::vector<DomainAnalysis> analyzeDomains(const RunFile& run, const std::vector<int>& domains,
                                           const DomainInputs& in) {
  std::vector<DomainAnalysis> out;
  for (int id : domains) {
    DomainAnalysis a;
    a.domain = run.domains()[static_cast<size_t>(id)];
    const PowerDomain& d = a.domain;
    for (int g : d.gpus)
      if (std::binary_search(in.analysed.begin(), in.analysed.end(), g))
        a.analysed_gpus.push_back(g);

    if (d.power_gpu >= 0 || d.gpus.size() == 1) {
      const int pg = d.power_gpu >= 0 ? d.power_gpu : d.gpus.front();
      if (const MetricStats* p = findFor(in.gpus, in.power, pg)) a.power = *p;
      if (const Burstiness* b = findFor(in.gpus, in.burstiness, pg)) a.burstiness = *b;
    } else {
      // Summed domain: means and integrals add up over its GPUs; min and max do not.
      MetricStats s;
      double mean = 0, integral = 0, covered = 0;
      bool anyMean = false, anyIntegral = false;
      for (int g : d.gpus) {
        const MetricStats* p = findFor(in.gpus, in.power, g);
        if (!p) continue;
        s.samples += p->samples;
        covered = std::max(covered, p->covered_s);
        if (std::isfinite(p->mean)) mean += p->mean, anyMean = true;
        if (std::isfinite(p->integral)) integral += p->integral, anyIntegral = true;
      }
      s.covered_s = covered;
      if (anyMean) s.mean = mean;
      if (anyIntegral) s.integral = integral;
      a.power = s;
      a.burstiness.power_limit_w = d.power_limit_w;
    }
    a.energy_j = a.power.integral;

    for (size_t k = 0; k < in.analysed.size() && k < in.has_clock.size(); ++k) {
      if (!in.has_clock[k] ||
          std::find(d.gpus.begin(), d.gpus.end(), in.analysed[k]) == d.gpus.end())
        continue;
      a.has_clock = true;
      a.busy_s += in.busy_s[k];
      a.power_cap_throttled_s += in.power_throttled_s[k];
    }
    out.push_back(std::move(a));
  }
  return out;
}

EnergyShare energyShare(const DomainAnalysis& a, int gpu, const DomainInputs& in) {
  EnergyShare s;
  const PowerDomain& d = a.domain;
  const PowerRole role = powerRole(d, gpu);
  if (d.gpus.size() == 1 || role == PowerRole::Share) {
    // The device measures its own energy.
    if (const MetricStats* p = findFor(in.gpus, in.power, gpu)) {
      s.energy_j = p->integral;
      s.mean_power_w = p->mean;
    }
    if (std::isfinite(a.energy_j) && a.energy_j > 0 && std::isfinite(s.energy_j))
      s.share = s.energy_j / a.energy_j;
    s.basis = ShareBasis::Measured;
    return s;
  }
  // One sensor for several devices: split by each device's kernel activity, the time integral of
  // its utilization; equally when that is unknown for one of them or zero for all.
  double total = 0, mine = kNaN;
  bool known = true;
  for (int g : d.gpus) {
    const MetricStats* u = findFor(in.gpus, in.util, g);
    const double act = u && std::isfinite(u->mean) ? u->mean * u->covered_s : kNaN;
    if (!std::isfinite(act)) known = false;
    total += std::isfinite(act) ? act : 0.0;
    if (g == gpu) mine = act;
  }
  if (known && total > 0) {
    s.share = mine / total;
    s.basis = ShareBasis::Utilization;
  } else {
    s.share = 1.0 / static_cast<double>(d.gpus.size());
    s.basis = ShareBasis::Equal;
  }
  s.energy_j = a.energy_j * s.share;
  s.mean_power_w = a.power.mean * s.share;
  return s;
}

}  // namespace wl
