// SPDX-License-Identifier: GPL-3.0-or-later
// The kernel reader's column selection (RunFile::readAllKernels / readKernels with a column mask)
// against the events as written, sample values read by their file type (float32 gauges, float64
// counters), and the fast paths of the kernel analyses (class unions, the
// class-state sweep, interval union) against brute-force references on small random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/data_quality.h"
#include "analysis/energy_attribution.h"
#include "analysis/interval_set.h"
#include "analysis/kernel_breakdown.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kT0;

// Events of a track with every column set to something other than its default.
std::vector<KernelEvent> writtenEvents(StringTable& names, int n) {
  std::vector<KernelEvent> ev;
  for (int i = 0; i < n; ++i) {
    const uint32_t name = names.intern("kernel_" + std::to_string(i % 7));
    const auto cls = static_cast<KernelClass>(1 + i % 3);  // never Compute (the default)
    const auto kind = static_cast<GpuEventKind>(1 + i % 3);
    ev.push_back({kT0 + i * 1000, 600 + (i % 5) * 100, name, cls, kind, 5000 + 3 * i});
  }
  return ev;
}

// What a read with `columns` must give for `e`: the columns left out at KernelEvent's defaults.
KernelEvent masked(KernelEvent e, unsigned columns) {
  const KernelEvent d;
  if (!(columns & RunFile::kKernelName)) e.name = d.name;
  if (!(columns & RunFile::kKernelClass)) e.cls = d.cls;
  if (!(columns & RunFile::kKernelKind)) e.kind = d.kind;
  if (!(columns & RunFile::kKernelCorrelation)) e.correlation = d.correlation;
  return e;
}

TEST(KernelColumns, ReadsOnlyTheSelectedColumns) {
  test::TempDir dir;
  test::RunSpec spec = test::baseRun(1, 1.0);
  const std::vector<KernelEvent> written = writtenEvents(spec.names, 2000);
  spec.tracks = {{0, 7, 0, written, {}, {}}};
  const auto run = test::writeAndOpen(spec, dir / "run.h5");
  ASSERT_EQ(run->readAllKernels(0), written);
  ASSERT_EQ(run->readAllKernels(0, RunFile::kAllKernelColumns), written);
  // A window [t0, t1): the events that overlap it, by hand from the written events.
  const int64_t t0 = kT0 + 700'250, t1 = kT0 + 1'300'000;
  std::vector<size_t> inWindow;
  for (size_t i = 0; i < written.size(); ++i)
    if (written[i].start_ns < t1 && written[i].start_ns + written[i].dur_ns > t0)
      inWindow.push_back(i);
  ASSERT_FALSE(inWindow.empty());
  for (unsigned columns = 0; columns <= RunFile::kAllKernelColumns; ++columns) {
    SCOPED_TRACE(columns);
    const std::vector<KernelEvent> all = run->readAllKernels(0, columns);
    ASSERT_EQ(all.size(), written.size());
    for (size_t i = 0; i < written.size(); ++i)
      ASSERT_EQ(all[i], masked(written[i], columns)) << i;
    const KernelSlice slice = run->readKernels(0, t0, t1, columns);
    ASSERT_EQ(slice.events.size(), inWindow.size());
    EXPECT_EQ(slice.first, inWindow.front());
    EXPECT_EQ(slice.index, inWindow);
    for (size_t k = 0; k < inWindow.size(); ++k)
      ASSERT_EQ(slice.events[k], masked(written[inWindow[k]], columns)) << k;
  }
}

