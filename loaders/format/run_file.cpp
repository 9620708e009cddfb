// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/format/run_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "loaders/core/error.h"
#include "loaders/core/sensors.h"
#include "loaders/format/format_version.h"
#include "loaders/format/run_limits.h"
#include "loaders/h5/stored_chunks.h"

namespace wl {
namespace {

std::string groupPath(SeriesKind k) {
  return k == SeriesKind::Gpu ? "telemetry" : "node_telemetry";
}

}  // namespace

const MetricInfo* SeriesGroupMeta::metric(std::string_view id) const {
  for (const MetricInfo& m : metrics)
    if (m.id == id) return &m;
  return nullptr;
}

RunFile::~RunFile() {
  std::lock_guard lock(h5::lock());
  datasets_.clear();
  file_.close();
}

void RunFile::fail(const std::string& what) const {
  throw Error(fmt::format("{}: {}", path_.string(), what));
}

std::shared_ptr<const RunFile> RunFile::open(const std::filesystem::path& path) {
  std::lock_guard lock(h5::lock());
  std::shared_ptr<RunFile> f(new RunFile());
  f->path_ = path;
  f->file_ = h5::openFile(path);
  f->load();
  return f;
}

namespace {

// Reads a column and checks its length.
template <typename T>
std::vector<T> column(hid_t g, std::string_view group, std::string_view name, size_t expect,
                      const std::filesystem::path& file) {
  h5::Id ds = h5::openDataset(g, name);
  const auto shape = h5::shapeOf(ds);
  if (shape.size() != 1 || shape[0] != expect)
    throw Error(fmt::format("{}: dataset /{}/{} has {} elements, expected {}", file.string(), group,
                            name, shape.empty() ? 0 : shape[0], expect));
  return h5::read<T>(ds.get());
}

std::vector<std::string> strColumn(hid_t g, std::string_view group, std::string_view name,
                                   size_t expect, const std::filesystem::path& file) {
  auto v = h5::readStrings(g, name);
  if (v.size() != expect)
    throw Error(fmt::format("{}: dataset /{}/{} has {} elements, expected {}", file.string(), group,
                            name, v.size(), expect));
  return v;
}

size_t lengthOf(hid_t g, std::string_view name) {
  h5::Id ds = h5::openDataset(g, name);
  const auto shape = h5::shapeOf(ds);
  return shape.empty() ? 0 : static_cast<size_t>(shape[0]);
}

LodGrid loadGrid(hid_t lod, const std::filesystem::path& file, std::string_view where) {
  LodGrid g;
  const auto origin = h5::attrInt(lod, "origin_ns");
  const auto factor = h5::attrInt(lod, "factor");
  if (!origin || !factor || *factor < 2)
    throw Error(fmt::format("{}: /{}/lod lacks valid attributes origin_ns and factor",
                            file.string(), where));
  g.origin_ns = *origin;
  g.factor = static_cast<int>(*factor);
  g.widths_ns = h5::read<int64_t>(lod, "widths_ns");
  const auto nb = h5::read<uint64_t>(lod, "buckets");
  if (nb.size() != g.widths_ns.size() || g.widths_ns.empty())
    throw Error(fmt::format("{}: /{}/lod/widths_ns and buckets disagree", file.string(), where));
  limits::checkCount(file, std::string(where) + "/lod/widths_ns", nb.size(), limits::kMaxLodLevels);
  limits::checkPyramid(file, where, nb);
  for (size_t k = 0; k < nb.size(); ++k) {
    if (g.widths_ns[k] <= 0 || nb[k] == 0 || nb[k] > (uint64_t{1} << 32))
      throw Error(fmt::format("{}: /{}/lod level {} has width {} ns and {} buckets", file.string(),
                              where, k, g.widths_ns[k], nb[k]));
    g.buckets.push_back(static_cast<size_t>(nb[k]));
  }
  return g;
}

}  // namespace

SeriesGroupMeta RunFile::loadSeries(std::string_view group, size_t expectedEntities) {
  SeriesGroupMeta m;
  h5::Id g = h5::openGroup(file_, group);
  m.entity = h5::attrString(g, "entity").value_or("gpu");
  m.entities = expectedEntities;
  m.offsets = column<uint64_t>(g, group, "offsets", expectedEntities + 1, path_);
  const size_t total = lengthOf(g, "t_ns");
  if (m.offsets.front() != 0 || m.offsets.back() != total ||
      !std::is_sorted(m.offsets.begin(), m.offsets.end()))
    fail(fmt::format("/{}/offsets must rise from 0 to the {} samples of /{}/t_ns", group, total,
                     group));
  m.medianIntervalNs = column<int64_t>(g, group, "median_interval_ns", expectedEntities, path_);
  m.gapThresholdNs = column<int64_t>(g, group, "gap_threshold_ns", expectedEntities, path_);
  column<uint64_t>(g, group, "t_index_offsets", expectedEntities + 1, path_);
  const std::vector<std::string> metricIds = h5::readStrings(g, "metrics");
  limits::checkCount(path_, std::string(group) + "/metrics", metricIds.size(), limits::kMaxMetrics);
  for (const std::string& id : metricIds) {
    if (lengthOf(g, id) != total)
      fail(fmt::format("dataset /{}/{} has {} elements, expected {}", group, id, lengthOf(g, id),
                       total));
    h5::Id ds = h5::openDataset(g, id);
    MetricInfo mi;
    mi.id = id;
    mi.unit = h5::attrString(ds, "unit").value_or("");
    mi.label = h5::attrString(ds, "label").value_or(metricLabel(id));
    mi.kind = h5::attrString(ds, "kind").value_or("gauge") == "counter" ? MetricKind::Counter
                                                                        : MetricKind::Gauge;
    m.metrics.push_back(std::move(mi));
  }
  m.hasThrottle = h5::exists(g, "throttle_reasons");
  if (m.hasThrottle && lengthOf(g, "throttle_reasons") != total)
    fail(fmt::format("dataset /{}/throttle_reasons has {} elements, expected {}", group,
                     lengthOf(g, "throttle_reasons"), total));
  h5::Id lod = h5::openGroup(g, "lod");
  m.grid = loadGrid(lod, path_, group);
  // The throttle-reason pyramid is optional (files written before it existed lack it).
  m.hasThrottleLod = m.hasThrottle && h5::exists(lod, "L0/throttle_reasons/any");
  if (m.hasThrottleLod) {
    for (size_t k = 0; k < m.grid.levels(); ++k) {
      for (const char* stat : {"any", "throttled"}) {
        const std::string p = fmt::format("L{}/throttle_reasons/{}", k, stat);
        h5::Id ds = h5::openDataset(lod, p);
        const auto shape = h5::shapeOf(ds);
        if (shape.size() != 2 || shape[0] != expectedEntities || shape[1] != m.grid.buckets[k])
          fail(fmt::format("dataset /{}/lod/{} has the wrong shape", group, p));
      }
    }
  }
  for (const MetricInfo& mi : m.metrics) {
    for (size_t k = 0; k < m.grid.levels(); ++k) {
      for (const char* stat : {"min", "max", "count", "wsum", "tsum", "dt"}) {
        const std::string p = fmt::format("L{}/{}/{}", k, mi.id, stat);
        h5::Id ds = h5::openDataset(lod, p);
        const auto shape = h5::shapeOf(ds);
        if (shape.size() != 2 || shape[0] != expectedEntities || shape[1] != m.grid.buckets[k])
          fail(fmt::format("dataset /{}/lod/{} has shape {}x{}, expected {}x{}", group, p,
                           shape.size() > 0 ? shape[0] : 0, shape.size() > 1 ? shape[1] : 0,
                           expectedEntities, m.grid.buckets[k]));
      }
    }
  }
  return m;
}

// The steps of opening a run, in the order of the checks: format, required groups, metadata,
// GPUs and ranks, telemetry series and domains, the kernel index, then the small tables.
void RunFile::load() {
  const hid_t f = file_;
  checkFormat();
  for (const char* required :
       {"gpus", "ranks", "telemetry", "kernels", "kernels/tracks", "kernels/blocks", "kernels/lod",
        "iterations", "annotations", "quality", "strings", "sources"}) {
    if (!h5::exists(f, required))
      fail(fmt::format("missing required dataset or group /{}", required));
  }
  loadInfo();
  loadGpus();
  loadRanks();
  gpu_ = loadSeries("telemetry", gpus_.size());
  loadDomains();
  if (h5::exists(f, "node_telemetry")) {
    h5::Id g = h5::openGroup(f, "node_telemetry");
    const size_t n = lengthOf(g, "offsets");
    if (n == 0) fail("/node_telemetry/offsets is empty");
    limits::checkCount(path_, "node_telemetry/offsets", n - 1, limits::kMaxNodes);
    node_ = loadSeries("node_telemetry", n - 1);
  }
  loadKernelIndex();
  loadKernelSummary();
  loadIterations();
  loadAnnotations();
  loadQuality();
  hasTruth_ = h5::exists(f, "ground_truth");
}

// The root says it is a run in a format version this build reads.
void RunFile::checkFormat() {
  const hid_t f = file_;
  const auto magic = h5::attrString(f, "format");
  if (!magic || *magic != format::kMagic)
    fail(
        "not a Wattline run (the root has no attribute format = \"wattline-run\"); use "
        "'wattline import' to convert traces and telemetry logs");
  const auto version = h5::attrInt(f, "format_version");
  if (!version || *version < 1) fail("has no valid format_version attribute");
  if (*version > format::kVersion)
    fail(
        fmt::format("was written in run format version {}, newer than the version {} this "
                    "Wattline reads; update Wattline",
                    *version, format::kVersion));
  version_ = *version;
  limits::checkStoredSizes(path_, f);
}

// The run's attributes, configuration and sources.
void RunFile::loadInfo() {
  const hid_t f = file_;
  info_.name = h5::attrString(f, "name").value_or("");
  info_.platform = h5::attrString(f, "platform").value_or("");
  info_.model = h5::attrString(f, "model").value_or("");
  info_.simulated = h5::attrInt(f, "simulated").value_or(0) != 0;
  const auto start = h5::attrInt(f, "start_ns"), end = h5::attrInt(f, "end_ns");
  if (!start || !end) fail("missing required attribute start_ns or end_ns");
  if (*end < *start) fail(fmt::format("end_ns {} is before start_ns {}", *end, *start));
  info_.start_ns = *start;
  info_.end_ns = *end;
  info_.sample_interval_s = h5::attrDouble(f, "sample_interval_s").value_or(0.0);
  info_.created_by = h5::attrString(f, "created_by").value_or("");
  info_.parameters_json = h5::attrString(f, "parameters_json").value_or("");
  if (h5::exists(f, "config")) {
    h5::Id c = h5::openGroup(f, "config");
    auto get = [&](const char* n) -> std::optional<int> {
      if (auto v = h5::attrInt(c, n)) return static_cast<int>(*v);
      return std::nullopt;
    };
    auto getB = [&](const char* n) -> std::optional<bool> {
      if (auto v = h5::attrInt(c, n)) return *v != 0;
      return std::nullopt;
    };
    ParallelConfig& p = info_.config;
    p.tp = get("tp"), p.pp = get("pp"), p.dp = get("dp"), p.ep = get("ep"), p.cp = get("cp");
    p.vpp = get("vpp"), p.mbs = get("mbs"), p.gbs = get("gbs"), p.seq_len = get("seq_len");
    p.nodes = get("nodes"), p.gpus_per_node = get("gpus_per_node");
    p.recompute = getB("recompute"), p.overlap = getB("overlap");
  }
  {
    h5::Id g = h5::openGroup(f, "sources");
    const size_t n = h5::readStrings(g, "path").size();
    auto paths = strColumn(g, "sources", "path", n, path_);
    auto formats = strColumn(g, "sources", "format", n, path_);
    auto offs = column<int64_t>(g, "sources", "offset_ns", n, path_);
    auto details = strColumn(g, "sources", "detail", n, path_);
    for (size_t i = 0; i < n; ++i)
      info_.sources.push_back({paths[i], formats[i], offs[i], details[i]});
  }
  if (h5::exists(f, "sensors")) loadSensors();
}

std::vector<SensorInfo> RunFile::sensors() const {
  std::vector<std::string> metrics;
  for (const MetricInfo& m : gpu_.metrics)
    metrics.push_back(m.id);
  return resolveSensors(info_, metrics);
}

// /sensors: the sensor semantics the run states (docs/format.md); optional.
void RunFile::loadSensors() {
  h5::Id g = h5::openGroup(file_, "sensors");
  const size_t n = lengthOf(g, "source");
  limits::checkCount(path_, "sensors", n, limits::kMaxGpus);
  const auto source = column<int32_t>(g, "sensors", "source", n, path_);
  const auto metric = strColumn(g, "sensors", "metric", n, path_);
  const auto kind = strColumn(g, "sensors", "kind", n, path_);
  const auto window = column<double>(g, "sensors", "window_s", n, path_);
  const auto period = column<double>(g, "sensors", "period_s", n, path_);
  const auto lag = column<double>(g, "sensors", "lag_s", n, path_);
  const auto assumed = column<uint8_t>(g, "sensors", "assumed", n, path_);
  const auto basis = strColumn(g, "sensors", "basis", n, path_);
  for (size_t i = 0; i < n; ++i) {
    const auto k = parseSensorKind(kind[i]);
    if (!k)
      fail(fmt::format("/sensors/kind[{}] is \"{}\", expected instant, average or counter", i,
                       kind[i]));
    if (source[i] < -1 || source[i] >= static_cast<int32_t>(info_.sources.size()))
      fail(fmt::format("/sensors/source[{}] is {}, expected -1 or a row of /sources (0..{})", i,
                       source[i], info_.sources.size()));
    info_.sensors.push_back(
        {source[i], metric[i], *k, window[i], period[i], lag[i], assumed[i] != 0, basis[i]});
  }
}

// /gpus: one row per GPU, ids dense.
void RunFile::loadGpus() {
  const hid_t f = file_;
  h5::Id g = h5::openGroup(f, "gpus");
  const size_t n = lengthOf(g, "id");
  limits::checkCount(path_, "gpus", n, limits::kMaxGpus);
  const auto id = column<int32_t>(g, "gpus", "id", n, path_);
  const auto node = column<int32_t>(g, "gpus", "node", n, path_);
  const auto local = column<int32_t>(g, "gpus", "local_index", n, path_);
  const auto rank = column<int32_t>(g, "gpus", "rank", n, path_);
  const auto slot = column<int32_t>(g, "gpus", "slot", n, path_);
  const auto pkg = column<int32_t>(g, "gpus", "package", n, path_);
  const auto host = strColumn(g, "gpus", "hostname", n, path_);
  const auto dev = strColumn(g, "gpus", "device_name", n, path_);
  const auto uuid = strColumn(g, "gpus", "uuid", n, path_);
  const auto pl = column<float>(g, "gpus", "power_limit_w", n, path_);
  const auto msm = column<float>(g, "gpus", "max_sm_clock_mhz", n, path_);
  const auto mmem = column<float>(g, "gpus", "max_mem_clock_mhz", n, path_);
  const auto slow = column<float>(g, "gpus", "slowdown_temp_c", n, path_);
  const auto shut = column<float>(g, "gpus", "shutdown_temp_c", n, path_);
  for (size_t i = 0; i < n; ++i) {
    if (id[i] != static_cast<int32_t>(i))
      fail(fmt::format("/gpus/id[{}] is {}, expected {} (ids are dense)", i, id[i], i));
    GpuInfo gi;
    gi.id = id[i], gi.node = node[i], gi.local_index = local[i], gi.rank = rank[i];
    gi.slot = slot[i], gi.package = pkg[i];
    gi.hostname = host[i], gi.device_name = dev[i], gi.uuid = uuid[i];
    gi.power_limit_w = pl[i], gi.max_sm_clock_mhz = msm[i], gi.max_mem_clock_mhz = mmem[i];
    gi.slowdown_temp_c = slow[i], gi.shutdown_temp_c = shut[i];
    gpus_.push_back(std::move(gi));
  }
}

// /ranks: each rank's GPU within the GPUs.
void RunFile::loadRanks() {
  const hid_t f = file_;
  h5::Id g = h5::openGroup(f, "ranks");
  const size_t n = lengthOf(g, "rank");
  limits::checkCount(path_, "ranks", n, limits::kMaxRanks);
  const auto rank = column<int32_t>(g, "ranks", "rank", n, path_);
  const auto gpu = column<int32_t>(g, "ranks", "gpu", n, path_);
  const auto pid = column<int64_t>(g, "ranks", "pid", n, path_);
  const auto host = strColumn(g, "ranks", "hostname", n, path_);
  const auto src = strColumn(g, "ranks", "source", n, path_);
  for (size_t i = 0; i < n; ++i) {
    if (gpu[i] >= static_cast<int32_t>(gpus_.size()))
      fail(fmt::format("/ranks/gpu[{}] is {}, but the run has {} GPUs", i, gpu[i], gpus_.size()));
    ranks_.push_back({rank[i], gpu[i], host[i], pid[i], src[i]});
  }
}

// /kernels: event count, tracks, block index and the pyramid's shapes; the events are read lazily.
void RunFile::loadKernelIndex() {
  const hid_t f = file_;
  h5::Id k = h5::openGroup(f, "kernels");
  kernelCount_ = lengthOf(k, "start_ns");
  for (const char* c : {"dur_ns", "name", "class", "kind", "correlation"})
    if (lengthOf(k, c) != kernelCount_)
      fail(fmt::format("dataset /kernels/{} has {} elements, expected {}", c, lengthOf(k, c),
                       kernelCount_));
  hasTruthClock_ = h5::exists(k, "truth_clock_mhz");
  h5::Id t = h5::openGroup(k, "tracks");
  const size_t n = lengthOf(t, "rank");
  limits::checkCount(path_, "kernels/tracks", n, limits::kMaxTracks);
  const auto rank = column<int32_t>(t, "kernels/tracks", "rank", n, path_);
  const auto stream = column<int64_t>(t, "kernels/tracks", "stream", n, path_);
  const auto device = column<int32_t>(t, "kernels/tracks", "device", n, path_);
  const auto offset = column<uint64_t>(t, "kernels/tracks", "offset", n, path_);
  const auto count = column<uint64_t>(t, "kernels/tracks", "count", n, path_);
  std::array<std::vector<uint64_t>, kKernelClassCount> perClass;
  for (int c = 0; c < kKernelClassCount; ++c)
    perClass[static_cast<size_t>(c)] = column<uint64_t>(
        t, "kernels/tracks", fmt::format("count_{}", kernelClassName(static_cast<KernelClass>(c))),
        n, path_);
  for (size_t i = 0; i < n; ++i) {
    if (offset[i] + count[i] > kernelCount_ || offset[i] + count[i] < offset[i])
      fail(fmt::format("/kernels/tracks[{}] covers events {}..{} of {}", i, offset[i],
                       offset[i] + count[i], kernelCount_));
    TrackInfo ti{rank[i], stream[i], device[i], offset[i], count[i], {}};
    for (size_t c = 0; c < kKernelClassCount; ++c)
      ti.classCount[c] = perClass[c][i];
    tracks_.push_back(ti);
  }
  h5::Id b = h5::openGroup(k, "blocks");
  blockOffsets_ = column<uint64_t>(b, "kernels/blocks", "offsets", n + 1, path_);
  const size_t nb = lengthOf(b, "min_start_ns");
  if (lengthOf(b, "max_end_ns") != nb || blockOffsets_.back() != nb)
    fail("/kernels/blocks datasets disagree with /kernels/blocks/offsets");
  h5::Id lod = h5::openGroup(k, "lod");
  kernelGrid_ = loadGrid(lod, path_, "kernels");
  for (size_t lv = 0; lv < kernelGrid_.levels(); ++lv) {
    for (int c = 0; c <= kKernelClassCount; ++c) {
      const std::string p =
          c < kKernelClassCount
              ? fmt::format("L{}/busy_{}", lv, kernelClassName(static_cast<KernelClass>(c)))
              : fmt::format("L{}/count", lv);
      h5::Id ds = h5::openDataset(lod, p);
      const auto shape = h5::shapeOf(ds);
      if (shape.size() != 2 || shape[0] != n || shape[1] != kernelGrid_.buckets[lv])
        fail(fmt::format("dataset /kernels/lod/{} has the wrong shape", p));
    }
  }
}

// /kernels/summary (version 3): its range and where each track's rows lie; the rows are read
// per track by kernelSummary().
void RunFile::loadKernelSummary() {
  if (version_ < 3) return;
  h5::Id g = h5::openGroup(file_, "kernels/summary");
  const TimeRange want = summaryRange(info_.start_ns, info_.end_ns);
  const auto t0 = h5::attrInt(g, "range_start_ns"), t1 = h5::attrInt(g, "range_end_ns");
  if (!t0 || !t1 || *t0 != want.t0 || *t1 != want.t1)
    fail(fmt::format(
        "/kernels/summary has range_start_ns/range_end_ns {}/{}, expected the run's span {}/{}",
        t0 ? std::to_string(*t0) : "(missing)", t1 ? std::to_string(*t1) : "(missing)", want.t0,
        want.t1));
  auto offsets = column<uint64_t>(g, "kernels/summary", "offsets", tracks_.size() + 1, path_);
  const size_t rows = lengthOf(g, "name");
  for (const char* c : {"class", "kind", "count", "total_ns", "min_ns", "max_ns"})
    if (lengthOf(g, c) != rows)
      fail(fmt::format("dataset /kernels/summary/{} has {} elements, expected {}", c,
                       lengthOf(g, c), rows));
  if (rows > kernelCount_)
    fail(fmt::format("/kernels/summary has {} rows, more than the {} events", rows, kernelCount_));
  if (offsets.front() != 0 || offsets.back() != rows ||
      !std::is_sorted(offsets.begin(), offsets.end()))
    fail("/kernels/summary/offsets do not rise from 0 to the number of rows");
  for (size_t t = 0; t < tracks_.size(); ++t)
    if (offsets[t + 1] - offsets[t] > tracks_[t].count)
      fail(fmt::format("/kernels/summary/offsets give track {} more rows than events", t));
  summaryOffsets_ = std::move(offsets);
}

std::vector<KernelNameSummary> RunFile::kernelSummary(size_t track) const {
  std::lock_guard lock(h5::lock());
  if (track >= tracks_.size() || summaryOffsets_.empty())
    fail(fmt::format("no kernel summary of track {}", track));
  const size_t r0 = summaryOffsets_[track], n = summaryOffsets_[track + 1] - r0;
  std::vector<KernelNameSummary> out(n);
  if (n == 0) return out;
  auto col = [&](const char* c, auto tag) {
    return h5::read<decltype(tag)>(dataset(fmt::format("kernels/summary/{}", c)), r0, n);
  };
  const auto name = col("name", uint32_t{});
  const auto count = col("count", uint64_t{});
  const auto cls = col("class", uint8_t{});
  const auto kind = col("kind", uint8_t{});
  const auto total = col("total_ns", int64_t{});
  const auto mn = col("min_ns", int64_t{});
  const auto mx = col("max_ns", int64_t{});
  uint64_t events = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool ok = cls[i] < kKernelClassCount &&
                    kind[i] <= static_cast<uint8_t>(GpuEventKind::Other) && count[i] > 0 &&
                    count[i] <= tracks_[track].count - events && mn[i] >= 0 && mn[i] <= mx[i] &&
                    total[i] >= mx[i] && (i == 0 || name[i] > name[i - 1]);
    if (!ok)
      fail(
          fmt::format("/kernels/summary row {} (track {}) is damaged: name {}, class {}, kind {}, "
                      "count {}, total/min/max {}/{}/{} ns",
                      r0 + i, track, name[i], cls[i], kind[i], count[i], total[i], mn[i], mx[i]));
    events += count[i];
    out[i] = {name[i],
              static_cast<KernelClass>(cls[i]),
              static_cast<GpuEventKind>(kind[i]),
              count[i],
              total[i],
              mn[i],
              mx[i]};
  }
  return out;
}

