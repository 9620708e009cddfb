// SPDX-License-Identifier: GPL-3.0-or-later
// Pyramid values equal min / max / count / sums computed directly from the samples.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "loaders/core/series_math.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/lod.h"
#include "loaders/format/run_file.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

TEST(LodGrid, TelemetryWidthIsPowerOfTwoAboveEightSamples) {
  const int64_t start = 1'000'000'000'000;
  const LodGrid g = LodGrid::forTelemetry(start, start + 3600'000'000'000, 50'000'000);
  ASSERT_GE(g.levels(), 2u);
  EXPECT_EQ(g.widths_ns[0], int64_t{1} << 29);  // 536.9 ms >= 8 x 50 ms = 400 ms
  for (size_t k = 1; k < g.levels(); ++k)
    EXPECT_EQ(g.widths_ns[k], 4 * g.widths_ns[k - 1]);
  EXPECT_LE(g.buckets.back(), 256u);
  EXPECT_GT(g.buckets[g.levels() - 2], 256u);
  // The last timestamp falls in the last bucket of every level.
  for (size_t k = 0; k < g.levels(); ++k)
    EXPECT_EQ(g.bucketOf(k, start + 3600'000'000'000), g.buckets[k] - 1);
}

TEST(LodGrid, HugeSpanIsCappedAtFourMillionBuckets) {
  const LodGrid g = LodGrid::forTelemetry(0, int64_t{10} * 365 * 86400 * 1'000'000'000, 1'000'000);
  EXPECT_LE(g.buckets[0], (size_t{1} << 22) + 1);
}

// Found by the import_job fuzzer: DCGM samples 54 years apart give a median interval whose
// 8-fold overflowed int64 (undefined behaviour, reported by UBSan). Spans that do not fit int64
// are held at its maximum. Every level stays a positive power of two, 4 times the one below,
// and the last timestamp falls in the last bucket.
TEST(LodGrid, IntervalsAndSpansOfDecadesDoNotOverflow) {
  const int64_t t0 = 172'738'000'000;
  const int64_t t1 = 1'727'385'120'000'599'000;
  const auto check = [](const LodGrid& g, int64_t start, int64_t end) {
    ASSERT_GE(g.levels(), 1u);
    for (size_t k = 0; k < g.levels(); ++k) {
      EXPECT_GT(g.widths_ns[k], 0) << k;
      EXPECT_EQ(g.widths_ns[k] & (g.widths_ns[k] - 1), 0) << "a power of two at level " << k;
      if (k > 0) {
        EXPECT_EQ(g.widths_ns[k], 4 * g.widths_ns[k - 1]);
      }
      EXPECT_EQ(g.bucketOf(k, end), g.buckets[k] - 1);
      EXPECT_EQ(g.bucketOf(k, start), 0u);
    }
    EXPECT_LE(g.buckets.back(), 256u);
  };
  const LodGrid tel = LodGrid::forTelemetry(t0, t1, t1 - t0, 3);
  check(tel, t0, t1);
  EXPECT_EQ(tel.widths_ns[0], int64_t{1} << 61) << "held at 2^61 ns, not 8 x 1.7e18 ns";
  const int64_t lo = std::numeric_limits<int64_t>::min() + 1;
  const int64_t hi = std::numeric_limits<int64_t>::max();
  check(LodGrid::forTelemetry(lo, hi, 1'000'000'000), lo, hi);
  const LodGrid k = LodGrid::forKernels(lo, hi);
  check(k, lo, hi);
  EXPECT_LE(k.buckets[0], 65537u);
}

TEST(LodGrid, BucketOfClampsOutsideTheGrid) {
  const LodGrid g = LodGrid::forKernels(1000, 2000);
  EXPECT_EQ(g.bucketOf(0, 0), 0u);
  EXPECT_EQ(g.bucketOf(0, 999999), g.buckets[0] - 1);
}

// Direct computation of one bucket's statistics from the samples.
struct Direct {
  float min = NAN, max = NAN;
  uint32_t count = 0;
  double wsum = 0, tsum = 0, dt = 0;
};

Direct direct(const LodGrid& g, size_t level, size_t b, const std::vector<int64_t>& t,
              const std::vector<double>& v, int64_t gap) {
  Direct d;
  const int64_t lo = g.bucketStart(level, b), hi = lo + g.widths_ns[level];
  long prev = -1;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(v[i])) continue;
    if (prev >= 0) {
      const int64_t pt = t[static_cast<size_t>(prev)];
      const bool inBucket =
          (pt >= lo && pt < hi) || (b == 0 && pt < lo) || (b == g.buckets[level] - 1 && pt >= hi);
      const int64_t seg = t[i] - pt;
      if (inBucket && seg <= gap) {
        const double s = static_cast<double>(seg) * 1e-9;
        d.wsum += v[static_cast<size_t>(prev)] * s;
        d.tsum += 0.5 * (v[static_cast<size_t>(prev)] + v[i]) * s;
        d.dt += s;
      }
    }
    prev = static_cast<long>(i);
    if (t[i] < lo || t[i] >= hi) continue;
    const auto f = static_cast<float>(v[i]);
    d.min = d.count ? std::min(d.min, f) : f;
    d.max = d.count ? std::max(d.max, f) : f;
    ++d.count;
  }
  return d;
}

TEST(TelemetryLod, EveryBucketOfEveryLevelMatchesDirectComputation) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> val(50, 700);
  std::uniform_int_distribution<int64_t> jitter(-5'000'000, 5'000'000);
  const int64_t start = 5'000'000'000;
  std::vector<int64_t> t;
  std::vector<double> v;
  int64_t now = start;
  for (int i = 0; i < 20000; ++i) {
    now += 50'000'000 + jitter(rng);
    if (i == 5000) now += 4'000'000'000;  // a 4 s gap
    t.push_back(now);
    v.push_back(i % 997 == 0 ? NAN : val(rng));
  }
  const int64_t gap = gapThreshold(medianInterval(t));
  EXPECT_EQ(gap, 1'000'000'000);
  const LodGrid g = LodGrid::forTelemetry(start, now, 50'000'000);
  const auto levels = buildTelemetryLod(g, t, v, gap);
  ASSERT_EQ(levels.size(), g.levels());
  for (size_t k = 0; k < g.levels(); ++k) {
    for (size_t b = 0; b < g.buckets[k]; b += (k == 0 ? 7 : 1)) {
      const Direct d = direct(g, k, b, t, v, gap);
      ASSERT_EQ(levels[k].count[b], d.count) << "level " << k << " bucket " << b;
      if (d.count) {
        EXPECT_EQ(levels[k].min[b], d.min);
        EXPECT_EQ(levels[k].max[b], d.max);
      } else {
        EXPECT_TRUE(std::isnan(levels[k].min[b]));
      }
      EXPECT_NEAR(levels[k].wsum[b], d.wsum, 1e-6 * (1 + std::fabs(d.wsum)));
      EXPECT_NEAR(levels[k].tsum[b], d.tsum, 1e-6 * (1 + std::fabs(d.tsum)));
      EXPECT_NEAR(levels[k].dt[b], d.dt, 1e-9 * (1 + d.dt));
    }
  }
}

TEST(TelemetryLod, OneSampleSpikeSurvivesToTheTopLevel) {
  std::vector<int64_t> t;
  std::vector<double> v;
  for (int i = 0; i < 72000; ++i) {  // one hour at 20 Hz
    t.push_back(int64_t{i} * 50'000'000);
    v.push_back(i == 40000 ? 1234.0 : 300.0);
  }
  const LodGrid g = LodGrid::forTelemetry(0, t.back(), 50'000'000);
  const auto levels = buildTelemetryLod(g, t, v, 1'000'000'000);
  const auto& top = levels.back();
  float mx = 0;
  for (float m : top.max)
    mx = std::max(mx, m);
  EXPECT_EQ(mx, 1234.0f);
  EXPECT_EQ(top.max[g.bucketOf(g.levels() - 1, t[40000])], 1234.0f);
}

TEST(TelemetryLod, TimeWeightedMeanAndEnergyFromTheTopLevelAreExact) {
  // Constant 100 W for 10 s sampled at 10 Hz, then 200 W for 10 s: mean 150 W (left Riemann),
  // energy = 100*10 + 200*10 - 0 + (100+200)/2*0.1 transition = 3000 + 15 - 10 - 20 + ...
  std::vector<int64_t> t;
  std::vector<double> v;
  for (int i = 0; i <= 200; ++i) {
    t.push_back(int64_t{i} * 100'000'000);
    v.push_back(i < 100 ? 100.0 : 200.0);
  }
  const LodGrid g = LodGrid::forTelemetry(0, t.back(), 100'000'000);
  const auto levels = buildTelemetryLod(g, t, v, 1'000'000'000);
  double wsum = 0, tsum = 0, dt = 0;
  for (size_t b = 0; b < g.buckets.back(); ++b) {
    wsum += levels.back().wsum[b];
    tsum += levels.back().tsum[b];
    dt += levels.back().dt[b];
  }
  EXPECT_NEAR(dt, 20.0, 1e-9);
  EXPECT_NEAR(wsum / dt, 150.0, 1e-9);  // 100 samples of 100 W and 100 of 200 W, 0.1 s each
  // Trapezoid: 99 segments at 100 W, one 100->200 W, 100 segments at 200 W; 0.1 s each.
  EXPECT_NEAR(tsum, 99 * 10.0 + 15.0 + 100 * 20.0, 1e-9);
}

TEST(KernelLod, BusyFractionOfAKnownPattern) {
  // Kernels of 25% duty cycle: 1 us busy every 4 us, for 4 ms; plus overlapping compute
  // kernels that must not be double counted.
  std::vector<KernelEvent> ev;
  for (int i = 0; i < 1000; ++i)
    ev.push_back({int64_t{i} * 4000, 1000, 0, KernelClass::Compute, GpuEventKind::Kernel, i});
  ev.push_back({500, 1000, 0, KernelClass::Compute, GpuEventKind::Kernel, -1});  // overlaps #0
  std::stable_sort(ev.begin(), ev.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
  const LodGrid g = LodGrid::forKernels(0, 4'000'000);
  const auto levels = buildKernelLod(g, ev);
  const auto& top = levels.back();
  double busy = 0;
  uint32_t count = 0;
  for (size_t b = 0; b < g.buckets.back(); ++b) {
    busy += top.busy[0][b] * static_cast<double>(g.widths_ns.back());
    count += top.count[b];
  }
  EXPECT_NEAR(busy, 1000 * 1000 + 500, 1.0);  // union: the overlap adds only 500 ns
  EXPECT_EQ(count, 1001u);
  for (size_t c = 1; c < kKernelClassCount; ++c)
    for (float f : top.busy[c])
      EXPECT_EQ(f, 0.0f);
  // Level 0 buckets of 1024 ns over a 4 us period: each holds ~25% busy on average.
  const auto& l0 = levels[0];
  double sum = 0;
  for (size_t b = 0; b < 3900; ++b)
    sum += l0.busy[0][b];
  EXPECT_NEAR(sum / 3900, 0.25, 0.01);
}

TEST(StoredPyramid, RowsInTheFileEqualPyramidsBuiltFromTheSamples) {
  test::TempDir dir;
  const auto src = test::makeSyntheticRun();
  test::writeSyntheticRun(src, dir / "run.h5");
  const auto run = RunFile::open(dir / "run.h5");
  const SeriesGroupMeta& m = run->series();
  for (size_t gpu = 0; gpu < 4; ++gpu) {
    const auto& table = src.telemetry[gpu];
    const auto levels =
        buildTelemetryLod(m.grid, table.t_ns, table.columns[0].values, m.gapThresholdNs[gpu]);
    for (size_t k = 0; k < m.grid.levels(); ++k) {
      const LodBlock b = run->readLod(SeriesKind::Gpu, "power_w", k, gpu, 1, 0, m.grid.buckets[k]);
      for (size_t i = 0; i < b.buckets; ++i) {
        EXPECT_EQ(b.count[i], levels[k].count[i]);
        if (b.count[i]) {
          EXPECT_EQ(b.max[i], levels[k].max[i]);
        }
        EXPECT_DOUBLE_EQ(b.tsum[i], levels[k].tsum[i]);
      }
    }
  }
  // The 900 W spike of GPU 1 is in its top-level row.
  const size_t top = m.grid.levels() - 1;
  const LodBlock b = run->readLod(SeriesKind::Gpu, "power_w", top, 1, 1, 0, m.grid.buckets[top]);
  EXPECT_EQ(*std::max_element(b.max.begin(), b.max.end()), 900.0f);
  // GPU 2's 3 s gap: level-0 buckets inside it are empty.
  const LodBlock g2 = run->readLod(SeriesKind::Gpu, "power_w", 0, 2, 1, 0, m.grid.buckets[0]);
  const size_t mid = m.grid.bucketOf(0, src.info.start_ns + 5'500'000'000);
  EXPECT_EQ(g2.count[mid], 0u);
  // valid counts: GPU 3 has one NaN power sample.
  const auto counts = run->validCounts(SeriesKind::Gpu, "power_w");
  EXPECT_EQ(counts[3], src.telemetry[3].size() - 1);
  EXPECT_EQ(counts[0], src.telemetry[0].size());
}

TEST(StoredPyramid, KernelRowsMatchBuiltPyramids) {
  test::TempDir dir;
  const auto src = test::makeSyntheticRun();
  test::writeSyntheticRun(src, dir / "run.h5");
  const auto run = RunFile::open(dir / "run.h5");
  const LodGrid& g = run->kernelGrid();
  for (size_t t = 0; t < run->tracks().size(); ++t) {
    const auto events = run->readAllKernels(t);
    const auto levels = buildKernelLod(g, events);
    for (size_t k = 0; k < g.levels(); ++k) {
      const KernelLodBlock b = run->readKernelLod(t, k, 0, g.buckets[k]);
      ASSERT_EQ(b.count, levels[k].count);
      for (size_t c = 0; c < kKernelClassCount; ++c)
        ASSERT_EQ(b.busy[c], levels[k].busy[c]);
    }
  }
}

}  // namespace
}  // namespace wl

namespace wl {
namespace {

TEST(ThrottleLod, OrOfMasksAndSlowdownCounts) {
  const std::vector<int64_t> t = {0, 100, 200, 300, 5000, 5100};
  const std::vector<uint32_t> m = {0x0, 0x4, 0x1, throttle::kUnknown, 0x40 | 0x4, 0x1};
  const LodGrid g = LodGrid::forTelemetry(0, 6000, 100);  // width_0 = 1024 ns
  const auto levels = buildThrottleLod(g, t, m);
  EXPECT_EQ(levels[0].any[0], 0x5u);  // unknown mask left out
  EXPECT_EQ(levels[0].throttled[0], 1u);
  EXPECT_EQ(levels[0].any[4], 0x44u | 0x1u);
  EXPECT_EQ(levels[0].throttled[4], 1u);
  uint32_t total = 0, any = 0;
  for (size_t b = 0; b < levels.back().any.size(); ++b) {
    total += levels.back().throttled[b];
    any |= levels.back().any[b];
  }
  EXPECT_EQ(total, 2u);
  EXPECT_EQ(any, 0x45u);
}

TEST(ThrottleLod, StoredBlocksMatchTheSyntheticRun) {
  test::TempDir dir;
  const auto src = test::makeSyntheticRun();
  test::writeSyntheticRun(src, dir / "run.h5");
  const auto run = RunFile::open(dir / "run.h5");
  const auto& grid = run->series().grid;
  const size_t top = grid.levels() - 1;
  const auto b = run->readThrottleLod(top, 0, 4, 0, grid.buckets[top]);
  ASSERT_EQ(b.throttled.size(), 4 * grid.buckets[top]);
  uint64_t throttled0 = 0, throttledOthers = 0;
  for (size_t i = 0; i < grid.buckets[top]; ++i) {
    throttled0 += b.throttled[i];
    for (size_t g = 1; g < 4; ++g)
      throttledOthers += b.throttled[g * grid.buckets[top] + i];
  }
  EXPECT_EQ(throttled0, 20u);  // GPU 0 is power capped from 5 s to 6 s: 20 samples at 20 Hz
  EXPECT_EQ(throttledOthers, 0u);
}

}  // namespace
}  // namespace wl
