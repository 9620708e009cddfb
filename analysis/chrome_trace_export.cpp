// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/chrome_trace_export.h"

#include <fmt/format.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/throttle_detection.h"
#include "loaders/core/error.h"
#include "loaders/core/temp_files.h"

namespace wl {
namespace {

// pids: a rank's process is its rank number; GPU N's process is kGpuPidBase + N, after them.
constexpr int64_t kGpuPidBase = 1'000'000;
// tids: a rank's streams keep their numbers; its iterations go on a thread of their own.
constexpr int64_t kIterationTid = 1'000'000;
constexpr int64_t kThrottleTid = 0;
// Kernels read per step of a track, so a long track never sits in memory whole.
constexpr uint64_t kKernelsPerChunk = 1'000'000;

// Buffered output to a plain or a gzip file; throws wl::Error naming `shown` on failure.
class TraceSink {
 public:
  TraceSink(const std::filesystem::path& file, const std::filesystem::path& shown, bool gzip)
      : shown_(shown), gzip_(gzip) {
    if (gzip_) {
      gz_ = gzopen(file.c_str(), "wb6");
      if (!gz_) fail(std::strerror(errno));
    } else {
      plain_ = std::fopen(file.c_str(), "wb");
      if (!plain_) fail(std::strerror(errno));
    }
    buffer_.reserve(kFlushBytes + 4096);
  }
  ~TraceSink() {
    if (gz_) gzclose(gz_);
    if (plain_) std::fclose(plain_);
  }
  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;

  void write(std::string_view s) {
    buffer_.append(s);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void close() {
    flush();
    if (gz_) {
      const int rc = gzclose(gz_);
      gz_ = nullptr;
      if (rc != Z_OK) fail("gzip stream could not be finished");
    } else if (plain_) {
      const int rc = std::fclose(plain_);
      plain_ = nullptr;
      if (rc != 0) fail(std::strerror(errno));
    }
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  void flush() {
    if (buffer_.empty()) return;
    if (gz_) {
      const int n = gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
      if (n <= 0 || static_cast<size_t>(n) != buffer_.size()) fail(std::strerror(errno));
    } else if (std::fwrite(buffer_.data(), 1, buffer_.size(), plain_) != buffer_.size()) {
      fail(std::strerror(errno));
    }
    buffer_.clear();
  }
  [[noreturn]] void fail(std::string_view why) const {
    throw Error(fmt::format("{}: cannot write: {}", shown_.string(), why));
  }

  std::filesystem::path shown_;
  bool gzip_;
  gzFile gz_ = nullptr;
  std::FILE* plain_ = nullptr;
  std::string buffer_;
};

// Integer nanoseconds as decimal microseconds with three digits after the point ("12.345").
std::string micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t a = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", a / 1000, a % 1000);
}

// A JSON string literal; invalid UTF-8 is replaced rather than refused.
std::string jsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string_view categoryOf(GpuEventKind kind) {
  switch (kind) {
    case GpuEventKind::Memcpy:
      return "gpu_memcpy";
    case GpuEventKind::Memset:
      return "gpu_memset";
    default:
      return "kernel";
  }
}

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const RunFile& run, const ChromeTraceOptions& options, TraceSink& sink,
                    const Progress& progress)
      : run_(run), options_(options), sink_(sink), progress_(progress) {
    chooseGpusAndRanks();
  }

  ChromeTraceSummary write();

 private:
  void chooseGpusAndRanks();
  void writeHeader();
  void writeMetadata();
  void writeKernels();
  void writeTrack(size_t track, const std::unordered_map<size_t, const CollectiveInfo*>& coll);
  void writeKernel(const TrackInfo& t, const KernelEvent& e, const CollectiveInfo* c);
  void writeIterations();
  void writeCounters();
  void writeThrottle();
  void event(std::string_view json) {
    sink_.write(first_ ? "\n" : ",\n");
    sink_.write(json);
    first_ = false;
  }
  void meta(std::string_view what, int64_t pid, std::optional<int64_t> tid, std::string_view key,
            std::string_view value) {
    event(fmt::format(R"({{"ph":"M","name":"{}","pid":{}{},"args":{{"{}":{}}}}})", what, pid,
                      tid ? fmt::format(",\"tid\":{}", *tid) : "", key, value));
  }
  int deviceOf(int rank) const {
    for (const RankInfo& r : run_.ranks())
      if (r.rank == rank) return r.gpu;
    return -1;
  }

