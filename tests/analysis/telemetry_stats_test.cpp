// SPDX-License-Identifier: GPL-3.0-or-later
// Time-weighted mean, min, max and trapezoid energy: on a hand-checkable trace with a gap and a
// missing sample, on clipped ranges, and pyramid + edges against the raw reference on many random
// ranges of a long noisy series.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "analysis/gaps.h"
#include "analysis/telemetry_stats.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kSec;
using test::kT0;

// Power 100, 200, 300, 400 W at 0-3 s, then 500, 600, 700 W at 10-12 s: the median interval is
// 1 s, the gap threshold max(1 s, 5 x 1 s) = 5 s, so 3 s -> 10 s is a gap.
test::RunSpec handTrace() {
  test::RunSpec s = test::baseRun(2, 13.0);
  for (int g = 0; g < 2; ++g) {
    TelemetryTable t;
    t.columns.push_back({"power_w", {}});
    const double secs[] = {0, 1, 2, 3, 10, 11, 12};
    for (int i = 0; i < 7; ++i) {
      t.t_ns.push_back(kT0 + static_cast<int64_t>(secs[i]) * kSec);
      t.columns[0].values.push_back(g == 1 && i == 2 ? kNaN : 100.0 * (i + 1));
    }
    s.telemetry.push_back(t);
  }
  return s;
}

TEST(TelemetryStats, WholeRunEnergyAndMeanSkipTheGap) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(handTrace(), dir / "run.h5");
  const auto st = metricStats(*run, "power_w", {0, 1}, TimeRange{});
  // Trapezoid: 150 + 250 + 350 + (gap) + 550 + 650 J.
  EXPECT_DOUBLE_EQ(st[0].integral, 1950.0);
  // Left Riemann: (100 + 200 + 300 + 500 + 600) x 1 s / 5 s.
  EXPECT_DOUBLE_EQ(st[0].mean, 340.0);
  EXPECT_DOUBLE_EQ(st[0].covered_s, 5.0);
  EXPECT_EQ(st[0].samples, 7u);
  EXPECT_EQ(st[0].min, 100.0);
  EXPECT_EQ(st[0].max, 700.0);
  // GPU 1 misses the 300 W sample: 1 s -> 3 s is one 2 s segment (below the threshold).
  EXPECT_DOUBLE_EQ(st[1].integral, 150.0 + 600.0 + 550.0 + 650.0);
  EXPECT_DOUBLE_EQ(st[1].mean, (100.0 + 2 * 200.0 + 500.0 + 600.0) / 5.0);
  EXPECT_EQ(st[1].samples, 6u);
  // The gap is listed.
  const auto gaps = findGaps(*run, "power_w", {0, 1});
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0], (Gap{0, kT0 + 3 * kSec, kT0 + 10 * kSec}));
  EXPECT_EQ(gaps[1].gpu, 1);
}

TEST(TelemetryStats, ClippedRangeInterpolatesAtTheEdges) {
  test::TempDir dir;
  const auto run = test::writeAndOpen(handTrace(), dir / "run.h5");
  const TimeRange r{kT0 + 1500 * test::kMs, kT0 + 11500 * test::kMs};
  const MetricStats st = metricStats(*run, "power_w", {0}, r)[0];
  // [1.5, 2]: (250 + 300) / 2 x 0.5; [2, 3]: 350; [10, 11]: 550; [11, 11.5]: (600 + 650) / 2 x 0.5.
  EXPECT_DOUBLE_EQ(st.integral, 137.5 + 350.0 + 550.0 + 312.5);
  // Held values: 200 x 0.5 + 300 + 500 + 600 x 0.5 over 3 s.
  EXPECT_DOUBLE_EQ(st.mean, 1200.0 / 3.0);
  EXPECT_DOUBLE_EQ(st.covered_s, 3.0);
  EXPECT_EQ(st.samples, 4u);  // 2, 3, 10, 11 s
  EXPECT_EQ(st.min, 300.0);
  EXPECT_EQ(st.max, 600.0);
  // The raw reference agrees.
  const Samples raw = run->readAllSamples(SeriesKind::Gpu, 0, "power_w");
  const MetricStats ref = statsOfSamples(raw.t_ns, raw.v, 5 * kSec, r);
  EXPECT_DOUBLE_EQ(ref.integral, st.integral);
  EXPECT_DOUBLE_EQ(ref.mean, st.mean);
  // A range inside the gap covers nothing: no mean, no energy.
  const MetricStats none = metricStats(*run, "power_w", {0}, {kT0 + 5 * kSec, kT0 + 8 * kSec})[0];
  EXPECT_TRUE(std::isnan(none.mean));
  EXPECT_TRUE(std::isnan(none.integral));
  EXPECT_EQ(none.samples, 0u);
}