// /iterations.
void RunFile::loadIterations() {
  const hid_t f = file_;
  h5::Id g = h5::openGroup(f, "iterations");
  const size_t n = lengthOf(g, "rank");
  const auto rank = column<int32_t>(g, "iterations", "rank", n, path_);
  const auto step = column<int64_t>(g, "iterations", "step", n, path_);
  const auto s = column<int64_t>(g, "iterations", "start_ns", n, path_);
  const auto e = column<int64_t>(g, "iterations", "end_ns", n, path_);
  for (size_t i = 0; i < n; ++i)
    iterations_.push_back({rank[i], step[i], s[i], e[i]});
}

// /annotations.
void RunFile::loadAnnotations() {
  const hid_t f = file_;
  h5::Id g = h5::openGroup(f, "annotations");
  const size_t n = lengthOf(g, "rank");
  const auto rank = column<int32_t>(g, "annotations", "rank", n, path_);
  const auto s = column<int64_t>(g, "annotations", "start_ns", n, path_);
  const auto d = column<int64_t>(g, "annotations", "dur_ns", n, path_);
  const auto name = column<uint32_t>(g, "annotations", "name", n, path_);
  const auto gpu = column<uint8_t>(g, "annotations", "on_gpu", n, path_);
  for (size_t i = 0; i < n; ++i)
    annotations_.push_back({rank[i], s[i], d[i], name[i], gpu[i] != 0});
}

