// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/whatif_pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace wl {

std::vector<size_t> paretoFront(const std::vector<TradeoffPoint>& points) {
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i)
    if (std::isfinite(points[i].step_s) && std::isfinite(points[i].energy_per_token_j))
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TradeoffPoint &p = points[a], &q = points[b];
    if (p.step_s != q.step_s) return p.step_s < q.step_s;
    if (p.energy_per_token_j != q.energy_per_token_j)
      return p.energy_per_token_j < q.energy_per_token_j;
    return a < b;
  });
  // Walk the points by step time, one group of equal step times at a time: in a group only the
  // least energy can be on the front, and only if it is below every faster point's energy.
  std::vector<size_t> front;
  double best = std::numeric_limits<double>::infinity();  // least energy of a faster point
  for (size_t g = 0; g < order.size();) {
    const double step = points[order[g]].step_s;
    const double least = points[order[g]].energy_per_token_j;
    size_t end = g;
    while (end < order.size() && points[order[end]].step_s == step)
      ++end;
    if (least < best)
      for (size_t k = g; k < end && points[order[k]].energy_per_token_j == least; ++k)
        front.push_back(order[k]);
    best = std::min(best, least);
    g = end;
  }
  return front;
}

std::vector<double> powerLimitSweep(double limit_w, int points) {
  std::vector<double> out;
  if (!(limit_w > 0) || !std::isfinite(limit_w) || points < 2) return out;
  for (int i = 0; i < points - 1; ++i)
    out.push_back(std::round(limit_w * (0.5 + 0.5 * i / (points - 1))));
  out.push_back(limit_w);
  return out;
}

}  // namespace wl