// Three GPUs, 20 Hz for `seconds` with jitter, random values (multiples of 1/4 W so float32
// storage is exact), NaN stretches and gaps of several seconds.
test::RunSpec noisyRun(double seconds, std::mt19937_64& rng) {
  test::RunSpec s = test::baseRun(3, seconds);
  s.info.sample_interval_s = 0.05;
  for (int g = 0; g < 3; ++g) {
    TelemetryTable t;
    t.columns.push_back({"power_w", {}});
    int64_t ts = kT0 + static_cast<int64_t>(rng() % 1000) * 1000;
    while (ts < s.info.end_ns) {
      t.t_ns.push_back(ts);
      const uint64_t r = rng();
      t.columns[0].values.push_back(r % 97 == 0 ? kNaN : 0.25 * static_cast<double>(r % 3200));
      ts += 50 * test::kMs + static_cast<int64_t>(rng() % 10'000'000) - 5'000'000;
      if (rng() % 5000 == 0) ts += (2 + static_cast<int64_t>(rng() % 8)) * kSec;  // a gap
    }
    s.telemetry.push_back(t);
  }
  return s;
}

TEST(TelemetryStats, PyramidPlusEdgesEqualsRawOnRandomRanges) {
  test::TempDir dir;
  const double seconds = 1800;
  std::mt19937_64 rng(7);
  const test::RunSpec s = noisyRun(seconds, rng);
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const SeriesGroupMeta& meta = run->series(SeriesKind::Gpu);
  std::vector<Samples> raw;
  for (int g = 0; g < 3; ++g)
    raw.push_back(run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g), "power_w"));
  std::vector<TimeRange> ranges = {TimeRange{}, {kT0, s.info.end_ns + 1}};
  const int64_t w0 = meta.grid.widths_ns[0];
  for (int i = 0; i < 60; ++i) {
    int64_t a = kT0 + static_cast<int64_t>(rng() % static_cast<uint64_t>(seconds * 1e9));
    int64_t b = kT0 + static_cast<int64_t>(rng() % static_cast<uint64_t>(seconds * 1e9));
    if (a > b) std::swap(a, b);
    if (i % 3 == 0) a = kT0 + (a - kT0) / w0 * w0, b = kT0 + (b - kT0) / w0 * w0;  // aligned
    if (i % 7 == 0) b = a + 3 * kSec;                                              // short
    ranges.push_back({a, b});
  }
  for (const TimeRange& r : ranges) {
    const auto fast = metricStats(*run, "power_w", {0, 1, 2}, r);
    for (int g = 0; g < 3; ++g) {
      const MetricStats ref =
          statsOfSamples(raw[g].t_ns, raw[g].v, meta.gapThresholdNs[static_cast<size_t>(g)],
                         {std::max(r.t0, kT0), r.t1});
      SCOPED_TRACE(testing::Message() << "gpu " << g << " range " << r.t0 << ".." << r.t1);
      EXPECT_EQ(fast[g].samples, ref.samples);
      EXPECT_NEAR(fast[g].covered_s, ref.covered_s, 1e-9 * (1 + ref.covered_s));
      if (ref.samples) {
        EXPECT_EQ(fast[g].min, ref.min);
        EXPECT_EQ(fast[g].max, ref.max);
      }
      if (ref.covered_s > 0) {
        EXPECT_NEAR(fast[g].integral, ref.integral, 1e-9 * std::fabs(ref.integral) + 1e-6);
        EXPECT_NEAR(fast[g].mean, ref.mean, 1e-9 * std::fabs(ref.mean) + 1e-9);
      }
    }
  }
  // On random ranges too, reading only around each range.
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t a = kT0 + static_cast<int64_t>(rng() % 3000) * test::kMs * 100;
    const int64_t b = a + static_cast<int64_t>(rng() % 1000 + 1) * test::kMs * 10;
    const TimeRange r{a, b};
    const auto got = findGaps(*run, "power_w", {0, 1, 2}, r);
    std::vector<Gap> want;
    for (int g = 0; g < 3; ++g) {
      auto part = findGapsInSamples(raw[g].t_ns, raw[g].v, meta.gapThresholdNs[g], r, g);
      want.insert(want.end(), part.begin(), part.end());
    }
    EXPECT_EQ(got, want) << trial;
  }
  // Gaps found through the pyramid filter equal the raw scan.
  const auto gaps = findGaps(*run, "power_w", {0, 1, 2});
  size_t expected = 0;
  for (int g = 0; g < 3; ++g)
    expected += findGapsInSamples(raw[g].t_ns, raw[g].v, meta.gapThresholdNs[g]).size();
  EXPECT_EQ(gaps.size(), expected);
  EXPECT_GT(expected, 0u);
}

