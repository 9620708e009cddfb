// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An opened native run (docs/format.md), read lazily.
//
// open() reads and validates only the metadata: run attributes, the GPU, rank, track, iteration
// and quality tables, and the shapes of the data. Samples, pyramids and kernel events are read on
// request, by time range and level, so opening a 1,024-GPU hour costs the same as opening one GPU.
// Every method takes the HDF5 lock (h5::lock()); a RunFile may be shared between threads.
//
// Validation failures throw wl::Error with one line that names the file and what is wrong: not
// HDF5, not a Wattline run, a newer format version, a missing dataset, inconsistent shapes.

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loaders/core/metrics.h"
#include "loaders/core/power_domain.h"
#include "loaders/core/run_model.h"
#include "loaders/format/kernel_summary.h"
#include "loaders/format/lod.h"
#include "loaders/h5/h5.h"

namespace wl {

struct MetricInfo {
  std::string id;
  std::string unit;
  std::string label;
  MetricKind kind = MetricKind::Gauge;
};

// Telemetry of one entity kind (GPUs or nodes).
struct SeriesGroupMeta {
  std::string entity;  // "gpu" or "node"
  size_t entities = 0;
  std::vector<MetricInfo> metrics;
  bool hasThrottle = false;
  bool hasThrottleLod = false;    // the optional throttle-reason pyramid
  std::vector<uint64_t> offsets;  // entities + 1
  std::vector<int64_t> medianIntervalNs;
  std::vector<int64_t> gapThresholdNs;
  LodGrid grid;

  size_t samples(size_t entity) const { return offsets[entity + 1] - offsets[entity]; }
  const MetricInfo* metric(std::string_view id) const;
  bool empty() const { return offsets.empty() || offsets.back() == 0; }
};

enum class SeriesKind { Gpu, Node };

// Samples of one metric of one entity: timestamps and values (NaN = missing).
struct Samples {
  size_t first = 0;  // index of t_ns[0] among the entity's samples
  std::vector<int64_t> t_ns;
  std::vector<double> v;
};

// A block [entities][buckets] of one metric's pyramid level, row-major.
struct LodBlock {
  size_t level = 0, entity0 = 0, entities = 0, bucket0 = 0, buckets = 0;
  std::vector<float> min, max;
  std::vector<uint32_t> count;
  std::vector<double> wsum, tsum, dt;

  size_t at(size_t e, size_t b) const { return e * buckets + b; }
};

struct TrackInfo {
  int rank = 0;
  int64_t stream = 0;
  int device = -1;
  uint64_t offset = 0;  // first event in the kernels datasets
  uint64_t count = 0;
  std::array<uint64_t, kKernelClassCount> classCount{};  // events per KernelClass
};

// Events of one track, sorted by start.
struct KernelSlice {
  size_t first = 0;  // index of events[0] within the track
  std::vector<KernelEvent> events;
  std::vector<size_t> index;  // each event's index within the track
};

struct KernelLodBlock {
  size_t level = 0, bucket0 = 0, buckets = 0;
  std::array<std::vector<float>, kKernelClassCount> busy;  // fraction of bucket width
  std::vector<uint32_t> count;
};

// A collective with its place: track index and event index within the track.
struct CollectiveRecord {
  size_t track = 0;
  size_t event = 0;
  CollectiveInfo info;  // info.event is the index within the track
};

// What matches a collective kernel across ranks (4 of /kernels/collectives' 10 columns, 24 bytes
// against CollectiveRecord's 72): its event's index within its track, its process group and
// sequence number, and its kind (string ids).
struct CollectiveKey {
  uint64_t event = 0;
  int64_t seq = -1;
  uint32_t pg_name = 0;
  uint32_t collective = 0;
};

// Rows [first, end) of /kernels/collectives.
struct RowRange {
  size_t first = 0;
  size_t end = 0;
};

class RunFile {
 public:
  static std::shared_ptr<const RunFile> open(const std::filesystem::path& path);
  ~RunFile();