// /quality: the notes written at import.
void RunFile::loadQuality() {
  const hid_t f = file_;
  h5::Id g = h5::openGroup(f, "quality");
  const size_t n = lengthOf(g, "severity");
  const auto sev = column<uint8_t>(g, "quality", "severity", n, path_);
  const auto code = strColumn(g, "quality", "code", n, path_);
  const auto subj = strColumn(g, "quality", "subject", n, path_);
  const auto msg = strColumn(g, "quality", "message", n, path_);
  for (size_t i = 0; i < n; ++i)
    quality_.push_back({sev[i] ? Severity::Warning : Severity::Info, code[i], subj[i], msg[i]});
}

void RunFile::loadDomains() {
  const hid_t f = file_;
  if (version_ < 2) {
    // Version 1: derived from the packages and the GPUs with power samples (core/power_domain.h).
    const std::vector<uint64_t> counts = validCounts(SeriesKind::Gpu, metric::kPower);
    std::vector<bool> hasPower(gpus_.size(), false);
    for (size_t g = 0; g < gpus_.size() && g < counts.size(); ++g)
      hasPower[g] = counts[g] > 0;
    domains_ = deriveDomains(gpus_, hasPower);
  } else {
    if (!h5::exists(f, "domains")) fail("missing required dataset or group /domains");
    h5::Id g = h5::openGroup(f, "domains");
    const size_t n = lengthOf(g, "id");
    limits::checkCount(path_, "domains", n, limits::kMaxGpus);
    const auto id = column<int32_t>(g, "domains", "id", n, path_);
    const auto kind = strColumn(g, "domains", "kind", n, path_);
    const auto name = strColumn(g, "domains", "name", n, path_);
    const auto node = column<int32_t>(g, "domains", "node", n, path_);
    const auto pgpu = column<int32_t>(g, "domains", "power_gpu", n, path_);
    const auto limit = column<float>(g, "domains", "power_limit_w", n, path_);
    h5::Id gg = h5::openGroup(f, "gpus");
    const auto member = column<int32_t>(gg, "gpus", "domain", gpus_.size(), path_);
    for (size_t i = 0; i < n; ++i)
      domains_.push_back({id[i], kind[i], name[i], node[i], limit[i], {}, pgpu[i]});
    for (size_t gi = 0; gi < member.size(); ++gi) {
      if (member[gi] < 0 || static_cast<size_t>(member[gi]) >= n)
        fail(fmt::format("/gpus/domain[{}] is {}, but the run has {} power domains", gi, member[gi],
                         n));
      domains_[static_cast<size_t>(member[gi])].gpus.push_back(static_cast<int>(gi));
    }
    if (const std::string why = domainProblem(domains_, gpus_.size()); !why.empty())
      fail("/domains: " + why);
  }
  gpuDomain_ = domainOfGpus(domains_, gpus_.size());
}

