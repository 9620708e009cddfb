// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/thermal_model.h"

#include <cmath>

namespace wl::sim {

ThermalModel::ThermalModel(const PlatformProfile& p, const Topology& topo, double inletC,
                           double dtS, std::vector<double> resistanceScale,
                           std::vector<double> nodeInletOffsetC)
    : p_(p),
      topo_(topo),
      inletC_(inletC),
      decay_(std::exp(-dtS / p.thermal_tau_s)),
      memDecay_(std::exp(-dtS / p.mem_thermal_tau_s)),
      nodeInlet_(std::move(nodeInletOffsetC)) {
  resistance_.resize(resistanceScale.size());
  for (size_t g = 0; g < resistanceScale.size(); ++g)
    resistance_[g] = p.thermal_resistance_c_per_w * resistanceScale[g];
  for (double& n : nodeInlet_)
    n += inletC;
}

double ThermalModel::inlet(int g, const std::vector<double>& packagePowerW) const {
  const GpuPlacement& pl = topo_.placement(g);
  double t = nodeInlet_[static_cast<size_t>(pl.node)];
  if (pl.upstreamPackage >= 0)
    t += packagePowerW[static_cast<size_t>(pl.upstreamPackage)] / p_.air_conductance_w_per_k;
  return t;
}

void ThermalModel::step(int g, double powerW, double inletC, double& tempC,
                        double& memTempC) const {
  const double eq = inletC + resistance_[static_cast<size_t>(g)] * powerW;
  tempC = eq + (tempC - eq) * decay_;
  const double memEq = inletC + p_.mem_temp_offset_c + p_.mem_thermal_resistance_c_per_w * powerW;
  memTempC = memEq + (memTempC - memEq) * memDecay_;
}

double ThermalModel::idleTemp(int g, double idlePowerW) const {
  const GpuPlacement& pl = topo_.placement(g);
  double in = nodeInlet_[static_cast<size_t>(pl.node)];
  if (pl.upstreamPackage >= 0) in += idlePowerW * p_.gcds_per_package / p_.air_conductance_w_per_k;
  return in + resistance_[static_cast<size_t>(g)] * idlePowerW;
}

double ThermalModel::idleMemTemp(int g, double idlePowerW) const {
  const GpuPlacement& pl = topo_.placement(g);
  double in = nodeInlet_[static_cast<size_t>(pl.node)];
  if (pl.upstreamPackage >= 0) in += idlePowerW * p_.gcds_per_package / p_.air_conductance_w_per_k;
  return in + p_.mem_temp_offset_c + p_.mem_thermal_resistance_c_per_w * idlePowerW;
}

}  // namespace wl::sim
