// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/format/run_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <optional>
#include <queue>

#include "loaders/core/error.h"
#include "loaders/core/kernel_spool.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/series_math.h"
#include "loaders/core/temp_files.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/format_version.h"
#include "loaders/format/kernel_lod.h"
#include "loaders/format/kernel_summary.h"
#include "loaders/format/lod.h"
#include "loaders/h5/h5.h"

namespace wl {
namespace {

constexpr const char* kLodStats[] = {"min", "max", "count", "wsum", "tsum", "dt"};

std::string levelName(size_t k) {
  return fmt::format("L{}", k);
}

h5::Layout layoutOf(const WriteOptions& o) {
  return h5::Layout{.chunk = o.chunk, .deflate = o.deflate, .shuffle = o.shuffle};
}

template <typename T>
void appendVec(h5::Appender& a, const std::vector<T>& v) {
  a.append(v.data(), v.size());
}

// Writes the telemetry of one entity kind (GPUs or nodes) into one group, streaming.
class SeriesGroupWriter {
 public:
  SeriesGroupWriter(hid_t parent, std::string_view name, std::string_view entity, size_t entities,
                    int64_t start, int64_t end, double nominalIntervalS, const h5::Layout& layout,
                    size_t samplesHint = 0)
      : layout_(layout),
        samplesHint_(samplesHint),
        entity_(entity),
        entities_(entities),
        start_(start),
        end_(end),
        nominalInterval_(static_cast<int64_t>(std::llround(nominalIntervalS * 1e9))) {
    group_ = h5::createGroup(parent, name);
    h5::setAttr(group_, "entity", entity);
    h5::setAttr(group_, "index_stride", format::kIndexStride);
    t_ = h5::makeAppender<int64_t>(group_, "t_ns", layout_);
    tIndex_ = h5::makeAppender<int64_t>(group_, "t_index", layout_);
  }

  void add(int entity, TelemetryTable table, std::vector<QualityNote>& notes) {
    if (entity < next_ || static_cast<size_t>(entity) >= entities_)
      throw Error(
          fmt::format("internal error: telemetry for {} {} added out of order or out of "
                      "range (next {}, count {})",
                      entityName(), entity, next_, entities_));
    while (next_ < entity)
      addEmpty();
    const std::string subject = fmt::format("{} {}", entityName(), entity);
    validateShape(table, subject);
    normalize(table, subject, notes);
    ensureGrid(table.t_ns);

    const size_t n = table.t_ns.size();
    appendVec(t_, table.t_ns);
    std::vector<int64_t> idx;
    for (size_t i = 0; i < n; i += static_cast<size_t>(format::kIndexStride))
      idx.push_back(table.t_ns[i]);
    appendVec(tIndex_, idx);

    const int64_t med = medianInterval(table.t_ns);
    const int64_t gap = gapThreshold(med > 0 ? med : nominalInterval_);
    median_.push_back(med);
    threshold_.push_back(gap);

    std::vector<bool> seen(metrics_.size(), false);
    for (TelemetryColumn& col : table.columns) {
      MetricCols& m = metricFor(col.metric);
      const size_t mi = static_cast<size_t>(&m - metrics_.data());
      seen.resize(metrics_.size(), false);
      if (seen[mi]) {
        notes.push_back(
            {Severity::Warning, "duplicate_metric", subject,
             fmt::format("metric {} given twice; the second column was ignored", col.metric)});
        continue;
      }
      seen[mi] = true;
      countOutOfRange(col, subject, notes);
      appendValues(m, col.values);
      writeLod(m, static_cast<size_t>(entity), table.t_ns, col.values, gap);
    }
    for (size_t mi = 0; mi < metrics_.size(); ++mi)
      if (mi >= seen.size() || !seen[mi]) appendNaN(metrics_[mi], n);

    if (!table.throttle_reasons.empty()) {
      if (!throttle_.valid()) {
        throttle_ = h5::makeAppender<uint32_t>(group_, "throttle_reasons", layout_);
        appendFill(throttle_, throttle::kUnknown, total_);
        createThrottleLod();
      }
      appendVec(throttle_, table.throttle_reasons);
      const auto levels = buildThrottleLod(*grid_, table.t_ns, table.throttle_reasons);
      for (size_t k = 0; k < levels.size(); ++k) {
        const size_t cols = levels[k].any.size();
        h5::writeRow(throttleLod_[k][0], H5T_NATIVE_UINT32, static_cast<size_t>(entity),
                     levels[k].any.data(), cols);
        h5::writeRow(throttleLod_[k][1], H5T_NATIVE_UINT32, static_cast<size_t>(entity),
                     levels[k].throttled.data(), cols);
      }
    } else if (throttle_.valid()) {
      appendFill(throttle_, throttle::kUnknown, n);
    }

    total_ += n;
    offsets_.push_back(total_);
    indexOffsets_.push_back(tIndex_.size());
    ++next_;
  }

  void finish() {
    while (static_cast<size_t>(next_) < entities_)
      addEmpty();
    ensureGrid({});
    h5::write(group_, "offsets", offsets_);
    h5::write(group_, "t_index_offsets", indexOffsets_);
    h5::write(group_, "median_interval_ns", median_);
    h5::write(group_, "gap_threshold_ns", threshold_);
    std::vector<std::string> ids;
    for (const MetricCols& m : metrics_)
      ids.push_back(m.id);
    h5::writeStrings(group_, "metrics", ids);
    h5::setAttr(group_, "has_throttle_reasons", int64_t{throttle_.valid() ? 1 : 0});
  }

 private:
  struct MetricCols {
    std::string id;
    bool isDouble = false;
    h5::Id group;
    h5::Appender values;
    std::vector<std::array<h5::Id, 6>> lod;  // per level: min, max, count, wsum, tsum, dt
  };

  std::string_view entityName() const { return entity_; }

  void addEmpty() {
    median_.push_back(0);
    threshold_.push_back(gapThreshold(nominalInterval_));
    offsets_.push_back(total_);
    indexOffsets_.push_back(tIndex_.size());
    ++next_;
  }

  static void validateShape(const TelemetryTable& table, const std::string& subject) {
    for (const TelemetryColumn& c : table.columns)
      if (c.values.size() != table.t_ns.size())
        throw Error(fmt::format("internal error: {} metric {} has {} values for {} timestamps",
                                subject, c.metric, c.values.size(), table.t_ns.size()));
    if (!table.throttle_reasons.empty() && table.throttle_reasons.size() != table.t_ns.size())
      throw Error(fmt::format("internal error: {} has {} throttle masks for {} timestamps", subject,
                              table.throttle_reasons.size(), table.t_ns.size()));
  }