const PowerDomain& RunFile::domainOf(int gpu) const {
  if (gpu < 0 || static_cast<size_t>(gpu) >= gpuDomain_.size())
    fail(fmt::format("no GPU {} in the run (it has {})", gpu, gpuDomain_.size()));
  return domains_[static_cast<size_t>(gpuDomain_[static_cast<size_t>(gpu)])];
}

const SeriesGroupMeta& RunFile::series(SeriesKind kind) const {
  if (kind == SeriesKind::Node) {
    if (!node_) throw Error(fmt::format("{}: the run has no node telemetry", path_.string()));
    return *node_;
  }
  return gpu_;
}

const std::string& RunFile::str(uint32_t id) const {
  std::lock_guard lock(h5::lock());
  if (!strings_) strings_ = h5::readStrings(file_, "strings");
  static const std::string kEmpty;
  return id < strings_->size() ? (*strings_)[id] : kEmpty;
}

size_t RunFile::stringCount() const {
  std::lock_guard lock(h5::lock());
  if (!strings_) strings_ = h5::readStrings(file_, "strings");
  return strings_->size();
}

void RunFile::releaseDatasetCaches() const {
  std::lock_guard lock(h5::lock());
  datasets_.clear();
}

hid_t RunFile::dataset(const std::string& path) const {
  auto it = datasets_.find(path);
  if (it == datasets_.end())
    it = datasets_.emplace(path, h5::openDatasetForReading(file_, path)).first;
  return it->second.get();
}

