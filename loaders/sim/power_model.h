// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Board power of one GPU from what it runs, its clock and its temperature:
//
//   P = P_base + P_leak(T) v(f)^e + P_dyn x a x (f / fmax) x v(f)^2
//   v(f) = vmin + (1 - vmin) f / fmax            (voltage follows the clock along the V/f curve)
//   P_leak(T) = P_leak_ref exp(k (T - T_ref))    (leakage grows with temperature, and steeply
//                                                 with the voltage: e = leak_voltage_exp)
//
// where a is the time-weighted activity of the kernels running (1 for a large tensor-core GEMM,
// less for attention, memory-bound and communication kernels, 0 when idle). Every GPU has its own
// leakage (part-to-part variation drawn from the seed). The same model gives the clock at which a
// power domain (one GPU, or an MI250 package of two GCDs) draws exactly its power limit, which is
// what the governor steers towards.

#include <span>
#include <vector>

#include "loaders/sim/platform_profile.h"

namespace wl::sim {

class PowerModel {
 public:
  PowerModel(const PlatformProfile& p, std::vector<double> leakScale);

  // Power of GPU g at clock f (MHz), temperature T (C) and activity a.
  double power(int g, double fMhz, double tempC, double activity) const;
  // The clock (MHz) at which the GPUs of a domain, all at one clock, draw `limitW` in total at
  // their temperatures and activities; the max clock if they stay below, the min clock if even
  // that is too much.
  double capClock(std::span<const int> gpus, std::span<const double> tempC,
                  std::span<const double> activity, double limitW, double minClockMhz) const;

 private:
  double leak(int g, double tempC) const;

  PlatformProfile p_;
  std::vector<double> leakScale_;
};

}  // namespace wl::sim