  // Sorts by time, drops duplicate timestamps and samples outside the run span, with notes.
  void normalize(TelemetryTable& table, const std::string& subject,
                 std::vector<QualityNote>& notes) const {
    const size_t n = table.t_ns.size();
    bool sorted = true;
    size_t dup = 0, outside = 0;
    for (size_t i = 1; i < n; ++i) {
      if (table.t_ns[i] < table.t_ns[i - 1]) sorted = false;
      if (table.t_ns[i] == table.t_ns[i - 1]) ++dup;
    }
    for (int64_t t : table.t_ns)
      if (t < start_ || t > end_) ++outside;
    if (sorted && dup == 0 && outside == 0) return;

    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    if (!sorted) {
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return table.t_ns[a] < table.t_ns[b]; });
      notes.push_back({Severity::Warning, "non_monotonic_timestamps", subject,
                       "timestamps went backwards; samples were sorted by time"});
    }
    std::vector<size_t> keep;
    keep.reserve(n);
    size_t dropped_dup = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = order[k];
      const int64_t t = table.t_ns[i];
      if (t < start_ || t > end_) continue;
      if (!keep.empty() && table.t_ns[keep.back()] == t) {
        ++dropped_dup;
        continue;
      }
      keep.push_back(i);
    }
    if (dropped_dup > 0)
      notes.push_back(
          {Severity::Warning, "duplicate_timestamps", subject,
           fmt::format("{} samples repeated an earlier timestamp and were dropped", dropped_dup)});
    if (outside > 0)
      notes.push_back(
          {Severity::Warning, "outside_run_span", subject,
           fmt::format("{} samples lie outside the run's time span and were dropped", outside)});
    auto pick = [&](auto& v) {
      using V = std::decay_t<decltype(v)>;
      V out;
      out.reserve(keep.size());
      for (size_t i : keep)
        out.push_back(v[i]);
      v = std::move(out);
    };
    pick(table.t_ns);
    for (TelemetryColumn& c : table.columns)
      pick(c.values);
    if (!table.throttle_reasons.empty()) pick(table.throttle_reasons);
  }

  static void countOutOfRange(const TelemetryColumn& col, const std::string& subject,
                              std::vector<QualityNote>& notes) {
    const MetricDef* def = findMetric(col.metric);
    if (!def) return;
    size_t bad = 0;
    double worst = 0;
    for (double v : col.values)
      if (std::isfinite(v) && (v < def->min_valid || v > def->max_valid)) {
        if (bad == 0 || std::fabs(v) > std::fabs(worst)) worst = v;
        ++bad;
      }
    if (bad > 0)
      notes.push_back(
          {Severity::Warning, "out_of_range", subject,
           fmt::format("{} {} values outside the physical range [{}, {}] {} (e.g. {})", bad,
                       col.metric, def->min_valid, def->max_valid, def->unit, worst)});
  }

  void ensureGrid(const std::vector<int64_t>& t) {
    if (grid_) return;
    int64_t med = nominalInterval_;
    if (med <= 0) med = medianInterval(t);
    grid_ = LodGrid::forTelemetry(start_, end_, med, std::max(samplesHint_, t.size()));
    lodGroup_ = h5::createGroup(group_, "lod");
    h5::setAttr(lodGroup_, "origin_ns", grid_->origin_ns);
    h5::setAttr(lodGroup_, "factor", int64_t{grid_->factor});
    h5::write(lodGroup_, "widths_ns", grid_->widths_ns);
    std::vector<uint64_t> nb(grid_->buckets.begin(), grid_->buckets.end());
    h5::write(lodGroup_, "buckets", nb);
    for (size_t k = 0; k < grid_->levels(); ++k)
      h5::createGroup(lodGroup_, levelName(k));
  }

  MetricCols& metricFor(const std::string& id) {
    for (MetricCols& m : metrics_)
      if (m.id == id) return m;
    MetricCols m;
    m.id = id;
    const MetricDef* def = findMetric(id);
    m.isDouble = def && def->kind == MetricKind::Counter;
    m.values = m.isDouble ? h5::makeAppender<double>(group_, id, layout_)
                          : h5::makeAppender<float>(group_, id, layout_);
    {
      h5::Id ds = h5::openDataset(group_, id);
      h5::setAttr(ds, "unit", def ? def->unit : std::string_view{});
      h5::setAttr(ds, "label", metricLabel(id));
      h5::setAttr(ds, "kind", (def && def->kind == MetricKind::Counter) ? "counter" : "gauge");
    }
    // Backfill NaN for the entities written before this metric first appeared.
    appendNaN(m, total_);
    const float nanF = kNaNf;
    const uint32_t zeroU = 0;
    const double zeroD = 0.0;
    for (size_t k = 0; k < grid_->levels(); ++k) {
      h5::Id lg = h5::openGroup(lodGroup_, levelName(k));
      h5::Id mg = h5::createGroup(lg, id);
      const size_t cols = grid_->buckets[k];
      std::array<h5::Id, 6> ds;
      ds[0] = h5::create2D(mg, "min", H5T_NATIVE_FLOAT, entities_, cols, layout_, &nanF,
                           H5T_NATIVE_FLOAT);
      ds[1] = h5::create2D(mg, "max", H5T_NATIVE_FLOAT, entities_, cols, layout_, &nanF,
                           H5T_NATIVE_FLOAT);
      ds[2] = h5::create2D(mg, "count", H5T_NATIVE_UINT32, entities_, cols, layout_, &zeroU,
                           H5T_NATIVE_UINT32);
      for (int s = 3; s < 6; ++s)
        ds[static_cast<size_t>(s)] = h5::create2D(mg, kLodStats[s], H5T_NATIVE_DOUBLE, entities_,
                                                  cols, layout_, &zeroD, H5T_NATIVE_DOUBLE);
      m.lod.push_back(std::move(ds));
    }
    metrics_.push_back(std::move(m));
    return metrics_.back();
  }

  void createThrottleLod() {
    const uint32_t zero = 0;
    for (size_t k = 0; k < grid_->levels(); ++k) {
      h5::Id lg = h5::openGroup(lodGroup_, levelName(k));
      h5::Id tg = h5::createGroup(lg, "throttle_reasons");
      const size_t cols = grid_->buckets[k];
      std::array<h5::Id, 2> ds;
      ds[0] = h5::create2D(tg, "any", H5T_NATIVE_UINT32, entities_, cols, layout_, &zero,
                           H5T_NATIVE_UINT32);
      ds[1] = h5::create2D(tg, "throttled", H5T_NATIVE_UINT32, entities_, cols, layout_, &zero,
                           H5T_NATIVE_UINT32);
      throttleLod_.push_back(std::move(ds));
    }
  }

  void appendValues(MetricCols& m, const std::vector<double>& v) {
    if (m.isDouble) {
      m.values.append(v.data(), v.size());
    } else {
      std::vector<float> f(v.begin(), v.end());
      m.values.append(f.data(), f.size());
    }
  }

  void appendNaN(MetricCols& m, size_t n) {
    constexpr size_t kBlock = 1 << 16;
    const std::vector<double> nan(std::min(n, kBlock), kNaN);
    for (size_t done = 0; done < n;) {
      const size_t k = std::min(kBlock, n - done);
      appendValues(m, k == nan.size() ? nan : std::vector<double>(k, kNaN));
      done += k;
    }
  }

  static void appendFill(h5::Appender& a, uint32_t v, size_t n) {
    const std::vector<uint32_t> fill(n, v);
    a.append(fill.data(), fill.size());
  }

  void writeLod(MetricCols& m, size_t row, const std::vector<int64_t>& t,
                const std::vector<double>& v, int64_t gap) {
    const auto levels = buildTelemetryLod(*grid_, t, v, gap);
    for (size_t k = 0; k < levels.size(); ++k) {
      const TelemetryLodLevel& l = levels[k];
      const size_t cols = l.count.size();
      h5::writeRow(m.lod[k][0], H5T_NATIVE_FLOAT, row, l.min.data(), cols);
      h5::writeRow(m.lod[k][1], H5T_NATIVE_FLOAT, row, l.max.data(), cols);
      h5::writeRow(m.lod[k][2], H5T_NATIVE_UINT32, row, l.count.data(), cols);
      h5::writeRow(m.lod[k][3], H5T_NATIVE_DOUBLE, row, l.wsum.data(), cols);
      h5::writeRow(m.lod[k][4], H5T_NATIVE_DOUBLE, row, l.tsum.data(), cols);
      h5::writeRow(m.lod[k][5], H5T_NATIVE_DOUBLE, row, l.dt.data(), cols);
    }
  }

  h5::Layout layout_;
  size_t samplesHint_ = 0;
  std::string entity_;
  size_t entities_;
  int64_t start_, end_, nominalInterval_;
  int next_ = 0;
  h5::Id group_, lodGroup_;
  std::optional<LodGrid> grid_;
  h5::Appender t_, tIndex_, throttle_;
  std::vector<MetricCols> metrics_;
  std::vector<std::array<h5::Id, 2>> throttleLod_;  // per level: any, throttled
  std::vector<uint64_t> offsets_{0}, indexOffsets_{0};
  std::vector<int64_t> median_, threshold_;
  uint64_t total_ = 0;
};

