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
// Cost: a request is one hash lookup per tile asked (a row in view needs about buckets / 512 + 1
// tiles, tiles.h); the LRU list makes each hit and each eviction O(1). A missing tile costs one
// HDF5 read of a fixed size on the loader thread, never on the UI thread (except load()).

#include <QObject>

#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/run_file.h"
#include "timeline/tiles.h"

namespace wl {

class TileStore : public QObject {
  Q_OBJECT
 public:
  explicit TileStore(QObject* parent = nullptr, size_t budgetBytes = size_t{512} << 20);
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
  // Tiles waiting or loading.
  size_t pending() const;
  size_t bytesInUse() const;

  // Time span covered by raw tile `index` of a grid (kTileBuckets level-0 buckets).
  static std::pair<int64_t, int64_t> rawTileSpan(const LodGrid& grid, int64_t index);

 signals:
  void tilesArrived();

 private:
  TilePtr readTile(const TileKey& key) const;
  void insert(const TileKey& key, TilePtr tile);
  void workerLoop();

  std::vector<std::shared_ptr<const RunFile>> runs_;
  size_t budget_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::unordered_map<TileKey, std::pair<TilePtr, std::list<TileKey>::iterator>, TileKeyHash> cache_;
  std::list<TileKey> lru_;  // front = most recent
  size_t bytes_ = 0;
  std::deque<TileKey> queue_;
  std::unordered_set<TileKey, TileKeyHash> queued_;
  std::unordered_set<TileKey, TileKeyHash> failed_;  // unreadable: not asked for again
  bool loading_ = false;
  bool stop_ = false;
  bool notifyPending_ = false;
  uint64_t generation_ = 0;  // bumped by clear(): results of older loads are dropped
  std::thread worker_;
};

}  // namespace wl
