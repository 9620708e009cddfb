// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/model/tile_store.h"

#include <QMetaObject>

#include <algorithm>
#include <cmath>

#include "analysis/parallel.h"
#include "loaders/core/free_memory.h"
#include "loaders/core/time_format.h"

namespace wl {

size_t tileBytes(const TileData& d) {
  return std::visit(
      [](const auto& t) -> size_t {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, CounterLodTile>)
          return t.min.size() * 16 + 64;
        else if constexpr (std::is_same_v<T, CounterRawTile>)
          return t.t.size() * 12 + 64;
        else if constexpr (std::is_same_v<T, ThrottleLodTile>)
          return t.any.size() * 8 + 64;
        else if constexpr (std::is_same_v<T, ThrottleRawTile>)
          return t.t.size() * 12 + 64;
        else if constexpr (std::is_same_v<T, KernelLodTile>)
          return t.count.size() * 20 + 64;
        else if constexpr (std::is_same_v<T, KernelRawTile>)
          return t.events.size() * (sizeof(KernelEvent) + 4) + 64;
        else
          return (t.mean.size() + t.min.size() + t.max.size()) * 4 + 64;
      },
      d);
}

TileStore::TileStore(QObject* parent, size_t budgetBytes)
    : QObject(parent), budget_(budgetBytes), worker_([this] { workerLoop(); }) {}

TileStore::~TileStore() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

int TileStore::addRun(std::shared_ptr<const RunFile> run) {
  std::lock_guard lock(mutex_);
  runs_.push_back(std::move(run));
  return static_cast<int>(runs_.size()) - 1;
}

void TileStore::clear() {
  std::lock_guard lock(mutex_);
  runs_.clear();
  cache_.clear();
  lru_.clear();
  bytes_ = 0;
  queue_.clear();
  queued_.clear();
  failed_.clear();
  failures_.clear();
  ++generation_;
}

TilePtr TileStore::find(const TileKey& key) {
  std::lock_guard lock(mutex_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.second);
  return it->second.first;
}

void TileStore::request(const std::vector<TileKey>& keys) {
  bool alreadyHere = false;
  {
    std::lock_guard lock(mutex_);
    queue_.clear();
    queued_.clear();
    for (const TileKey& k : keys) {
      // A tile the view missed may have been loaded since, synchronously (load(), e.g. a value
      // range read on the UI thread during the same paint): the view's geometry is then stale
      // and no worker will announce the tile, so announce it here.
      if (cache_.count(k)) alreadyHere = true;
      if (cache_.count(k) || queued_.count(k) || failed_.count(k)) continue;
      queue_.push_back(k);
      queued_.insert(k);
    }
  }
  wake_.notify_one();
  if (alreadyHere) QMetaObject::invokeMethod(this, &TileStore::tilesArrived, Qt::QueuedConnection);
}

size_t TileStore::pending() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + (loading_ ? 1 : 0);
}

size_t TileStore::bytesInUse() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

TilePtr TileStore::load(const TileKey& key) {
  if (TilePtr t = find(key)) return t;
  TilePtr t;
  try {
    t = readTile(key);
  } catch (const std::exception& e) {
    reportFailure(failureOf(key, e.what()));
    throw;
  }
  if (t) insert(key, t);
  return t;
}

std::pair<int64_t, int64_t> TileStore::tileSpan(const RunFile& run, const TileKey& key) {
  const bool kernel = key.kind == TileKind::KernelLod || key.kind == TileKind::KernelRaw;
  const LodGrid& grid = kernel ? run.kernelGrid() : run.series(SeriesKind::Gpu).grid;
  if (grid.levels() == 0 || key.index < 0) return {run.info().start_ns, run.info().end_ns};
  if (key.level < 0) return rawTileSpan(grid, key.index);
  const size_t level = std::min(static_cast<size_t>(key.level), grid.levels() - 1);
  const size_t b0 = static_cast<size_t>(key.index) * kTileBuckets;
  const size_t b1 = std::max(std::min(b0 + kTileBuckets, grid.buckets[level]), b0 + 1);
  return {grid.bucketStart(level, b0), grid.bucketStart(level, b1)};
}

std::vector<ReadFailure> TileStore::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