hid_t RunFile::seriesDataset(SeriesKind kind, std::string_view name) const {
  return dataset(groupPath(kind) + "/" + std::string(name));
}

const std::vector<int64_t>& RunFile::timeIndex(SeriesKind kind, size_t entity) const {
  const auto key = std::make_pair(static_cast<int>(kind), entity);
  auto it = timeIndex_.find(key);
  if (it != timeIndex_.end()) return it->second;
  h5::Id g = h5::openGroup(file_, groupPath(kind));
  const auto off = h5::read<uint64_t>(g, "t_index_offsets", entity, 2);
  if (off.size() != 2 || off[1] < off[0]) fail("damaged telemetry time index");
  auto idx = h5::read<int64_t>(seriesDataset(kind, "t_index"), off[0], off[1] - off[0]);
  return timeIndex_.emplace(key, std::move(idx)).first->second;
}

namespace {

// Values [off, off + n) of a metric dataset as double. Gauges are float32 in the file: they are
// read as float and widened here (the same exact conversion HDF5 would make), because a converting
// read makes HDF5 allocate and zero a 1 MiB conversion buffer on every call, which costs more
// than decoding the chunk.
// Whether a metric's values are stored as 32-bit floats (else they are read as doubles).
bool storedAsFloat(hid_t ds) {
  const h5::Id type(H5Dget_type(ds));
  return type.valid() && H5Tget_class(type.get()) == H5T_FLOAT &&
         H5Tget_size(type.get()) == sizeof(float);
}

std::vector<double> readValues(hid_t ds, size_t off, size_t n) {
  if (storedAsFloat(ds)) {
    const auto f = h5::read<float>(ds, off, n);
    return std::vector<double>(f.begin(), f.end());
  }
  return h5::read<double>(ds, off, n);
}

}  // namespace

std::pair<size_t, size_t> RunFile::sampleRange(SeriesKind kind, size_t entity, int64_t t0,
                                               int64_t t1) const {
  const SeriesGroupMeta& m = series(kind);
  const size_t base = m.offsets[entity];
  const size_t n = m.samples(entity);
  if (n == 0 || t1 < t0) return {0, 0};
  const auto& idx = timeIndex(kind, entity);
  const auto stride = static_cast<size_t>(format::kIndexStride);
  hid_t tds = seriesDataset(kind, "t_ns");
  // First sample with t >= t (lower bound), located through the sparse index then one block.
  auto lowerBound = [&](int64_t t) -> size_t {
    const size_t blk =
        static_cast<size_t>(std::upper_bound(idx.begin(), idx.end(), t) - idx.begin());
    if (blk == 0) return 0;
    const size_t from = (blk - 1) * stride;
    const size_t to = std::min(n, blk * stride);
    const auto ts = h5::read<int64_t>(tds, base + from, to - from);
    return from + static_cast<size_t>(std::lower_bound(ts.begin(), ts.end(), t) - ts.begin());
  };
  const size_t i0 = lowerBound(t0);
  const size_t i1 = t1 == INT64_MAX ? n : lowerBound(t1 + 1);  // one past the last t <= t1
  return {i0, i1};
}

Samples RunFile::readSamples(SeriesKind kind, size_t entity, std::string_view metric, int64_t t0,
                             int64_t t1, bool withNeighbours) const {
  std::lock_guard lock(h5::lock());
  const SeriesGroupMeta& m = series(kind);
  if (entity >= m.entities) fail(fmt::format("no {} {} in the run", m.entity, entity));
  auto [i0, i1] = sampleRange(kind, entity, t0, t1);
  const size_t n = m.samples(entity);
  if (withNeighbours && n > 0) {
    if (i0 > 0) --i0;
    if (i1 < n) ++i1;
  }
  Samples s;
  s.first = i0;
  if (i1 <= i0) return s;
  const size_t base = m.offsets[entity];
  s.t_ns = h5::read<int64_t>(seriesDataset(kind, "t_ns"), base + i0, i1 - i0);
  if (!metric.empty()) {
    if (!m.metric(metric)) {
      s.v.assign(s.t_ns.size(), kNaN);
    } else {
      s.v = readValues(seriesDataset(kind, metric), base + i0, i1 - i0);
    }
  }
  return s;
}

Samples RunFile::readAllSamples(SeriesKind kind, size_t entity, std::string_view metric) const {
  // readSamples(kind, entity, metric, INT64_MIN, INT64_MAX, false), with the columns' chunks
  // inflated outside the lock (h5/stored_chunks.h): the analyses read every GPU's samples on
  // several threads.
  h5::StoredChunks t, v;
  bool floats = false, missing = false;
  {
    std::lock_guard lock(h5::lock());
    const SeriesGroupMeta& m = series(kind);
    if (entity >= m.entities) fail(fmt::format("no {} {} in the run", m.entity, entity));
    const size_t n = m.samples(entity), base = m.offsets[entity];
    if (n == 0) return {};
    t = h5::readStored(seriesDataset(kind, "t_ns"), h5::nativeType<int64_t>(), base, n);
    if (!metric.empty() && !m.metric(metric)) {
      missing = true;
    } else if (!metric.empty()) {
      const hid_t ds = seriesDataset(kind, metric);
      floats = storedAsFloat(ds);
      v = h5::readStored(ds, floats ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, base, n);
    }
  }
  Samples s;
  s.t_ns.resize(t.count);
  h5::decode(t, s.t_ns.data());
  if (missing) {
    s.v.assign(s.t_ns.size(), kNaN);
  } else if (floats) {
    std::vector<float> f(v.count);
    h5::decode(v, f.data());
    s.v.assign(f.begin(), f.end());
  } else if (!metric.empty()) {
    s.v.resize(v.count);
    h5::decode(v, s.v.data());
  }
  return s;
}

std::vector<uint32_t> RunFile::readThrottle(size_t gpu, size_t first, size_t count) const {
  std::lock_guard lock(h5::lock());
  if (!gpu_.hasThrottle || gpu >= gpu_.entities) return {};
  count = std::min(count, gpu_.samples(gpu) - std::min(first, gpu_.samples(gpu)));
  return h5::read<uint32_t>(seriesDataset(SeriesKind::Gpu, "throttle_reasons"),
                            gpu_.offsets[gpu] + first, count);
}

LodBlock RunFile::readLod(SeriesKind kind, std::string_view metric, size_t level, size_t entity0,
                          size_t entities, size_t bucket0, size_t buckets, unsigned stats) const {
  LodBlock b;
  readLodInto(b, kind, metric, level, entity0, entities, bucket0, buckets, stats);
  // The statistics not read hold their fill values, as a caller indexing them expects.
  const size_t n = b.entities * b.buckets;
  if (b.min.size() != n) b.min.assign(n, kNaNf);
  if (b.max.size() != n) b.max.assign(n, kNaNf);
  if (b.count.size() != n) b.count.assign(n, 0);
  if (b.wsum.size() != n) b.wsum.assign(n, 0.0);
  if (b.tsum.size() != n) b.tsum.assign(n, 0.0);
  if (b.dt.size() != n) b.dt.assign(n, 0.0);
  return b;
}