  const RunFile& run_;
  const ChromeTraceOptions& options_;
  TraceSink& sink_;
  const Progress& progress_;
  std::vector<int> gpus_;
  std::set<int> ranks_;
  ChromeTraceSummary summary_;
  bool first_ = true;
};

void ChromeTraceWriter::chooseGpusAndRanks() {
  const int n = static_cast<int>(run_.gpus().size());
  if (options_.gpus.empty()) {
    for (int g = 0; g < n; ++g)
      gpus_.push_back(g);
  } else {
    for (int g : options_.gpus)
      if (g < 0 || g >= n)
        throw Error(
            fmt::format("{}: no GPU {} (the run has {}: 0-{})", run_.path().string(), g, n, n - 1));
    gpus_ = options_.gpus;
    std::sort(gpus_.begin(), gpus_.end());
    gpus_.erase(std::unique(gpus_.begin(), gpus_.end()), gpus_.end());
  }
  for (const RankInfo& r : run_.ranks())
    if (options_.gpus.empty() || std::binary_search(gpus_.begin(), gpus_.end(), r.gpu))
      ranks_.insert(r.rank);
  summary_.gpus = gpus_.size();
  summary_.ranks = ranks_.size();
}

void ChromeTraceWriter::writeHeader() {
  nlohmann::json other = {
      {"generator", "wattline"}, {"run", run_.info().name}, {"platform", run_.info().platform}};
  if (options_.range.t0 != TimeRange{}.t0) other["range_start_ns"] = options_.range.t0;
  if (options_.range.t1 != TimeRange{}.t1) other["range_end_ns"] = options_.range.t1;
  nlohmann::json devices = nlohmann::json::array();
  for (int g : gpus_)
    devices.push_back({{"id", g}, {"name", run_.gpus()[static_cast<size_t>(g)].device_name}});
  constexpr auto replace = nlohmann::json::error_handler_t::replace;
  sink_.write(R"({"schemaVersion":1,"displayTimeUnit":"ns",)");
  sink_.write(fmt::format("\"otherData\":{},\n", other.dump(-1, ' ', false, replace)));
  sink_.write(fmt::format("\"deviceProperties\":{},\n", devices.dump(-1, ' ', false, replace)));
  // Kineto writes one file per rank and names it here; the importer takes the rank from it.
  if (ranks_.size() == 1)
    sink_.write(fmt::format(R"("distributedInfo":{{"rank":{},"world_size":{}}},)"
                            "\n",
                            *ranks_.begin(), run_.ranks().size()));
  sink_.write("\"traceEvents\":[");
}

void ChromeTraceWriter::writeMetadata() {
  int64_t order = 0;
  for (int rank : ranks_) {
    const int gpu = deviceOf(rank);
    meta("process_name", rank, std::nullopt, "name",
         jsonString(gpu >= 0 ? fmt::format("Rank {} (GPU {})", rank, gpu)
                             : fmt::format("Rank {}", rank)));
    meta("process_sort_index", rank, std::nullopt, "sort_index", fmt::format("{}", order++));
    meta("thread_name", rank, kIterationTid, "name", jsonString("iterations"));
    meta("thread_sort_index", rank, kIterationTid, "sort_index", "-1");
  }
  for (const TrackInfo& t : run_.tracks())
    if (ranks_.count(t.rank))
      meta("thread_name", t.rank, t.stream, "name", jsonString(fmt::format("stream {}", t.stream)));
  for (int g : gpus_) {
    const int64_t pid = kGpuPidBase + g;
    meta("process_name", pid, std::nullopt, "name", jsonString(fmt::format("GPU {}", g)));
    meta("process_sort_index", pid, std::nullopt, "sort_index", fmt::format("{}", order++));
    meta("thread_name", pid, kThrottleTid, "name", jsonString("throttle"));
  }
}

void ChromeTraceWriter::writeKernel(const TrackInfo& t, const KernelEvent& e,
                                    const CollectiveInfo* c) {
  const int gpu = deviceOf(t.rank);
  const int device = gpu >= 0 ? gpu : t.device;
  std::string args;
  if (device >= 0) args += fmt::format("\"device\":{},", device);
  args += fmt::format("\"stream\":{},\"correlation\":{}", t.stream, e.correlation);
  if (c) {
    auto str = [&](std::string_view key, uint32_t id) {
      if (id != 0 && !run_.str(id).empty())
        args += fmt::format(",\"{}\":{}", key, jsonString(run_.str(id)));
    };
    auto num = [&](std::string_view key, int64_t v) {
      if (v >= 0) args += fmt::format(",\"{}\":{}", key, v);
    };
    str("Collective name", c->collective);
    str("dtype", c->dtype);
    num("In msg nelems", c->in_nelems);
    num("Out msg nelems", c->out_nelems);
    num("Group size", c->group_size);
    str("Process Group Name", c->pg_name);
    str("Process Group Description", c->pg_desc);
    str("Process Group Ranks", c->pg_ranks);
    num("Seq", c->seq);
  }
  event(fmt::format(R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},)"
                    R"("args":{{{}}}}})",
                    categoryOf(e.kind), jsonString(run_.str(e.name)), t.rank, t.stream,
                    micros(e.start_ns), micros(e.dur_ns), args));
  ++summary_.kernels;
}