// Track names to run names: ids into an importer's StringTable -> ids into the run's. An id the
// table does not have becomes "".
class NameMap {
 public:
  NameMap(StringTable& run, const StringTable& source)
      : run_(run), source_(source), remap_(source.size(), UINT32_MAX) {}
  uint32_t operator()(uint32_t id) {
    if (id >= remap_.size()) return run_.intern("");
    if (remap_[id] == UINT32_MAX) remap_[id] = run_.intern(source_.at(id));
    return remap_[id];
  }

 private:
  StringTable& run_;
  const StringTable& source_;
  std::vector<uint32_t> remap_;
};

// What RunWriter keeps while one kernel track is written in chunks.
struct TrackInProgress {
  explicit TrackInProgress(const LodGrid& grid) : lod(grid) {}
  KernelLodBuilder lod;
  uint64_t n = 0;
  std::array<uint64_t, kKernelClassCount> perClass{};
  KernelNameTable names;  // the track's summary partial (kernel_summary.h)
  size_t blockFill = 0;   // events in the block being filled
  int64_t blockMin = 0, blockMax = INT64_MIN;
};

}  // namespace

struct RunWriter::Impl {
  std::filesystem::path output, temp;
  std::optional<TempFile> tempFile;  // temp, removed on an interrupt (core/temp_files.h)
  RunInfo info;
  std::vector<GpuInfo> gpus;
  std::vector<RankInfo> ranks;
  h5::Layout layout;
  size_t samplesHint = 0;  // WriteOptions::max_samples_per_series
  bool summaries = true;   // WriteOptions::kernel_summaries
  h5::Id file;
  std::optional<SeriesGroupWriter> gpuTelemetry, nodeTelemetry;
  int nodeCount = 0;
  bool finished = false;

  StringTable strings;
  std::vector<QualityNote> notes;
  std::vector<Iteration> iterations;
  std::vector<Annotation> annotations;
  std::vector<ThrottleTruth> truthThrottle;
  std::vector<double> truthEnergy;
  std::optional<std::vector<PowerDomain>> domains;  // given by the caller
  std::vector<bool> hasPower;                       // per GPU: a finite power sample was added

  // Kernels, streamed.
  h5::Id kernels;
  LodGrid kernelGrid;
  h5::Appender kStart, kDur, kName, kClass, kKind, kCorr, kTruthClock;
  h5::Appender bMinStart, bMaxEnd;
  std::vector<std::array<h5::RowAppender, kKernelClassCount + 1>> kLod;  // per level
  std::vector<int32_t> trRank, trDevice;
  std::vector<int64_t> trStream;
  std::vector<uint64_t> trOffset, trCount, blockOffsets{0};
  std::array<std::vector<uint64_t>, kKernelClassCount> trClassCount;
  // /kernels/summary: each track's rows of its per-name partial, appended as the track ends.
  struct SummaryCols {
    h5::Appender name, cls, kind, count, total, min, max;
  } sum;
  std::vector<uint64_t> summaryOffsets{0};
  // /kernels/collectives, appended per track in event order: tracks are written one after the
  // other, so the table is ordered by global event index without holding it.
  struct CollectiveCols {
    h5::Appender event, collective, inNelems, outNelems, groupSize, dtype, pgName, pgDesc, pgRanks,
        seq;
  } coll;
  std::vector<std::pair<uint64_t, CollectiveInfo>> trackCollectives;  // of the track being written
  uint64_t kernelTotal = 0;
  size_t negativeDurations = 0;

  // The steps of RunWriter::finish().
  void writeKernelTables();                          // /kernels/tracks, block offsets
  void writeIterationsAndAnnotations();              // ordered by rank, then time
  void writeDomains();                               // /domains (checked by finish())
  void writeGpus(const std::vector<int>& domainOf);  // /gpus with each GPU's domain
  void writeRanks();                                 // /ranks
  void writeSources();                               // /sources
  void writeSensors();                               // /sensors
  void writeQuality();                               // /quality
  void writeGroundTruth();                           // /ground_truth of simulated runs
  void writeRootAttributes();                        // the run's identity, written last
  void closeAndCommit();  // closes every handle, then moves the file into place

  // The steps of addKernelTrack(): a track is appended in sorted chunks, then closed.
  void addSpilledTrack(const KernelTrack& track, const SpilledKernels& s, const StringTable& names);
  void appendKernels(TrackInProgress& t, std::span<const KernelEvent> sorted);
  void appendTruthClock(const std::vector<float>& clk);
  void addCollective(CollectiveInfo c, NameMap& globalName, uint64_t event);
  void endTrack(TrackInProgress& t, const KernelTrack& track);

