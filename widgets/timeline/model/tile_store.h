// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The tile store: the one owner of run I/O for the views.
//
// Views ask for the tiles of what they are about to draw. Tiles in memory come back at once; the
// rest are queued for a single loader thread (HDF5 serializes all I/O anyway), newest requests
// first, and tilesArrived() fires on the UI thread when some are ready, so the UI never waits on
// the disk. Memory is bounded by an LRU budget. load() is the synchronous path for exporters and
// benchmarks, which need every tile before they draw.
//
// A read that fails (a damaged dataset region) is never shown as "no data": the store keeps a
// ReadFailure with the span the tile covers and the reader's message, emits readFailed() on the
// UI thread, and the views hatch that span (timeline/read_failures.h). Other widgets that read the
// run off the UI thread (overview, kernel details) report their failures here too, so the run's
// data-quality list has them all.
//
// Cost: a request is one hash lookup per tile asked (a row in view needs about buckets / 512 + 1
// tiles, tiles.h); the LRU list makes each hit and each eviction O(1). A missing tile costs one
// HDF5 read of a fixed size on the loader thread, never on the UI thread (except load()).

#include <QObject>

#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "loaders/format/run_file.h"
#include "widgets/timeline/model/tiles.h"

namespace wl {

// A read of run data that failed: which tile (or, for reads outside tiles, a key with the kind,
// entity and metric concerned), the span of the run's clock it covers, and a one-line message
// naming the file, what and where.
struct ReadFailure {
  TileKey key;
  int64_t t0 = 0, t1 = 0;
  std::string message;
};

class TileStore : public QObject {
  Q_OBJECT
 public:
  // budgetBytes: the tiles kept in memory. 256 MB holds many screens (a 1,024-GPU heatmap of
  // 10 minutes is ~10 MB of tiles, 64 rows at 1 minute well under that) and keeps the viewer of
  // a 10^8-kernel run under 1 GB resident (docs/performance.md, "10^8 kernels").
  explicit TileStore(QObject* parent = nullptr, size_t budgetBytes = size_t{256} << 20);
  ~TileStore() override;

  // Runs are addressed by their index in this list (TileKey::run).
  int addRun(std::shared_ptr<const RunFile> run);
  void clear();
  const std::vector<std::shared_ptr<const RunFile>>& runs() const { return runs_; }
  const RunFile& run(int index) const { return *runs_.at(static_cast<size_t>(index)); }

  // The tile if it is in memory (and marks it recently used), else nullptr.
  TilePtr find(const TileKey& key);
  // Queues the keys that are not in memory, most important first; replaces older requests.
  void request(const std::vector<TileKey>& keys);
  // Loads now, on the calling thread (exporters, benchmarks, tests).
  TilePtr load(const TileKey& key);
  // Loads now the heatmap tiles of `keys` that are not in memory, consecutive tiles of a group
  // (kHeatmapGroupTiles) in one read; other kinds, and tiles whose read fails, are left to load().
  void loadAll(const std::vector<TileKey>& keys);
  // Tiles waiting or loading.
  size_t pending() const;
  size_t bytesInUse() const;

  // Time span covered by raw tile `index` of a grid (kTileBuckets level-0 buckets).
  static std::pair<int64_t, int64_t> rawTileSpan(const LodGrid& grid, int64_t index);
  // Time span covered by any tile.
  static std::pair<int64_t, int64_t> tileSpan(const RunFile& run, const TileKey& key);

  // Reads that failed since the runs were added, oldest first.
  std::vector<ReadFailure> failures() const;
  // Records a failed read made outside the loader thread; thread-safe, readFailed() follows on
  // the UI thread.
  void reportFailure(ReadFailure failure);

 signals:
  void tilesArrived();
  // A read failed; `message` names the file, what and where.
  void readFailed(const QString& message);

 private:
  TilePtr readTile(const TileKey& key) const;

 public:
  // Reads one tile of `run` (key.run is not looked at); throws what the reader throws. Any
  // thread may call it: it touches no state of a store.
  static TilePtr readTileOf(const RunFile& run, const TileKey& key);
  // Heatmap tiles first.index .. first.index + count - 1 of one metric and level, in one pass
  // over the pyramid (each chunk inflated once for all of them).
  static std::vector<TilePtr> readHeatmapTilesOf(const RunFile& run, const TileKey& first,
                                                 int64_t count);
  // Heatmap tiles share the pyramid's chunks, which h5::create2D makes up to 4,096 buckets wide:
  // the tiles of one group lie in one band of chunks and are read together.
  static constexpr int64_t kHeatmapGroupTiles = 4096 / static_cast<int64_t>(kTileBuckets);
  static bool sameHeatmapGroup(const TileKey& a, const TileKey& b);

 private:
  // The failure of reading `key` with `what` as the reader's message.
  ReadFailure failureOf(const TileKey& key, const std::string& what) const;
  void insert(const TileKey& key, TilePtr tile);
  // Reads and keeps heatmap tiles first.index .. + count - 1; false if the read failed or the
  // store was cleared since generation `gen`.
  bool loadHeatmapRun(const TileKey& first, int64_t count, uint64_t gen);
  void workerLoop();

  std::vector<std::shared_ptr<const RunFile>> runs_;
  size_t budget_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::unordered_map<TileKey, std::pair<TilePtr, std::list<TileKey>::iterator>, TileKeyHash> cache_;
  std::list<TileKey> lru_;  // front = most recent
  size_t bytes_ = 0;
  // Bytes evicted since the freed heap was last given back (releaseFreedMemory).
  size_t evictedSinceTrim_ = 0;
  static constexpr size_t kTrimAfterBytes = size_t{64} << 20;
  std::deque<TileKey> queue_;
  std::unordered_set<TileKey, TileKeyHash> queued_;
  std::unordered_set<TileKey, TileKeyHash> failed_;  // unreadable: not asked for again
  std::vector<ReadFailure> failures_;
  bool loading_ = false;
  bool stop_ = false;
  bool notifyPending_ = false;
  uint64_t generation_ = 0;  // bumped by clear(): results of older loads are dropped
  std::thread worker_;
};

}  // namespace wl