void ChromeTraceWriter::writeTrack(size_t track,
                                   const std::unordered_map<size_t, const CollectiveInfo*>& coll) {
  const TrackInfo& t = run_.tracks()[track];
  const TimeRange range = options_.range;
  // Steps of the range holding about kKernelsPerChunk kernels each (from the track's mean rate
  // over the run); an event is written by the step it starts in, the first step also takes those
  // that start before the range and overlap it.
  const int64_t lo = std::max(range.t0, run_.info().start_ns);
  const int64_t hi = std::min(range.t1, run_.info().end_ns);
  const uint64_t steps = std::max<uint64_t>(1, t.count / kKernelsPerChunk);
  const int64_t width = hi > lo ? (hi - lo) / static_cast<int64_t>(steps) + 1 : 0;
  int64_t a = range.t0;
  for (uint64_t s = 0; s < steps; ++s) {
    const int64_t b =
        s + 1 == steps || width == 0 ? range.t1 : lo + width * static_cast<int64_t>(s + 1);
    const KernelSlice slice = run_.readKernels(track, a, b);
    for (size_t i = 0; i < slice.events.size(); ++i) {
      const KernelEvent& e = slice.events[i];
      if (s > 0 && e.start_ns < a) continue;
      const auto it = coll.find(slice.index[i]);
      writeKernel(t, e, it == coll.end() ? nullptr : it->second);
    }
    a = b;
  }
}

void ChromeTraceWriter::writeKernels() {
  std::vector<CollectiveRecord> records = run_.collectives();
  std::map<size_t, std::unordered_map<size_t, const CollectiveInfo*>> byTrack;
  for (const CollectiveRecord& r : records)
    if (ranks_.count(run_.tracks()[r.track].rank)) byTrack[r.track][r.event] = &r.info;
  const std::unordered_map<size_t, const CollectiveInfo*> none;
  const size_t n = run_.tracks().size();
  for (size_t i = 0; i < n; ++i) {
    progress_.report(0.1 + 0.8 * static_cast<double>(i) / static_cast<double>(n), "kernels");
    if (!ranks_.count(run_.tracks()[i].rank)) continue;
    const auto it = byTrack.find(i);
    writeTrack(i, it == byTrack.end() ? none : it->second);
  }
}

void ChromeTraceWriter::writeIterations() {
  const TimeRange range = options_.range;
  for (const Iteration& it : run_.iterations()) {
    if (!ranks_.count(it.rank) || it.start_ns >= range.t1 || it.end_ns <= range.t0) continue;
    event(fmt::format(
        R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":{},"tid":{},)"
        R"("ts":{},"dur":{},"args":{{"step":{}}}}})",
        it.step, it.rank, kIterationTid, micros(it.start_ns), micros(it.end_ns - it.start_ns),
        it.step));
    ++summary_.iterations;
  }
}