void TileStore::reportFailure(ReadFailure failure) {
  const QString message = QString::fromStdString(failure.message);
  {
    std::lock_guard lock(mutex_);
    // One entry per tile: a failed tile is not asked for again, but load() may be.
    for (const ReadFailure& f : failures_)
      if (f.key == failure.key && f.t0 == failure.t0 && f.t1 == failure.t1) return;
    failures_.push_back(std::move(failure));
  }
  QMetaObject::invokeMethod(
      this, [this, message] { emit readFailed(message); }, Qt::QueuedConnection);
}

ReadFailure TileStore::failureOf(const TileKey& key, const std::string& what) const {
  std::shared_ptr<const RunFile> run;
  {
    std::lock_guard lock(mutex_);
    if (key.run >= 0 && static_cast<size_t>(key.run) < runs_.size())
      run = runs_[static_cast<size_t>(key.run)];
  }
  ReadFailure f{key, 0, 0, {}};
  if (!run) {
    f.message = "run " + std::to_string(key.run) + ": " + what;
    return f;
  }
  // The part of the tile's span inside the run (the last tile of a grid reaches past its end).
  std::tie(f.t0, f.t1) = tileSpan(*run, key);
  f.t0 = std::clamp(f.t0, run->info().start_ns, run->info().end_ns);
  f.t1 = std::clamp(f.t1, f.t0, run->info().end_ns);
  const SeriesGroupMeta& tel = run->series(SeriesKind::Gpu);
  std::string metric = "?";
  if (key.metric >= 0 && static_cast<size_t>(key.metric) < tel.metrics.size())
    metric = tel.metrics[static_cast<size_t>(key.metric)].id;
  std::string subject;
  switch (key.kind) {
    case TileKind::CounterLod:
    case TileKind::CounterRaw:
      subject = "GPU " + std::to_string(key.entity) + " " + metric;
      break;
    case TileKind::ThrottleLod:
    case TileKind::ThrottleRaw:
      subject = "GPU " + std::to_string(key.entity) + " throttle reasons";
      break;
    case TileKind::KernelLod:
    case TileKind::KernelRaw:
      subject = "kernels of track " + std::to_string(key.entity);
      break;
    case TileKind::Heatmap:
      subject = metric + " of every GPU";
      break;
  }
  const int64_t start = run->info().start_ns;
  // The reader's message starts with the file's path: said once, by name.
  std::string reason = what;
  const std::string prefix = run->path().string() + ": ";
  if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
  f.message = run->path().filename().string() + ": cannot read " + subject + " at +" +
              formatDuration(f.t0 - start) + " to +" + formatDuration(f.t1 - start) + ": " + reason;
  return f;
}

std::pair<int64_t, int64_t> TileStore::rawTileSpan(const LodGrid& grid, int64_t index) {
  const int64_t w =
      grid.widths_ns.empty() ? 1 : grid.widths_ns[0] * static_cast<int64_t>(kTileBuckets);
  const int64_t t0 = grid.origin_ns + index * w;
  return {t0, t0 + w};
}

void TileStore::insert(const TileKey& key, TilePtr tile) {
  bool trim = false;
  std::vector<std::shared_ptr<const RunFile>> runs;
  {
    std::lock_guard lock(mutex_);
    if (cache_.count(key)) return;
    lru_.push_front(key);
    cache_.emplace(key, std::make_pair(tile, lru_.begin()));
    bytes_ += tileBytes(*tile);
    while (bytes_ > budget_ && lru_.size() > 1) {
      const TileKey old = lru_.back();
      auto it = cache_.find(old);
      const size_t n = tileBytes(*it->second.first);
      bytes_ -= n;
      evictedSinceTrim_ += n;
      cache_.erase(it);
      lru_.pop_back();
    }
    if (evictedSinceTrim_ >= kTrimAfterBytes) {
      evictedSinceTrim_ = 0;
      trim = true;
      runs = runs_;
    }
  }
  // Now and then, the chunks the runs' datasets cached for the tiles read so far, and the pages
  // of the evicted tiles (allocated on the loader thread), go back to the system: otherwise the
  // process keeps the high-water mark of everything it ever read.
  if (trim) {
    for (const auto& run : runs)
      run->releaseDatasetCaches();
    releaseFreedMemory();
  }
}

