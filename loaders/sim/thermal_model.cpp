// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/thermal_model.h"

#include <algorithm>
#include <cmath>

namespace wl::sim {

ThermalModel::ThermalModel(const PlatformProfile& p, const Topology& topo, const ThermalSite& site,
                           double dtS, std::vector<double> resistanceScale)
    : p_(p),
      topo_(topo),
      dieDecay_(std::exp(-dtS / p.die_tau_s)),
      sinkDecay_(std::exp(-dtS / p.sink_tau_s)),
      memDecay_(std::exp(-dtS / p.mem_thermal_tau_s)),
      fanDecay_(std::exp(-dtS / p.fan_tau_s)),
      scale_(std::move(resistanceScale)) {
  const int nodes = topo.world() > 0 ? topo.placement(topo.world() - 1).node + 1 : 0;
  nodeInlet_.resize(static_cast<size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    const auto i = static_cast<size_t>(n);
    nodeInlet_[i] = site.inletC + site.inletRisePerNodeC * n +
                    (i < site.nodeOffsetC.size() ? site.nodeOffsetC[i] : 0.0);
  }
  const double limited = std::clamp(site.fanMaxFrac, p.fan_min_frac, 1.0);
  fanMax_.assign(static_cast<size_t>(nodes), site.fanLimitedNodes.empty() ? limited : 1.0);
  for (int n : site.fanLimitedNodes)
    if (n >= 0 && n < nodes) fanMax_[static_cast<size_t>(n)] = limited;
  fan_ = fanMax_;
  hottest_.assign(static_cast<size_t>(nodes), 0.0);
  convection_.resize(static_cast<size_t>(nodes));
  for (size_t n = 0; n < convection_.size(); ++n)
    convection_[n] = std::pow(fanMax_[n], -p.fan_resistance_exp);
  const auto n = static_cast<size_t>(topo.world());
  die_.assign(n, 0.0);
  sink_.assign(n, 0.0);
  mem_.assign(n, 0.0);
  inlet_.assign(n, 0.0);
  heat_.assign(n, 0.0);
  packageInlet_.assign(static_cast<size_t>(topo.packages()), 0.0);
  for (int g = 0; g < topo.world(); ++g)
    inlet_[static_cast<size_t>(g)] = nodeInlet_[static_cast<size_t>(topo.placement(g).node)];
}

double ThermalModel::sinkResistance(int g) const {
  return p_.sink_resistance_c_per_w * scale_[static_cast<size_t>(g)] *
         convection_[static_cast<size_t>(topo_.placement(g).node)];
}

void ThermalModel::updateFans(bool settleNow) {
  std::fill(hottest_.begin(), hottest_.end(), -1e9);
  for (int g = 0; g < topo_.world(); ++g) {
    double& h = hottest_[static_cast<size_t>(topo_.placement(g).node)];
    h = std::max(h, die_[static_cast<size_t>(g)]);
  }
  const double span = std::max(1e-9, p_.fan_ramp_full_c - p_.fan_ramp_start_c);
  for (size_t n = 0; n < fan_.size(); ++n) {
    const double ramp = std::clamp((hottest_[n] - p_.fan_ramp_start_c) / span, 0.0, 1.0);
    const double target = std::min(fanMax_[n], p_.fan_min_frac + (1.0 - p_.fan_min_frac) * ramp);
    fan_[n] = settleNow ? target : target + (fan_[n] - target) * fanDecay_;
    convection_[n] = std::pow(fan_[n], -p_.fan_resistance_exp);
  }
}

void ThermalModel::updateInlets() {
  // Packages are numbered front row first within a node, so every upstream package comes first.
  for (int pkg = 0; pkg < topo_.packages(); ++pkg) {
    const std::vector<int>& gpus = topo_.packageGpus(pkg);
    const GpuPlacement& pl = topo_.placement(gpus.front());
    const double fan = fan_[static_cast<size_t>(pl.node)];
    double in = nodeInlet_[static_cast<size_t>(pl.node)];
    if (pl.upstreamPackage >= 0) {
      double q = 0;
      for (int u : topo_.packageGpus(pl.upstreamPackage))
        q += heat_[static_cast<size_t>(u)];
      in = packageInlet_[static_cast<size_t>(pl.upstreamPackage)] +
           q / (p_.air_conductance_w_per_k * fan);
    }
    packageInlet_[static_cast<size_t>(pkg)] = in;
    double gcd = in;
    for (int g : gpus) {
      inlet_[static_cast<size_t>(g)] = gcd;
      if (gpus.size() > 1)
        gcd += heat_[static_cast<size_t>(g)] / (p_.package_air_conductance_w_per_k * fan);
    }
  }
}

void ThermalModel::settle(std::span<const double> powerW) {
  // Fixed point of the fans and the air chain: a few passes converge (each pass moves the fans
  // by a contraction of the temperature change).
  for (int pass = 0; pass < 60; ++pass) {
    for (int g = 0; g < topo_.world(); ++g)
      heat_[static_cast<size_t>(g)] = powerW[static_cast<size_t>(g)];
    updateInlets();
    for (int g = 0; g < topo_.world(); ++g) {
      const auto i = static_cast<size_t>(g);
      const double P = powerW[i];
      const double conv = convection_[static_cast<size_t>(topo_.placement(g).node)];
      sink_[i] = inlet_[i] + sinkResistance(g) * P;
      die_[i] = sink_[i] + p_.die_resistance_c_per_w * scale_[i] * P;
      mem_[i] = inlet_[i] + p_.mem_temp_offset_c + p_.mem_thermal_resistance_c_per_w * conv * P;
    }
    updateFans(true);
  }
}

void ThermalModel::step(std::span<const double> powerW) {
  updateInlets();  // from last step's heat flows
  for (int g = 0; g < topo_.world(); ++g) {
    const auto i = static_cast<size_t>(g);
    const double P = powerW[i];
    const double conv = convection_[static_cast<size_t>(topo_.placement(g).node)];
    const double rs = sinkResistance(g);
    const double sinkEq = inlet_[i] + rs * P;
    sink_[i] = sinkEq + (sink_[i] - sinkEq) * sinkDecay_;
    const double dieEq = sink_[i] + p_.die_resistance_c_per_w * scale_[i] * P;
    die_[i] = dieEq + (die_[i] - dieEq) * dieDecay_;
    const double memEq =
        inlet_[i] + p_.mem_temp_offset_c + p_.mem_thermal_resistance_c_per_w * conv * P;
    mem_[i] = memEq + (mem_[i] - memEq) * memDecay_;
    heat_[i] = (sink_[i] - inlet_[i]) / rs;
  }
  updateFans(false);
}

}  // namespace wl::sim