void RunFile::readLodInto(LodBlock& b, SeriesKind kind, std::string_view metric, size_t level,
                          size_t entity0, size_t entities, size_t bucket0, size_t buckets,
                          unsigned stats) const {
  std::lock_guard lock(h5::lock());
  const SeriesGroupMeta& m = series(kind);
  if (level >= m.grid.levels()) fail(fmt::format("no pyramid level {}", level));
  entity0 = std::min(entity0, m.entities);
  entities = std::min(entities, m.entities - entity0);
  bucket0 = std::min(bucket0, m.grid.buckets[level]);
  buckets = std::min(buckets, m.grid.buckets[level] - bucket0);
  b.level = level, b.entity0 = entity0, b.entities = entities, b.bucket0 = bucket0;
  b.buckets = buckets;
  const size_t n = entities * buckets;
  // A statistic that is read is overwritten whole; one not asked for is left empty. A metric the
  // run does not have reads as fill values (NaN or 0).
  const bool known = n > 0 && m.metric(metric);
  auto fill = [&](auto& v, unsigned stat, auto value) {
    if (!(stats & stat))
      v.clear();
    else if (known)
      v.resize(n);
    else
      v.assign(n, value);
  };
  fill(b.min, kMin, kNaNf);
  fill(b.max, kMax, kNaNf);
  fill(b.count, kCount, uint32_t{0});
  fill(b.wsum, kWsum, 0.0);
  fill(b.tsum, kTsum, 0.0);
  fill(b.dt, kDt, 0.0);
  if (!known) return;
  const std::string base = fmt::format("lod/L{}/{}/", level, metric);
  auto rd = [&](const char* stat, hid_t type, void* out) {
    h5::readBlock(seriesDataset(kind, base + stat), type, out, entity0, entities, bucket0, buckets);
  };
  if (stats & kMin) rd("min", H5T_NATIVE_FLOAT, b.min.data());
  if (stats & kMax) rd("max", H5T_NATIVE_FLOAT, b.max.data());
  if (stats & kCount) rd("count", H5T_NATIVE_UINT32, b.count.data());
  if (stats & kWsum) rd("wsum", H5T_NATIVE_DOUBLE, b.wsum.data());
  if (stats & kTsum) rd("tsum", H5T_NATIVE_DOUBLE, b.tsum.data());
  if (stats & kDt) rd("dt", H5T_NATIVE_DOUBLE, b.dt.data());
}

RunFile::ThrottleLodBlock RunFile::readThrottleLod(size_t level, size_t entity0, size_t entities,
                                                   size_t bucket0, size_t buckets) const {
  std::lock_guard lock(h5::lock());
  const SeriesGroupMeta& m = gpu_;
  ThrottleLodBlock b;
  if (!m.hasThrottleLod || level >= m.grid.levels()) return b;
  entity0 = std::min(entity0, m.entities);
  entities = std::min(entities, m.entities - entity0);
  bucket0 = std::min(bucket0, m.grid.buckets[level]);
  buckets = std::min(buckets, m.grid.buckets[level] - bucket0);
  b.level = level, b.entity0 = entity0, b.entities = entities, b.bucket0 = bucket0;
  b.buckets = buckets;
  b.any.assign(entities * buckets, 0);
  b.throttled.assign(entities * buckets, 0);
  if (b.any.empty()) return b;
  const std::string base = fmt::format("lod/L{}/throttle_reasons/", level);
  h5::readBlock(seriesDataset(SeriesKind::Gpu, base + "any"), H5T_NATIVE_UINT32, b.any.data(),
                entity0, entities, bucket0, buckets);
  h5::readBlock(seriesDataset(SeriesKind::Gpu, base + "throttled"), H5T_NATIVE_UINT32,
                b.throttled.data(), entity0, entities, bucket0, buckets);
  return b;
}

std::vector<uint64_t> RunFile::validCounts(SeriesKind kind, std::string_view metric) const {
  const SeriesGroupMeta& m = series(kind);
  std::vector<uint64_t> out(m.entities, 0);
  if (!m.metric(metric) || m.entities == 0) return out;
  const size_t top = m.grid.levels() - 1;
  std::lock_guard lock(h5::lock());
  std::vector<uint32_t> counts(m.entities * m.grid.buckets[top]);
  h5::readBlock(seriesDataset(kind, fmt::format("lod/L{}/{}/count", top, metric)),
                H5T_NATIVE_UINT32, counts.data(), 0, m.entities, 0, m.grid.buckets[top]);
  for (size_t e = 0; e < m.entities; ++e)
    for (size_t b = 0; b < m.grid.buckets[top]; ++b)
      out[e] += counts[e * m.grid.buckets[top] + b];
  return out;
}

namespace {

// Events [off, off + n) of the kernels datasets in two steps: their columns read under
// h5::lock() (storeEvents), then turned into events without it (decodeEvents). A whole track
// (`whole`) is read as stored chunks and inflated in the second step, so that threads reading
// tracks inflate side by side (h5/stored_chunks.h); a part of one is read through the chunk cache,
// which the next range or tile of the same chunks reuses. Start and duration are always read, the
// optional columns in `columns` (RunFile::KernelColumn); the others keep KernelEvent's defaults.
// `dataset` maps a dataset path to its open id.
struct StoredEvents {
  size_t n = 0;
  unsigned columns = 0;
  h5::StoredChunks start, dur, name, cls, kind, correlation;
};

template <typename DatasetOf>
StoredEvents storeEvents(const DatasetOf& dataset, size_t off, size_t n, unsigned columns,
                         bool whole) {
  StoredEvents s;
  s.n = n;
  s.columns = columns;
  auto column = [&]<typename T>(const char* path, T*) {
    return whole ? h5::readStored(dataset(path), h5::nativeType<T>(), off, n)
                 : h5::readPlain(dataset(path), h5::nativeType<T>(), off, n);
  };
  s.start = column("kernels/start_ns", static_cast<int64_t*>(nullptr));
  s.dur = column("kernels/dur_ns", static_cast<int64_t*>(nullptr));
  if (columns & RunFile::kKernelName)
    s.name = column("kernels/name", static_cast<uint32_t*>(nullptr));
  if (columns & RunFile::kKernelClass)
    s.cls = column("kernels/class", static_cast<uint8_t*>(nullptr));
  if (columns & RunFile::kKernelKind)
    s.kind = column("kernels/kind", static_cast<uint8_t*>(nullptr));
  if (columns & RunFile::kKernelCorrelation)
    s.correlation = column("kernels/correlation", static_cast<int64_t*>(nullptr));
  return s;
}

std::vector<KernelEvent> decodeEvents(const StoredEvents& s) {
  const size_t n = s.n;
  std::vector<KernelEvent> out(n);
  std::vector<int64_t> i64;
  std::vector<uint32_t> u32;
  std::vector<uint8_t> u8;
  auto column = [&]<typename T>(const h5::StoredChunks& stored,
                                std::vector<T>& buffer) -> const T* {
    buffer.resize(n);
    h5::decode(stored, buffer.data());
    return buffer.data();
  };
  const int64_t* st = column(s.start, i64);
  for (size_t i = 0; i < n; ++i)
    out[i].start_ns = st[i];
  const int64_t* d = column(s.dur, i64);
  for (size_t i = 0; i < n; ++i)
    out[i].dur_ns = d[i];
  if (s.columns & RunFile::kKernelName) {
    const uint32_t* v = column(s.name, u32);
    for (size_t i = 0; i < n; ++i)
      out[i].name = v[i];
  }
  if (s.columns & RunFile::kKernelClass) {
    const uint8_t* v = column(s.cls, u8);
    for (size_t i = 0; i < n; ++i)
      out[i].cls = static_cast<KernelClass>(std::min<uint8_t>(v[i], kKernelClassCount - 1));
  }
  if (s.columns & RunFile::kKernelKind) {
    const uint8_t* v = column(s.kind, u8);
    for (size_t i = 0; i < n; ++i)
      out[i].kind = static_cast<GpuEventKind>(std::min<uint8_t>(v[i], 3));
  }
  if (s.columns & RunFile::kKernelCorrelation) {
    const int64_t* v = column(s.correlation, i64);
    for (size_t i = 0; i < n; ++i)
      out[i].correlation = v[i];
  }
  return out;
}

}  // namespace

