// SPDX-License-Identifier: GPL-3.0-or-later
// Heatmap tiles read a group at a time (TileStore::readHeatmapTilesOf, loadAll, the loader
// thread) hold the same values as tiles read one by one, and as the pyramid read whole.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "analysis/parallel.h"
#include "loaders/format/run_writer.h"
#include "support/temp_dir.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/render/geometry.h"

namespace wl {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kHour = 3600'000'000'000;
constexpr size_t kGpus = 300;

// 300 GPUs over an hour: a burst of 150 samples at 20 Hz (the median interval, so level 0's
// buckets are about a second wide and the level has several tiles) and 100 samples spread over
// the rest, with random values and a few missing (NaN): empty buckets, buckets of one sample and
// full ones. Level 0 of every GPU is over 2^18 cells, so a group read runs on two threads.
class HeatmapTiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir();
    RunInfo info;
    info.name = "heatmap tiles";
    info.start_ns = kT0;
    info.end_ns = kT0 + kHour;
    info.sample_interval_s = 0.05;
    RunWriter w(dir->path() / "h.h5", info, std::vector<GpuInfo>(kGpus), {});
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> value(100.0, 700.0);
    std::uniform_int_distribution<int64_t> jitter(0, 5'000'000'000);
    for (size_t g = 0; g < kGpus; ++g) {
      TelemetryTable t;
      TelemetryColumn p{"power_w", {}};
      const int64_t burst = static_cast<int64_t>(g) * 10'000'000'000;
      for (int i = 0; i < 150; ++i)
        t.t_ns.push_back(kT0 + burst + i * 50'000'000);
      for (int i = 0; i < 100; ++i)
        t.t_ns.push_back(kT0 + 1800'000'000'000 + i * 18'000'000'000 + jitter(rng));
      for (size_t i = 0; i < t.t_ns.size(); ++i)
        p.values.push_back(i % 37 == 5 ? std::nan("") : value(rng));
      t.columns = {p};
      w.addGpuTelemetry(static_cast<int>(g), t);
    }
    w.finish();
    run = RunFile::open(dir->path() / "h.h5");
  }
  static void TearDownTestSuite() {
    run.reset();
    delete dir;
  }

  static TileKey key(int level, int64_t index) {
    return TileKey{0, TileKind::Heatmap, -1, 0, level, index};
  }
  // Every tile of a level.
  static std::vector<TileKey> keysOf(int level) {
    std::vector<TileKey> keys;
    for (int64_t i = 0; i < tilesAt(level); ++i)
      keys.push_back(key(level, i));
    return keys;
  }
  static int64_t tilesAt(int level) {
    const size_t n = run->series().grid.buckets[static_cast<size_t>(level)];
    return static_cast<int64_t>((n + kTileBuckets - 1) / kTileBuckets);
  }
  // Bit for bit (NaN equals NaN).
  template <typename A, typename B>
  static bool sameBits(const A& a, const B& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  }
  static void expectSame(const HeatmapTile& a, const HeatmapTile& b) {
    EXPECT_EQ(a.bucket0, b.bucket0);
    EXPECT_EQ(a.buckets, b.buckets);
    EXPECT_EQ(a.entities, b.entities);
    EXPECT_TRUE(sameBits(a.mean, b.mean));
    EXPECT_TRUE(sameBits(a.max, b.max));
    EXPECT_TRUE(sameBits(a.min, b.min));
  }

  static test::TempDir* dir;
  static std::shared_ptr<const RunFile> run;
};

test::TempDir* HeatmapTiles::dir = nullptr;
std::shared_ptr<const RunFile> HeatmapTiles::run;

TEST_F(HeatmapTiles, TheRunHasLevelsOfSeveralTiles) {
  const LodGrid& g = run->series().grid;
  ASSERT_GE(g.levels(), 3u);
  EXPECT_GE(tilesAt(0), 3);
  EXPECT_LE(tilesAt(0), TileStore::kHeatmapGroupTiles);
  EXPECT_GE(kGpus * g.buckets[0], kBlockWork);
}

TEST_F(HeatmapTiles, EveryCellIsThePyramidsMeanAndMax) {
  // Independently of the tiles: the level read whole, each cell's time-weighted mean (the middle
  // of min and max for a bucket whose samples span no time), NaN where it has no sample.
  const LodGrid& g = run->series().grid;
  for (int level = 0; level < static_cast<int>(g.levels()); ++level) {
    SCOPED_TRACE(level);
    const LodBlock b = run->readLod(SeriesKind::Gpu, "power_w", static_cast<size_t>(level), 0,
                                    kGpus, 0, g.buckets[static_cast<size_t>(level)]);
    const std::vector<TilePtr> tiles =
        TileStore::readHeatmapTilesOf(*run, key(level, 0), tilesAt(level));
    size_t empty = 0, single = 0, weighted = 0;
    for (const TilePtr& tp : tiles) {
      const auto& t = std::get<HeatmapTile>(*tp);
      ASSERT_EQ(t.entities, kGpus);
      for (size_t e = 0; e < kGpus; ++e)
        for (size_t k = 0; k < t.buckets; ++k) {
          const size_t i = b.at(e, t.bucket0 + k), j = e * t.buckets + k;
          if (b.count[i] == 0) {
            ASSERT_TRUE(std::isnan(t.mean[j]));
            ++empty;
            continue;
          }
          const float want =
              b.dt[i] > 0 ? static_cast<float>(b.wsum[i] / b.dt[i]) : 0.5f * (b.min[i] + b.max[i]);
          (b.dt[i] > 0 ? weighted : single)++;
          ASSERT_EQ(t.mean[j], want) << e << " " << k;
          ASSERT_EQ(t.max[j], b.max[i]);
        }
      // The minima only at the top level (the value range is read there).
      if (level + 1 == static_cast<int>(g.levels())) {
        ASSERT_EQ(t.min.size(), t.mean.size());
        for (size_t e = 0; e < kGpus; ++e)
          for (size_t k = 0; k < t.buckets; ++k) {
            const float want = b.min[b.at(e, t.bucket0 + k)];
            const float got = t.min[e * t.buckets + k];
            ASSERT_TRUE(std::isnan(want) ? std::isnan(got) : got == want);
          }
      } else {
        EXPECT_TRUE(t.min.empty());
      }
    }
    if (level == 0) {  // the data exercises every branch of a cell
      EXPECT_GT(empty, 0u);
      EXPECT_GT(single, 0u);
      EXPECT_GT(weighted, 0u);
    }
  }
}