// Gauges are float32 in the file and counters float64 (docs/format.md): readSamples gives each
// value as written, rounded to float for gauges only, NaN kept.
TEST(KernelColumns, SampleValuesKeepTheirFileType) {
  test::TempDir dir;
  test::RunSpec spec = test::baseRun(1, 10.0);
  auto value = [](size_t m, int64_t t) {
    const int64_t i = (t - kT0) / 100'000'000;
    if (i % 17 == 3) return kNaN;
    return m == 0 ? 300.123456789 + static_cast<double>(i) * 0.1
                  : 1e12 + static_cast<double>(i) * 1.000000123;
  };
  spec.telemetry = {
      test::sampled(kT0, kT0 + 10 * test::kSec, 100'000'000, {"power_w", "energy_j"}, value)};
  const auto run = test::writeAndOpen(spec, dir / "run.h5");
  const int64_t t0 = kT0 + 2 * test::kSec, t1 = kT0 + 7 * test::kSec;
  const Samples power = run->readSamples(SeriesKind::Gpu, 0, "power_w", t0, t1, false);
  const Samples energy = run->readSamples(SeriesKind::Gpu, 0, "energy_j", t0, t1, false);
  ASSERT_EQ(power.t_ns.size(), 51u);  // 2.0 s .. 7.0 s every 100 ms
  ASSERT_EQ(energy.t_ns, power.t_ns);
  for (size_t i = 0; i < power.t_ns.size(); ++i) {
    const double p = value(0, power.t_ns[i]), e = value(1, power.t_ns[i]);
    if (std::isnan(p)) {
      EXPECT_TRUE(std::isnan(power.v[i])) << i;
      EXPECT_TRUE(std::isnan(energy.v[i])) << i;
      continue;
    }
    EXPECT_EQ(power.v[i], static_cast<double>(static_cast<float>(p))) << i;
    EXPECT_EQ(energy.v[i], e) << i;
  }
}

// Random disjoint, sorted intervals on [0, 1000) (integer coordinates), or none.
IntervalSet randomSet(std::mt19937& rng, int maxIntervals) {
  IntervalSet s;
  const int n = std::uniform_int_distribution<int>(0, maxIntervals)(rng);
  int64_t at = std::uniform_int_distribution<int64_t>(0, 20)(rng);
  for (int i = 0; i < n && at < 1000; ++i) {
    const int64_t len = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    s.push_back({at, std::min<int64_t>(at + len, 1000)});
    at += len + std::uniform_int_distribution<int64_t>(1, 30)(rng);
  }
  return s;
}

bool covers(const IntervalSet& s, int64_t x) {
  for (const Interval& iv : s)
    if (iv.start <= x && x < iv.end) return true;
  return false;
}

TEST(KernelColumns, SweepMatchesUnitByUnitStates) {
  std::mt19937 rng(12345);
  // Power: a sample every 10 units, linear in between, so the energy of [a, b) is the integral of
  // 1e9 * (2 + 0.01 t) dt times 1e-9 (units are ns, power in W).
  std::vector<int64_t> t;
  std::vector<double> p;
  for (int64_t x = 0; x <= 1000; x += 10) {
    t.push_back(x);
    p.push_back(2.0 + 0.01 * static_cast<double>(x));
  }
  const EnergyIntegral power(t, p, 100);
  for (int round = 0; round < 300; ++round) {
    ClassUnions u;
    u.compute = randomSet(rng, round % 4 == 0 ? 0 : 30);
    u.communication = randomSet(rng, round % 5 == 0 ? 0 : 30);
    u.memory = randomSet(rng, round % 2 == 0 ? 0 : 15);
    u.other = randomSet(rng, round % 3 == 0 ? 0 : 10);
    const ClassStateTotals st = sweepClassStates(u, &power);
    std::array<int64_t, 16> ns{};
    std::array<double, 16> joules{};
    for (int64_t x = 0; x < 1000; ++x) {
      const unsigned s = (covers(u.compute, x) ? 1u : 0u) | (covers(u.communication, x) ? 2u : 0u) |
                         (covers(u.memory, x) ? 4u : 0u) | (covers(u.other, x) ? 8u : 0u);
      ++ns[s];
      const double a = static_cast<double>(x), b = a + 1;
      joules[s] += (2.0 * (b - a) + 0.005 * (b * b - a * a)) * 1e-9;
    }
    for (unsigned s = 1; s < 16; ++s) {
      EXPECT_EQ(st.ns[s], ns[s]) << "round " << round << " state " << s;
      EXPECT_NEAR(st.joules[s], joules[s], 1e-12) << "round " << round << " state " << s;
    }
    EXPECT_EQ(st.ns[0], 0);
    // The union of the four, unit by unit.
    const IntervalSet all = unite(unite(u.compute, u.communication), unite(u.memory, u.other));
    for (int64_t x = 0; x < 1000; ++x)
      ASSERT_EQ(covers(all, x), covers(u.compute, x) || covers(u.communication, x) ||
                                    covers(u.memory, x) || covers(u.other, x))
          << "round " << round << " x " << x;
    for (size_t i = 1; i < all.size(); ++i)
      ASSERT_GT(all[i].start, all[i - 1].end);  // disjoint and not touching
  }
}