std::pair<size_t, size_t> RunFile::candidateEvents(size_t track, int64_t t0, int64_t t1) const {
  const TrackInfo& tr = tracks_[track];
  auto it = blocks_.find(track);
  if (it == blocks_.end()) {
    h5::Id b = h5::openGroup(file_, "kernels/blocks");
    const size_t b0 = blockOffsets_[track], b1 = blockOffsets_[track + 1];
    auto mn = h5::read<int64_t>(b, "min_start_ns", b0, b1 - b0);
    auto mx = h5::read<int64_t>(b, "max_end_ns", b0, b1 - b0);
    it = blocks_.emplace(track, std::make_pair(std::move(mn), std::move(mx))).first;
  }
  const auto& [mn, mx] = it->second;
  const auto bs = static_cast<size_t>(format::kKernelBlockSize);
  size_t first = SIZE_MAX, last = 0;
  for (size_t b = 0; b < mn.size(); ++b) {
    if (mx[b] > t0 && mn[b] < t1) {
      first = std::min(first, b);
      last = b + 1;
    }
  }
  if (first == SIZE_MAX) return {0, 0};
  return {first * bs, std::min<size_t>(tr.count, last * bs)};
}

KernelSlice RunFile::readKernels(size_t track, int64_t t0, int64_t t1) const {
  return readKernels(track, t0, t1, kAllKernelColumns);
}

KernelSlice RunFile::readKernels(size_t track, int64_t t0, int64_t t1, unsigned columns) const {
  std::lock_guard lock(h5::lock());
  if (track >= tracks_.size()) fail(fmt::format("no kernel track {}", track));
  const TrackInfo& tr = tracks_[track];
  auto [i0, i1] = candidateEvents(track, t0, t1);
  KernelSlice slice;
  if (i1 <= i0) return slice;
  const auto events = decodeEvents(storeEvents([this](const std::string& p) { return dataset(p); },
                                               tr.offset + i0, i1 - i0, columns, false));
  // Keep the events that overlap [t0, t1); zero-length events count when they start inside.
  for (size_t i = 0; i < events.size(); ++i) {
    const KernelEvent& e = events[i];
    if (e.start_ns >= t1) break;
    if (e.start_ns + e.dur_ns > t0 || e.start_ns >= t0) {
      if (slice.events.empty()) slice.first = i0 + i;
      slice.events.push_back(e);
      slice.index.push_back(i0 + i);
    }
  }
  return slice;
}

std::vector<KernelEvent> RunFile::readAllKernels(size_t track) const {
  return readAllKernels(track, kAllKernelColumns);
}

std::vector<KernelEvent> RunFile::readAllKernels(size_t track, unsigned columns) const {
  StoredEvents stored;
  {
    std::lock_guard lock(h5::lock());
    if (track >= tracks_.size()) fail(fmt::format("no kernel track {}", track));
    const TrackInfo& tr = tracks_[track];
    stored = storeEvents([this](const std::string& p) { return dataset(p); }, tr.offset, tr.count,
                         columns, true);
  }
  // Inflated outside the lock: another thread reads or decodes its own track meanwhile.
  return decodeEvents(stored);
}

KernelLodBlock RunFile::readKernelLod(size_t track, size_t level, size_t bucket0,
                                      size_t buckets) const {
  std::lock_guard lock(h5::lock());
  if (track >= tracks_.size()) fail(fmt::format("no kernel track {}", track));
  if (level >= kernelGrid_.levels()) fail(fmt::format("no kernel pyramid level {}", level));
  bucket0 = std::min(bucket0, kernelGrid_.buckets[level]);
  buckets = std::min(buckets, kernelGrid_.buckets[level] - bucket0);
  KernelLodBlock b;
  b.level = level, b.bucket0 = bucket0, b.buckets = buckets;
  for (int c = 0; c < kKernelClassCount; ++c) {
    auto& v = b.busy[static_cast<size_t>(c)];
    v.assign(buckets, 0.0f);
    if (buckets)
      h5::readBlock(dataset(fmt::format("kernels/lod/L{}/busy_{}", level,
                                        kernelClassName(static_cast<KernelClass>(c)))),
                    H5T_NATIVE_FLOAT, v.data(), track, 1, bucket0, buckets);
  }
  b.count.assign(buckets, 0);
  if (buckets)
    h5::readBlock(dataset(fmt::format("kernels/lod/L{}/count", level)), H5T_NATIVE_UINT32,
                  b.count.data(), track, 1, bucket0, buckets);
  return b;
}

std::vector<CollectiveRecord> RunFile::collectives() const {
  std::lock_guard lock(h5::lock());
  h5::Id g = h5::openGroup(file_, "kernels/collectives");
  const auto ev = h5::read<uint64_t>(g, "event");
  const size_t n = ev.size();
  const auto coll = column<uint32_t>(g, "kernels/collectives", "collective", n, path_);
  const auto in = column<int64_t>(g, "kernels/collectives", "in_nelems", n, path_);
  const auto out = column<int64_t>(g, "kernels/collectives", "out_nelems", n, path_);
  const auto gs = column<int32_t>(g, "kernels/collectives", "group_size", n, path_);
  const auto dt = column<uint32_t>(g, "kernels/collectives", "dtype", n, path_);
  const auto pn = column<uint32_t>(g, "kernels/collectives", "pg_name", n, path_);
  const auto pd = column<uint32_t>(g, "kernels/collectives", "pg_desc", n, path_);
  const auto pr = column<uint32_t>(g, "kernels/collectives", "pg_ranks", n, path_);
  const auto seq = column<int64_t>(g, "kernels/collectives", "seq", n, path_);
  std::vector<CollectiveRecord> recs;
  recs.reserve(n);
  size_t t = 0;
  for (size_t i = 0; i < n; ++i) {
    while (t < tracks_.size() && ev[i] >= tracks_[t].offset + tracks_[t].count)
      ++t;
    if (t >= tracks_.size() || ev[i] < tracks_[t].offset) {
      t = 0;  // not sorted as written: search from the start
      while (t < tracks_.size() &&
             !(ev[i] >= tracks_[t].offset && ev[i] < tracks_[t].offset + tracks_[t].count))
        ++t;
      if (t >= tracks_.size())
        fail(fmt::format("/kernels/collectives/event[{}] = {} is no event", i, ev[i]));
    }
    CollectiveRecord r;
    r.track = t;
    r.event = static_cast<size_t>(ev[i] - tracks_[t].offset);
    r.info = {static_cast<uint32_t>(r.event),
              coll[i],
              in[i],
              out[i],
              gs[i],
              dt[i],
              pn[i],
              pd[i],
              pr[i],
              seq[i]};
    recs.push_back(r);
  }
  return recs;
}