TilePtr TileStore::readTile(const TileKey& key) const {
  std::shared_ptr<const RunFile> runPtr;
  {
    std::lock_guard lock(mutex_);
    if (key.run < 0 || static_cast<size_t>(key.run) >= runs_.size()) return nullptr;
    runPtr = runs_[static_cast<size_t>(key.run)];
  }
  return readTileOf(*runPtr, key);
}

namespace {

// The mean of each of buckets [from, from + n) of a pyramid block into `out`: the time-weighted
// mean, or the middle of min and max where the bucket's samples span no time, NaN where it has
// none. Written with selects, not branches: the division is done for every cell (a quotient by
// zero is not used), so the loop has no branch to mispredict.
void bucketMeans(const LodBlock& b, size_t from, size_t n, float* out) {
  const uint32_t* count = b.count.data() + from;
  const double* wsum = b.wsum.data() + from;
  const double* dt = b.dt.data() + from;
  const float* lo = b.min.data() + from;
  const float* hi = b.max.data() + from;
  for (size_t k = 0; k < n; ++k) {
    const float weighted = static_cast<float>(wsum[k] / dt[k]);
    const float mid = 0.5f * (lo[k] + hi[k]);
    const float mean = dt[k] > 0 ? weighted : mid;
    out[k] = count[k] == 0 ? kNaNf : mean;
  }
}

}  // namespace

TilePtr TileStore::readTileOf(const RunFile& run, const TileKey& key) {
  const SeriesGroupMeta& tel = run.series(SeriesKind::Gpu);
  const auto T = kTileBuckets;
  auto metricId = [&]() -> std::string {
    if (key.metric < 0 || static_cast<size_t>(key.metric) >= tel.metrics.size()) return {};
    return tel.metrics[static_cast<size_t>(key.metric)].id;
  };
  const auto entity = static_cast<size_t>(std::max(key.entity, 0));
  const size_t b0 = static_cast<size_t>(key.index) * T;

  switch (key.kind) {
    case TileKind::CounterLod: {
      const LodBlock b = run.readLod(
          SeriesKind::Gpu, metricId(), static_cast<size_t>(key.level), entity, 1, b0, T,
          RunFile::kMin | RunFile::kMax | RunFile::kCount | RunFile::kWsum | RunFile::kDt);
      CounterLodTile t;
      t.bucket0 = b.bucket0;
      t.min = b.min;
      t.max = b.max;
      t.count = b.count;
      t.mean.resize(b.count.size());
      bucketMeans(b, 0, b.count.size(), t.mean.data());
      return std::make_shared<const TileData>(std::move(t));
    }
    case TileKind::CounterRaw:
    case TileKind::ThrottleRaw: {
      const auto [t0, t1] = rawTileSpan(tel.grid, key.index);
      const std::string id = key.kind == TileKind::CounterRaw ? metricId() : std::string();
      Samples s = run.readSamples(SeriesKind::Gpu, entity, id, t0, t1 - 1, true);
      if (key.kind == TileKind::CounterRaw) {
        CounterRawTile t;
        t.t0 = t0, t.t1 = t1;
        t.t = std::move(s.t_ns);
        t.v.assign(s.v.begin(), s.v.end());
        return std::make_shared<const TileData>(std::move(t));
      }
      ThrottleRawTile t;
      t.t0 = t0, t.t1 = t1;
      t.masks = run.readThrottle(entity, s.first, s.t_ns.size());
      t.t = std::move(s.t_ns);
      t.masks.resize(t.t.size(), 0xFFFFFFFFu);
      return std::make_shared<const TileData>(std::move(t));
    }
    case TileKind::ThrottleLod: {
      const auto b = run.readThrottleLod(static_cast<size_t>(key.level), entity, 1, b0, T);
      ThrottleLodTile t;
      t.bucket0 = b.bucket0;
      t.any = b.any;
      t.throttled = b.throttled;
      return std::make_shared<const TileData>(std::move(t));
    }
    case TileKind::KernelLod: {
      const KernelLodBlock b = run.readKernelLod(entity, static_cast<size_t>(key.level), b0, T);
      KernelLodTile t;
      t.bucket0 = b.bucket0;
      t.busy = b.busy;
      t.count = b.count;
      return std::make_shared<const TileData>(std::move(t));
    }
    case TileKind::KernelRaw: {
      const auto [t0, t1] = rawTileSpan(run.kernelGrid(), key.index);
      KernelSlice s = run.readKernels(entity, t0, t1);
      KernelRawTile t;
      t.t0 = t0, t.t1 = t1;
      t.events = std::move(s.events);
      t.index.assign(s.index.begin(), s.index.end());
      return std::make_shared<const TileData>(std::move(t));
    }
    case TileKind::Heatmap:
      return readHeatmapTilesOf(run, key, 1).front();
  }
  return nullptr;
}