// Several metrics over one range at once (entity by entity: the Selection dock's summary) equal
// each metric's raw-sample reference; an absent metric and a GPU not in the run give empty stats.
TEST(TelemetryStats, SeveralMetricsAtOnceEqualEachMetricsRawSamples) {
  test::TempDir dir;
  const double seconds = 900;
  std::mt19937_64 rng(5);
  test::RunSpec s = noisyRun(seconds, rng);
  for (TelemetryTable& t : s.telemetry) {  // a second metric, on the same time stamps
    t.columns.push_back({"temp_c", {}});
    for (size_t i = 0; i < t.t_ns.size(); ++i)
      t.columns[1].values.push_back(i % 211 == 3 ? kNaN
                                                 : 30.0 + static_cast<double>(rng() % 500) * 0.1);
  }
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const SeriesGroupMeta& meta = run->series(SeriesKind::Gpu);
  const std::vector<std::string> metrics = {"power_w", "no_such_metric", "temp_c"};
  const int64_t w0 = meta.grid.widths_ns[0];
  for (int i = 0; i < 30; ++i) {
    int64_t a = kT0 + static_cast<int64_t>(rng() % static_cast<uint64_t>(seconds * 1e9));
    int64_t b = kT0 + static_cast<int64_t>(rng() % static_cast<uint64_t>(seconds * 1e9));
    if (a > b) std::swap(a, b);
    if (i % 4 == 0) b = a + w0 / 3;  // inside one bucket
    const TimeRange r{a, b};
    const auto got = metricStatsOfMetrics(*run, metrics, {2, 0, 7, 1}, r);
    ASSERT_EQ(got.size(), 3u);
    for (size_t j : {size_t{0}, size_t{2}})
      for (size_t k = 0; k < 4; ++k) {
        const int g = std::vector<int>{2, 0, 7, 1}[k];
        SCOPED_TRACE(testing::Message() << metrics[j] << " gpu " << g << " range " << i);
        if (g == 7) {
          EXPECT_EQ(got[j][k].samples, 0u);
          continue;
        }
        const Samples raw =
            run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g), metrics[j]);
        const MetricStats ref =
            statsOfSamples(raw.t_ns, raw.v, meta.gapThresholdNs[static_cast<size_t>(g)], r);
        EXPECT_EQ(got[j][k].samples, ref.samples);
        if (ref.samples) {
          EXPECT_EQ(got[j][k].min, ref.min);
          EXPECT_EQ(got[j][k].max, ref.max);
        }
        // temp_c's tenths are not exact in the 32-bit floats the run stores (power's quarters
        // are): its pyramid sums were taken of the values as imported, the reference of the
        // stored floats, a relative 1e-9 apart.
        if (ref.covered_s > 0) {
          EXPECT_NEAR(got[j][k].mean, ref.mean, 1e-7 * std::fabs(ref.mean) + 1e-9);
        }
      }
    for (const MetricStats& m : got[1])
      EXPECT_EQ(m.samples, 0u);
  }
}