  void openKernels() {
    kernels = h5::createGroup(file, "kernels");
    h5::setAttr(kernels, "block_size", format::kKernelBlockSize);
    kStart = h5::makeAppender<int64_t>(kernels, "start_ns", layout);
    kDur = h5::makeAppender<int64_t>(kernels, "dur_ns", layout);
    kName = h5::makeAppender<uint32_t>(kernels, "name", layout);
    kClass = h5::makeAppender<uint8_t>(kernels, "class", layout);
    kKind = h5::makeAppender<uint8_t>(kernels, "kind", layout);
    kCorr = h5::makeAppender<int64_t>(kernels, "correlation", layout);
    h5::Id blocks = h5::createGroup(kernels, "blocks");
    bMinStart = h5::makeAppender<int64_t>(blocks, "min_start_ns", layout);
    bMaxEnd = h5::makeAppender<int64_t>(blocks, "max_end_ns", layout);
    kernelGrid = LodGrid::forKernels(info.start_ns, info.end_ns);
    h5::Id lod = h5::createGroup(kernels, "lod");
    h5::setAttr(lod, "origin_ns", kernelGrid.origin_ns);
    h5::setAttr(lod, "factor", int64_t{kernelGrid.factor});
    h5::write(lod, "widths_ns", kernelGrid.widths_ns);
    std::vector<uint64_t> nb(kernelGrid.buckets.begin(), kernelGrid.buckets.end());
    h5::write(lod, "buckets", nb);
    for (size_t k = 0; k < kernelGrid.levels(); ++k) {
      h5::Id lg = h5::createGroup(lod, levelName(k));
      std::array<h5::RowAppender, kKernelClassCount + 1> rows;
      for (int c = 0; c < kKernelClassCount; ++c)
        rows[static_cast<size_t>(c)] = h5::RowAppender(
            lg, fmt::format("busy_{}", kernelClassName(static_cast<KernelClass>(c))),
            H5T_NATIVE_FLOAT, kernelGrid.buckets[k], layout);
      rows[kKernelClassCount] =
          h5::RowAppender(lg, "count", H5T_NATIVE_UINT32, kernelGrid.buckets[k], layout);
      kLod.push_back(std::move(rows));
    }
    h5::Id cg = h5::createGroup(kernels, "collectives");
    coll.event = h5::makeAppender<uint64_t>(cg, "event", layout);
    coll.collective = h5::makeAppender<uint32_t>(cg, "collective", layout);
    coll.inNelems = h5::makeAppender<int64_t>(cg, "in_nelems", layout);
    coll.outNelems = h5::makeAppender<int64_t>(cg, "out_nelems", layout);
    coll.groupSize = h5::makeAppender<int32_t>(cg, "group_size", layout);
    coll.dtype = h5::makeAppender<uint32_t>(cg, "dtype", layout);
    coll.pgName = h5::makeAppender<uint32_t>(cg, "pg_name", layout);
    coll.pgDesc = h5::makeAppender<uint32_t>(cg, "pg_desc", layout);
    coll.pgRanks = h5::makeAppender<uint32_t>(cg, "pg_ranks", layout);
    coll.seq = h5::makeAppender<int64_t>(cg, "seq", layout);
    if (summaries) openSummary();
  }

  void openSummary() {
    h5::Id g = h5::createGroup(kernels, "summary");
    const TimeRange r = summaryRange(info.start_ns, info.end_ns);
    h5::setAttr(g, "range_start_ns", r.t0);
    h5::setAttr(g, "range_end_ns", r.t1);
    sum.name = h5::makeAppender<uint32_t>(g, "name", layout);
    sum.cls = h5::makeAppender<uint8_t>(g, "class", layout);
    sum.kind = h5::makeAppender<uint8_t>(g, "kind", layout);
    sum.count = h5::makeAppender<uint64_t>(g, "count", layout);
    sum.total = h5::makeAppender<int64_t>(g, "total_ns", layout);
    sum.min = h5::makeAppender<int64_t>(g, "min_ns", layout);
    sum.max = h5::makeAppender<int64_t>(g, "max_ns", layout);
  }

  // Appends one track's summary rows (by name id).
  void appendSummary(const KernelNameTable& names) {
    const std::vector<KernelNameSummary> rows = names.rows();
    auto col = [&](auto f) {
      std::vector<decltype(f(rows.front()))> v;
      v.reserve(rows.size());
      for (const KernelNameSummary& r : rows)
        v.push_back(f(r));
      return v;
    };
    if (!rows.empty()) {
      appendVec(sum.name, col([](const auto& r) { return r.name; }));
      appendVec(sum.cls, col([](const auto& r) { return static_cast<uint8_t>(r.cls); }));
      appendVec(sum.kind, col([](const auto& r) { return static_cast<uint8_t>(r.kind); }));
      appendVec(sum.count, col([](const auto& r) { return r.count; }));
      appendVec(sum.total, col([](const auto& r) { return r.total_ns; }));
      appendVec(sum.min, col([](const auto& r) { return r.min_ns; }));
      appendVec(sum.max, col([](const auto& r) { return r.max_ns; }));
    }
    summaryOffsets.push_back(summaryOffsets.back() + rows.size());
  }

