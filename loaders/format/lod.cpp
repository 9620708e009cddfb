// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/format/lod.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "loaders/core/throttle_reasons.h"
#include "loaders/format/kernel_lod.h"

namespace wl {
namespace {

constexpr size_t kTopBuckets = 256;
constexpr int64_t kMaxLevel0Buckets = int64_t{1} << 22;
// Level 0 of a grid bounded by the samples has at least this many buckets.
constexpr int64_t kMinBoundedLevel0Buckets = 4096;
constexpr int64_t kKernelLevel0Buckets = 65536;

int64_t pow2Ceil(int64_t v) {
  if (v <= 1) return 1;
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(v)));
}

// a / b rounded up, for a >= 0 and b > 0, without the overflow of (a + b - 1) / b.
int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// end - start, 0 when end <= start, and int64's maximum where the difference does not fit.
int64_t spanOf(int64_t start, int64_t end) {
  if (end <= start) return 0;
  const uint64_t d = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
  return d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(d);
}

// No level-0 bucket needs to be wider than this (2^61 ns, 73 years): a wider one would hold a
// span that does not fit int64 nanoseconds, and powers of two up to it stay representable.
constexpr int64_t kMaxWidth = int64_t{1} << 61;

LodGrid makeGrid(int64_t start, int64_t end, int64_t width0) {
  LodGrid g;
  g.origin_ns = start;
  const int64_t span = spanOf(start, end);
  int64_t w = width0;
  for (;;) {
    const auto nb = static_cast<size_t>(span / w + 1);
    g.widths_ns.push_back(w);
    g.buckets.push_back(nb);
    if (nb <= kTopBuckets || w > std::numeric_limits<int64_t>::max() / (4 * g.factor)) break;
    w *= g.factor;
  }
  return g;
}

}  // namespace

size_t LodGrid::bucketOf(size_t level, int64_t t) const {
  if (t <= origin_ns) return 0;
  const auto b = static_cast<size_t>(spanOf(origin_ns, t) / widths_ns[level]);
  return std::min(b, buckets[level] - 1);
}

LodGrid LodGrid::forTelemetry(int64_t start_ns, int64_t end_ns, int64_t medianIntervalNs,
                              size_t maxSamples) {
  const int64_t span = std::max<int64_t>(spanOf(start_ns, end_ns), 1);
  // Eight sample intervals per bucket; an interval of decades (samples with wild timestamps)
  // would overflow that product, and no bucket needs to be wider than kMaxWidth.
  int64_t w = medianIntervalNs <= 0              ? ceilDiv(span, 65536)
              : medianIntervalNs > kMaxWidth / 8 ? kMaxWidth
                                                 : 8 * medianIntervalNs;
  int64_t maxBuckets = kMaxLevel0Buckets;
  if (maxSamples > 0)
    maxBuckets = std::min<int64_t>(
        maxBuckets,
        std::max<int64_t>(kMinBoundedLevel0Buckets,
                          4 * static_cast<int64_t>(std::min<size_t>(maxSamples, 1u << 30))));
  w = std::min(std::max({w, ceilDiv(span, maxBuckets), int64_t{1}}), kMaxWidth);
  return makeGrid(start_ns, end_ns, pow2Ceil(w));
}

LodGrid LodGrid::forKernels(int64_t start_ns, int64_t end_ns) {
  const int64_t span = std::max<int64_t>(spanOf(start_ns, end_ns), 1);
  const int64_t w = std::max<int64_t>(256, ceilDiv(span, kKernelLevel0Buckets));
  return makeGrid(start_ns, end_ns, pow2Ceil(w));
}

void TelemetryLodLevel::resize(size_t n) {
  min.assign(n, std::numeric_limits<float>::quiet_NaN());
  max.assign(n, std::numeric_limits<float>::quiet_NaN());
  count.assign(n, 0);
  wsum.assign(n, 0.0);
  tsum.assign(n, 0.0);
  dt.assign(n, 0.0);
}

std::vector<TelemetryLodLevel> buildTelemetryLod(const LodGrid& grid, std::span<const int64_t> t,
                                                 std::span<const double> v,
                                                 int64_t gapThresholdNs) {
  std::vector<TelemetryLodLevel> levels(grid.levels());
  for (size_t k = 0; k < levels.size(); ++k)
    levels[k].resize(grid.buckets[k]);
  if (levels.empty()) return levels;

  TelemetryLodLevel& l0 = levels[0];
  size_t prev = std::numeric_limits<size_t>::max();  // index of the previous valid sample
  for (size_t i = 0; i < t.size() && i < v.size(); ++i) {
    if (!std::isfinite(v[i])) continue;
    const size_t b = grid.bucketOf(0, t[i]);
    const auto fv = static_cast<float>(v[i]);
    if (l0.count[b] == 0) {
      l0.min[b] = l0.max[b] = fv;
    } else {
      l0.min[b] = std::min(l0.min[b], fv);
      l0.max[b] = std::max(l0.max[b], fv);
    }
    ++l0.count[b];
    if (prev != std::numeric_limits<size_t>::max()) {
      const int64_t d = t[i] - t[prev];
      if (d > 0 && d <= gapThresholdNs) {
        const size_t pb = grid.bucketOf(0, t[prev]);
        const double ds = static_cast<double>(d) * 1e-9;
        l0.wsum[pb] += v[prev] * ds;
        l0.tsum[pb] += 0.5 * (v[prev] + v[i]) * ds;
        l0.dt[pb] += ds;
      }
    }
    prev = i;
  }

  for (size_t k = 1; k < levels.size(); ++k) {
    const TelemetryLodLevel& lo = levels[k - 1];
    TelemetryLodLevel& hi = levels[k];
    for (size_t c = 0; c < lo.count.size(); ++c) {
      const size_t p = std::min(c / static_cast<size_t>(grid.factor), hi.count.size() - 1);
      if (lo.count[c] > 0) {
        if (hi.count[p] == 0) {
          hi.min[p] = lo.min[c];
          hi.max[p] = lo.max[c];
        } else {
          hi.min[p] = std::min(hi.min[p], lo.min[c]);
          hi.max[p] = std::max(hi.max[p], lo.max[c]);
        }
        hi.count[p] += lo.count[c];
      }
      hi.wsum[p] += lo.wsum[c];
      hi.tsum[p] += lo.tsum[c];
      hi.dt[p] += lo.dt[c];
    }
  }
  return levels;
}

