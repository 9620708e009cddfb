// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The thermal state of every GPU, the air that reaches it and the chassis fans that move the air.
//
// Two time constants per GPU (die over heatsink, heatsink over its inlet air), exact updates over
// a step of length dt at constant power P:
//
//   T_sink' = (T_in + R_sink(fan) P - T_sink) / tau_sink     (slow: tens of seconds)
//   T_die'  = (T_sink + R_die P - T_die) / tau_die           (fast: a fraction of a second)
//   T_mem'  = (T_in + offset + R_mem(fan) P - T_mem) / tau_mem   (HBM)
//
// The die temperature is what temperature.gpu reports. The heat a GPU gives its air is
// Q = (T_sink - T_in) / R_sink(fan): P at equilibrium, lagging P by the heatsink's time constant.
// Air flows front to back: a package breathes the node's inlet air plus the heat every package in
// front of it in the same column gave the air, divided by the column's air conductance
// G_air x fan; inside an MI250 package the second GCD sits downstream of the first in one heatsink
// (G_package x fan). The chassis fans of a node follow its hottest die with a first-order lag;
// faster fans mean more air (G x fan) and a lower heatsink resistance (R_sink x fan^-n, forced
// convection). Each node's inlet is the scenario's cold-aisle temperature plus a rack-position
// gradient and a small per-node offset; every GPU's resistances vary a little from part to part.

#include <span>
#include <vector>

#include "loaders/sim/platform_profile.h"
#include "loaders/sim/sim_config.h"
#include "loaders/sim/topology.h"

namespace wl::sim {

class ThermalModel {
 public:
  ThermalModel(const PlatformProfile& p, const Topology& topo, const ThermalSite& site, double dtS,
               std::vector<double> resistanceScale);

  // Puts every GPU, and the fans, at the equilibrium of constant powers (the idle start of a run).
  void settle(std::span<const double> powerW);
  // Advances every GPU by one step at these powers.
  void step(std::span<const double> powerW);

  const std::vector<double>& dieTemp() const { return die_; }
  const std::vector<double>& sinkTemp() const { return sink_; }
  const std::vector<double>& memTemp() const { return mem_; }
  double inlet(int g) const { return inlet_[static_cast<size_t>(g)]; }
  double fan(int node) const { return fan_[static_cast<size_t>(node)]; }
  double nodeInlet(int node) const { return nodeInlet_[static_cast<size_t>(node)]; }

 private:
  void updateInlets();
  double sinkResistance(int g) const;
  void updateFans(bool settleNow);

  PlatformProfile p_;
  const Topology& topo_;
  std::vector<double> fanMax_;  // per node
  double dieDecay_, sinkDecay_, memDecay_, fanDecay_;
  std::vector<double> scale_;       // per GPU, part-to-part resistance variation
  std::vector<double> nodeInlet_;   // per node
  std::vector<double> fan_;         // per node, fraction of full speed
  std::vector<double> convection_;  // per node, fan^-fan_resistance_exp
  std::vector<double> hottest_;     // per node, scratch
  std::vector<double> die_, sink_, mem_, inlet_, heat_;  // per GPU
  std::vector<double> packageInlet_;                     // per package
};

}  // namespace wl::sim