  const std::filesystem::path& path() const { return path_; }
  const RunInfo& info() const { return info_; }
  int64_t formatVersion() const { return version_; }
  // What each telemetry source's metrics mean: /sensors as stored, completed with defaults marked
  // assumed for sources and files that do not say (core/sensors.h, resolveSensors()).
  std::vector<SensorInfo> sensors() const;
  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  // Power domains (core/power_domain.h): stored in version 2 files; in version 1 files derived
  // from /gpus/package and which GPUs have power samples. Every GPU belongs to exactly one.
  const std::vector<PowerDomain>& domains() const { return domains_; }
  // The domain of a GPU; throws wl::Error for a GPU the run does not have.
  const PowerDomain& domainOf(int gpu) const;
  // What the GPU's power_w column holds: its domain's power, its share of it, or nothing.
  PowerRole powerRoleOf(int gpu) const { return powerRole(domainOf(gpu), gpu); }
  const std::vector<RankInfo>& ranks() const { return ranks_; }
  const std::vector<TrackInfo>& tracks() const { return tracks_; }
  // Stored per-track kernel summaries (/kernels/summary, format version 3,
  // loaders/format/kernel_summary.h): whether the file has them, and one track's rows (by name
  // id), covering summaryRange() of the run. Throws wl::Error naming the file and dataset when a
  // row is damaged.
  bool hasKernelSummary() const { return !summaryOffsets_.empty(); }
  std::vector<KernelNameSummary> kernelSummary(size_t track) const;
  const std::vector<Iteration>& iterations() const { return iterations_; }
  const std::vector<Annotation>& annotations() const { return annotations_; }
  const std::vector<QualityNote>& quality() const { return quality_; }
  uint64_t kernelCount() const { return kernelCount_; }

  const SeriesGroupMeta& series(SeriesKind kind = SeriesKind::Gpu) const;
  bool hasNodeTelemetry() const { return node_.has_value(); }

  // A string of the string table (kernel names, collective names...).
  const std::string& str(uint32_t id) const;
  size_t stringCount() const;

  // Samples with t in [t0, t1], plus the nearest sample on each side when withNeighbours (so a
  // line can be drawn to the edges of a view). An empty metric id reads timestamps only.
  Samples readSamples(SeriesKind kind, size_t entity, std::string_view metric, int64_t t0,
                      int64_t t1, bool withNeighbours = true) const;
  Samples readAllSamples(SeriesKind kind, size_t entity, std::string_view metric) const;
  // Throttle masks of samples [first, first + count) of a GPU; empty if the run has none.
  std::vector<uint32_t> readThrottle(size_t gpu, size_t first, size_t count) const;
  // Which statistics readLod() reads (the others stay at their fill values: NaN or 0).
  enum LodStat : unsigned {
    kMin = 1,
    kMax = 2,
    kCount = 4,
    kWsum = 8,
    kTsum = 16,
    kDt = 32,
    kAllStats = 63
  };
  LodBlock readLod(SeriesKind kind, std::string_view metric, size_t level, size_t entity0,
                   size_t entities, size_t bucket0, size_t buckets,
                   unsigned stats = kAllStats) const;
  // The same into `out`, whose vectors keep their memory: a caller that reads block after block
  // (a heatmap tile group, band by band) reuses one buffer instead of faulting in fresh pages.
  // Statistics not in `stats` are left empty.
  void readLodInto(LodBlock& out, SeriesKind kind, std::string_view metric, size_t level,
                   size_t entity0, size_t entities, size_t bucket0, size_t buckets,
                   unsigned stats = kAllStats) const;
  // Throttle-reason pyramid block [entities][buckets]: OR of masks and slowdown sample counts.
  // Empty vectors if the run has no throttle reasons.
  struct ThrottleLodBlock {
    size_t level = 0, entity0 = 0, entities = 0, bucket0 = 0, buckets = 0;
    std::vector<uint32_t> any, throttled;
  };
  ThrottleLodBlock readThrottleLod(size_t level, size_t entity0, size_t entities, size_t bucket0,
                                   size_t buckets) const;
  // Valid samples per entity of one metric (from the pyramid's top level).
  std::vector<uint64_t> validCounts(SeriesKind kind, std::string_view metric) const;

