// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Analyses per power domain (docs/analyses.md, "Power domains"). A domain (an H100 board, an
// MI250 package of two GCDs) owns power and energy (core/power_domain.h); its power is the power_w
// column of its power GPU, or the sum of its GPUs' columns when each reports its own share. Here:
// which GPUs' columns make the domains' power, each domain's power statistics, energy, burstiness
// and power-cap throttling, and each device's share of its domain's energy, *estimated* from its
// activity where the device does not measure its own. Clocks, temperatures, thermal throttling and
// kernels stay per device (run_analysis.h).

#include <string_view>
#include <vector>

#include "analysis/burstiness.h"
#include "analysis/telemetry_stats.h"
#include "analysis/throttle_detection.h"
#include "loaders/core/power_domain.h"
#include "loaders/format/run_file.h"

namespace wl {

struct DomainAnalysis {
  PowerDomain domain;
  std::vector<int> analysed_gpus;  // its GPUs in the analysed scope
  // The domain's power over the range. A summed domain (power_gpu -1, several GPUs) has the sums
  // of its GPUs' means and integrals; its min and max are unknown (NaN): the GPUs' samples are not
  // simultaneous, so their maxima do not add up to the domain's.
  MetricStats power;
  double energy_j = kNaN;  // = power.integral
  // Of the power GPU's series against the domain's cap; unknown (NaN, ramp not computed) for a
  // summed domain.
  Burstiness burstiness;
  // Over its analysed GPUs with an SM clock: kernel time, and kernel time throttled by a power
  // cause (sw_power_cap, hw_power_brake, power_cap_inferred; against the domain's cap).
  double busy_s = 0.0;
  double power_cap_throttled_s = 0.0;
  bool has_clock = false;

  double powerCapFraction() const {
    return has_clock && busy_s > 0 ? power_cap_throttled_s / busy_s : kNaN;
  }
};

// How a device's share of its domain's energy was estimated.
enum class ShareBasis : uint8_t {
  Measured,     // the device measures it: a board, or a share-reporting GCD (its own energy)
  Utilization,  // the domain's energy split by the devices' utilization integrals
  Equal,        // split equally (no utilization known, or none above 0)
};
std::string_view shareBasisId(ShareBasis b);  // "measured", "utilization", "equal"

struct EnergyShare {
  double energy_j = kNaN;      // estimated energy of the device
  double mean_power_w = kNaN;  // the domain's mean power x the device's share
  double share = kNaN;         // of the domain's energy, 0..1
  ShareBasis basis = ShareBasis::Measured;
};

// The domains that hold at least one of `gpus`, ascending by id.
std::vector<int> domainsOfGpus(const RunFile& run, const std::vector<int>& gpus);
// The GPUs whose power_w columns make those domains' power (their power GPU, or every GPU of a
// summed domain), ascending.
std::vector<int> powerGpusOf(const RunFile& run, const std::vector<int>& domains);
// Every GPU of those domains, ascending.
std::vector<int> membersOf(const RunFile& run, const std::vector<int>& domains);

// A lookup of per-GPU results by GPU id.
template <class T>
const T* findFor(const std::vector<int>& gpus, const std::vector<T>& values, int gpu) {
  for (size_t k = 0; k < gpus.size() && k < values.size(); ++k)
    if (gpus[k] == gpu) return &values[k];
  return nullptr;
}

// Inputs per GPU id, for any GPU the domains need (in scope or not).
struct DomainInputs {
  std::vector<int> gpus;               // ids of the entries below
  std::vector<MetricStats> power;      // power_w statistics over the range
  std::vector<Burstiness> burstiness;  // of the power GPUs
  std::vector<MetricStats> util;       // util_pct statistics (for the energy shares)
  // Of the analysed GPUs (the scope, ascending), in that order: throttle detection's kernel time,
  // power-caused throttled kernel time, and whether the GPU has an SM clock.
  std::vector<int> analysed;
  std::vector<double> busy_s, power_throttled_s;
  std::vector<bool> has_clock;
};

// One DomainAnalysis per domain id in `domains`.
std::vector<DomainAnalysis> analyzeDomains(const RunFile& run, const std::vector<int>& domains,
                                           const DomainInputs& in);

// The estimated share of GPU `gpu` in its domain's energy (docs/analyses.md).
EnergyShare energyShare(const DomainAnalysis& d, int gpu, const DomainInputs& in);

}  // namespace wl
