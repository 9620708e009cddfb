// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Spatial imbalance (docs/analyses.md, "Spatial imbalance"): per node, temperature, SM clock and
// power by GPU slot, with their spread (max - min) and coefficient of variation (population
// standard deviation / mean); and per slot across nodes, which shows whether rear GPUs run hotter
// than front ones (the seed paper reports up to 27 %). A GPU's slot is its chassis slot where the
// metadata has one, else its index inside the node. And per package of several GPUs (the two GCDs
// of an MI250 OAM), the intra-package skew: how much hotter one GCD runs than the other.

#include <string>
#include <vector>

#include "loaders/core/power_domain.h"
#include "loaders/core/run_model.h"

namespace wl {

struct SlotCondition {
  int gpu = -1;
  int node = 0;
  int slot = 0;
  std::string hostname;
  double temp_mean_c = kNaN, temp_max_c = kNaN, clock_mean_mhz = kNaN, power_mean_w = kNaN;
};

struct Spread {
  size_t n = 0;
  double min = kNaN, max = kNaN, spread = kNaN, mean = kNaN, cv = kNaN;
};
Spread spreadOfValues(const std::vector<double>& values);  // NaN values are skipped

struct NodeImbalance {
  int node = 0;
  std::string hostname;
  std::vector<SlotCondition> gpus;  // by slot
  Spread temp_mean_c, clock_mean_mhz, power_mean_w;
};

struct SlotSummary {
  int slot = 0;
  size_t gpus = 0;
  double temp_mean_c = kNaN, clock_mean_mhz = kNaN, power_mean_w = kNaN;
};

// The GPUs of one package (a power domain of several GPUs) side by side.
struct PackageSkew {
  int domain = -1;
  std::string name;  // the domain's name, "package 3"
  int node = 0;
  std::vector<int> gpus;            // its analysed GPUs, ascending
  std::vector<double> temp_mean_c;  // per GPU, in that order
  double temp_skew_c = kNaN;        // max - min of their mean temperatures
  double temp_max_skew_c = kNaN;    // max - min of their peak temperatures
  double clock_skew_mhz = kNaN;     // max - min of their mean SM clocks
  int hottest_gpu = -1;             // the GPU with the highest mean temperature
};

struct SpatialImbalance {
  std::vector<NodeImbalance> nodes;
  std::vector<SlotSummary> by_slot;
  Spread temp_mean_c, clock_mean_mhz, power_mean_w;  // over all GPUs
  int hottest_slot = -1, coolest_slot = -1;
  double hottest_vs_coolest_pct = kNaN;  // (T_hot - T_cool) / T_cool x 100, slot means
  // Packages with at least two analysed GPUs, and the spread of their skews over packages.
  std::vector<PackageSkew> packages;
  Spread package_temp_skew_c, package_clock_skew_mhz;
};

SpatialImbalance analyzeSpatial(std::vector<SlotCondition> gpus);

// Adds the intra-package skews of the domains with several GPUs, from the GPUs' conditions.
void addPackageSkews(SpatialImbalance& s, const std::vector<SlotCondition>& gpus,
                     const std::vector<PowerDomain>& domains);

}  // namespace wl
