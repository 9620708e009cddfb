// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/series_math.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace wl {

int64_t medianInterval(std::span<const int64_t> t_ns) {
  if (t_ns.size() < 2) return 0;
  std::vector<int64_t> d(t_ns.size() - 1);
  for (size_t i = 1; i < t_ns.size(); ++i)
    d[i - 1] = t_ns[i] - t_ns[i - 1];
  const size_t mid = d.size() / 2;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(mid), d.end());
  if (d.size() % 2 == 1) return d[mid];
  const int64_t upper = d[mid];
  const int64_t lower = *std::max_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;
}

int64_t gapThreshold(int64_t medianIntervalNs) {
  constexpr int64_t kOneSecond = 1'000'000'000;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // A median of decades (samples with wild timestamps) holds the threshold at int64's maximum
  // instead of overflowing it.
  if (medianIntervalNs > kMax / 5) return kMax;
  return std::max(kOneSecond, 5 * medianIntervalNs);
}

}  // namespace wl