  // Appends the collectives of the track being written, in event order.
  void flushCollectives() {
    std::sort(trackCollectives.begin(), trackCollectives.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    auto col = [&](auto f) {
      using T = decltype(f(trackCollectives.front()));
      std::vector<T> v;
      v.reserve(trackCollectives.size());
      for (const auto& ec : trackCollectives)
        v.push_back(f(ec));
      return v;
    };
    if (trackCollectives.empty()) return;
    appendVec(coll.event, col([](const auto& ec) { return ec.first; }));
    appendVec(coll.collective, col([](const auto& ec) { return ec.second.collective; }));
    appendVec(coll.inNelems, col([](const auto& ec) { return ec.second.in_nelems; }));
    appendVec(coll.outNelems, col([](const auto& ec) { return ec.second.out_nelems; }));
    appendVec(coll.groupSize, col([](const auto& ec) { return ec.second.group_size; }));
    appendVec(coll.dtype, col([](const auto& ec) { return ec.second.dtype; }));
    appendVec(coll.pgName, col([](const auto& ec) { return ec.second.pg_name; }));
    appendVec(coll.pgDesc, col([](const auto& ec) { return ec.second.pg_desc; }));
    appendVec(coll.pgRanks, col([](const auto& ec) { return ec.second.pg_ranks; }));
    appendVec(coll.seq, col([](const auto& ec) { return ec.second.seq; }));
    trackCollectives.clear();
  }
};

RunWriter::RunWriter(std::filesystem::path output, RunInfo info, std::vector<GpuInfo> gpus,
                     std::vector<RankInfo> ranks, const WriteOptions& options)
    : d_(std::make_unique<Impl>()) {
  std::lock_guard lock(h5::lock());
  d_->output = std::move(output);
  d_->info = std::move(info);
  if (d_->info.end_ns < d_->info.start_ns)
    throw Error(fmt::format("{}: run end {} is before its start {}", d_->output.string(),
                            d_->info.end_ns, d_->info.start_ns));
  d_->gpus = std::move(gpus);
  d_->ranks = std::move(ranks);
  for (size_t i = 0; i < d_->gpus.size(); ++i)
    d_->gpus[i].id = static_cast<int>(i);
  d_->layout = layoutOf(options);
  d_->samplesHint = options.max_samples_per_series;
  d_->summaries = options.kernel_summaries;
  std::error_code ec;
  const auto parent =
      d_->output.parent_path().empty() ? std::filesystem::path(".") : d_->output.parent_path();
  if (!std::filesystem::is_directory(parent, ec))
    throw Error(
        fmt::format("{}: the folder {} does not exist", d_->output.string(), parent.string()));
  removeStaleTempFiles(parent);  // left by writers that were killed
  d_->temp = d_->tempFile.emplace(d_->output).path();
  d_->file = h5::createFile(d_->temp);
  d_->tempFile->lock();
  // The format's identity first, so that it lies in the first few kilobytes of the file (the
  // root group's header and the first global heap) where a file type's magic can find it
  // (docs/format.md, "Recognising a run file"); the rest of the root attributes come last.
  h5::setAttr(d_->file, "format", format::kMagic);
  h5::setAttr(d_->file, "format_version",
              d_->summaries ? format::kVersion : format::kVersionWithoutSummaries);
  d_->gpuTelemetry.emplace(d_->file, "telemetry", "gpu", d_->gpus.size(), d_->info.start_ns,
                           d_->info.end_ns, d_->info.sample_interval_s, d_->layout,
                           d_->samplesHint);
  d_->openKernels();
}

RunWriter::~RunWriter() {
  if (!d_ || d_->finished) return;
  std::lock_guard lock(h5::lock());
  try {
    d_->gpuTelemetry.reset();
    d_->nodeTelemetry.reset();
    d_->kLod.clear();
    d_->kStart = {}, d_->kDur = {}, d_->kName = {}, d_->kClass = {}, d_->kKind = {};
    d_->kCorr = {}, d_->kTruthClock = {}, d_->bMinStart = {}, d_->bMaxEnd = {};
    d_->coll = {};
    d_->sum = {};
    d_->kernels.close();
    d_->file.close();
  } catch (...) {
  }
  std::error_code ec;
  std::filesystem::remove(d_->temp, ec);
}

const std::filesystem::path& RunWriter::output() const {
  return d_->output;
}

void RunWriter::setNodeCount(int nodes) {
  std::lock_guard lock(h5::lock());
  if (d_->nodeTelemetry) throw Error("internal error: setNodeCount called twice");
  d_->nodeCount = nodes;
  if (nodes > 0)
    d_->nodeTelemetry.emplace(d_->file, "node_telemetry", "node", static_cast<size_t>(nodes),
                              d_->info.start_ns, d_->info.end_ns, d_->info.sample_interval_s,
                              d_->layout, d_->samplesHint);
}

void RunWriter::addGpuTelemetry(int gpu, TelemetryTable table) {
  std::lock_guard lock(h5::lock());
  if (const TelemetryColumn* p = table.column(metric::kPower);
      p && gpu >= 0 && static_cast<size_t>(gpu) < d_->gpus.size() &&
      std::any_of(p->values.begin(), p->values.end(), [](double v) { return std::isfinite(v); })) {
    d_->hasPower.resize(d_->gpus.size(), false);
    d_->hasPower[static_cast<size_t>(gpu)] = true;
  }
  d_->gpuTelemetry->add(gpu, std::move(table), d_->notes);
}

void RunWriter::addNodeTelemetry(int node, TelemetryTable table) {
  std::lock_guard lock(h5::lock());
  if (!d_->nodeTelemetry) throw Error("internal error: addNodeTelemetry before setNodeCount");
  d_->nodeTelemetry->add(node, std::move(table), d_->notes);
}

void RunWriter::addKernelTrack(KernelTrack track, const StringTable& names) {
  std::lock_guard lock(h5::lock());
  Impl& d = *d_;
  const size_t n = track.events.size();
  if (!track.truth_clock_mhz.empty() && track.truth_clock_mhz.size() != n)
    throw Error("internal error: truth_clock_mhz must have one value per event");

  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return track.events[a].start_ns < track.events[b].start_ns;
  });
  NameMap globalName(d.strings, names);
  std::vector<KernelEvent> sorted;
  sorted.reserve(n);
  std::vector<uint32_t> newIndex(n);
  for (uint32_t k = 0; k < n; ++k) {
    KernelEvent e = track.events[order[k]];
    if (e.dur_ns < 0) {
      e.dur_ns = 0;
      ++d.negativeDurations;
    }
    e.name = globalName(e.name);
    sorted.push_back(e);
    newIndex[order[k]] = k;
  }
  track.events = {};

  TrackInProgress t(d.kernelGrid);
  d.appendKernels(t, sorted);
  if (!track.truth_clock_mhz.empty() || d.kTruthClock.valid()) {
    std::vector<float> clk(n, kNaNf);
    if (!track.truth_clock_mhz.empty())
      for (size_t k = 0; k < n; ++k)
        clk[k] = track.truth_clock_mhz[order[k]];
    d.appendTruthClock(clk);
  }
  for (const CollectiveInfo& c : track.collectives)
    if (c.event < n) d.addCollective(c, globalName, d.kernelTotal + newIndex[c.event]);
  d.endTrack(t, track);
}

// A track whose events are sorted runs in a spill file plus a sorted tail: a k-way merge (ties
// go to the earlier run, which holds the earlier events, so the order is that of a stable sort of
// all the events) written in chunks, so memory stays at a buffer per run and one chunk.
void RunWriter::addKernelTrack(KernelTrack track, const SpilledKernels& events,
                               const StringTable& names) {
  std::lock_guard lock(h5::lock());
  d_->addSpilledTrack(track, events, names);
}