  const LodGrid& kernelGrid() const { return kernelGrid_; }
  // Events of a track that overlap [t0, t1).
  KernelSlice readKernels(size_t track, int64_t t0, int64_t t1) const;
  std::vector<KernelEvent> readAllKernels(size_t track) const;
  // Which optional kernel columns the overloads below read: start and duration are always read;
  // a column left out keeps KernelEvent's default (name 0, Compute, Kernel, correlation -1), and
  // its deflated dataset is not decoded (the correlation column is a third of the bytes).
  enum KernelColumn : unsigned {
    kKernelName = 1,
    kKernelClass = 2,
    kKernelKind = 4,
    kKernelCorrelation = 8,
    kAllKernelColumns = 15
  };
  KernelSlice readKernels(size_t track, int64_t t0, int64_t t1, unsigned columns) const;
  std::vector<KernelEvent> readAllKernels(size_t track, unsigned columns) const;
  KernelLodBlock readKernelLod(size_t track, size_t level, size_t bucket0, size_t buckets) const;
  std::vector<CollectiveRecord> collectives() const;
  // Where each track's rows of /kernels/collectives lie, one range per track (empty for a track
  // without any), when the table keeps every track's rows together as RunWriter writes it;
  // nullopt when it does not. Reads the event column in blocks of 2^20 rows.
  std::optional<std::vector<RowRange>> collectiveBlocks() const;
  // The keys of the track's rows `rows` (from collectiveBlocks()), sorted by event; throws
  // wl::Error for a row whose event is not the track's.
  std::vector<CollectiveKey> collectiveKeys(size_t track, RowRange rows) const;
  // Every track's keys, each sorted by event (the whole table, in blocks of 2^20 rows).
  std::vector<std::vector<CollectiveKey>> collectiveKeysByTrack() const;
  // Simulated runs: the SM clock each kernel of the track ran at; empty otherwise.
  std::vector<float> readTruthClock(size_t track) const;

  bool hasGroundTruth() const { return hasTruth_; }
  std::vector<ThrottleTruth> truthThrottle() const;
  std::vector<double> truthEnergy() const;

  // Closes the datasets kept open since the last call, freeing their chunk caches (what each
  // read filled: up to 32 MiB a dataset). The next read reopens what it needs. A viewer calls it
  // now and then (the tile store, after an analysis); a cap on open caches cannot work instead,
  // because HDF5 1.10 tells a cache's capacity, not its use.
  void releaseDatasetCaches() const;

 private:
  RunFile() = default;
  void load();
  // The steps of load(), one per part of the file (run_file.cpp).
  void checkFormat();
  void loadInfo();
  void loadSensors();
  void loadGpus();
  void loadRanks();
  void loadKernelIndex();
  void loadKernelSummary();
  void loadIterations();
  void loadAnnotations();
  void loadQuality();
  void loadDomains();
  SeriesGroupMeta loadSeries(std::string_view group, size_t expectedEntities);
  hid_t dataset(const std::string& path) const;
  hid_t seriesDataset(SeriesKind kind, std::string_view name) const;
  std::pair<size_t, size_t> sampleRange(SeriesKind kind, size_t entity, int64_t t0,
                                        int64_t t1) const;
  const std::vector<int64_t>& timeIndex(SeriesKind kind, size_t entity) const;
  std::pair<size_t, size_t> candidateEvents(size_t track, int64_t t0, int64_t t1) const;
  [[noreturn]] void fail(const std::string& what) const;

  std::filesystem::path path_;
  h5::Id file_;
  int64_t version_ = 0;
  RunInfo info_;
  std::vector<GpuInfo> gpus_;
  std::vector<PowerDomain> domains_;
  std::vector<int> gpuDomain_;  // per GPU: its domain id
  std::vector<RankInfo> ranks_;
  std::vector<TrackInfo> tracks_;
  std::vector<Iteration> iterations_;
  std::vector<Annotation> annotations_;
  std::vector<QualityNote> quality_;
  SeriesGroupMeta gpu_;
  std::optional<SeriesGroupMeta> node_;
  LodGrid kernelGrid_;
  uint64_t kernelCount_ = 0;
  std::vector<uint64_t> blockOffsets_;
  std::vector<uint64_t> summaryOffsets_;  // /kernels/summary/offsets; empty without summaries
  bool hasTruth_ = false;
  bool hasTruthClock_ = false;

  // Lazily loaded, guarded by h5::lock().
  mutable std::optional<std::vector<std::string>> strings_;
  mutable std::map<std::string, h5::Id, std::less<>> datasets_;
  mutable std::map<std::pair<int, size_t>, std::vector<int64_t>> timeIndex_;
  mutable std::map<size_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>> blocks_;
};

}  // namespace wl