std::vector<ThrottleLodLevel> buildThrottleLod(const LodGrid& grid, std::span<const int64_t> t,
                                               std::span<const uint32_t> masks) {
  std::vector<ThrottleLodLevel> levels(grid.levels());
  for (size_t k = 0; k < levels.size(); ++k) {
    levels[k].any.assign(grid.buckets[k], 0);
    levels[k].throttled.assign(grid.buckets[k], 0);
  }
  if (levels.empty()) return levels;
  for (size_t i = 0; i < t.size() && i < masks.size(); ++i) {
    if (masks[i] == throttle::kUnknown) continue;
    const size_t b = grid.bucketOf(0, t[i]);
    levels[0].any[b] |= masks[i];
    if (masks[i] & throttle::kSlowdownMask) ++levels[0].throttled[b];
  }
  for (size_t k = 1; k < levels.size(); ++k) {
    for (size_t c = 0; c < levels[k - 1].any.size(); ++c) {
      const size_t p = std::min(c / static_cast<size_t>(grid.factor), levels[k].any.size() - 1);
      levels[k].any[p] |= levels[k - 1].any[c];
      levels[k].throttled[p] += levels[k - 1].throttled[c];
    }
  }
  return levels;
}

void KernelLodLevel::resize(size_t n) {
  for (auto& b : busy)
    b.assign(n, 0.0f);
  count.assign(n, 0);
}

std::vector<KernelLodLevel> buildKernelLod(const LodGrid& grid,
                                           std::span<const KernelEvent> events) {
  KernelLodBuilder builder(grid);
  builder.add(events);
  return builder.finish();
}

KernelLodBuilder::KernelLodBuilder(const LodGrid& grid)
    : grid_(grid), levels_(grid.levels()), busyNs_(grid.levels()) {
  for (size_t k = 0; k < levels_.size(); ++k) {
    levels_[k].resize(grid.buckets[k]);
    for (auto& b : busyNs_[k])
      b.assign(grid.buckets[k], 0.0);
  }
}

void KernelLodBuilder::addInterval(size_t cls, int64_t a, int64_t b) {
  const int64_t w0 = grid_.widths_ns[0];
  const int64_t gridEnd = grid_.bucketStart(0, grid_.buckets[0]);
  a = std::max(a, grid_.origin_ns);
  b = std::min(b, gridEnd);
  if (b <= a) return;
  std::vector<double>& dst = busyNs_[0][cls];
  for (size_t k = grid_.bucketOf(0, a); k < dst.size(); ++k) {
    const int64_t bs = grid_.bucketStart(0, k);
    if (bs >= b) break;
    const int64_t lo = std::max(a, bs), hi = std::min(b, bs + w0);
    if (hi > lo) dst[k] += static_cast<double>(hi - lo);
  }
}

void KernelLodBuilder::add(std::span<const KernelEvent> events) {
  if (levels_.empty()) return;
  for (const KernelEvent& e : events) {
    ++levels_[0].count[grid_.bucketOf(0, e.start_ns)];
    const auto c = static_cast<size_t>(e.cls);
    if (c >= kKernelClassCount || e.dur_ns <= 0) continue;
    const int64_t s = e.start_ns, f = e.start_ns + e.dur_ns;
    if (open_[c] && s <= curEnd_[c]) {
      curEnd_[c] = std::max(curEnd_[c], f);
    } else {
      if (open_[c]) addInterval(c, curStart_[c], curEnd_[c]);
      curStart_[c] = s;
      curEnd_[c] = f;
      open_[c] = true;
    }
  }
}

std::vector<KernelLodLevel> KernelLodBuilder::finish() {
  const size_t nLevels = levels_.size();
  if (nLevels == 0) return std::move(levels_);
  for (size_t c = 0; c < kKernelClassCount; ++c)
    if (open_[c]) addInterval(c, curStart_[c], curEnd_[c]);
  open_ = {};
  for (size_t k = 1; k < nLevels; ++k) {
    for (size_t ch = 0; ch < levels_[k - 1].count.size(); ++ch) {
      const size_t p =
          std::min(ch / static_cast<size_t>(grid_.factor), levels_[k].count.size() - 1);
      levels_[k].count[p] += levels_[k - 1].count[ch];
      for (size_t c = 0; c < kKernelClassCount; ++c)
        busyNs_[k][c][p] += busyNs_[k - 1][c][ch];
    }
  }
  for (size_t k = 0; k < nLevels; ++k) {
    const auto w = static_cast<double>(grid_.widths_ns[k]);
    for (size_t c = 0; c < kKernelClassCount; ++c)
      for (size_t b = 0; b < grid_.buckets[k]; ++b)
        levels_[k].busy[c][b] = static_cast<float>(busyNs_[k][c][b] / w);
  }
  return std::move(levels_);
}

}  // namespace wl