void RunWriter::Impl::addSpilledTrack(const KernelTrack& track, const SpilledKernels& s,
                                      const StringTable& names) {
  struct Cursor {
    SpillRun run;  // what is left on disk
    std::vector<SpillRecord> buf;
    std::span<const SpillRecord> view;  // what is buffered and not yet taken
  };
  std::vector<Cursor> cursors(s.runs.size() + 1);
  // Read buffers share a quarter of the budget, between 256 and 65,536 records each.
  const size_t budgetRecords =
      (s.spool ? s.spool->budget() : size_t{64} << 20) / 4 / sizeof(SpillRecord);
  const size_t perRun = std::clamp<size_t>(budgetRecords / cursors.size(), 256, 65536);
  auto refill = [&](Cursor& c) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(c.run.count, perRun));
    c.buf.resize(k);
    if (k > 0) s.spool->read(c.run.at, c.buf);
    c.run.at += k * sizeof(SpillRecord), c.run.count -= k;
    c.view = c.buf;
  };
  for (size_t r = 0; r < s.runs.size(); ++r) {
    cursors[r].run = s.runs[r];
    refill(cursors[r]);
  }
  cursors.back().view = s.tail;
  using Head = std::pair<int64_t, size_t>;  // (start, cursor): the smallest on top
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t r = 0; r < cursors.size(); ++r)
    if (!cursors[r].view.empty()) heads.push({cursors[r].view.front().start_ns, r});

  NameMap globalName(strings, names);
  std::vector<CollectiveInfo> collectives = track.collectives;
  if (s.collectiveCount > 0) {
    collectives = s.spool->readCollectives(s.collectivesAt, s.collectiveCount);
    if (!s.names.empty())
      for (CollectiveInfo& c : collectives)
        for (uint32_t* id : {&c.collective, &c.dtype, &c.pg_name, &c.pg_desc, &c.pg_ranks})
          *id = *id < s.names.size() ? s.names[*id] : UINT32_MAX;
  }
  std::vector<uint64_t> collectiveAt(collectives.size(), UINT64_MAX);
  TrackInProgress t(kernelGrid);
  constexpr size_t kChunk = 1 << 16;
  std::vector<KernelEvent> chunk;
  chunk.reserve(kChunk);
  uint64_t written = 0;
  while (!heads.empty()) {
    const size_t r = heads.top().second;
    heads.pop();
    Cursor& c = cursors[r];
    const SpillRecord& rec = c.view.front();
    KernelEvent e;
    e.start_ns = rec.start_ns + s.shift_ns;
    e.dur_ns = rec.dur_ns;
    if (e.dur_ns < 0) {
      e.dur_ns = 0;
      ++negativeDurations;
    }
    e.name = globalName(s.names.empty()             ? rec.name
                        : rec.name < s.names.size() ? s.names[rec.name]
                                                    : UINT32_MAX);
    e.cls = static_cast<KernelClass>(rec.cls);
    e.kind = static_cast<GpuEventKind>(rec.kind);
    e.correlation = rec.correlation;
    if (rec.collective < collectiveAt.size()) collectiveAt[rec.collective] = kernelTotal + written;
    chunk.push_back(e);
    ++written;
    c.view = c.view.subspan(1);
    if (c.view.empty() && c.run.count > 0) refill(c);
    if (!c.view.empty()) heads.push({c.view.front().start_ns, r});
    if (chunk.size() == kChunk || heads.empty()) {
      appendKernels(t, chunk);
      if (kTruthClock.valid()) appendTruthClock(std::vector<float>(chunk.size(), kNaNf));
      chunk.clear();
    }
  }
  if (written != s.count)
    throw Error(
        fmt::format("internal error: a spilled track gave {} of its {} events", written, s.count));
  for (size_t i = 0; i < collectives.size(); ++i)
    if (collectiveAt[i] != UINT64_MAX) addCollective(collectives[i], globalName, collectiveAt[i]);
  endTrack(t, track);
}

void RunWriter::Impl::appendKernels(TrackInProgress& t, std::span<const KernelEvent> sorted) {
  const size_t n = sorted.size();
  std::vector<int64_t> start(n), dur(n), corr(n);
  std::vector<uint32_t> name(n);
  std::vector<uint8_t> cls(n), kind(n);
  for (size_t i = 0; i < n; ++i) {
    start[i] = sorted[i].start_ns;
    dur[i] = sorted[i].dur_ns;
    name[i] = sorted[i].name;
    cls[i] = static_cast<uint8_t>(sorted[i].cls);
    kind[i] = static_cast<uint8_t>(sorted[i].kind);
    corr[i] = sorted[i].correlation;
  }
  appendVec(kStart, start);
  appendVec(kDur, dur);
  appendVec(kName, name);
  appendVec(kClass, cls);
  appendVec(kKind, kind);
  appendVec(kCorr, corr);

  // Blocks of kKernelBlockSize events from the track's first: the first start, the latest end.
  std::vector<int64_t> bMin, bMax;
  for (const KernelEvent& e : sorted) {
    if (t.blockFill == 0) t.blockMin = e.start_ns, t.blockMax = INT64_MIN;
    t.blockMax = std::max(t.blockMax, e.start_ns + e.dur_ns);
    if (++t.blockFill == static_cast<size_t>(format::kKernelBlockSize)) {
      bMin.push_back(t.blockMin);
      bMax.push_back(t.blockMax);
      t.blockFill = 0;
    }
  }
  appendVec(bMinStart, bMin);
  appendVec(bMaxEnd, bMax);

  t.lod.add(sorted);
  if (summaries) t.names.add(sorted, summaryRange(info.start_ns, info.end_ns));
  for (const KernelEvent& e : sorted)
    ++t.perClass[static_cast<size_t>(e.cls) % kKernelClassCount];
  t.n += n;
}

void RunWriter::Impl::appendTruthClock(const std::vector<float>& clk) {
  if (!kTruthClock.valid()) {
    kTruthClock = h5::makeAppender<float>(kernels, "truth_clock_mhz", layout);
    const std::vector<float> nan(kernelTotal, kNaNf);
    kTruthClock.append(nan.data(), nan.size());
  }
  appendVec(kTruthClock, clk);
}

void RunWriter::Impl::addCollective(CollectiveInfo c, NameMap& globalName, uint64_t event) {
  c.collective = globalName(c.collective);
  c.dtype = globalName(c.dtype);
  c.pg_name = globalName(c.pg_name);
  c.pg_desc = globalName(c.pg_desc);
  c.pg_ranks = globalName(c.pg_ranks);
  trackCollectives.emplace_back(event, c);
}

void RunWriter::Impl::endTrack(TrackInProgress& t, const KernelTrack& track) {
  if (t.blockFill > 0) {
    bMinStart.append(&t.blockMin, 1);
    bMaxEnd.append(&t.blockMax, 1);
    t.blockFill = 0;
  }
  blockOffsets.push_back(bMinStart.size());
  flushCollectives();
  const auto levels = t.lod.finish();
  for (size_t k = 0; k < levels.size(); ++k) {
    for (size_t c = 0; c < kKernelClassCount; ++c)
      kLod[k][c].append(H5T_NATIVE_FLOAT, levels[k].busy[c].data());
    kLod[k][kKernelClassCount].append(H5T_NATIVE_UINT32, levels[k].count.data());
  }
  if (summaries) appendSummary(t.names);
  trRank.push_back(track.rank);
  trStream.push_back(track.stream);
  trDevice.push_back(track.device);
  trOffset.push_back(kernelTotal);
  trCount.push_back(t.n);
  for (size_t c = 0; c < kKernelClassCount; ++c)
    trClassCount[c].push_back(t.perClass[c]);
  kernelTotal += t.n;
}

void RunWriter::addIterations(std::span<const Iteration> iterations) {
  d_->iterations.insert(d_->iterations.end(), iterations.begin(), iterations.end());
}

void RunWriter::addAnnotations(std::span<const Annotation> annotations, const StringTable& names) {
  std::lock_guard lock(h5::lock());
  for (Annotation a : annotations) {
    a.name = d_->strings.intern(a.name < names.size() ? names.at(a.name) : "");
    d_->annotations.push_back(a);
  }
}

void RunWriter::setDomains(std::vector<PowerDomain> domains) {
  d_->domains = std::move(domains);
}

void RunWriter::addQualityNote(QualityNote note) {
  d_->notes.push_back(std::move(note));
}

void RunWriter::setGroundTruth(std::vector<ThrottleTruth> throttle,
                               std::vector<double> energyPerGpuJ) {
  d_->truthThrottle = std::move(throttle);
  d_->truthEnergy = std::move(energyPerGpuJ);
}