namespace {

constexpr size_t kCollectiveBlockRows = size_t{1} << 20;

// The track holding global event `ev`, tried at `hint` and the track after it first (the table
// is written track after track); tracks.size() when none does.
size_t trackOfEvent(const std::vector<TrackInfo>& tracks, uint64_t ev, size_t hint) {
  auto holds = [&](size_t t) {
    return t < tracks.size() && ev >= tracks[t].offset && ev < tracks[t].offset + tracks[t].count;
  };
  if (holds(hint)) return hint;
  if (holds(hint + 1)) return hint + 1;
  for (size_t t = 0; t < tracks.size(); ++t)
    if (holds(t)) return t;
  return tracks.size();
}

// An open column of /kernels/collectives with n rows (its length checked).
h5::Id collectiveColumn(hid_t g, std::string_view name, size_t n,
                        const std::filesystem::path& file) {
  h5::Id ds = h5::openDataset(g, name);
  const auto shape = h5::shapeOf(ds);
  if (shape.size() != 1 || shape[0] != n)
    throw Error(fmt::format("{}: dataset /kernels/collectives/{} has {} elements, expected {}",
                            file.string(), name, shape.empty() ? 0 : shape[0], n));
  return ds;
}

size_t rowsOf(hid_t ds) {
  const auto shape = h5::shapeOf(ds);
  return shape.empty() ? 0 : static_cast<size_t>(shape[0]);
}

}  // namespace

std::optional<std::vector<RowRange>> RunFile::collectiveBlocks() const {
  std::lock_guard lock(h5::lock());
  h5::Id g = h5::openGroup(file_, "kernels/collectives");
  h5::Id evDs = h5::openDataset(g, "event");
  const size_t n = rowsOf(evDs);
  std::vector<RowRange> blocks(tracks_.size());
  std::vector<bool> seen(tracks_.size(), false);
  size_t current = tracks_.size();
  for (size_t row0 = 0; row0 < n; row0 += kCollectiveBlockRows) {
    const auto ev = h5::read<uint64_t>(evDs.get(), row0, std::min(kCollectiveBlockRows, n - row0));
    for (size_t i = 0; i < ev.size(); ++i) {
      const size_t t = trackOfEvent(tracks_, ev[i], current);
      if (t >= tracks_.size())
        fail(fmt::format("/kernels/collectives/event[{}] = {} is no event", row0 + i, ev[i]));
      if (t != current) {
        if (seen[t]) return std::nullopt;  // the track's rows are not together
        seen[t] = true;
        blocks[t].first = row0 + i;
        current = t;
      }
      blocks[t].end = row0 + i + 1;
    }
  }
  return blocks;
}

std::vector<CollectiveKey> RunFile::collectiveKeys(size_t track, RowRange rows) const {
  std::vector<CollectiveKey> keys;
  if (track >= tracks_.size() || rows.end <= rows.first) return keys;
  const TrackInfo& tr = tracks_[track];
  {
    std::lock_guard lock(h5::lock());
    h5::Id g = h5::openGroup(file_, "kernels/collectives");
    h5::Id evDs = h5::openDataset(g, "event");
    const size_t n = rowsOf(evDs);
    if (rows.end > n)
      fail(fmt::format("/kernels/collectives has {} rows, not the {} asked for", n, rows.end));
    const size_t count = rows.end - rows.first;
    const auto ev = h5::read<uint64_t>(evDs.get(), rows.first, count);
    const auto seq =
        h5::read<int64_t>(collectiveColumn(g, "seq", n, path_).get(), rows.first, count);
    const auto pg =
        h5::read<uint32_t>(collectiveColumn(g, "pg_name", n, path_).get(), rows.first, count);
    const auto coll =
        h5::read<uint32_t>(collectiveColumn(g, "collective", n, path_).get(), rows.first, count);
    keys.resize(count);
    for (size_t i = 0; i < count; ++i) {
      if (ev[i] < tr.offset || ev[i] >= tr.offset + tr.count)
        fail(fmt::format("/kernels/collectives/event[{}] = {} is not an event of track {}",
                         rows.first + i, ev[i], track));
      keys[i] = {ev[i] - tr.offset, seq[i], pg[i], coll[i]};
    }
  }
  std::stable_sort(keys.begin(), keys.end(), [](const CollectiveKey& a, const CollectiveKey& b) {
    return a.event < b.event;
  });
  return keys;
}

std::vector<std::vector<CollectiveKey>> RunFile::collectiveKeysByTrack() const {
  std::vector<std::vector<CollectiveKey>> byTrack(tracks_.size());
  {
    std::lock_guard lock(h5::lock());
    h5::Id g = h5::openGroup(file_, "kernels/collectives");
    h5::Id evDs = h5::openDataset(g, "event");
    const size_t n = rowsOf(evDs);
    h5::Id seqDs = collectiveColumn(g, "seq", n, path_);
    h5::Id pgDs = collectiveColumn(g, "pg_name", n, path_);
    h5::Id collDs = collectiveColumn(g, "collective", n, path_);
    size_t t = tracks_.size();
    for (size_t row0 = 0; row0 < n; row0 += kCollectiveBlockRows) {
      const size_t count = std::min(kCollectiveBlockRows, n - row0);
      const auto ev = h5::read<uint64_t>(evDs.get(), row0, count);
      const auto seq = h5::read<int64_t>(seqDs.get(), row0, count);
      const auto pg = h5::read<uint32_t>(pgDs.get(), row0, count);
      const auto coll = h5::read<uint32_t>(collDs.get(), row0, count);
      for (size_t i = 0; i < count; ++i) {
        t = trackOfEvent(tracks_, ev[i], t);
        if (t >= tracks_.size())
          fail(fmt::format("/kernels/collectives/event[{}] = {} is no event", row0 + i, ev[i]));
        byTrack[t].push_back({ev[i] - tracks_[t].offset, seq[i], pg[i], coll[i]});
      }
    }
  }
  for (auto& keys : byTrack)
    std::stable_sort(keys.begin(), keys.end(), [](const CollectiveKey& a, const CollectiveKey& b) {
      return a.event < b.event;
    });
  return byTrack;
}

std::vector<float> RunFile::readTruthClock(size_t track) const {
  std::lock_guard lock(h5::lock());
  if (!hasTruthClock_ || track >= tracks_.size()) return {};
  return h5::read<float>(dataset("kernels/truth_clock_mhz"), tracks_[track].offset,
                         tracks_[track].count);
}

std::vector<ThrottleTruth> RunFile::truthThrottle() const {
  std::lock_guard lock(h5::lock());
  if (!hasTruth_ || !h5::exists(file_, "ground_truth/throttle")) return {};
  h5::Id g = h5::openGroup(file_, "ground_truth/throttle");
  const size_t n = h5::read<int32_t>(g, "gpu").size();
  const auto gpu = column<int32_t>(g, "ground_truth/throttle", "gpu", n, path_);
  const auto s = column<int64_t>(g, "ground_truth/throttle", "start_ns", n, path_);
  const auto e = column<int64_t>(g, "ground_truth/throttle", "end_ns", n, path_);
  const auto r = column<uint32_t>(g, "ground_truth/throttle", "reasons", n, path_);
  // Optional columns (busy, clock deficit, unthrottled clock): NaN where a file lacks them.
  auto optional = [&](const char* name) {
    return h5::exists(g, name) ? column<double>(g, "ground_truth/throttle", name, n, path_)
                               : std::vector<double>(n, kNaN);
  };
  const auto busy = optional("busy_s");
  const auto deficit = optional("deficit_mhz_s");
  const auto free = optional("unthrottled_mhz");
  std::vector<ThrottleTruth> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back({gpu[i], s[i], e[i], r[i], busy[i], deficit[i], free[i]});
  return out;
}

std::vector<double> RunFile::truthEnergy() const {
  std::lock_guard lock(h5::lock());
  if (!hasTruth_ || !h5::exists(file_, "ground_truth/energy_j")) return {};
  return h5::read<double>(file_, "ground_truth/energy_j");
}

}  // namespace wl
