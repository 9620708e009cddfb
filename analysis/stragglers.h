// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Collectives matched across ranks and stragglers (docs/analyses.md, "Stragglers"). Instances of
// one collective are the communication kernels with the same process group and sequence number
// on different ranks; arrival skew = latest start - earliest start; the rank that arrives last
// most often is the straggler. Its GPU's clock, temperature, power and throttling are then set
// beside the other GPUs' to name a likely cause.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

struct CollectiveArrival {
  int rank = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct CollectiveInstance {
  uint32_t pg_name = 0;  // string id
  int64_t seq = -1;
  uint32_t collective = 0;  // string id ("allreduce", ...)
  std::vector<CollectiveArrival> arrivals;
  int64_t earliest_ns = 0;
  int64_t latest_ns = 0;
  int64_t skew_ns = 0;
  int last_rank = -1;  // -1 when several ranks arrive last together
};

// Collects the arrivals of collective kernels track by track and groups them into instances.
class CollectiveMatcher {
 public:
  explicit CollectiveMatcher(const RunFile& run);
  // The events of one track that overlap the range, and the index of the first within the track.
  void addTrack(size_t track, size_t firstEvent, std::span<const KernelEvent> events,
                TimeRange range);
  // addTrack in two halves, so that tracks can be read on several threads and filed in a fixed
  // order: arrivalsOf only reads (safe to call from several threads), add() files its result.
  struct PendingArrival {
    uint32_t pg_name = 0;
    int64_t seq = -1;
    uint32_t collective = 0;
    CollectiveArrival arrival;
  };
  std::vector<PendingArrival> arrivalsOf(size_t track, size_t firstEvent,
                                         std::span<const KernelEvent> events,
                                         TimeRange range) const;
  void add(const std::vector<PendingArrival>& arrivals);
  // Instances with at least two ranks, sorted by earliest arrival.
  std::vector<CollectiveInstance> instances() const;

 private:
  const RunFile& run_;
  std::vector<std::vector<std::pair<size_t, const CollectiveInfo*>>> byTrack_;
  std::vector<CollectiveRecord> records_;
  struct Key {
    uint32_t pg;
    int64_t seq;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      // Unsigned: a sequence number comes from the file and may be anything (int64 overflow is
      // undefined behaviour; the run_file fuzzer found one).
      return std::hash<uint64_t>{}(static_cast<uint64_t>(k.seq) * 1000003u + k.pg);
    }
  };
  std::unordered_map<Key, CollectiveInstance, KeyHash> instances_;
};

struct RankArrivals {
  int rank = 0;
  int gpu = -1;
  uint64_t instances = 0;      // instances it took part in
  uint64_t last = 0;           // instances it arrived last at
  int64_t caused_skew_ns = 0;  // sum of the skew of those
};

// The straggler rank's GPU at one of the most skewed instances (values of the latest samples at
// or before the latest arrival; NaN where unknown).
struct StragglerSample {
  int64_t at_ns = 0;
  int64_t skew_ns = 0;
  int rank = -1;
  int gpu = -1;
  std::string collective;
  double clock_mhz = kNaN, temp_c = kNaN, power_w = kNaN;
};

// A per-GPU summary the report compares (from the telemetry analyses).
struct GpuCondition {
  int gpu = -1;
  double clock_mhz = kNaN, temp_c = kNaN, power_w = kNaN, throttled_fraction = kNaN;
  std::string dominant_cause;  // throttle cause id with most time, "" if none
};

struct StragglerReport {
  uint64_t instances = 0;
  double skew_mean_ns = kNaN, skew_p50_ns = kNaN, skew_p99_ns = kNaN, skew_max_ns = kNaN;
  std::vector<RankArrivals> ranks;
  int straggler_rank = -1;
  int straggler_gpu = -1;
  double straggler_share = kNaN;  // share of instances it arrived last at
  GpuCondition straggler;         // its GPU over the range
  GpuCondition others;            // the median over the other GPUs analysed
  std::string likely_cause;
  std::vector<StragglerSample> worst;
};

// `conditions` holds the telemetry summary of the analysed GPUs.
StragglerReport analyzeStragglers(const RunFile& run,
                                  const std::vector<CollectiveInstance>& instances,
                                  const std::vector<GpuCondition>& conditions,
                                  size_t worstInstances);

}  // namespace wl