namespace {

void writeConfig(hid_t file, const ParallelConfig& c) {
  h5::Id g = h5::createGroup(file, "config");
  auto put = [&](const char* name, const std::optional<int>& v) {
    if (v) h5::setAttr(g, name, int64_t{*v});
  };
  put("tp", c.tp), put("pp", c.pp), put("dp", c.dp), put("ep", c.ep), put("cp", c.cp);
  put("vpp", c.vpp), put("mbs", c.mbs), put("gbs", c.gbs), put("seq_len", c.seq_len);
  put("nodes", c.nodes), put("gpus_per_node", c.gpus_per_node);
  if (c.recompute) h5::setAttr(g, "recompute", int64_t{*c.recompute ? 1 : 0});
  if (c.overlap) h5::setAttr(g, "overlap", int64_t{*c.overlap ? 1 : 0});
}

template <typename T, typename Row, typename F>
std::vector<T> column(const std::vector<Row>& rows, F f) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const Row& r : rows)
    out.push_back(static_cast<T>(f(r)));
  return out;
}

}  // namespace

void RunWriter::finish(const Progress& progress) {
  std::lock_guard lock(h5::lock());
  Impl& d = *d_;
  if (d.finished) throw Error("internal error: RunWriter::finish called twice");
  // Power domains: given, or derived from the packages and the GPUs with power samples.
  if (!d.domains) d.domains = deriveDomains(d.gpus, d.hasPower);
  if (const std::string why = domainProblem(*d.domains, d.gpus.size()); !why.empty())
    throw Error(
        fmt::format("internal error: {}: invalid power domains: {}", d.output.string(), why));
  progress.report(0.0, "writing tables");
  const h5::Layout& L = d.layout;
  hid_t f = d.file;

  d.gpuTelemetry->finish();
  if (d.nodeTelemetry) d.nodeTelemetry->finish();

  if (d.negativeDurations > 0)
    d.notes.push_back(
        {Severity::Warning, "negative_durations", "kernels",
         fmt::format("{} events had a negative duration and were set to 0", d.negativeDurations)});

  d.writeKernelTables();
  progress.report(0.3, "writing tables");
  d.writeIterationsAndAnnotations();
  d.writeDomains();
  d.writeGpus(domainOfGpus(*d.domains, d.gpus.size()));
  d.writeRanks();
  d.writeSources();
  d.writeQuality();
  d.writeGroundTruth();
  progress.report(0.6, "writing strings");
  h5::writeStrings(f, "strings", d.strings.all(), L);
  d.writeRootAttributes();
  d.closeAndCommit();
  d.finished = true;
  progress.report(1.0, "done");
}
void RunWriter::Impl::writeKernelTables() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  h5::Id tracks = h5::createGroup(d.kernels, "tracks");
  h5::write(tracks, "rank", d.trRank, L);
  h5::write(tracks, "stream", d.trStream, L);
  h5::write(tracks, "device", d.trDevice, L);
  h5::write(tracks, "offset", d.trOffset, L);
  h5::write(tracks, "count", d.trCount, L);
  for (size_t c = 0; c < kKernelClassCount; ++c)
    h5::write(tracks, fmt::format("count_{}", kernelClassName(static_cast<KernelClass>(c))),
              d.trClassCount[c], L);
  h5::Id blocks = h5::openGroup(d.kernels, "blocks");
  h5::write(blocks, "offsets", d.blockOffsets, L);
  if (d.summaries) h5::write(h5::openGroup(d.kernels, "summary"), "offsets", d.summaryOffsets, L);
}

void RunWriter::Impl::writeIterationsAndAnnotations() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  // Iterations and annotations, ordered by rank then time.
  std::sort(d.iterations.begin(), d.iterations.end(), [](const Iteration& a, const Iteration& b) {
    return std::tie(a.rank, a.start_ns, a.step) < std::tie(b.rank, b.start_ns, b.step);
  });
  {
    h5::Id g = h5::createGroup(f, "iterations");
    h5::write(g, "rank", column<int32_t>(d.iterations, [](auto& i) { return i.rank; }), L);
    h5::write(g, "step", column<int64_t>(d.iterations, [](auto& i) { return i.step; }), L);
    h5::write(g, "start_ns", column<int64_t>(d.iterations, [](auto& i) { return i.start_ns; }), L);
    h5::write(g, "end_ns", column<int64_t>(d.iterations, [](auto& i) { return i.end_ns; }), L);
  }
  std::stable_sort(d.annotations.begin(), d.annotations.end(),
                   [](const Annotation& a, const Annotation& b) {
                     return std::tie(a.rank, a.start_ns) < std::tie(b.rank, b.start_ns);
                   });
  {
    h5::Id g = h5::createGroup(f, "annotations");
    const auto& A = d.annotations;
    h5::write(g, "rank", column<int32_t>(A, [](auto& a) { return a.rank; }), L);
    h5::write(g, "start_ns", column<int64_t>(A, [](auto& a) { return a.start_ns; }), L);
    h5::write(g, "dur_ns", column<int64_t>(A, [](auto& a) { return a.dur_ns; }), L);
    h5::write(g, "name", column<uint32_t>(A, [](auto& a) { return a.name; }), L);
    h5::write(g, "on_gpu", column<uint8_t>(A, [](auto& a) { return a.on_gpu ? 1 : 0; }), L);
  }
}

void RunWriter::Impl::writeDomains() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  h5::Id g = h5::createGroup(f, "domains");
  const auto& D = *d.domains;
  h5::write(g, "id", column<int32_t>(D, [](auto& x) { return x.id; }), L);
  h5::writeStrings(g, "kind", column<std::string>(D, [](auto& x) { return x.kind; }), L);
  h5::writeStrings(g, "name", column<std::string>(D, [](auto& x) { return x.name; }), L);
  h5::write(g, "node", column<int32_t>(D, [](auto& x) { return x.node; }), L);
  h5::write(g, "power_gpu", column<int32_t>(D, [](auto& x) { return x.power_gpu; }), L);
  h5::write(g, "power_limit_w", column<float>(D, [](auto& x) { return x.power_limit_w; }), L);
}

void RunWriter::Impl::writeGpus(const std::vector<int>& domainOf) {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  h5::Id g = h5::createGroup(f, "gpus");
  const auto& G = d.gpus;
  h5::write(g, "id", column<int32_t>(G, [](auto& x) { return x.id; }), L);
  h5::write(g, "node", column<int32_t>(G, [](auto& x) { return x.node; }), L);
  h5::write(g, "local_index", column<int32_t>(G, [](auto& x) { return x.local_index; }), L);
  h5::write(g, "rank", column<int32_t>(G, [](auto& x) { return x.rank; }), L);
  h5::write(g, "slot", column<int32_t>(G, [](auto& x) { return x.slot; }), L);
  h5::write(g, "package", column<int32_t>(G, [](auto& x) { return x.package; }), L);
  h5::write(g, "domain", column<int32_t>(domainOf, [](int x) { return x; }), L);
  h5::writeStrings(g, "hostname", column<std::string>(G, [](auto& x) { return x.hostname; }), L);
  h5::writeStrings(g, "device_name", column<std::string>(G, [](auto& x) { return x.device_name; }),
                   L);
  h5::writeStrings(g, "uuid", column<std::string>(G, [](auto& x) { return x.uuid; }), L);
  h5::write(g, "power_limit_w", column<float>(G, [](auto& x) { return x.power_limit_w; }), L);
  h5::write(g, "max_sm_clock_mhz", column<float>(G, [](auto& x) { return x.max_sm_clock_mhz; }), L);
  h5::write(g, "max_mem_clock_mhz", column<float>(G, [](auto& x) { return x.max_mem_clock_mhz; }),
            L);
  h5::write(g, "slowdown_temp_c", column<float>(G, [](auto& x) { return x.slowdown_temp_c; }), L);
  h5::write(g, "shutdown_temp_c", column<float>(G, [](auto& x) { return x.shutdown_temp_c; }), L);
}