namespace {

std::vector<TilePtr> wrapTiles(std::vector<HeatmapTile>& tiles) {
  std::vector<TilePtr> out;
  out.reserve(tiles.size());
  for (HeatmapTile& t : tiles)
    out.push_back(std::make_shared<const TileData>(std::move(t)));
  return out;
}

}  // namespace

std::vector<TilePtr> TileStore::readHeatmapTilesOf(const RunFile& run, const TileKey& first,
                                                   int64_t count) {
  const SeriesGroupMeta& tel = run.series(SeriesKind::Gpu);
  const auto level = static_cast<size_t>(std::max(first.level, 0));
  const size_t total = level < tel.grid.levels() ? tel.grid.buckets[level] : 0;
  std::string id;
  if (first.metric >= 0 && static_cast<size_t>(first.metric) < tel.metrics.size())
    id = tel.metrics[static_cast<size_t>(first.metric)].id;
  count = std::max<int64_t>(count, 1);
  // The minima serve the value range, read from the top level only (HeatmapTile): below it, a
  // third of the tiles' memory is not kept.
  const bool keepMin = level + 1 >= tel.grid.levels();
  std::vector<HeatmapTile> tiles(static_cast<size_t>(count));
  for (size_t i = 0; i < tiles.size(); ++i) {
    HeatmapTile& t = tiles[i];
    t.bucket0 = std::min(static_cast<size_t>(first.index) * kTileBuckets + i * kTileBuckets, total);
    t.buckets = std::min(kTileBuckets, total - t.bucket0);
    t.entities = tel.entities;
    t.mean.resize(t.entities * t.buckets);
    if (keepMin) t.min.resize(t.entities * t.buckets);
    t.max.resize(t.entities * t.buckets);
  }
  const size_t b0 = tiles.front().bucket0;
  const size_t width = tiles.back().bucket0 + tiles.back().buckets - b0;
  if (width == 0 || tel.entities == 0) return wrapTiles(tiles);
  // Every GPU's row of the statistics the cells show (not the trapezoid sums), a band of GPUs at
  // a time through a reused buffer: the tiles' own vectors are the only fresh memory, and all the
  // tiles of a band of chunks are cut from one read. Two threads take contiguous halves of the
  // bands, each with its own buffer: their reads take turns under HDF5's lock while the other
  // converts its band (the conversion, a division per cell, is most of the time).
  const size_t band = std::max<size_t>(1, (size_t{1} << 16) / width);
  const size_t bands = (tel.entities + band - 1) / band;
  const size_t threads =
      tel.entities * width < kBlockWork ? 1 : std::min<size_t>(analysisThreads(), bands);
  parallelFor(threads, static_cast<unsigned>(threads), [&](size_t w) {
    LodBlock b;
    for (size_t k = w * bands / threads; k < (w + 1) * bands / threads; ++k) {
      run.readLodInto(
          b, SeriesKind::Gpu, id, level, k * band, band, b0, width,
          RunFile::kMin | RunFile::kMax | RunFile::kCount | RunFile::kWsum | RunFile::kDt);
      for (HeatmapTile& t : tiles)
        for (size_t e = 0; e < b.entities; ++e) {
          const size_t from = e * b.buckets + (t.bucket0 - b0), to = (k * band + e) * t.buckets;
          bucketMeans(b, from, t.buckets, t.mean.data() + to);
          if (keepMin) std::copy_n(b.min.data() + from, t.buckets, t.min.data() + to);
          std::copy_n(b.max.data() + from, t.buckets, t.max.data() + to);
        }
    }
  });
  return wrapTiles(tiles);
}

