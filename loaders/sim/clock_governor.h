// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The clock governor of every GPU: after each physics step it picks the SM clock of the next one.
//
// Targets, lowest wins:
//   power cap     the clock at which the power domain (a GPU, or an MI250 package) would draw its
//                 limit at its temperature and at the activity of the last power_cap_tau_s (an
//                 exponential average: the firmware caps averaged power, so a burst of dense
//                 compute after a quiet spell runs above the limit until the average catches up:
//                 the seed paper's peak power excursions) (NVML reason 0x4, SW power cap);
//   SW thermal    above the max operating temperature the ceiling drops by k MHz per degree (0x20);
//   HW slowdown   at the slowdown temperature the clock is cut by a factor (0x8 | 0x40), released
//                 2 C below it;
//   idle          after idle_downclock_s without kernels the clock falls to the idle clock (0x1).
// The clock moves towards the target at a limited slew rate (down faster than up) and is applied
// in steps of clock_step_mhz.
//
// Beside the applied clock the governor keeps the clock the GPU would run at if no power or
// thermal limit existed (the same idle rule and slew, no caps), and which limit bound the clock in
// each step: the simulator's ground truth of throttling (docs/simulator.md), independent of any
// threshold the analyses use.

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "loaders/sim/platform_profile.h"
#include "loaders/sim/power_model.h"
#include "loaders/sim/topology.h"

namespace wl::sim {

class ClockGovernor {
 public:
  ClockGovernor(const PlatformProfile& p, const Topology& topo, const PowerModel& power,
                double powerLimitW, double dtS);

  // GPUs whose clock no power or thermal limit lowers (an unthrottled twin, SimConfig::noThrottle):
  // they run at the clock without limits and record no slowdown reason.
  void setUnlimited(std::vector<uint8_t> unlimited) { unlimited_ = std::move(unlimited); }
  // Sets every GPU idle at the idle clock (the state at the start of a run).
  void startIdle();
  // Chooses the clocks of the next step from the activity, busy fraction and temperature each GPU
  // had in the step that just ended.
  void update(std::span<const double> activity, std::span<const double> busy,
              std::span<const double> tempC);

  double clockMhz(int g) const { return applied_[static_cast<size_t>(g)]; }
  const std::vector<double>& clocks() const { return applied_; }
  // The clock of the next step without power and thermal limits.
  const std::vector<double>& unthrottledClocks() const { return freeApplied_; }
  uint32_t reasons(int g) const { return reasons_[static_cast<size_t>(g)]; }
  const std::vector<uint32_t>& allReasons() const { return reasons_; }
  // The limit that set the lowest target for the next step (kSwPowerCap, kSwThermal or
  // kHwSlowdown | kHwThermal), 0 when none did.
  uint32_t binding(int g) const { return binding_[static_cast<size_t>(g)]; }

 private:
  double quantize(double f) const;

  PlatformProfile p_;
  const Topology& topo_;
  const PowerModel& power_;
  double limit_;
  double dtMs_;
  double capDecay_;
  std::vector<double> continuous_, applied_, idleS_, capActivity_;
  std::vector<double> freeContinuous_, freeApplied_;
  std::vector<uint32_t> reasons_, binding_;
  std::vector<uint8_t> hwEngaged_;
  std::vector<uint8_t> unlimited_;  // empty: none
  std::vector<double> domainTemp_, domainActivity_;
};

}  // namespace wl::sim
