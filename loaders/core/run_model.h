// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain value types that describe one training run: its metadata, GPUs, ranks, telemetry tables,
// kernel tracks, iterations and annotations. Importers and the simulator fill them in and hand them
// to RunWriter; RunFile hands the metadata parts back when a run is opened. No Qt here.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "loaders/core/kernel_class.h"

namespace wl {

inline constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Parallelism and batch configuration; every field is optional because imports rarely know all.
struct ParallelConfig {
  std::optional<int> tp, pp, dp, ep, cp, vpp;
  std::optional<int> mbs, gbs, seq_len;
  std::optional<int> nodes, gpus_per_node;
  std::optional<bool> recompute, overlap;

  bool operator==(const ParallelConfig&) const = default;
};

// One input that went into the run, with the clock offset applied to its timestamps.
struct SourceInfo {
  std::string path;    // as given on the command line
  std::string format;  // importer name, "simulate" for simulated runs
  int64_t offset_ns = 0;
  std::string detail;  // e.g. "rank 3", "8 GPUs"

  bool operator==(const SourceInfo&) const = default;
};

// What a telemetry metric's samples mean, as one source measured it (docs/format.md, "/sensors"):
// an instantaneous reading, an average over a trailing window, or a cumulative counter; how often
// the sensor updates and how late its readings are. NaN where unknown.
enum class SensorKind : uint8_t { Instant = 0, Average = 1, Counter = 2 };

struct SensorInfo {
  int source = -1;     // row of RunInfo::sources, -1 if not known
  std::string metric;  // a metric id (core/metrics.h)
  SensorKind kind = SensorKind::Instant;
  double window_s = 0.0;   // trailing averaging window (0 for instant readings and counters)
  double period_s = kNaN;  // how often the sensor's value changes
  double lag_s = 0.0;      // known delay of a reading behind what it measures
  bool assumed = false;    // inferred by Wattline, not stated by the source
  std::string basis;       // where it comes from: "nvidia-smi power.draw (Ampere+: 1 s average)"

  bool operator==(const SensorInfo& o) const;
};

struct RunInfo {
  std::string name;
  std::string platform;  // "H100", "H200", "MI250", or what the device name says
  std::string model;     // "GPT3-175B", "Llama3-70B", ... or empty
  ParallelConfig config;
  bool simulated = false;
  int64_t start_ns = 0;  // absolute, ns since the Unix epoch (UTC)
  int64_t end_ns = 0;
  double sample_interval_s = 0.0;  // nominal telemetry interval; 0 if unknown
  std::string created_by;          // "wattline 0.1.0 import"
  std::vector<SourceInfo> sources;
  std::string parameters_json;  // free-form JSON (simulator parameters, import options)
  // Sensor semantics as stored (/sensors); empty in files written before it existed. Readers
  // resolve missing entries with core/sensors.h's resolveSensors().
  std::vector<SensorInfo> sensors;

  bool operator==(const RunInfo&) const = default;
};

struct GpuInfo {
  int id = 0;  // dense index 0..n-1 in the run
  int node = 0;
  int local_index = 0;  // index inside the node
  int rank = -1;        // global rank of the process that drove it, -1 if unknown
  std::string hostname;
  std::string device_name;
  std::string uuid;
  float power_limit_w = kNaNf;
  float max_sm_clock_mhz = kNaNf;
  float max_mem_clock_mhz = kNaNf;
  float slowdown_temp_c = kNaNf;
  float shutdown_temp_c = kNaNf;
  int slot = -1;     // chassis slot, 0 = front, larger = further back; -1 unknown
  int package = -1;  // physical package (both GCDs of an MI250 share one); -1 unknown

  bool operator==(const GpuInfo& o) const;
};

struct RankInfo {
  int rank = 0;
  int gpu = -1;  // GpuInfo::id of its device, -1 if unknown
  std::string hostname;
  int64_t pid = -1;
  std::string source;  // file it came from

