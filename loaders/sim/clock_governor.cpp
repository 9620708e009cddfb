// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/clock_governor.h"

#include <algorithm>
#include <cmath>

#include "loaders/core/throttle_reasons.h"

namespace wl::sim {

ClockGovernor::ClockGovernor(const PlatformProfile& p, const Topology& topo,
                             const PowerModel& power, double powerLimitW, double dtS)
    : p_(p),
      topo_(topo),
      power_(power),
      limit_(powerLimitW * p.power_cap_setpoint_frac),
      dtMs_(dtS * 1e3),
      capDecay_(p.power_cap_tau_s > 0 ? std::exp(-dtS / p.power_cap_tau_s) : 0.0) {
  const auto n = static_cast<size_t>(topo.world());
  continuous_.assign(n, p.max_sm_clock_mhz);
  applied_.assign(n, p.max_sm_clock_mhz);
  freeContinuous_.assign(n, p.max_sm_clock_mhz);
  freeApplied_.assign(n, p.max_sm_clock_mhz);
  idleS_.assign(n, 0.0);
  capActivity_.assign(n, 0.0);
  reasons_.assign(n, 0);
  binding_.assign(n, 0);
  hwEngaged_.assign(n, 0);
}

void ClockGovernor::startIdle() {
  for (auto* v : {&continuous_, &applied_, &freeContinuous_, &freeApplied_})
    std::fill(v->begin(), v->end(), p_.idle_sm_clock_mhz);
  std::fill(idleS_.begin(), idleS_.end(), p_.idle_downclock_s);
  std::fill(capActivity_.begin(), capActivity_.end(), 0.0);
  std::fill(reasons_.begin(), reasons_.end(), throttle::kGpuIdle);
  std::fill(binding_.begin(), binding_.end(), 0u);
}

double ClockGovernor::quantize(double f) const {
  const double fmax = p_.max_sm_clock_mhz;
  const double steps = std::ceil((fmax - f) / p_.clock_step_mhz - 1e-9);
  return std::max(p_.idle_sm_clock_mhz, fmax - std::max(0.0, steps) * p_.clock_step_mhz);
}

void ClockGovernor::update(std::span<const double> activity, std::span<const double> busy,
                           std::span<const double> tempC) {
  const double fmax = p_.max_sm_clock_mhz;
  const double dtS = dtMs_ * 1e-3;
  auto slew = [&](double& f, double target) {
    if (target < f)
      f = std::max(target, f - p_.slew_down_mhz_per_ms * dtMs_);
    else
      f = std::min(target, f + p_.slew_up_mhz_per_ms * dtMs_);
  };
  for (int pkg = 0; pkg < topo_.packages(); ++pkg) {
    const std::vector<int>& gpus = topo_.packageGpus(pkg);
    bool domainIdle = true;
    domainTemp_.clear();
    domainActivity_.clear();
    for (int g : gpus) {
      const auto i = static_cast<size_t>(g);
      idleS_[i] = busy[i] > 0 ? 0.0 : idleS_[i] + dtS;
      domainIdle = domainIdle && idleS_[i] >= p_.idle_downclock_s;
      capActivity_[i] = activity[i] + (capActivity_[i] - activity[i]) * capDecay_;
      domainTemp_.push_back(tempC[i]);
      domainActivity_.push_back(capActivity_[i]);
    }
    const double cap =
        power_.capClock(gpus, domainTemp_, domainActivity_, limit_, p_.idle_sm_clock_mhz);
    for (int g : gpus) {
      const auto i = static_cast<size_t>(g);
      uint32_t why = 0, bind = 0;
      const double free = domainIdle ? p_.idle_sm_clock_mhz : fmax;
      double target = free;
      if (domainIdle) why |= throttle::kGpuIdle;
      if (!domainIdle && cap < fmax - 0.5 * p_.clock_step_mhz) {
        target = cap;
        why |= bind = throttle::kSwPowerCap;
      }
      const double t = tempC[i];
      if (t > p_.max_operating_temp_c) {
        const double ceiling = fmax - p_.sw_thermal_mhz_per_c * (t - p_.max_operating_temp_c);
        why |= throttle::kSwThermal;
        if (ceiling < target) target = ceiling, bind = throttle::kSwThermal;
      }
      if (t >= p_.slowdown_temp_c) hwEngaged_[i] = 1;
      if (hwEngaged_[i] && t < p_.slowdown_temp_c - 2.0) hwEngaged_[i] = 0;
      if (hwEngaged_[i]) {
        const double ceiling = fmax * p_.hw_slowdown_factor;
        why |= throttle::kHwSlowdown | throttle::kHwThermal;
        if (ceiling < target) target = ceiling, bind = throttle::kHwSlowdown | throttle::kHwThermal;
      }
      if (!unlimited_.empty() && unlimited_[i]) {
        target = free;
        why &= throttle::kGpuIdle;
        bind = 0;
      }
      target = std::clamp(target, p_.idle_sm_clock_mhz, fmax);
      if ((reasons_[i] & throttle::kGpuIdle) && !domainIdle) {
        // Waking from idle: the clock jumps to its target (a boost within microseconds); the
        // slew limits apply to the governor's adjustments under load.
        continuous_[i] = target;
        freeContinuous_[i] = free;
      }
      slew(continuous_[i], target);
      slew(freeContinuous_[i], free);
      applied_[i] = quantize(continuous_[i]);
      freeApplied_[i] = quantize(freeContinuous_[i]);
      reasons_[i] = why;
      binding_[i] = bind;
    }
  }
}

}  // namespace wl::sim