void TileStore::loadAll(const std::vector<TileKey>& keys) {
  uint64_t gen = 0;
  {
    std::lock_guard lock(mutex_);
    gen = generation_;
  }
  // Runs of consecutive heatmap tiles of one group that are not in memory.
  for (size_t i = 0; i < keys.size();) {
    const TileKey& k = keys[i];
    if (k.kind != TileKind::Heatmap || k.index < 0 || find(k)) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < keys.size() && sameHeatmapGroup(keys[j], k) &&
           keys[j].index == keys[j - 1].index + 1 && !find(keys[j]))
      ++j;
    loadHeatmapRun(k, static_cast<int64_t>(j - i), gen);
    i = j;
  }
}

bool TileStore::sameHeatmapGroup(const TileKey& a, const TileKey& b) {
  return a.kind == TileKind::Heatmap && b.kind == TileKind::Heatmap && a.run == b.run &&
         a.metric == b.metric && a.level == b.level && a.index >= 0 && b.index >= 0 &&
         a.index / kHeatmapGroupTiles == b.index / kHeatmapGroupTiles;
}

bool TileStore::loadHeatmapRun(const TileKey& first, int64_t count, uint64_t gen) {
  std::shared_ptr<const RunFile> run;
  {
    std::lock_guard lock(mutex_);
    if (gen != generation_ || first.run < 0 || static_cast<size_t>(first.run) >= runs_.size())
      return false;
    run = runs_[static_cast<size_t>(first.run)];
  }
  std::vector<TilePtr> tiles;
  try {
    tiles = readHeatmapTilesOf(*run, first, count);
  } catch (const std::exception&) {
    return false;  // read again one by one, so that the failure names the tile (load())
  }
  {
    std::lock_guard lock(mutex_);
    if (gen != generation_) return false;  // clear() came meanwhile: the tiles are of a run gone
  }
  TileKey k = first;
  for (int64_t i = 0; i < count; ++i) {
    k.index = first.index + i;
    insert(k, tiles[static_cast<size_t>(i)]);
  }
  return true;
}

void TileStore::workerLoop() {
  for (;;) {
    TileKey key;
    std::vector<TileKey> group;  // queued heatmap tiles read with `key` (sameHeatmapGroup)
    uint64_t gen = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      key = queue_.front();
      queue_.pop_front();
      queued_.erase(key);
      if (key.kind == TileKind::Heatmap)
        for (auto it = queue_.begin(); it != queue_.end();) {
          if (!sameHeatmapGroup(*it, key)) {
            ++it;
            continue;
          }
          group.push_back(*it);
          queued_.erase(*it);
          it = queue_.erase(it);
        }
      loading_ = true;
      gen = generation_;
    }
    if (!group.empty()) {
      group.push_back(key);
      int64_t lo = key.index, hi = key.index;
      for (const TileKey& k : group)
        lo = std::min(lo, k.index), hi = std::max(hi, k.index);
      TileKey first = key;
      first.index = lo;
      if (!loadHeatmapRun(first, hi - lo + 1, gen)) {
        // Read one by one below: a failure then names its own tile.
        std::lock_guard lock(mutex_);
        for (const TileKey& k : group)
          if (!(k == key) && !cache_.count(k) && queued_.insert(k).second) queue_.push_front(k);
      }
      key = group.back();
    }
    TilePtr tile = find(key);
    std::string error;
    if (!tile) try {
        tile = readTile(key);
      } catch (const std::exception& e) {
        // A damaged region: the tile stays out, and the views hatch its span (never "no data").
        error = e.what();
        if (error.empty()) error = "read failed";
      }
    bool notify = false;
    {
      std::lock_guard lock(mutex_);
      loading_ = false;
      if (gen != generation_) continue;
      if (!tile) failed_.insert(key);
    }
    if (!error.empty()) reportFailure(failureOf(key, error));
    if (tile) insert(key, tile);
    {
      std::lock_guard lock(mutex_);
      // One notification per burst: the UI repaints once for many tiles.
      if (!notifyPending_) {
        notifyPending_ = true;
        notify = true;
      }
    }
    if (notify) {
      QMetaObject::invokeMethod(
          this,
          [this] {
            {
              std::lock_guard lock(mutex_);
              notifyPending_ = false;
            }
            emit tilesArrived();
          },
          Qt::QueuedConnection);
    }
  }
}

}  // namespace wl
