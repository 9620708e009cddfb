// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// First-order thermal model of every GPU, and the air that reaches it.
//
//   T' = (T_inlet + R P - T) / tau                  (GPU, exact update over a step)
//   T_mem' = (T_inlet + offset + R_mem P - T_mem) / tau_mem   (HBM)
//   T_inlet = node inlet + P_upstream / G_air
//
// Air flows front to back: a package in a rear row breathes the air heated by the package in front
// of it in the same column (P_upstream, last step's power), so rear GPUs run hotter than front ones
// at the same power. Each node's inlet is the cold-aisle temperature plus a per-node offset, and
// every GPU's thermal resistance varies a little from part to part (both drawn from the seed).

#include <vector>

#include "sim/platform_profile.h"
#include "sim/topology.h"

namespace wl::sim {

class ThermalModel {
 public:
  ThermalModel(const PlatformProfile& p, const Topology& topo, double inletC, double dtS,
               std::vector<double> resistanceScale, std::vector<double> nodeInletOffsetC);

  // Inlet air of GPU g given last step's package powers.
  double inlet(int g, const std::vector<double>& packagePowerW) const;
  // Advances one GPU by one step at power P; returns nothing, updates the temperatures.
  void step(int g, double powerW, double inletC, double& tempC, double& memTempC) const;
  // Temperatures at which an idle GPU settles (the start of a run).
  double idleTemp(int g, double idlePowerW) const;
  double idleMemTemp(int g, double idlePowerW) const;

 private:
  PlatformProfile p_;
  const Topology& topo_;
  double inletC_;
  double decay_, memDecay_;
  std::vector<double> resistance_;
  std::vector<double> nodeInlet_;
};

}  // namespace wl::sim