void RunWriter::Impl::writeRanks() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  h5::Id g = h5::createGroup(f, "ranks");
  const auto& R = d.ranks;
  h5::write(g, "rank", column<int32_t>(R, [](auto& x) { return x.rank; }), L);
  h5::write(g, "gpu", column<int32_t>(R, [](auto& x) { return x.gpu; }), L);
  h5::write(g, "pid", column<int64_t>(R, [](auto& x) { return x.pid; }), L);
  h5::writeStrings(g, "hostname", column<std::string>(R, [](auto& x) { return x.hostname; }), L);
  h5::writeStrings(g, "source", column<std::string>(R, [](auto& x) { return x.source; }), L);
}

void RunWriter::Impl::writeSources() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  h5::Id g = h5::createGroup(f, "sources");
  const auto& S = d.info.sources;
  h5::writeStrings(g, "path", column<std::string>(S, [](auto& x) { return x.path; }), L);
  h5::writeStrings(g, "format", column<std::string>(S, [](auto& x) { return x.format; }), L);
  h5::write(g, "offset_ns", column<int64_t>(S, [](auto& x) { return x.offset_ns; }), L);
  h5::writeStrings(g, "detail", column<std::string>(S, [](auto& x) { return x.detail; }), L);
  writeSensors();
}

// /sensors: only when the run states any (files without it read as "assumed" defaults).
void RunWriter::Impl::writeSensors() {
  Impl& d = *this;
  const auto& S = d.info.sensors;
  if (S.empty()) return;
  const h5::Layout& L = d.layout;
  h5::Id g = h5::createGroup(d.file, "sensors");
  h5::write(g, "source", column<int32_t>(S, [](auto& x) { return x.source; }), L);
  h5::writeStrings(g, "metric", column<std::string>(S, [](auto& x) { return x.metric; }), L);
  h5::writeStrings(
      g, "kind",
      column<std::string>(S, [](auto& x) { return std::string(sensorKindName(x.kind)); }), L);
  h5::write(g, "window_s", column<double>(S, [](auto& x) { return x.window_s; }), L);
  h5::write(g, "period_s", column<double>(S, [](auto& x) { return x.period_s; }), L);
  h5::write(g, "lag_s", column<double>(S, [](auto& x) { return x.lag_s; }), L);
  h5::write(g, "assumed", column<uint8_t>(S, [](auto& x) { return uint8_t{x.assumed}; }), L);
  h5::writeStrings(g, "basis", column<std::string>(S, [](auto& x) { return x.basis; }), L);
}

void RunWriter::Impl::writeQuality() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  h5::Id g = h5::createGroup(f, "quality");
  const auto& Q = d.notes;
  h5::write(g, "severity",
            column<uint8_t>(Q, [](auto& x) { return static_cast<uint8_t>(x.severity); }), L);
  h5::writeStrings(g, "code", column<std::string>(Q, [](auto& x) { return x.code; }), L);
  h5::writeStrings(g, "subject", column<std::string>(Q, [](auto& x) { return x.subject; }), L);
  h5::writeStrings(g, "message", column<std::string>(Q, [](auto& x) { return x.message; }), L);
}

void RunWriter::Impl::writeGroundTruth() {
  Impl& d = *this;
  const h5::Layout& L = d.layout;
  hid_t f = d.file;
  if (!d.truthThrottle.empty() || !d.truthEnergy.empty()) {
    h5::Id g = h5::createGroup(f, "ground_truth");
    h5::Id t = h5::createGroup(g, "throttle");
    const auto& T = d.truthThrottle;
    h5::write(t, "gpu", column<int32_t>(T, [](auto& x) { return x.gpu; }), L);
    h5::write(t, "start_ns", column<int64_t>(T, [](auto& x) { return x.start_ns; }), L);
    h5::write(t, "end_ns", column<int64_t>(T, [](auto& x) { return x.end_ns; }), L);
    h5::write(t, "reasons", column<uint32_t>(T, [](auto& x) { return x.reasons; }), L);
    h5::write(t, "busy_s", column<double>(T, [](auto& x) { return x.busy_s; }), L);
    h5::write(t, "deficit_mhz_s", column<double>(T, [](auto& x) { return x.deficit_mhz_s; }), L);
    h5::write(t, "unthrottled_mhz", column<double>(T, [](auto& x) { return x.unthrottled_mhz; }),
              L);
    h5::write(g, "energy_j", d.truthEnergy, L);
  }
}

void RunWriter::Impl::writeRootAttributes() {
  Impl& d = *this;
  hid_t f = d.file;
  // Root attributes last: the run's identity (format and format_version were written first, by
  // the constructor).
  const RunInfo& I = d.info;
  h5::setAttr(f, "name", I.name);
  h5::setAttr(f, "platform", I.platform);
  h5::setAttr(f, "model", I.model);
  h5::setAttr(f, "simulated", int64_t{I.simulated ? 1 : 0});
  h5::setAttr(f, "start_ns", I.start_ns);
  h5::setAttr(f, "end_ns", I.end_ns);
  h5::setAttr(f, "sample_interval_s", I.sample_interval_s);
  h5::setAttr(f, "created_by", I.created_by);
  h5::setAttr(f, "parameters_json", I.parameters_json);
  writeConfig(f, I.config);
}

void RunWriter::Impl::closeAndCommit() {
  Impl& d = *this;
  // Close every handle, then move the finished file into place.
  d.gpuTelemetry.reset();
  d.nodeTelemetry.reset();
  d.kLod.clear();
  d.kStart = {}, d.kDur = {}, d.kName = {}, d.kClass = {}, d.kKind = {};
  d.kCorr = {}, d.kTruthClock = {}, d.bMinStart = {}, d.bMaxEnd = {};
  d.coll = {};
  d.sum = {};
  d.kernels.close();
  if (H5Fflush(d.file, H5F_SCOPE_GLOBAL) < 0)
    throw Error(fmt::format("{}: cannot flush ({})", d.temp.string(), h5::lastError()));
  d.file.close();
  std::error_code ec;
  d.tempFile->commit(ec);
  if (ec)
    throw Error(fmt::format("{}: cannot move the finished run into place: {}", d.output.string(),
                            ec.message()));
}

}  // namespace wl