void ChromeTraceWriter::writeCounters() {
  const TimeRange range = options_.range;
  const SeriesGroupMeta& series = run_.series(SeriesKind::Gpu);
  for (size_t k = 0; k < gpus_.size(); ++k) {
    progress_.report(0.9 + 0.05 * static_cast<double>(k) / static_cast<double>(gpus_.size()),
                     "counters");
    const int g = gpus_[k];
    for (std::string_view metric : chromeTraceCounters()) {
      if (series.empty() || !series.metric(metric)) continue;
      const Samples s = run_.readSamples(SeriesKind::Gpu, static_cast<size_t>(g), metric, range.t0,
                                         range.t1, false);
      for (size_t i = 0; i < s.t_ns.size(); ++i) {
        if (!range.contains(s.t_ns[i]) || !std::isfinite(s.v[i])) continue;
        event(fmt::format(R"({{"ph":"C","name":"{}","pid":{},"tid":0,"ts":{},"args":{{"{}":{}}}}})",
                          metric, kGpuPidBase + g, micros(s.t_ns[i]), metric, s.v[i]));
        ++summary_.counterEvents;
      }
    }
  }
}

void ChromeTraceWriter::writeThrottle() {
  progress_.report(0.95, "throttling");
  const std::vector<GpuThrottle> found =
      detectThrottle(run_, gpus_, options_.range, options_.analysis);
  for (const GpuThrottle& g : found)
    for (const ThrottleInterval& iv : g.intervals) {
      nlohmann::json args = {{"cause", throttleCauseId(iv.cause)},
                             {"recorded_reasons", fmt::format("0x{:x}", iv.recorded_reasons)},
                             {"deficit_mhz_s", iv.deficit_mhz_s}};
      if (std::isfinite(iv.min_clock_mhz)) args["min_clock_mhz"] = iv.min_clock_mhz;
      if (std::isfinite(iv.mean_clock_mhz)) args["mean_clock_mhz"] = iv.mean_clock_mhz;
      event(fmt::format(R"({{"ph":"X","cat":"throttle","name":{},"pid":{},"tid":{},"ts":{},)"
                        R"("dur":{},"args":{}}})",
                        jsonString(throttleCauseLabel(iv.cause)), kGpuPidBase + iv.gpu,
                        kThrottleTid, micros(iv.start_ns), micros(iv.end_ns - iv.start_ns),
                        args.dump()));
      ++summary_.throttleIntervals;
    }
}

ChromeTraceSummary ChromeTraceWriter::write() {
  progress_.report(0.0, "metadata");
  writeHeader();
  writeMetadata();
  writeIterations();
  writeKernels();
  writeCounters();
  writeThrottle();
  sink_.write("\n]}\n");
  progress_.report(1.0, "done");
  return summary_;
}

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const std::vector<std::string_view>& chromeTraceCounters() {
  static const std::vector<std::string_view> ids = {"power_w", "temp_c", "sm_clock_mhz",
                                                    "util_pct"};
  return ids;
}

int64_t chromeTraceGpuPid(int gpu) {
  return kGpuPidBase + gpu;
}

ChromeTraceSummary writeChromeTrace(const RunFile& run, const std::filesystem::path& path,
                                    const ChromeTraceOptions& options, const Progress& progress) {
  const bool gzip = endsWith(path.string(), ".gz");
  TempFile temp(path);
  ChromeTraceSummary summary;
  {
    TraceSink sink(temp.path(), path, gzip);
    temp.lock();
    ChromeTraceWriter writer(run, options, sink, progress);
    summary = writer.write();
    sink.close();
  }
  std::error_code ec;
  temp.commit(ec);
  if (ec) throw Error(fmt::format("{}: cannot write: {}", path.string(), ec.message()));
  summary.gzip = gzip;
  return summary;
}

}  // namespace wl