TEST(KernelColumns, ClassUnionsMatchUnitByUnitCoverage) {
  std::mt19937 rng(777);
  for (int round = 0; round < 100; ++round) {
    std::vector<std::vector<KernelEvent>> streams(1 + round % 3);
    for (auto& s : streams) {
      int64_t at = std::uniform_int_distribution<int64_t>(0, 30)(rng);
      for (int i = 0; i < 40; ++i) {
        const int64_t dur = std::uniform_int_distribution<int64_t>(0, 25)(rng);
        const auto cls = static_cast<KernelClass>(
            round % 2 ? std::uniform_int_distribution<int>(0, 3)(rng) : i % 2);
        s.push_back({at, dur, 0, cls, GpuEventKind::Kernel, -1});
        at += std::uniform_int_distribution<int64_t>(0, 30)(rng);  // may overlap the previous
      }
    }
    const std::vector<std::span<const KernelEvent>> spans(streams.begin(), streams.end());
    const TimeRange range{50, 900};
    const ClassUnions u = classUnions(spans, range);
    const std::array<const IntervalSet*, 4> sets = {&u.compute, &u.communication, &u.memory,
                                                    &u.other};
    for (int64_t x = 0; x < 1200; ++x) {
      bool any = false;
      for (size_t c = 0; c < 4; ++c) {
        bool in = false;
        for (const auto& s : streams)
          for (const KernelEvent& e : s)
            in |= static_cast<size_t>(e.cls) == c && e.start_ns <= x && x < e.start_ns + e.dur_ns &&
                  range.t0 <= x && x < range.t1;
        ASSERT_EQ(covers(*sets[c], x), in) << "round " << round << " class " << c << " x " << x;
        any |= in;
      }
      ASSERT_EQ(covers(u.all, x), any) << "round " << round << " x " << x;
    }
  }
}

// Power that follows the busy fraction of each 250 ms bin 1.5 s later: the lag is found exactly,
// with correlation 1, whatever the intervals look like inside the bins (short ones, ones across
// bin edges, long gaps skipping bins).
TEST(KernelColumns, ActivityLagFindsAKnownShift) {
  constexpr int64_t kBin = 250'000'000, kLag = 1'500'000'000, kSpan = 60'000'000'000;
  std::mt19937 rng(99);
  IntervalSet busy;
  int64_t at = 3'000'000;
  while (at < kSpan) {
    const int r = std::uniform_int_distribution<int>(0, 99)(rng);
    const int64_t len = r < 5 ? std::uniform_int_distribution<int64_t>(300, 700)(rng) * 1'000'000
                              : std::uniform_int_distribution<int64_t>(1, 30)(rng) * 1'000'000;
    busy.push_back({at, std::min(at + len, kSpan)});
    at += len + (r >= 95 ? 2'000'000'000
                         : std::uniform_int_distribution<int64_t>(1, 40)(rng) * 1'000'000);
  }
  const int64_t lo = busy.front().start;
  auto fraction = [&](int64_t a) {  // busy share of [a, a + kBin), interval by interval
    int64_t n = 0;
    for (const Interval& iv : busy)
      n += std::max<int64_t>(0, std::min(iv.end, a + kBin) - std::max(iv.start, a));
    return static_cast<double>(n) / static_cast<double>(kBin);
  };
  std::vector<int64_t> t;
  std::vector<double> p;
  for (int64_t x = lo; x < busy.back().end; x += kBin / 10) {
    const int64_t src = x - kLag;
    if (src < lo) continue;
    t.push_back(x);
    p.push_back(100.0 + 500.0 * fraction(lo + (src - lo) / kBin * kBin));
  }
  const ActivityLag lag = estimateActivityLag(t, p, busy, {0, INT64_MAX}, kBin, 5'000'000'000);
  EXPECT_DOUBLE_EQ(lag.lag_s, 1.5);
  EXPECT_GT(lag.correlation, 0.999999);
}

}  // namespace
}  // namespace wl
