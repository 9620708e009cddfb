// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Collectives matched across ranks and stragglers (docs/analyses.md, "Stragglers"). Instances of
// one collective are the communication kernels with the same process group and sequence number
// on different ranks; arrival skew = latest start - earliest start; the rank that arrives last
// most often is the straggler. Its GPU's clock, temperature, power and throttling are then set
// beside the other GPUs' to name a likely cause.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/analysis_options.h"
#include "loaders/core/run_model.h"
#include "loaders/format/run_file.h"

namespace wl {

// One collective matched across ranks: the communication kernels with the same process group and
// sequence number on at least two ranks.
struct CollectiveInstance {
  uint32_t pg_name = 0;  // string id
  int64_t seq = -1;
  uint32_t collective = 0;  // string id ("allreduce", ...)
  uint32_t arrivals = 0;    // kernels matched (one per rank, unless a rank repeats one)
  int64_t earliest_ns = 0;  // the first arrival's start
  int64_t latest_ns = 0;    // the last arrival's start
  int64_t skew_ns = 0;
  int last_rank = -1;  // -1 when several ranks arrive last together
};

// The instances of a range and how many arrivals of each rank they hold.
struct MatchedCollectives {
  std::vector<CollectiveInstance> instances;  // sorted by earliest arrival, then seq
  std::map<int, uint64_t> arrivalsByRank;
};

// Collects the arrivals of collective kernels track by track and folds each into its instance as
// it comes: what is held is one summary per instance (process group, sequence number), not the
// arrivals, and a track's collective keys only while it is filed (read from the file track by
// track where the table keeps each track's rows together, as RunWriter writes it). Memory thus
// grows with the instances of the range, not with the collectives of every rank
// (docs/performance.md, "10^8 kernels").
class CollectiveMatcher {
 public:
  explicit CollectiveMatcher(const RunFile& run);
  // Files the collectives among the events of one track that start in the range; `firstEvent` is
  // the index of events[0] within the track. Safe to call from several threads. `order` is the
  // position of the track's rank in the caller's rank order: where ranks disagree on the kind of
  // a collective, the last rank in that order (then the last track, the last event) names it, so
  // the result does not depend on the order the threads file in.
  void addTrack(size_t order, size_t track, size_t firstEvent, std::span<const KernelEvent> events,
                TimeRange range);
  // Instances with at least two arrivals.
  MatchedCollectives result() const;

 private:
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
  // Which arrival names the instance's kind: the greatest (order, track, event).
  struct Stamp {
    size_t order = 0, track = 0;
    uint64_t event = 0;
    auto operator<=>(const Stamp&) const = default;
  };
  struct Folded {
    uint32_t collective = 0;
    uint32_t arrivals = 0;
    uint32_t latest_ties = 0;  // arrivals at latest_ns
    int first_rank = -1;       // the first arrival's rank (taken back when it stays alone)
    int latest_rank = -1;
    int64_t earliest_ns = INT64_MAX;
    int64_t latest_ns = INT64_MIN;
    Stamp named;
  };

  const RunFile& run_;
  // Where each track's keys lie in the file, or (a table whose tracks' rows are not together)
  // every track's keys, read at once.
  std::optional<std::vector<RowRange>> blocks_;
  std::vector<std::vector<CollectiveKey>> keysByTrack_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Folded, KeyHash> folded_;
  std::map<int, uint64_t> arrivalsByRank_;
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
StragglerReport analyzeStragglers(const RunFile& run, const MatchedCollectives& matched,
                                  const std::vector<GpuCondition>& conditions,
                                  size_t worstInstances);

}  // namespace wl