// Many windows of one GPU at once give metricStats' numbers for each, bit for bit: windows inside
// one bucket (an iteration), across buckets, bucket-aligned, empty, reversed, and partly or wholly
// outside the run; GPUs that do not exist give empty statistics.
TEST(TelemetryStats, WindowsOfOneGpuAreMetricStatsOfEach) {
  test::TempDir dir;
  const double seconds = 600;
  std::mt19937_64 rng(11);
  const test::RunSpec s = noisyRun(seconds, rng);
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const LodGrid& grid = run->series(SeriesKind::Gpu).grid;
  const int64_t end = s.info.end_ns, w0 = grid.widths_ns[0];
  std::vector<TimeRange> windows = {TimeRange{},
                                    {kT0 - 5 * kSec, kT0 + kSec},
                                    {end - kSec, end + 5 * kSec},
                                    {end + kSec, end + 2 * kSec},
                                    {kT0 + 9 * kSec, kT0 + 8 * kSec},
                                    {kT0, end}};
  for (int i = 0; i < 250; ++i) {
    const int64_t a = kT0 + static_cast<int64_t>(rng() % static_cast<uint64_t>(seconds * 1e9));
    const int k = i % 5;  // inside a bucket, whole buckets, up to 100 s, an iteration, < 2 samples
    const int64_t len = k == 0   ? static_cast<int64_t>(rng() % static_cast<uint64_t>(w0))
                        : k == 1 ? w0 * static_cast<int64_t>(1 + rng() % 20)
                        : k == 2 ? static_cast<int64_t>(rng() % (100 * kSec))
                        : k == 3 ? 1200 * test::kMs
                                 : static_cast<int64_t>(rng() % (100 * test::kMs));
    windows.push_back(i % 7 == 0
                          ? TimeRange{kT0 + (a - kT0) / w0 * w0, kT0 + (a - kT0) / w0 * w0 + len}
                          : TimeRange{a, a + len});
  }
  auto bits = [](double x) {
    return std::isnan(x) ? std::string("nan")
                         : std::to_string(x) + "/" + std::to_string(std::bit_cast<uint64_t>(x));
  };
  for (int g : {0, 1, 2, -1, 3}) {
    const std::vector<MetricStats> got = metricStatsOfWindows(*run, "power_w", g, windows);
    ASSERT_EQ(got.size(), windows.size());
    for (size_t i = 0; i < windows.size(); ++i) {
      // Absolute ns: TimeRange{} is [INT64_MIN, INT64_MAX), which no offset may shift.
      SCOPED_TRACE(testing::Message()
                   << "gpu " << g << " window " << windows[i].t0 << ".." << windows[i].t1);
      const MetricStats want = metricStats(*run, "power_w", {g}, windows[i])[0];
      EXPECT_EQ(got[i].samples, want.samples);
      EXPECT_EQ(bits(got[i].mean), bits(want.mean));
      EXPECT_EQ(bits(got[i].min), bits(want.min));
      EXPECT_EQ(bits(got[i].max), bits(want.max));
      EXPECT_EQ(bits(got[i].covered_s), bits(want.covered_s));
      EXPECT_EQ(bits(got[i].integral), bits(want.integral));
    }
    if (g == 0) {
      EXPECT_GT(got.back().samples, 0u);  // the test reads data
    }
  }
  EXPECT_TRUE(metricStatsOfWindows(*run, "no_such_metric", 0, windows).back().samples == 0);
}

// A range's gaps come from the samples around the range, widened past missing values: power every
// 1 s for 100 s, NaN from 10 s to 60 s, so 9 s -> 61 s is one gap (threshold 5 s) that a range
// inside the NaNs, or ending in them, still sees; a range after it sees none.
TEST(TelemetryStats, RangeGapsReachPastMissingValues) {
  test::RunSpec s = test::baseRun(1, 100.0);
  TelemetryTable t;
  t.columns.push_back({"power_w", {}});
  for (int i = 0; i < 100; ++i) {
    t.t_ns.push_back(kT0 + i * kSec);
    t.columns[0].values.push_back(i >= 10 && i <= 60 ? kNaN : 300.0 + i);
  }
  s.telemetry.push_back(t);
  test::TempDir dir;
  const auto run = test::writeAndOpen(s, dir / "run.h5");
  const Gap gap{0, kT0 + 9 * kSec, kT0 + 61 * kSec};
  for (const TimeRange r :
       {TimeRange{kT0 + 30 * kSec, kT0 + 31 * kSec}, TimeRange{kT0, kT0 + 12 * kSec},
        TimeRange{kT0 + 59 * kSec, kT0 + 90 * kSec}, TimeRange{}}) {
    const auto gaps = findGaps(*run, "power_w", {0}, r);
    ASSERT_EQ(gaps.size(), 1u) << r.t0 - kT0 << " " << r.t1 - kT0;
    EXPECT_EQ(gaps[0], gap);
  }
  EXPECT_TRUE(findGaps(*run, "power_w", {0}, {kT0 + 70 * kSec, kT0 + 80 * kSec}).empty());
  EXPECT_TRUE(findGaps(*run, "power_w", {0}, {kT0 + 62 * kSec, INT64_MAX}).empty());
  ASSERT_EQ(findGaps(*run, "power_w", {0}, {INT64_MIN, kT0 + 10 * kSec}).size(), 1u);
}

}  // namespace
}  // namespace wl
