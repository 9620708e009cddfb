// SPDX-License-Identifier: GPL-3.0-or-later
// Side-by-side comparison: iteration alignment puts iteration k of both runs at the same x, GPUs
// pair by rank / slot / index, and difference tracks equal A - B at A's sample points.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/run_alignment.h"
#include "loaders/format/run_writer.h"
#include "support/temp_dir.h"
#include "widgets/panels/compare_panel.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/render/difference_geometry.h"
#include "widgets/timeline/render/timeline_renderer.h"

namespace wl {
namespace {

constexpr int64_t kA0 = 1'700'000'000'000'000'000;
constexpr int64_t kB0 = kA0 + 500'000'000'000;  // B was recorded 500 s later

struct RunSpec {
  int64_t start;
  int64_t iterLen, iterLead;             // iteration k starts at start + lead + k * len
  int64_t sampleDt;                      // power sample interval
  std::function<double(int64_t)> power;  // of ns since start
  std::vector<GpuInfo> gpus;
};

std::shared_ptr<const RunFile> write(const std::filesystem::path& p, const RunSpec& s) {
  RunInfo info;
  info.name = p.stem().string();
  info.start_ns = s.start;
  info.end_ns = s.start + 20'000'000'000;
  info.sample_interval_s = static_cast<double>(s.sampleDt) * 1e-9;
  std::vector<RankInfo> ranks;
  for (const GpuInfo& g : s.gpus)
    ranks.push_back({g.rank, g.id, "", -1, ""});
  RunWriter w(p, info, s.gpus, ranks);
  for (size_t g = 0; g < s.gpus.size(); ++g) {
    TelemetryTable t;
    TelemetryColumn col{"power_w", {}};
    for (int64_t ts = 0; ts < 20'000'000'000; ts += s.sampleDt) {
      t.t_ns.push_back(s.start + ts);
      col.values.push_back(s.power(ts) + static_cast<double>(g));
    }
    t.columns = {col};
    w.addGpuTelemetry(static_cast<int>(g), t);
  }
  std::vector<Iteration> its;
  for (int k = 0; k < 5; ++k)
    for (const GpuInfo& g : s.gpus)
      its.push_back({g.rank, k, s.start + s.iterLead + k * s.iterLen,
                     s.start + s.iterLead + (k + 1) * s.iterLen});
  w.addIterations(its);
  w.finish();
  return RunFile::open(p);
}

std::vector<GpuInfo> gpus(std::vector<std::tuple<int, int, int>> nodeLocalRank) {
  std::vector<GpuInfo> out;
  for (const auto& [node, local, rank] : nodeLocalRank) {
    GpuInfo g;
    g.id = static_cast<int>(out.size());
    g.node = node;
    g.local_index = local;
    g.rank = rank;
    out.push_back(g);
  }
  return out;
}

class Compare : public ::testing::Test {
 protected:
  void SetUp() override {
    a = write(dir / "a.h5", {kA0, 2'000'000'000, 100'000'000, 50'000'000,
                             [](int64_t t) { return 300.0 + 100.0 * std::sin(t * 1e-9); },
                             gpus({{0, 0, 0}, {0, 1, 1}})});
    // B: longer iterations, a later start, samples every 70 ms, its ranks in the other order.
    b = write(dir / "b.h5", {kB0, 2'500'000'000, 300'000'000, 70'000'000,
                             [](int64_t t) { return 250.0 + 50.0 * std::cos(t * 1e-9); },
                             gpus({{0, 0, 1}, {0, 1, 0}})});
  }
  // Two one-GPU runs of constant power (A 300 W, B 250 W: A - B is 50 W wherever both have
  // data), sampled every 50 ms for 20 s, B recorded 500 s after A; loaded into `store`.
  std::pair<std::shared_ptr<const RunFile>, std::shared_ptr<const RunFile>> constantPair(
      TileStore& store) {
    auto c = write(dir / "c.h5", {kA0, 2'000'000'000, 0, 50'000'000, [](int64_t) { return 300.0; },
                                  gpus({{0, 0, 0}})});
    auto d = write(dir / "d.h5", {kB0, 2'000'000'000, 0, 50'000'000, [](int64_t) { return 250.0; },
                                  gpus({{0, 0, 0}})});
    store.addRun(c);
    store.addRun(d);
    return {c, d};
  }
  test::TempDir dir;
  std::shared_ptr<const RunFile> a, b;
};

TEST_F(Compare, IterationAlignmentPutsIterationKOfBothRunsAtTheSameX) {
  EXPECT_EQ(commonSteps(*a, *b), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  int64_t step = -1;
  const auto [mode, defaultOffset] = defaultAlignment(*a, *b, &step);
  EXPECT_EQ(mode, AlignMode::Warp);  // with its shift at the second common iteration:
  EXPECT_EQ(step, 1);                // the first often includes warm-up
  EXPECT_EQ(defaultOffset, *alignAtIteration(*a, *b, 1));
  for (int64_t k : {1, 3}) {
    const auto off = alignAtIteration(*a, *b, k);
    ASSERT_TRUE(off);
    const int64_t startA = kA0 + 100'000'000 + k * 2'000'000'000;
    const int64_t startB = kB0 + 300'000'000 + k * 2'500'000'000;
    EXPECT_EQ(*off, startA - startB);
    TileStore store;
    store.addRun(a);
    store.addRun(b);
    TimelineRenderer r(store);
    r.setRunDisplay(1, r.displays().of(1).withOffset(*off));
    TrackRow rowA, rowB;
    rowA.content = CounterRow{0, 0, 0};
    rowB.content = CounterRow{1, 0, 0};
    const TimeMapping display{kA0, kA0 + 20'000'000'000, 1500};
    const double xa = r.displays().rowMapping(rowA, display).x(*iterationStart(*a, k));
    const double xb = r.displays().rowMapping(rowB, display).x(*iterationStart(*b, k));
    EXPECT_NEAR(xa, xb, 1e-9) << "step " << k;
  }
  EXPECT_EQ(alignAtStart(*a, *b), kA0 - kB0);
  EXPECT_FALSE(alignAtIteration(*a, *b, 99));
}

TEST_F(Compare, GpusPairByRankSlotAndIndex) {
  EXPECT_EQ(pairGpus(*a, *b, PairBy::Rank), (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(pairGpus(*a, *b, PairBy::Slot), (std::vector<std::pair<int, int>>{{0, 0}, {1, 1}}));
  EXPECT_EQ(pairGpus(*a, *b, PairBy::Index), (std::vector<std::pair<int, int>>{{0, 0}, {1, 1}}));
}

TEST_F(Compare, DifferenceEqualsAMinusBAtASamplePoints) {
  TileStore store;
  store.addRun(a);
  store.addRun(b);
  const auto off = *alignAtIteration(*a, *b, 2);
  DifferenceSource src{0, 1, 1, 0, 0, 0, 0, off, {}, {}};  // GPU 1 of A against GPU 0 of B
  // Zoomed in: 3 s over 3000 px, far under one sample per pixel.
  const TimeMapping display{kA0 + 5'000'000'000, kA0 + 8'000'000'000, 3000};
  const auto g = buildDifferenceGeometry(*a, *b, src, display,
                                         [&](const TileKey& k) { return store.load(k); });
  ASSERT_TRUE(g.samples);
  ASSERT_GT(g.points.size(), 55u);
  // Independent reference: A's samples every 50 ms; B's value held at each (every 70 ms, shifted).
  size_t checked = 0;
  for (const auto& p : g.points) {
    const int64_t t = display.t(p.x);                // display time = A's clock
    if (t < display.t0 || t > display.t1) continue;  // neighbours outside the view
    const int64_t ta = t - kA0;
    if (ta % 50'000'000 != 0) continue;  // rounding of x to t: only exact sample times
    const double va = 300.0 + 100.0 * std::sin(static_cast<double>(ta) * 1e-9) + 1.0;  // GPU 1
    const int64_t tb = t - off - kB0;                                                  // B's clock
    const int64_t heldB = tb / 70'000'000 * 70'000'000;
    const double vb = 250.0 + 50.0 * std::cos(static_cast<double>(heldB) * 1e-9) + 0.0;  // GPU 0
    EXPECT_NEAR(p.v, va - vb, 1e-3) << "at A time " << ta;
    ++checked;
  }
  EXPECT_EQ(checked, 61u);  // 5.00 s .. 8.00 s every 50 ms
}

TEST_F(Compare, DifferenceColumnsAreMeansOfEachRunWhenZoomedOut) {
  TileStore store;
  const auto [c, d] = constantPair(store);
  DifferenceSource src{0, 1, 0, 0, 0, 0, 0, kA0 - kB0, {}, {}};
  const TimeMapping display{kA0, kA0 + 20'000'000'000, 30};  // 0.67 s per pixel: pyramids
  const auto g = buildDifferenceGeometry(*c, *d, src, display,
                                         [&](const TileKey& k) { return store.load(k); });
  ASSERT_FALSE(g.samples);
  size_t n = 0;
  for (float v : g.column)
    if (!std::isnan(v)) {
      EXPECT_FLOAT_EQ(v, 50.0f);
      ++n;
    }
  EXPECT_GE(n, 28u);
}

TEST_F(Compare, DifferenceEndsWhereBsDataEnds) {
  // Both runs sample every 50 ms for 20 s; B is drawn 3 s earlier, so its last sample (19.95 s of
  // its clock) lies at 16.95 s of A's, inside the view. Past it A has nothing to be compared with:
  // B's last value is not held on (it once was, for B's gap threshold).
  TileStore store;
  const auto [c, d] = constantPair(store);
  const int64_t lastB = kA0 + 16'950'000'000;  // B's last sample on the display clock
  DifferenceSource src{0, 1, 0, 0, 0, 0, 0, kA0 - kB0 - 3'000'000'000, {}, {}};
  const TimeMapping display{kA0 + 15'000'000'000, kA0 + 19'000'000'000, 4000};
  const auto g = buildDifferenceGeometry(*c, *d, src, display,
                                         [&](const TileKey& k) { return store.load(k); });
  ASSERT_TRUE(g.samples);
  ASSERT_FALSE(g.points.empty());
  int64_t last = 0;
  for (const auto& p : g.points) {
    EXPECT_FLOAT_EQ(p.v, 50.0f);
    last = std::max(last, display.t(p.x));
  }
  // A's samples up to B's last one are compared (x rounds to the pixel: 1 ms here), none after.
  EXPECT_NEAR(static_cast<double>(last), static_cast<double>(lastB), 1e6);
}

TEST_F(Compare, VisibleRangeDeltasComeFromTheAnalysisLibrary) {
  CompareSettings s;
  s.offsetB = kA0 - kB0;
  s.pairs = pairGpus(*a, *b, PairBy::Index);
  const TimeRange display{kA0 + 1'000'000'000, kA0 + 11'000'000'000};
  const auto d = compareRange(*a, *b, s, display);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].unit, "W");
  // Reference: time-weighted means of the two GPUs, by a direct sum over the samples.
  auto meanOf = [](double base, double amp, bool sine, int64_t dt, int64_t t0, int64_t t1,
                   double g) {
    double sum = 0, tot = 0;
    for (int64_t t = (t0 + dt - 1) / dt * dt; t + dt <= t1; t += dt) {
      const double v = base + amp * (sine ? std::sin(t * 1e-9) : std::cos(t * 1e-9)) + g;
      sum += v * static_cast<double>(dt);
      tot += static_cast<double>(dt);
    }
    return sum / tot;
  };
  const double wantA = (meanOf(300, 100, true, 50'000'000, 1'000'000'000, 11'000'000'000, 0) +
                        meanOf(300, 100, true, 50'000'000, 1'000'000'000, 11'000'000'000, 1)) /
                       2;
  EXPECT_NEAR(d[0].a, wantA, 0.5);  // edges: the library clips the first and last segments
  const double wantB = (meanOf(250, 50, false, 70'000'000, 1'000'000'000, 11'000'000'000, 0) +
                        meanOf(250, 50, false, 70'000'000, 1'000'000'000, 11'000'000'000, 1)) /
                       2;
  EXPECT_NEAR(d[0].b, wantB, 0.5);
}

}  // namespace
}  // namespace wl
