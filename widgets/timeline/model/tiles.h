// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Immutable tiles of run data that the I/O thread loads and the views draw from.
//
// Tiles sit on the run's pyramid grids (docs/format.md): a level-of-detail tile is kTileBuckets
// consecutive buckets of one level; a raw tile covers the time of kTileBuckets level-0 buckets
// (about 4,096 telemetry samples, or the kernels of that span). Because tile boundaries are fixed,
// a pan re-uses every tile still on screen and a zoom re-uses every tile of the same level.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "loaders/core/kernel_class.h"
#include "loaders/core/run_model.h"

namespace wl {

inline constexpr size_t kTileBuckets = 512;

enum class TileKind : uint8_t {
  CounterLod,   // one GPU, one metric, one level: min/max/mean/count per bucket
  CounterRaw,   // one GPU, one metric: samples
  ThrottleLod,  // one GPU, one level: OR of reason masks, slowdown sample count per bucket
  ThrottleRaw,  // one GPU: reason mask per sample
  KernelLod,    // one track, one level: busy fraction per class per bucket
  KernelRaw,    // one track: events
  Heatmap,      // all GPUs, one metric, one level: mean per bucket
};

struct TileKey {
  int32_t run = 0;
  TileKind kind = TileKind::CounterLod;
  int32_t entity = -1;  // GPU id, or kernel track index; -1 for heatmaps
  int32_t metric = -1;  // index into the run's telemetry metrics; -1 if none
  int32_t level = -1;   // pyramid level; -1 for raw tiles
  int64_t index = 0;    // tile number along the grid

  bool operator==(const TileKey&) const = default;
};

struct TileKeyHash {
  size_t operator()(const TileKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.index) * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(static_cast<uint32_t>(k.entity)) << 20) ^
         (static_cast<uint64_t>(static_cast<uint32_t>(k.metric)) << 40) ^
         (static_cast<uint64_t>(static_cast<uint32_t>(k.level)) << 52) ^
         (static_cast<uint64_t>(k.kind) << 60) ^ static_cast<uint64_t>(k.run);
    return std::hash<uint64_t>{}(h);
  }
};

struct CounterLodTile {
  size_t bucket0 = 0;
  std::vector<float> min, max, mean;  // NaN where a bucket has no valid sample
  std::vector<uint32_t> count;
};

struct CounterRawTile {
  int64_t t0 = 0, t1 = 0;  // the tile's time span [t0, t1)
  std::vector<int64_t> t;  // samples in [t0, t1) plus one on each side (for drawing continuity)
  std::vector<float> v;
};

struct ThrottleLodTile {
  size_t bucket0 = 0;
  std::vector<uint32_t> any, throttled;
};

struct ThrottleRawTile {
  int64_t t0 = 0, t1 = 0;
  std::vector<int64_t> t;  // as CounterRawTile
  std::vector<uint32_t> masks;
};

struct KernelLodTile {
  size_t bucket0 = 0;
  std::array<std::vector<float>, kKernelClassCount> busy;
  std::vector<uint32_t> count;
};

struct KernelRawTile {
  int64_t t0 = 0, t1 = 0;
  std::vector<KernelEvent> events;  // overlapping [t0, t1), sorted by start
  std::vector<uint32_t> index;      // each event's index within its track
};

// An allocator whose resize(n) leaves new elements uninitialized (default-initialized): a
// heatmap tile's cells are all written by its reader, on two threads, so zeroing them first would
// touch every page twice, the first time on one thread.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT: as std's
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using CellValues = std::vector<float, UninitializedAllocator<float>>;

struct HeatmapTile {
  size_t bucket0 = 0, buckets = 0, entities = 0;
  CellValues mean;  // [entity][bucket], NaN where no sample
  CellValues max;
  // At the pyramid's top level only (the value range is read there); empty below.
  CellValues min;
};

using TileData = std::variant<CounterLodTile, CounterRawTile, ThrottleLodTile, ThrottleRawTile,
                              KernelLodTile, KernelRawTile, HeatmapTile>;
using TilePtr = std::shared_ptr<const TileData>;

size_t tileBytes(const TileData& d);

}  // namespace wl
