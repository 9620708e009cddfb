// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/spatial_imbalance.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace wl {
namespace {

double meanOf(const std::vector<double>& v) {
  double s = 0;
  size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) s += x, ++n;
  return n ? s / static_cast<double>(n) : kNaN;
}

}  // namespace

Spread spreadOfValues(const std::vector<double>& values) {
  Spread s;
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x)) v.push_back(x);
  s.n = v.size();
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.spread = s.max - s.min;
  s.mean = meanOf(v);
  double ss = 0;
  for (double x : v)
    ss += (x - s.mean) * (x - s.mean);
  if (s.mean != 0) s.cv = std::sqrt(ss / static_cast<double>(v.size())) / s.mean;
  return s;
}

SpatialImbalance analyzeSpatial(std::vector<SlotCondition> gpus) {
  SpatialImbalance r;
  std::sort(gpus.begin(), gpus.end(), [](const SlotCondition& a, const SlotCondition& b) {
    return a.node != b.node ? a.node < b.node
                            : (a.slot != b.slot ? a.slot < b.slot : a.gpu < b.gpu);
  });
  std::map<int, NodeImbalance> nodes;
  std::map<int, std::vector<const SlotCondition*>> slots;
  std::vector<double> t, c, p;
  for (const SlotCondition& g : gpus) {
    NodeImbalance& n = nodes[g.node];
    n.node = g.node;
    n.hostname = g.hostname;
    n.gpus.push_back(g);
    slots[g.slot].push_back(&g);
    t.push_back(g.temp_mean_c);
    c.push_back(g.clock_mean_mhz);
    p.push_back(g.power_mean_w);
  }
  r.temp_mean_c = spreadOfValues(t);
  r.clock_mean_mhz = spreadOfValues(c);
  r.power_mean_w = spreadOfValues(p);
  for (auto& [id, n] : nodes) {
    std::vector<double> nt, nc, np;
    for (const SlotCondition& g : n.gpus) {
      nt.push_back(g.temp_mean_c);
      nc.push_back(g.clock_mean_mhz);
      np.push_back(g.power_mean_w);
    }
    n.temp_mean_c = spreadOfValues(nt);
    n.clock_mean_mhz = spreadOfValues(nc);
    n.power_mean_w = spreadOfValues(np);
    r.nodes.push_back(std::move(n));
  }
  double hot = -INFINITY, cool = INFINITY;
  for (const auto& [slot, list] : slots) {
    SlotSummary s;
    s.slot = slot;
    s.gpus = list.size();
    std::vector<double> st, sc, sp;
    for (const SlotCondition* g : list) {
      st.push_back(g->temp_mean_c);
      sc.push_back(g->clock_mean_mhz);
      sp.push_back(g->power_mean_w);
    }
    s.temp_mean_c = meanOf(st);
    s.clock_mean_mhz = meanOf(sc);
    s.power_mean_w = meanOf(sp);
    if (std::isfinite(s.temp_mean_c)) {
      if (s.temp_mean_c > hot) hot = s.temp_mean_c, r.hottest_slot = slot;
      if (s.temp_mean_c < cool) cool = s.temp_mean_c, r.coolest_slot = slot;
    }
    r.by_slot.push_back(s);
  }
  if (r.hottest_slot >= 0 && cool > 0 && r.by_slot.size() > 1)
    r.hottest_vs_coolest_pct = (hot - cool) / cool * 100.0;
  return r;
}

void addPackageSkews(SpatialImbalance& s, const std::vector<SlotCondition>& gpus,
                     const std::vector<PowerDomain>& domains) {
  std::vector<double> tempSkews, clockSkews;
  for (const PowerDomain& d : domains) {
    if (d.gpus.size() < 2) continue;
    PackageSkew p;
    p.domain = d.id;
    p.name = d.name;
    p.node = d.node;
    std::vector<double> maxT, clock;
    for (int g : d.gpus)
      for (const SlotCondition& c : gpus)
        if (c.gpu == g) {
          p.gpus.push_back(g);
          p.temp_mean_c.push_back(c.temp_mean_c);
          maxT.push_back(c.temp_max_c);
          clock.push_back(c.clock_mean_mhz);
        }
    if (p.gpus.size() < 2) continue;
    const Spread t = spreadOfValues(p.temp_mean_c);
    if (t.n >= 2) p.temp_skew_c = t.spread;
    const Spread tm = spreadOfValues(maxT);
    if (tm.n >= 2) p.temp_max_skew_c = tm.spread;
    const Spread c = spreadOfValues(clock);
    if (c.n >= 2) p.clock_skew_mhz = c.spread;
    for (size_t k = 0; k < p.gpus.size(); ++k)
      if (std::isfinite(p.temp_mean_c[k]) && p.temp_mean_c[k] == t.max) {
        p.hottest_gpu = p.gpus[k];
        break;
      }
    tempSkews.push_back(p.temp_skew_c);
    clockSkews.push_back(p.clock_skew_mhz);
    s.packages.push_back(std::move(p));
  }
  s.package_temp_skew_c = spreadOfValues(tempSkews);
  s.package_clock_skew_mhz = spreadOfValues(clockSkews);
}

}  // namespace wl