  bool operator==(const RankInfo&) const = default;
};

// One GPU's (or node's) telemetry: a shared timestamp column and one column per metric.
// NaN marks a missing value. Timestamps are absolute ns since the epoch.
struct TelemetryColumn {
  std::string metric;  // a metric id (see core/metrics.h)
  std::vector<double> values;
};

struct TelemetryTable {
  std::vector<int64_t> t_ns;
  std::vector<TelemetryColumn> columns;
  // Throttle-reason bitmask per sample (NVML bits); empty when the source has none. A sample whose
  // mask was not recorded holds throttle::kUnknown.
  std::vector<uint32_t> throttle_reasons;

  const TelemetryColumn* column(std::string_view metric) const;
  size_t size() const { return t_ns.size(); }
};

// A device event on one stream of one rank.
struct KernelEvent {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  uint32_t name = 0;  // id into the track's StringTable
  KernelClass cls = KernelClass::Compute;
  GpuEventKind kind = GpuEventKind::Kernel;
  int64_t correlation = -1;

  bool operator==(const KernelEvent&) const = default;
};

// NCCL/RCCL metadata of one communication kernel.
struct CollectiveInfo {
  uint32_t event = 0;       // index of the kernel in its track's events
  uint32_t collective = 0;  // "allreduce", "allgather", ... (string id)
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = -1;
  uint32_t dtype = 0;     // string id
  uint32_t pg_name = 0;   // process group name (string id)
  uint32_t pg_desc = 0;   // process group description (string id)
  uint32_t pg_ranks = 0;  // "[0, 1, 2, 3]" (string id)
  int64_t seq = -1;       // instance number of this collective in its process group on this rank

  bool operator==(const CollectiveInfo&) const = default;
};

struct KernelTrack {
  int rank = 0;
  int64_t stream = 0;
  int device = -1;  // device index as the trace names it
  std::vector<KernelEvent> events;
  std::vector<CollectiveInfo> collectives;
  // Ground truth of simulated runs: the SM clock each kernel ran at (MHz); empty otherwise.
  std::vector<float> truth_clock_mhz;
};

// ProfilerStep#N (or a simulator iteration) on one rank.
struct Iteration {
  int rank = 0;
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  bool operator==(const Iteration&) const = default;
};

// A named range: GPU user annotations, NVTX ranges, forward/backward/optimizer phases.
struct Annotation {
  int rank = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  uint32_t name = 0;  // string id
  bool on_gpu = false;

  bool operator==(const Annotation&) const = default;
};

enum class Severity : uint8_t { Info = 0, Warning = 1 };

// Something a user should know about the data: gaps, wraps, skew, missing GPUs, repairs made.
struct QualityNote {
  Severity severity = Severity::Warning;
  std::string code;     // "non_monotonic_timestamps", "clock_skew", ...
  std::string subject;  // "gpu 3", "rank 2", "file foo.csv"
  std::string message;

  bool operator==(const QualityNote&) const = default;
};

// Ground truth of a simulated run: an interval in which a power or thermal limit held the GPU's
// clock below the clock it would have run at without limits while it ran kernels, with the bits of
// the limit that bound it (docs/simulator.md, "Ground truth").
struct ThrottleTruth {
  int gpu = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t reasons = 0;
  // Kernel seconds in the interval (busy share of each physics step x its length), the clock
  // deficit (unthrottled - actual clock) x busy integrated over it (MHz s), and the time-weighted
  // mean unthrottled clock (MHz). NaN where the file predates them.
  double busy_s = kNaN;
  double deficit_mhz_s = kNaN;
  double unthrottled_mhz = kNaN;

  bool operator==(const ThrottleTruth& o) const {
    auto same = [](double a, double b) { return a == b || (a != a && b != b); };  // NaN == NaN
    return gpu == o.gpu && start_ns == o.start_ns && end_ns == o.end_ns && reasons == o.reasons &&
           same(busy_s, o.busy_s) && same(deficit_mhz_s, o.deficit_mhz_s) &&
           same(unthrottled_mhz, o.unthrottled_mhz);
  }
};

}  // namespace wl