TEST_F(HeatmapTiles, AGroupReadIsEachTileReadAlone) {
  for (int level : {0, 1}) {
    SCOPED_TRACE(level);
    const int64_t n = tilesAt(level);
    const std::vector<TilePtr> group = TileStore::readHeatmapTilesOf(*run, key(level, 0), n);
    ASSERT_EQ(static_cast<int64_t>(group.size()), n);
    for (int64_t i = 0; i < n; ++i) {
      const TilePtr alone = TileStore::readTileOf(*run, key(level, i));
      expectSame(std::get<HeatmapTile>(*group[static_cast<size_t>(i)]),
                 std::get<HeatmapTile>(*alone));
    }
    // A group that starts inside the level.
    const std::vector<TilePtr> tail = TileStore::readHeatmapTilesOf(*run, key(level, n - 1), 1);
    expectSame(std::get<HeatmapTile>(*tail[0]),
               std::get<HeatmapTile>(*group[static_cast<size_t>(n - 1)]));
  }
}

TEST_F(HeatmapTiles, LoadAllKeepsTheGroupAndLoadFindsIt) {
  TileStore store;
  store.addRun(run);
  std::vector<TileKey> keys = keysOf(0);
  keys.push_back(TileKey{0, TileKind::CounterLod, 0, 0, 0, 0});  // not a heatmap: left to load()
  store.loadAll(keys);
  for (int64_t i = 0; i < tilesAt(0); ++i) {
    const TilePtr t = store.find(key(0, i));
    ASSERT_TRUE(t) << i;
    expectSame(std::get<HeatmapTile>(*t),
               std::get<HeatmapTile>(*TileStore::readTileOf(*run, key(0, i))));
  }
  EXPECT_FALSE(store.find(keys.back()));
  // A loading fetch tells the store a row's tiles first: a frame's heatmap draws from them.
  TileStore fresh;
  fresh.addRun(run);
  const TimeMapping map{kT0, kT0 + kHour, 1000};
  const HeatmapGeometry geo = buildHeatmapGeometry(*run, 0, 0, false, map, loadingFetch(fresh));
  EXPECT_TRUE(geo.complete);
  EXPECT_GT(fresh.bytesInUse(), 0u);
}

TEST_F(HeatmapTiles, TheLoaderThreadReadsRequestedTilesOfAGroupTogether) {
  TileStore store;
  store.addRun(run);
  const std::vector<TileKey> keys = keysOf(0);
  store.request(keys);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (store.pending() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(store.pending(), 0u);
  for (const TileKey& k : keys) {
    const TilePtr t = store.find(k);
    ASSERT_TRUE(t) << k.index;
    expectSame(std::get<HeatmapTile>(*t), std::get<HeatmapTile>(*TileStore::readTileOf(*run, k)));
  }
  EXPECT_TRUE(store.failures().empty());
}

TEST_F(HeatmapTiles, ReadLodIntoLeavesStatisticsNotAskedForEmpty) {
  LodBlock b;
  run->readLodInto(b, SeriesKind::Gpu, "power_w", 0, 3, 2, 10, 20, RunFile::kMax | RunFile::kCount);
  EXPECT_EQ(b.max.size(), 40u);
  EXPECT_EQ(b.count.size(), 40u);
  EXPECT_TRUE(b.min.empty());
  EXPECT_TRUE(b.wsum.empty());
  EXPECT_TRUE(b.tsum.empty());
  EXPECT_TRUE(b.dt.empty());
  // readLod gives them their fill values, as before.
  const LodBlock f =
      run->readLod(SeriesKind::Gpu, "power_w", 0, 3, 2, 10, 20, RunFile::kMax | RunFile::kCount);
  EXPECT_TRUE(sameBits(f.max, b.max));
  EXPECT_EQ(f.count, b.count);
  ASSERT_EQ(f.min.size(), 40u);
  EXPECT_TRUE(std::isnan(f.min[0]));
  EXPECT_EQ(f.dt, std::vector<double>(40, 0.0));
  // A metric the run lacks reads as fill values.
  run->readLodInto(b, SeriesKind::Gpu, "no_such_metric", 0, 0, 1, 0, 5, RunFile::kMax);
  ASSERT_EQ(b.max.size(), 5u);
  EXPECT_TRUE(std::isnan(b.max[4]));
}

}  // namespace
}  // namespace wl
