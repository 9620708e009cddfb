// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/power_model.h"

#include <algorithm>
#include <cmath>

namespace wl::sim {

PowerModel::PowerModel(const PlatformProfile& p, std::vector<double> leakScale)
    : p_(p), leakScale_(std::move(leakScale)) {}

double PowerModel::leak(int g, double tempC) const {
  return p_.power_leak_ref_w * leakScale_[static_cast<size_t>(g)] *
         std::exp(p_.leak_per_c * (tempC - p_.leak_ref_temp_c));
}

double PowerModel::power(int g, double fMhz, double tempC, double activity) const {
  const double x = fMhz / p_.max_sm_clock_mhz;
  const double v = p_.voltage_min_frac + (1.0 - p_.voltage_min_frac) * x;
  return p_.power_base_w + leak(g, tempC) * std::pow(v, p_.leak_voltage_exp) +
         p_.power_dyn_max_w * activity * x * v * v;
}

double PowerModel::capClock(std::span<const int> gpus, std::span<const double> tempC,
                            std::span<const double> activity, double limitW,
                            double minClockMhz) const {
  // Sum over the domain: B + L v(x)^e + K x v(x)^2, increasing and convex in x = f / fmax.
  double B = 0, L = 0, K = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    B += p_.power_base_w;
    L += leak(gpus[i], tempC[i]);
    K += p_.power_dyn_max_w * activity[i];
  }
  const double vmin = p_.voltage_min_frac, dv = 1.0 - vmin, e = p_.leak_voltage_exp;
  auto excess = [&](double x) {
    const double v = vmin + dv * x;
    return B + L * std::pow(v, e) + K * x * v * v - limitW;
  };
  const double xMin = minClockMhz / p_.max_sm_clock_mhz;
  if (excess(1.0) <= 0) return p_.max_sm_clock_mhz;
  if (excess(xMin) >= 0) return minClockMhz;
  // Newton from the right converges monotonically on a convex increasing function.
  double x = 1.0;
  for (int i = 0; i < 8; ++i) {
    const double v = vmin + dv * x;
    const double d = L * e * std::pow(v, e - 1.0) * dv + K * (v * v + 2.0 * x * v * dv);
    const double step = excess(x) / d;
    x -= step;
    if (std::fabs(step) < 1e-7) break;
  }
  return std::clamp(x, xMin, 1.0) * p_.max_sm_clock_mhz;
}

}  // namespace wl::sim
