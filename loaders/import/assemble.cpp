// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/assemble.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "loaders/core/error.h"
#include "loaders/core/kernel_spool.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/time_format.h"
#include "loaders/format/run_writer.h"
#include "loaders/import/telemetry_alignment.h"
#include "loaders/import/telemetry_checks.h"

namespace wl::import {
namespace {

constexpr double kBusyUtilPct = 5.0;

struct Span {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  void add(int64_t a, int64_t b) {
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  }
  bool empty() const { return lo > hi; }
};

// The spilled events of track t of a rank read within a memory budget, or null.
const SpilledKernels* spilledOf(const ImportedRank& r, size_t t) {
  return t < r.spilled.size() ? r.spilled[t].get() : nullptr;
}

// Events in memory or spilled (core/kernel_spool.h).
uint64_t eventCount(const ImportedRank& r, size_t t) {
  const SpilledKernels* s = spilledOf(r, t);
  return r.tracks[t].events.size() + (s ? s->count : 0);
}

// A GPU table's samples, in memory or spilled (core/kernel_spool.h SpilledTable).
size_t rowsOf(const TelemetryTable& table, const SpilledTable* spilled) {
  return spilled ? spilled->rows : table.t_ns.size();
}

// The table itself, or its samples read back from the spill file into `scratch`.
const TelemetryTable& tableOf(const TelemetryTable& table, const SpilledTable* spilled,
                              TelemetryTable& scratch) {
  if (!spilled) return table;
  scratch = readTable(*spilled);
  return scratch;
}

// The earliest and latest sample of a non-empty table.
std::pair<int64_t, int64_t> timesOf(const TelemetryTable& table, const SpilledTable* spilled) {
  if (spilled) return {spilled->minT + spilled->shift_ns, spilled->maxT + spilled->shift_ns};
  const auto [mn, mx] = std::minmax_element(table.t_ns.begin(), table.t_ns.end());
  return {*mn, *mx};
}

Span spanOf(const ImportedData& d) {
  Span s;
  for (const ImportedGpu& g : d.gpus)
    if (g.spilled && g.spilled->rows > 0) {
      const auto [mn, mx] = timesOf(g.table, g.spilled.get());
      s.add(mn, mx);
    } else if (!g.table.t_ns.empty()) {
      const auto [mn, mx] = std::minmax_element(g.table.t_ns.begin(), g.table.t_ns.end());
      s.add(*mn, *mx);
    }
  for (const ImportedNode& n : d.nodes)
    if (!n.table.t_ns.empty()) {
      const auto [mn, mx] = std::minmax_element(n.table.t_ns.begin(), n.table.t_ns.end());
      s.add(*mn, *mx);
    }
  for (const ImportedRank& r : d.ranks) {
    for (const KernelTrack& t : r.tracks)
      for (const KernelEvent& e : t.events)
        s.add(e.start_ns, e.start_ns + std::max<int64_t>(e.dur_ns, 0));
    for (const auto& sp : r.spilled)
      if (sp->count > 0) s.add(sp->minStart + sp->shift_ns, sp->maxEnd + sp->shift_ns);
    for (const Iteration& it : r.iterations)
      s.add(it.start_ns, std::max(it.start_ns, it.end_ns));
    for (const Annotation& a : r.annotations)
      s.add(a.start_ns, a.start_ns + std::max<int64_t>(a.dur_ns, 0));
  }
  return s;
}

void shift(ImportedData& d, int64_t offset) {
  if (offset == 0) return;
  for (ImportedGpu& g : d.gpus) {
    for (int64_t& t : g.table.t_ns)
      t += offset;
    if (g.spilled) g.spilled->shift_ns += offset;  // applied as the table is read back
  }
  for (ImportedNode& n : d.nodes)
    for (int64_t& t : n.table.t_ns)
      t += offset;
  for (ImportedRank& r : d.ranks) {
    for (KernelTrack& t : r.tracks)
      for (KernelEvent& e : t.events)
        e.start_ns += offset;
    for (const auto& sp : r.spilled)
      sp->shift_ns += offset;  // applied as the writer reads them
    for (Iteration& it : r.iterations)
      it.start_ns += offset, it.end_ns += offset;
    for (Annotation& a : r.annotations)
      a.start_ns += offset;
  }
}

bool hasData(const ImportedData& d) {
  for (const ImportedGpu& g : d.gpus)
    if (rowsOf(g.table, g.spilled.get()) > 0) return true;
  for (const ImportedNode& n : d.nodes)
    if (!n.table.t_ns.empty()) return true;
  for (const ImportedRank& r : d.ranks) {
    if (!r.iterations.empty() || !r.annotations.empty()) return true;
    for (size_t t = 0; t < r.tracks.size(); ++t)
      if (eventCount(r, t) > 0) return true;
  }
  return false;
}

// Whether an --offset SOURCE names this input; 2 for the file itself, 1 for its format.
int offsetMatch(const SourceOffset& o, const ImportedData& d) {
  const std::string path = d.path.string();
  if (o.source == path || o.source == d.path.filename().string()) return 2;
  if (!o.source.empty() && path.size() > o.source.size() &&
      path.compare(path.size() - o.source.size(), o.source.size(), o.source) == 0 &&
      path[path.size() - o.source.size() - 1] == '/')
    return 2;
  if (o.source == d.format) return 1;
  return 0;
}

// Merges telemetry table b into a (same GPU from two sources): union of timestamps, NaN where a
// source has no value at a time.
TelemetryTable mergeTables(const TelemetryTable& a, const TelemetryTable& b) {
  TelemetryTable out;
  std::vector<std::string> metrics;
  for (const auto* t : {&a, &b})
    for (const TelemetryColumn& c : t->columns)
      if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end())
        metrics.push_back(c.metric);
  const bool throttle = !a.throttle_reasons.empty() || !b.throttle_reasons.empty();
  for (const std::string& m : metrics)
    out.columns.push_back({m, {}});
  size_t i = 0, j = 0;
  auto take = [&](const TelemetryTable& t, size_t k, bool both, const TelemetryTable* o,
                  size_t ok) {
    out.t_ns.push_back(t.t_ns[k]);
    for (size_t m = 0; m < metrics.size(); ++m) {
      double v = kNaN;
      if (const TelemetryColumn* c = t.column(metrics[m])) v = c->values[k];
      if (both && std::isnan(v))
        if (const TelemetryColumn* c = o->column(metrics[m])) v = c->values[ok];
      out.columns[m].values.push_back(v);
    }
    if (throttle)
      out.throttle_reasons.push_back(!t.throttle_reasons.empty() ? t.throttle_reasons[k]
                                     : both && !o->throttle_reasons.empty()
                                         ? o->throttle_reasons[ok]
                                         : 0xFFFFFFFFu);
  };
  while (i < a.t_ns.size() || j < b.t_ns.size()) {
    if (j >= b.t_ns.size() || (i < a.t_ns.size() && a.t_ns[i] < b.t_ns[j])) {
      take(a, i++, false, nullptr, 0);
    } else if (i >= a.t_ns.size() || b.t_ns[j] < a.t_ns[i]) {
      take(b, j++, false, nullptr, 0);
    } else {
      take(a, i++, true, &b, j++);
    }
  }
  return out;
}

bool sortedByTime(const TelemetryTable& t) {
  return std::is_sorted(t.t_ns.begin(), t.t_ns.end());
}

int64_t medianInterval(const std::vector<int64_t>& t) {
  if (t.size() < 2) return 0;
  std::vector<int64_t> d;
  d.reserve(t.size() - 1);
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i] > t[i - 1]) d.push_back(t[i] - t[i - 1]);
  if (d.empty()) return 0;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}

std::string rangeText(const std::vector<int>& ranks) {
  if (ranks.empty()) return {};
  if (ranks.size() == 1) return fmt::format("rank {}", ranks[0]);
  const bool contiguous = ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
  if (contiguous) return fmt::format("ranks {}-{}", ranks.front(), ranks.back());
  return fmt::format("{} ranks", ranks.size());
}

struct GpuSlot {
  GpuInfo info;
  TelemetryTable table;
  std::shared_ptr<SpilledTable> spilled;  // set: the samples are on disk, `table` is empty
  bool hasTelemetry = false;
  std::string nodeKey;
};

// A rank's kernels [first, last] wholly before or after its GPU's telemetry: the two were
// recorded at different times (or on clocks far apart), and the run would span both with nothing
// to line up. Said at import, not first by `analyze` (a trace of May 2024 with telemetry of
// September 2025 once made an 11,739-hour run without a word).
std::optional<QualityNote> checkDisjoint(int rank, const GpuSlot& gpu, const TelemetryTable& table,
                                         int64_t first, int64_t last) {
  const auto& ts = table.t_ns;
  if (ts.empty()) return std::nullopt;
  const int64_t t0 = ts.front(), t1 = ts.back();
  if (last >= t0 && first <= t1) return std::nullopt;
  const bool before = last < t0;
  const int64_t gap = before ? t0 - last : first - t1;
  const int64_t span = std::max(last, t1) - std::min(first, t0);
  return QualityNote{
      Severity::Warning, "trace_outside_telemetry", fmt::format("rank {}", rank),
      fmt::format("kernels {} .. {} lie {} {} GPU {}'s telemetry ({} .. {}): the trace and the "
                  "telemetry do not overlap in time and the run spans {}; were they recorded "
                  "together? Give --offset to align them, or import them separately",
                  formatUtc(first), formatUtc(last), formatDuration(gap),
                  before ? "before" : "after", gpu.info.id, formatUtc(t0), formatUtc(t1),
                  formatDuration(span))};
}

// Kernel activity vs utilization of one rank's GPU; returns a note when they disagree.
std::optional<QualityNote> checkSkew(int rank, const GpuSlot& gpu, const TelemetryTable& t,
                                     int64_t firstKernel) {
  const TelemetryColumn* util = t.column(metric::kUtil);
  if (!util || t.t_ns.size() < 3) return std::nullopt;
  const int64_t interval = medianInterval(t.t_ns);
  if (interval <= 0) return std::nullopt;
  const auto& ts = t.t_ns;
  const size_t j =
      static_cast<size_t>(std::lower_bound(ts.begin(), ts.end(), firstKernel) - ts.begin());
  if (j == 0 || j >= ts.size()) return std::nullopt;  // telemetry does not cover the start
  auto busy = [&](size_t k) {
    return std::isfinite(util->values[k]) && util->values[k] >= kBusyUtilPct;
  };
  auto idle = [&](size_t k) {
    return std::isfinite(util->values[k]) && util->values[k] < kBusyUtilPct;
  };
  if (!idle(j)) return std::nullopt;  // busy (or unknown) when the kernels start: consistent
  // The nearest rise of utilization after and before the first kernel.
  std::optional<int64_t> skew;
  for (size_t k = j + 1; k < ts.size(); ++k)
    if (busy(k)) {
      skew = ts[k] - firstKernel;
      break;
    }
  for (size_t k = j; k-- > 1;)
    if (busy(k) && idle(k - 1)) {
      const int64_t s = ts[k] - firstKernel;
      if (!skew || std::llabs(s) < std::llabs(*skew)) skew = s;
      break;
    }
  if (!skew || std::llabs(*skew) <= interval) return std::nullopt;
  return QualityNote{
      Severity::Warning, "clock_skew", fmt::format("rank {}", rank),
      fmt::format("kernels start at {} but GPU {} (node {}, index {}) is idle then and its "
                  "utilization rises {} {} (telemetry every {}): the trace and telemetry clocks "
                  "seem {} apart; give --offset to align them",
                  formatUtc(firstKernel, 6), gpu.info.id, gpu.info.node, gpu.info.local_index,
                  formatDuration(std::llabs(*skew)), *skew > 0 ? "later" : "earlier",
                  formatDuration(interval), formatDuration(std::llabs(*skew)))};
}

// Node numbers by node key ("host:NAME", "node:N", "source:I"): a number a source gives is kept,
// the others get numbers after the highest number any telemetry source gives.
class NodeNumbers {
 public:
  explicit NodeNumbers(const std::vector<ImportedData>& inputs) {
    std::set<int> known;
    for (const ImportedData& d : inputs)
      for (const ImportedGpu& g : d.gpus)
        if (g.nodeKnown && g.info.hostname.empty()) known.insert(g.info.node);
    next_ = known.empty() ? 0 : *known.rbegin() + 1;
  }

  int operator()(const std::string& key, std::optional<int> known) {
    auto it = number_.find(key);
    if (it != number_.end()) return it->second;
    const int n = known ? *known : next_++;
    number_[key] = n;
    return n;
  }

 private:
  std::map<std::string, int> number_;
  int next_ = 0;
};

// Every input's own notes, then those of the telemetry checks (wild timestamps and impossible
// values), which run before anything reads the spans or the values.
std::vector<QualityNote> takeNotes(std::vector<ImportedData>& inputs) {
  std::vector<QualityNote> notes;
  for (ImportedData& d : inputs) {
    notes.insert(notes.end(), std::make_move_iterator(d.notes.begin()),
                 std::make_move_iterator(d.notes.end()));
    d.notes.clear();
  }
  for (ImportedData& d : inputs) {
    if (d.checkNotes) {  // run as the input was read, before its tables were spilled
      notes.insert(notes.end(), d.checkNotes->begin(), d.checkNotes->end());
      d.checkNotes.reset();
    } else {
      checkTelemetry(d, notes);
    }
  }
  return notes;
}

// The clock offset of each input and whether --offset gave it.
struct ClockOffsets {
  std::vector<int64_t> offset_ns;
  std::vector<bool> manual;
  std::vector<bool> automatic;  // set by the alignment to the traces
};

// Step: the --offset options matched to the inputs; a file's own offset wins over its format's.
ClockOffsets manualOffsets(const std::vector<ImportedData>& inputs,
                           const std::vector<SourceOffset>& given) {
  ClockOffsets clocks{std::vector<int64_t>(inputs.size(), 0),
                      std::vector<bool>(inputs.size(), false),
                      std::vector<bool>(inputs.size(), false)};
  for (const SourceOffset& o : given) {
    bool used = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int m = offsetMatch(o, inputs[i]);
      if (m == 0) continue;
      used = true;
      const bool fileLevel = m == 2;
      bool fileGiven = false;
      for (const SourceOffset& other : given)
        if (&other != &o && offsetMatch(other, inputs[i]) == 2) fileGiven = true;
      if (!fileLevel && fileGiven) continue;
      clocks.offset_ns[i] = o.offset_ns;
      clocks.manual[i] = true;
    }
    if (!used) {
      std::string names;
      for (const ImportedData& d : inputs)
        names += (names.empty() ? "" : ", ") + d.path.filename().string() + " (" + d.format + ")";
      throw Error(
          fmt::format("--offset {}: no input is named {} (inputs: {})", o.source, o.source, names));
    }
  }
  return clocks;
}

// Step: a source on an unknown clock starts where the epoch-clock (or manually placed) sources
// start, with a warning.
void alignUnknownClocks(const std::vector<ImportedData>& inputs, ClockOffsets& clocks,
                        std::vector<QualityNote>& notes) {
  Span absolute;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].absoluteTime || clocks.manual[i]) {
      Span s = spanOf(inputs[i]);
      if (!s.empty()) absolute.add(s.lo + clocks.offset_ns[i], s.hi + clocks.offset_ns[i]);
    }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (clocks.manual[i] || inputs[i].absoluteTime || absolute.empty()) continue;
    const Span s = spanOf(inputs[i]);
    if (s.empty()) continue;
    clocks.offset_ns[i] = absolute.lo - s.lo;
    notes.push_back({Severity::Warning, "clock_unknown", inputs[i].path.filename().string(),
                     fmt::format("the file's timestamps are not on the wall clock; its start was "
                                 "aligned to the start of the other sources (offset {} ns); give "
                                 "--offset {}=NS to place it exactly",
                                 clocks.offset_ns[i], inputs[i].path.filename().string())});
  }
}

// Step: every input shifted by its offset; every time stays within +-kMaxAbsTimeNs (importer.h).
void applyOffsets(std::vector<ImportedData>& inputs, const ClockOffsets& clocks) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t offset = clocks.offset_ns[i];
    const Span s = spanOf(inputs[i]);
    int64_t lo = 0, hi = 0;
    if (!s.empty() &&
        (__builtin_add_overflow(s.lo, offset, &lo) || __builtin_add_overflow(s.hi, offset, &hi) ||
         !inTimeRange(lo) || !inTimeRange(hi)))
      throw Error(
          fmt::format("{}: a clock offset of {} ns moves its times out of range (expected "
                      "times within 146 years of 1970)",
                      inputs[i].path.string(), offset));
    shift(inputs[i], offset);
  }
}

// Kernel events read back in bounded blocks: those of a spilled track (on disk and its tail).
template <class F>
void forEachSpilled(const SpilledKernels& sp, F&& f) {
  std::vector<SpillRecord> block;
  for (const SpillRun& run : sp.runs)
    for (uint64_t done = 0; done < run.count;) {
      block.resize(static_cast<size_t>(std::min<uint64_t>(run.count - done, 65536)));
      sp.spool->read(run.at + done * sizeof(SpillRecord), block);
      for (const SpillRecord& r : block)
        f(r.start_ns + sp.shift_ns, r.dur_ns, static_cast<GpuEventKind>(r.kind));
      done += block.size();
    }
  for (const SpillRecord& r : sp.tail)
    f(r.start_ns + sp.shift_ns, r.dur_ns, static_cast<GpuEventKind>(r.kind));
}

// The traced ranks' kernels as activity to align to; empty when there are more than
// kMaxAlignKernels (the alignment then says so).
constexpr uint64_t kMaxAlignKernels = 20'000'000;
std::vector<TracedActivity> tracedActivity(const std::vector<ImportedData>& inputs) {
  uint64_t total = 0;
  for (const ImportedData& d : inputs)
    for (const ImportedRank& r : d.ranks)
      for (size_t t = 0; t < r.tracks.size(); ++t)
        total += eventCount(r, t);
  if (total > kMaxAlignKernels) return {};
  std::vector<TracedActivity> out;
  for (const ImportedData& d : inputs)
    for (const ImportedRank& r : d.ranks) {
      TracedActivity a;
      a.lo = std::numeric_limits<int64_t>::max(), a.hi = std::numeric_limits<int64_t>::min();
      auto add = [&](int64_t start, int64_t dur, GpuEventKind kind) {
        if (kind != GpuEventKind::Kernel) return;
        const int64_t end = start + std::max<int64_t>(dur, 0);
        a.kernels.emplace_back(start, end);
        a.lo = std::min(a.lo, start), a.hi = std::max(a.hi, end);
      };
      for (size_t t = 0; t < r.tracks.size(); ++t) {
        for (const KernelEvent& e : r.tracks[t].events)
          add(e.start_ns, e.dur_ns, e.kind);
        if (const SpilledKernels* sp = spilledOf(r, t)) forEachSpilled(*sp, add);
      }
      if (!a.kernels.empty()) out.push_back(std::move(a));
    }
  return out;
}

// The estimate of one telemetry input: from utilization (the share of time a kernel ran, the
// traced activity itself) when it is confident, else the better fit of power and utilization.
AlignmentEstimate estimateInput(const ImportedData& d, const std::vector<TracedActivity>& ranks) {
  AlignmentEstimate best;
  best.reason = "no util_pct or power_w samples";
  for (std::string_view m : {metric::kUtil, metric::kPower}) {
    std::vector<MetricSamples> series;
    TelemetryTable scratch;
    for (const ImportedGpu& g : d.gpus) {
      if (g.spilled && std::find(g.spilled->metrics.begin(), g.spilled->metrics.end(), m) ==
                           g.spilled->metrics.end())
        continue;
      const TelemetryTable& t = tableOf(g.table, g.spilled.get(), scratch);
      if (const TelemetryColumn* c = t.column(m)) series.push_back({t.t_ns, c->values});
    }
    if (series.empty()) continue;
    const AlignmentEstimate e = estimateAlignment(series, ranks);
    if (best.estimated && best.confident) break;
    if (!best.estimated || (e.estimated && e.correlation > best.correlation)) best = e;
  }
  return best;
}

// Step (--align auto): each telemetry input without a manual offset is matched against the traced
// kernels (telemetry_alignment.h); a confident estimate is applied and noted, another is warned
// about and left. Without any trace there is nothing to match and nothing is said.
void alignToTraces(std::vector<ImportedData>& inputs, ClockOffsets& clocks,
                   std::vector<QualityNote>& notes) {
  const std::vector<TracedActivity> ranks = tracedActivity(inputs);
  if (ranks.empty()) return;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ImportedData& d = inputs[i];
    if (d.gpus.empty() || clocks.manual[i] || !d.ranks.empty()) continue;
    const AlignmentEstimate e = estimateInput(d, ranks);
    const std::string file = d.path.filename().string();
    if (!e.estimated) {
      notes.push_back({Severity::Info, "telemetry_alignment", file,
                       "no estimate of the telemetry's clock offset: " + e.reason});
    } else if (e.confident) {
      shift(d, -e.telemetry_ahead_ns);
      clocks.offset_ns[i] -= e.telemetry_ahead_ns;
      clocks.automatic[i] = true;
      notes.push_back({Severity::Info, "telemetry_aligned", file,
                       fmt::format("aligned to the traces: {}; shifted by {} ns (--align wall "
                                   "keeps the wall clocks)",
                                   describe(e), -e.telemetry_ahead_ns)});
    } else {
      notes.push_back(
          {Severity::Warning, "telemetry_alignment_uncertain", file,
           fmt::format("not aligned to the traces, the estimate is not confident: {}; give "
                       "--offset {}={}ns to apply it",
                       describe(e), file, -e.telemetry_ahead_ns)});
    }
  }
}

// Step: the parallel configuration: the first input hint of each field, overridden by options.
ParallelConfig mergeConfig(const std::vector<ImportedData>& inputs, const ParallelConfig& given) {
  ParallelConfig config;
  for (const ImportedData& d : inputs) {
    const ParallelConfig& h = d.config;
    auto take = [](auto& dst, const auto& src) {
      if (!dst && src) dst = src;
    };
    take(config.tp, h.tp), take(config.pp, h.pp), take(config.dp, h.dp), take(config.ep, h.ep);
    take(config.cp, h.cp), take(config.vpp, h.vpp), take(config.mbs, h.mbs);
    take(config.gbs, h.gbs), take(config.seq_len, h.seq_len), take(config.nodes, h.nodes);
    take(config.gpus_per_node, h.gpus_per_node), take(config.recompute, h.recompute);
    take(config.overlap, h.overlap);
  }
  const ParallelConfig& o = given;
  auto over = [](auto& dst, const auto& src) {
    if (src) dst = src;
  };
  over(config.tp, o.tp), over(config.pp, o.pp), over(config.dp, o.dp), over(config.ep, o.ep);
  over(config.cp, o.cp), over(config.vpp, o.vpp), over(config.mbs, o.mbs);
  over(config.gbs, o.gbs), over(config.seq_len, o.seq_len), over(config.nodes, o.nodes);
  over(config.gpus_per_node, o.gpus_per_node), over(config.recompute, o.recompute);
  over(config.overlap, o.overlap);
  return config;
}

// Samples sorted by time (stable); merging two sources of one GPU needs sorted input.
void sortTableByTime(TelemetryTable& table) {
  std::vector<size_t> order(table.t_ns.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return table.t_ns[a] < table.t_ns[b]; });
  auto permute = [&](auto& v) {
    auto copy = v;
    for (size_t k = 0; k < order.size(); ++k)
      v[k] = copy[order[k]];
  };
  permute(table.t_ns);
  for (TelemetryColumn& c : table.columns)
    permute(c.values);
  if (!table.throttle_reasons.empty()) permute(table.throttle_reasons);
}

// The fields of `dst` that its first source left unknown, from a second source of the same GPU.
void fillUnknownGpuInfo(GpuInfo& dst, const GpuInfo& src) {
  auto fill = [](auto& d, const auto& s) {
    if (d.empty()) d = s;
  };
  fill(dst.device_name, src.device_name);
  fill(dst.uuid, src.uuid);
  auto fillF = [](float& d, float s) {
    if (std::isnan(d)) d = s;
  };
  fillF(dst.power_limit_w, src.power_limit_w);
  fillF(dst.max_sm_clock_mhz, src.max_sm_clock_mhz);
  fillF(dst.max_mem_clock_mhz, src.max_mem_clock_mhz);
  fillF(dst.slowdown_temp_c, src.slowdown_temp_c);
  fillF(dst.shutdown_temp_c, src.shutdown_temp_c);
  if (dst.rank < 0) dst.rank = src.rank;
  if (dst.slot < 0) dst.slot = src.slot;
  if (dst.package < 0) dst.package = src.package;
}

// Step: one slot per telemetry GPU, identified by host (or node, or source) and local index;
// the same GPU in two sources is merged. Takes the inputs' tables.
std::vector<GpuSlot> gpusFromTelemetry(std::vector<ImportedData>& inputs, NodeNumbers& nodeFor,
                                       std::vector<QualityNote>& notes) {
  std::map<std::string, size_t> slotByKey;
  std::vector<GpuSlot> slots;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (ImportedGpu& g : inputs[i].gpus) {
      std::string nodeKey;
      std::optional<int> known;
      if (!g.info.hostname.empty()) {
        nodeKey = "host:" + g.info.hostname;
        if (g.nodeKnown) known = g.info.node;
      } else if (g.nodeKnown) {
        nodeKey = fmt::format("node:{}", g.info.node);
        known = g.info.node;
      } else {
        nodeKey = fmt::format("source:{}", i);
      }
      const std::string key = fmt::format("{}/{}", nodeKey, g.info.local_index);
      auto it = slotByKey.find(key);
      // A spilled table stays on disk unless it must be sorted or merged here.
      if (g.spilled && (!g.spilled->sorted || it != slotByKey.end())) {
        g.table = readTable(*g.spilled);
        g.spilled.reset();
      }
      if (!g.spilled && !sortedByTime(g.table)) {
        // RunWriter would sort and note it too, but merging needs sorted input.
        sortTableByTime(g.table);
        notes.push_back(
            {Severity::Warning, "non_monotonic_timestamps",
             fmt::format("{} GPU {}", inputs[i].path.filename().string(), g.info.local_index),
             "timestamps went backwards; samples were sorted by time"});
      }
      if (it == slotByKey.end()) {
        GpuSlot s;
        s.info = g.info;
        s.info.node = nodeFor(nodeKey, known);
        s.nodeKey = nodeKey;
        s.table = std::move(g.table);
        s.spilled = std::move(g.spilled);
        s.hasTelemetry = true;
        slotByKey[key] = slots.size();
        slots.push_back(std::move(s));
      } else {
        GpuSlot& s = slots[it->second];
        if (s.spilled) {  // the first source of this GPU was spilled: merge in memory
          s.table = readTable(*s.spilled);
          s.spilled.reset();
        }
        s.table = mergeTables(s.table, g.table);
        fillUnknownGpuInfo(s.info, g.info);
        notes.push_back({Severity::Info, "merged_telemetry",
                         fmt::format("node {} GPU {}", s.info.node, s.info.local_index),
                         fmt::format("telemetry from {} was merged with another source of the "
                                     "same GPU",
                                     inputs[i].path.filename().string())});
      }
      g.table = {};
    }
  }
  return slots;
}

// One imported rank: where it is in the inputs and its final rank number.
struct RankRef {
  size_t input, index;
  int rank;
};

// Step: rank numbers: the one the trace gives, else (missing or taken by an earlier trace) the
// lowest free one; sorted by rank.
std::vector<RankRef> numberRanks(const std::vector<ImportedData>& inputs,
                                 std::vector<QualityNote>& notes) {
  std::vector<RankRef> rankRefs;
  std::set<int> usedRanks;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t k = 0; k < inputs[i].ranks.size(); ++k) {
      const int r = inputs[i].ranks[k].info.rank;
      if (r >= 0 && usedRanks.insert(r).second) {
        rankRefs.push_back({i, k, r});
      } else {
        rankRefs.push_back({i, k, -1});
        if (r >= 0)
          notes.push_back({Severity::Warning, "duplicate_rank", inputs[i].path.filename().string(),
                           fmt::format("rank {} appears in more than one trace; this one was "
                                       "given a new rank number",
                                       r)});
      }
    }
  int next = 0;
  for (RankRef& ref : rankRefs)
    if (ref.rank < 0) {
      while (usedRanks.count(next))
        ++next;
      ref.rank = next;
      usedRanks.insert(next);
    }
  std::sort(rankRefs.begin(), rankRefs.end(),
            [](const RankRef& a, const RankRef& b) { return a.rank < b.rank; });
  return rankRefs;
}

// GPUs per node, to place ranks on nodes: the configuration's, else the count every node of
// several has.
std::optional<int> gpusPerNodeOf(const std::vector<GpuSlot>& slots, const ParallelConfig& config) {
  std::map<int, int> perNode;
  for (const GpuSlot& s : slots)
    ++perNode[s.info.node];
  std::optional<int> gpusPerNode = config.gpus_per_node;
  if (!gpusPerNode && perNode.size() > 1) {
    std::set<int> counts;
    for (const auto& [n, c] : perNode)
      counts.insert(c);
    if (counts.size() == 1) gpusPerNode = *counts.begin();
  }
  return gpusPerNode;
}

// The telemetry GPU of a rank: the one that names the rank, else the only one with the rank's
// device index (on its host, or on node rank / GPUs per node); -1 when none or several.
int telemetryGpuOfRank(const std::vector<GpuSlot>& slots, const ImportedRank& ir, int rank,
                       std::optional<int> gpusPerNode) {
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].hasTelemetry && slots[s].info.rank == rank) return static_cast<int>(s);
  if (ir.device < 0) return -1;
  std::vector<size_t> candidates;
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].hasTelemetry && slots[s].info.local_index == ir.device) candidates.push_back(s);
  if (candidates.size() > 1 && !ir.info.hostname.empty()) {
    std::vector<size_t> onHost;
    for (size_t s : candidates)
      if (slots[s].info.hostname == ir.info.hostname) onHost.push_back(s);
    candidates = onHost;
  }
  if (candidates.size() > 1 && gpusPerNode && *gpusPerNode > 0) {
    std::vector<size_t> onNode;
    for (size_t s : candidates)
      if (slots[s].info.node == rank / *gpusPerNode) onNode.push_back(s);
    candidates = onNode;
  }
  return candidates.size() == 1 ? static_cast<int>(candidates[0]) : -1;
}

// Without telemetry, the traces' devices become the GPUs: one slot per host (or node) and
// device index, made on first use. Returns the slot of the rank's device.
size_t traceGpuOfRank(std::vector<GpuSlot>& slots, std::map<std::string, size_t>& traceSlot,
                      NodeNumbers& nodeFor, const ImportedRank& ir, int rank,
                      std::optional<int> gpusPerNode) {
  std::string nodeKey;
  if (!ir.info.hostname.empty()) {
    nodeKey = "host:" + ir.info.hostname;
  } else if (gpusPerNode && *gpusPerNode > 0) {
    nodeKey = fmt::format("node:{}", rank / *gpusPerNode);
  } else {
    nodeKey = "node:0";
  }
  const std::string key = fmt::format("{}/{}", nodeKey, ir.device);
  auto it = traceSlot.find(key);
  if (it == traceSlot.end()) {
    const int node = nodeKey.rfind("node:", 0) == 0 ? nodeFor(nodeKey, std::stoi(nodeKey.substr(5)))
                                                    : nodeFor(nodeKey, std::nullopt);
    GpuSlot s;
    s.info.node = node;
    s.info.local_index = ir.device;
    s.info.rank = rank;
    s.info.hostname = ir.info.hostname;
    s.info.device_name = ir.deviceName;
    s.nodeKey = nodeKey;
    it = traceSlot.emplace(key, slots.size()).first;
    slots.push_back(std::move(s));
  }
  return it->second;
}

// Step: each rank's RankInfo with its GPU (a telemetry GPU, or one made from the trace when
// there is no telemetry); the GPU learns the rank, device name and host it lacked.
std::vector<RankInfo> mapRanksToGpus(const std::vector<ImportedData>& inputs,
                                     const std::vector<RankRef>& rankRefs,
                                     std::vector<GpuSlot>& slots, NodeNumbers& nodeFor,
                                     std::optional<int> gpusPerNode,
                                     std::vector<QualityNote>& notes) {
  const bool haveTelemetry = !slots.empty();
  std::vector<RankInfo> rankInfos;
  std::map<std::string, size_t> traceSlot;  // "host/node:device" -> slot (trace-made GPUs)
  for (const RankRef& ref : rankRefs) {
    const ImportedRank& ir = inputs[ref.input].ranks[ref.index];
    RankInfo info = ir.info;
    info.rank = ref.rank;
    if (info.source.empty()) info.source = inputs[ref.input].path.string();
    int gpu = -1;
    if (haveTelemetry) {
      gpu = telemetryGpuOfRank(slots, ir, ref.rank, gpusPerNode);
      if (gpu < 0 && ir.device >= 0)
        notes.push_back({Severity::Warning, "unmapped_rank", fmt::format("rank {}", ref.rank),
                         fmt::format("rank {} (device {}) matches no GPU of the telemetry; its "
                                     "kernels are shown without a GPU",
                                     ref.rank, ir.device)});
    } else if (ir.device >= 0) {
      gpu = static_cast<int>(traceGpuOfRank(slots, traceSlot, nodeFor, ir, ref.rank, gpusPerNode));
    }
    info.gpu = gpu;
    if (gpu >= 0) {
      GpuSlot& s = slots[static_cast<size_t>(gpu)];
      if (s.info.rank < 0) s.info.rank = ref.rank;
      if (s.info.device_name.empty()) s.info.device_name = ir.deviceName;
      if (s.info.hostname.empty()) s.info.hostname = ir.info.hostname;
    }
    rankInfos.push_back(info);
  }
  return rankInfos;
}

// Step: GPUs ordered by node, then local index, and numbered in that order; the ranks' GPU ids
// follow.
void orderGpus(std::vector<GpuSlot>& slots, std::vector<RankInfo>& rankInfos) {
  std::vector<size_t> order(slots.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(slots[a].info.node, slots[a].info.local_index) <
           std::tie(slots[b].info.node, slots[b].info.local_index);
  });
  std::vector<int> newId(slots.size());
  for (size_t k = 0; k < order.size(); ++k)
    newId[order[k]] = static_cast<int>(k);
  for (RankInfo& r : rankInfos)
    if (r.gpu >= 0) r.gpu = newId[static_cast<size_t>(r.gpu)];
  std::vector<GpuSlot> ordered;
  ordered.reserve(slots.size());
  for (size_t k : order)
    ordered.push_back(std::move(slots[k]));
  slots = std::move(ordered);
  for (size_t k = 0; k < slots.size(); ++k)
    slots[k].info.id = static_cast<int>(k);
}

// Step: clock skew between each rank's first kernel and its GPU's utilization.
void checkClockSkews(const std::vector<ImportedData>& inputs, const std::vector<RankRef>& rankRefs,
                     const std::vector<RankInfo>& rankInfos, const std::vector<GpuSlot>& slots,
                     std::vector<QualityNote>& notes) {
  for (const RankRef& ref : rankRefs) {
    const RankInfo* info = nullptr;
    for (const RankInfo& r : rankInfos)
      if (r.rank == ref.rank) info = &r;
    if (!info || info->gpu < 0) continue;
    const GpuSlot& s = slots[static_cast<size_t>(info->gpu)];
    if (!s.hasTelemetry) continue;
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    const ImportedRank& rank = inputs[ref.input].ranks[ref.index];
    for (const KernelTrack& t : rank.tracks)
      for (const KernelEvent& e : t.events) {
        first = std::min(first, e.start_ns);
        last = std::max(last, e.start_ns + e.dur_ns);
      }
    for (const auto& sp : rank.spilled)
      if (sp->count > 0) {
        first = std::min(first, sp->minStart + sp->shift_ns);
        last = std::max(last, sp->maxEnd + sp->shift_ns);
      }
    if (first == std::numeric_limits<int64_t>::max()) continue;
    TelemetryTable scratch;
    const TelemetryTable& table = tableOf(s.table, s.spilled.get(), scratch);
    if (auto n = checkDisjoint(ref.rank, s, table, first, last))
      notes.push_back(*n);
    else if (auto k = checkSkew(ref.rank, s, table, first))
      notes.push_back(*k);
  }
}

// Step: a note when the traces report a larger world than the ranks imported.
void checkWorldSize(const std::vector<ImportedData>& inputs, size_t rankCount,
                    std::vector<QualityNote>& notes) {
  int64_t world = -1;
  for (const ImportedData& d : inputs)
    for (const ImportedRank& r : d.ranks)
      world = std::max(world, r.world_size);
  if (world > 0 && static_cast<int64_t>(rankCount) < world)
    notes.push_back({Severity::Info, "missing_ranks", "ranks",
                     fmt::format("the traces report a world size of {} but {} of its ranks "
                                 "were imported",
                                 world, rankCount)});
}

// Step: the run's span, the union of all data; throws when there is no data at all.
Span runSpan(const std::vector<ImportedData>& inputs, const std::vector<GpuSlot>& slots) {
  Span span;
  for (const ImportedData& d : inputs) {
    const Span s = spanOf(d);
    if (!s.empty()) span.add(s.lo, s.hi);
  }
  for (const GpuSlot& s : slots)
    if (rowsOf(s.table, s.spilled.get()) > 0) {
      const auto [mn, mx] = timesOf(s.table, s.spilled.get());
      span.add(mn, mx);
    }
  bool anything = false;
  for (const ImportedData& d : inputs)
    anything = anything || hasData(d);
  for (const GpuSlot& s : slots)
    anything = anything || rowsOf(s.table, s.spilled.get()) > 0;
  if (!anything || span.empty()) {
    std::string names;
    for (const ImportedData& d : inputs)
      names += (names.empty() ? "" : ", ") + d.path.filename().string();
    throw Error(
        fmt::format("{}: nothing to import: no telemetry samples, GPU events, "
                    "iterations or annotations",
                    names));
  }
  return span;
}

// Each input as a RunInfo source: path, format, offset and what it brought.
std::vector<SourceInfo> sourcesOf(const std::vector<ImportedData>& inputs,
                                  const ClockOffsets& clocks,
                                  const std::vector<RankRef>& rankRefs) {
  std::vector<SourceInfo> sources;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ImportedData& d = inputs[i];
    SourceInfo src;
    src.path = d.path.string();
    src.format = d.format;
    src.offset_ns = clocks.offset_ns[i];
    std::vector<int> ranks;
    for (const RankRef& ref : rankRefs)
      if (ref.input == i) ranks.push_back(ref.rank);
    std::sort(ranks.begin(), ranks.end());
    std::vector<std::string> parts;
    if (!d.gpus.empty())
      parts.push_back(fmt::format("{} GPU{}", d.gpus.size(), d.gpus.size() == 1 ? "" : "s"));
    if (!ranks.empty()) parts.push_back(rangeText(ranks));
    if (clocks.manual[i]) parts.push_back("manual offset");
    if (clocks.automatic[i]) parts.push_back("automatic offset (aligned to the traces)");
    for (const std::string& p : parts)
      src.detail += (src.detail.empty() ? "" : ", ") + p;
    sources.push_back(src);
  }
  return sources;
}

// Each telemetry input's sensors (importer.h ImportedData::sensors) as the run's, with every
// metric of its GPUs that the importer did not describe given the default of its kind.
std::vector<SensorInfo> sensorsOf(const std::vector<ImportedData>& inputs) {
  std::vector<SensorInfo> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ImportedData& d = inputs[i];
    std::vector<std::string> metrics;
    for (const ImportedGpu& g : d.gpus) {
      for (const TelemetryColumn& c : g.table.columns)
        if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end())
          metrics.push_back(c.metric);
      if (g.spilled)
        for (const std::string& m : g.spilled->metrics)
          if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
    }
    std::sort(metrics.begin(), metrics.end());
    for (const std::string& m : metrics) {
      auto it = std::find_if(d.sensors.begin(), d.sensors.end(),
                             [&](const SensorInfo& s) { return s.metric == m; });
      SensorInfo s;
      if (it != d.sensors.end()) {
        s = *it;
      } else if (m == metric::kPower) {
        s = nvidiaSmiPowerSensor("power.draw",
                                 d.gpus.empty() ? d.platform : d.gpus.front().info.device_name);
        s.assumed = true;
        s.basis = fmt::format("assumed: {} power as NVML power usage", d.format);
      } else {
        s = genericSensor(m, d.format);
      }
      s.source = static_cast<int>(i);
      out.push_back(std::move(s));
    }
  }
  return out;
}

// Step: the run's metadata: name, platform and model from the options, else from the inputs'
// hints (telemetry before traces for the platform), else the output's file name.
RunInfo runInfoOf(const std::vector<ImportedData>& inputs, const std::vector<GpuSlot>& slots,
                  const AssembleOptions& options, const ParallelConfig& config, Span span,
                  const std::filesystem::path& output) {
  RunInfo info;
  info.start_ns = span.lo;
  info.end_ns = span.hi;
  info.config = config;
  info.created_by = options.createdBy;
  info.parameters_json = options.parametersJson;
  info.model = options.model;
  info.name = options.name;
  info.platform = options.platform;
  double interval = 0.0;
  for (const ImportedData& d : inputs) {
    if (info.name.empty()) info.name = d.name;
    if (info.model.empty()) info.model = d.model;
    if (d.sample_interval_s > 0 && (interval == 0.0 || d.sample_interval_s < interval))
      interval = d.sample_interval_s;
  }
  info.sample_interval_s = interval;
  if (info.name.empty()) info.name = output.stem().string();
  if (info.platform.empty()) {
    // Telemetry hints first (they name the GPU the power was measured on), then the traces.
    for (bool tel : {true, false})
      for (const ImportedData& d : inputs)
        if (info.platform.empty() && !d.platform.empty() && (!d.gpus.empty()) == tel)
          info.platform = platformFromDeviceName(d.platform);
    for (const GpuSlot& s : slots)
      if (info.platform.empty() && !s.info.device_name.empty())
        info.platform = platformFromDeviceName(s.info.device_name);
  }
  return info;
}

// The pyramids follow the samples, not the span.
WriteOptions writeOptionsFor(const std::vector<ImportedData>& inputs,
                             const std::vector<GpuSlot>& slots) {
  WriteOptions writeOptions;
  for (const GpuSlot& s : slots)
    writeOptions.max_samples_per_series =
        std::max(writeOptions.max_samples_per_series, rowsOf(s.table, s.spilled.get()));
  for (const ImportedData& d : inputs)
    for (const ImportedNode& n : d.nodes)
      writeOptions.max_samples_per_series =
          std::max(writeOptions.max_samples_per_series, n.table.t_ns.size());
  return writeOptions;
}

// Step: node telemetry, merged per node (host or node number); takes the inputs' tables.
void writeNodeTelemetry(RunWriter& writer, std::vector<ImportedData>& inputs,
                        NodeNumbers& nodeFor) {
  std::map<int, TelemetryTable> nodeTables;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (ImportedNode& n : inputs[i].nodes) {
      const std::string key =
          !n.hostname.empty() ? "host:" + n.hostname : fmt::format("node:{}", n.node);
      const int node = nodeFor(key, n.hostname.empty() ? std::optional<int>(n.node) : std::nullopt);
      auto it = nodeTables.find(node);
      if (it == nodeTables.end())
        nodeTables.emplace(node, std::move(n.table));
      else
        it->second = mergeTables(it->second, n.table);
    }
  if (!nodeTables.empty()) {
    writer.setNodeCount(nodeTables.rbegin()->first + 1);
    for (auto& [node, table] : nodeTables)
      writer.addNodeTelemetry(node, std::move(table));
  }
}

// Step: GPU telemetry, in GPU order; takes the slots' tables.
void writeGpuTelemetry(RunWriter& writer, std::vector<GpuSlot>& slots, ImportSummary& summary,
                       const Progress& progress) {
  for (size_t k = 0; k < slots.size(); ++k) {
    if (slots[k].spilled) {  // read back one GPU at a time
      slots[k].table = readTable(*slots[k].spilled);
      slots[k].spilled.reset();
    }
    if (slots[k].table.t_ns.empty()) continue;
    summary.telemetrySamples += slots[k].table.t_ns.size();
    writer.addGpuTelemetry(static_cast<int>(k), std::move(slots[k].table));
    progress.report(0.2 + 0.3 * static_cast<double>(k + 1) / static_cast<double>(slots.size()),
                    "writing telemetry");
  }
}

// Step: each rank's kernel tracks, iterations and annotations under its final rank number;
// takes the inputs' tracks.
void writeRanks(RunWriter& writer, std::vector<ImportedData>& inputs,
                const std::vector<RankRef>& rankRefs, ImportSummary& summary,
                const Progress& progress) {
  size_t tracksTotal = 0, tracksDone = 0;
  for (const ImportedData& d : inputs)
    for (const ImportedRank& r : d.ranks)
      tracksTotal += r.tracks.size();
  for (const RankRef& ref : rankRefs) {
    ImportedData& d = inputs[ref.input];
    ImportedRank& r = d.ranks[ref.index];
    for (size_t ti = 0; ti < r.tracks.size(); ++ti) {
      KernelTrack& t = r.tracks[ti];
      t.rank = ref.rank;
      summary.kernels += eventCount(r, ti);
      if (const SpilledKernels* sp = spilledOf(r, ti)) {
        writer.addKernelTrack(std::move(t), *sp, d.strings);
        r.spilled[ti].reset();  // its tail is freed now
      } else {
        writer.addKernelTrack(std::move(t), d.strings);
      }
      t = {};
      ++tracksDone;
      progress.report(0.5 + 0.3 * static_cast<double>(tracksDone) /
                                static_cast<double>(std::max<size_t>(tracksTotal, 1)),
                      "writing kernels");
    }
    for (Iteration& it : r.iterations)
      it.rank = ref.rank;
    for (Annotation& a : r.annotations)
      a.rank = ref.rank;
    writer.addIterations(r.iterations);
    writer.addAnnotations(r.annotations, d.strings);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

// The pipeline: notes -> clocks -> configuration -> GPUs -> ranks -> checks -> metadata -> write.
ImportSummary assembleRun(std::vector<ImportedData> inputs, const AssembleOptions& options,
                          const std::filesystem::path& output, const Progress& progress) {
  if (inputs.empty()) throw Error("nothing to import: no input was read");
  progress.report(0.0, "aligning clocks");
  std::vector<QualityNote> notes = takeNotes(inputs);

  ClockOffsets clocks = manualOffsets(inputs, options.offsets);
  alignUnknownClocks(inputs, clocks, notes);
  applyOffsets(inputs, clocks);
  if (options.align == AlignMode::Auto) alignToTraces(inputs, clocks, notes);

  const ParallelConfig config = mergeConfig(inputs, options.config);
  std::vector<SensorInfo> sensors = sensorsOf(inputs);  // before the GPUs take the tables
  NodeNumbers nodeFor(inputs);
  std::vector<GpuSlot> slots = gpusFromTelemetry(inputs, nodeFor, notes);
  progress.report(0.1, "mapping ranks");

  const std::vector<RankRef> rankRefs = numberRanks(inputs, notes);
  std::vector<RankInfo> rankInfos =
      mapRanksToGpus(inputs, rankRefs, slots, nodeFor, gpusPerNodeOf(slots, config), notes);
  orderGpus(slots, rankInfos);
  checkClockSkews(inputs, rankRefs, rankInfos, slots, notes);
  checkWorldSize(inputs, rankInfos.size(), notes);

  RunInfo info = runInfoOf(inputs, slots, options, config, runSpan(inputs, slots), output);
  info.sources = sourcesOf(inputs, clocks, rankRefs);
  info.sensors = std::move(sensors);

  progress.report(0.2, "writing");
  std::vector<GpuInfo> gpus;
  for (const GpuSlot& s : slots)
    gpus.push_back(s.info);
  ImportSummary summary;
  summary.output = output;
  summary.info = info;
  summary.gpus = gpus;
  summary.ranks = rankInfos;
  RunWriter writer(output, info, gpus, rankInfos, writeOptionsFor(inputs, slots));
  writeNodeTelemetry(writer, inputs, nodeFor);
  writeGpuTelemetry(writer, slots, summary, progress);
  writeRanks(writer, inputs, rankRefs, summary, progress);
  for (const QualityNote& n : notes)
    writer.addQualityNote(n);
  summary.notes = notes;
  writer.finish(progress.active() ? progress.sub(0.8, 1.0) : Progress{});
  return summary;
}

// ---------------------------------------------------------------------------------------------

AlignMode parseAlignMode(std::string_view text) {
  if (text == "auto") return AlignMode::Auto;
  if (text == "wall") return AlignMode::Wall;
  throw Error(fmt::format("--align: expected auto or wall, found \"{}\"", text));
}

ParallelConfig parseConfig(std::string_view text) {
  ParallelConfig c;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(at, comma - at);
    at = comma + 1;
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item.empty()) {
      if (comma == text.size()) break;
      continue;
    }
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error(fmt::format("--config: \"{}\" is not KEY=VALUE", item));
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    int v = 0;
    const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
    bool isBool = false;
    bool b = false;
    if (value == "on" || value == "true" || value == "yes") isBool = true, b = true;
    if (value == "off" || value == "false" || value == "no") isBool = true, b = false;
    const bool isInt = r.ec == std::errc() && r.ptr == value.data() + value.size();
    if (key == "recompute" || key == "overlap") {
      if (!isBool && !(isInt && (v == 0 || v == 1)))
        throw Error(fmt::format("--config: {} must be 0/1 or on/off, found \"{}\"", key, value));
      (key == "recompute" ? c.recompute : c.overlap) = isBool ? b : v == 1;
      continue;
    }
    if (!isInt || v < 0)
      throw Error(
          fmt::format("--config: {} must be a non-negative integer, found \"{}\"", key, value));
    if (key == "tp")
      c.tp = v;
    else if (key == "pp")
      c.pp = v;
    else if (key == "dp")
      c.dp = v;
    else if (key == "ep")
      c.ep = v;
    else if (key == "cp")
      c.cp = v;
    else if (key == "vpp")
      c.vpp = v;
    else if (key == "mbs")
      c.mbs = v;
    else if (key == "gbs")
      c.gbs = v;
    else if (key == "seq" || key == "seq_len")
      c.seq_len = v;
    else if (key == "nodes")
      c.nodes = v;
    else if (key == "gpus_per_node" || key == "gpn")
      c.gpus_per_node = v;
    else
      throw Error(fmt::format(
          "--config: unknown key \"{}\" (known: tp, pp, dp, ep, cp, vpp, mbs, gbs, seq, nodes, "
          "gpus_per_node, recompute, overlap)",
          key));
  }
  return c;
}

SourceOffset parseOffset(std::string_view text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 >= text.size())
    throw Error(fmt::format("--offset: \"{}\" is not SOURCE=NS", text));
  SourceOffset o;
  o.source = std::string(text.substr(0, eq));
  std::string_view value = text.substr(eq + 1);
  int64_t ns = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), ns);
  auto checked = [&](int64_t v) {
    if (!inTimeRange(v))
      throw Error(
          fmt::format("--offset {}: {} ns is out of range (at most 146 years)", o.source, v));
    o.offset_ns = v;
    return o;
  };
  if (r.ec == std::errc() && r.ptr == value.data() + value.size()) return checked(ns);
  // With a unit: "-1.5ms", "2s".
  bool negative = false;
  if (!value.empty() && (value.front() == '-' || value.front() == '+')) {
    negative = value.front() == '-';
    value.remove_prefix(1);
  }
  const bool hasUnit = !value.empty() && std::isalpha(static_cast<unsigned char>(value.back()));
  const auto d = hasUnit ? parseDuration(value) : std::nullopt;
  if (!d)
    throw Error(fmt::format(
        "--offset {}: expected nanoseconds or a duration with a unit (\"-1.5ms\"), found \"{}\"",
        o.source, text.substr(eq + 1)));
  return checked(negative ? -*d : *d);
}

std::string platformFromDeviceName(std::string_view device) {
  auto isModel = [](std::string_view t) {
    if (t.size() >= 4 && t.substr(0, 2) == "MI" && std::isdigit(static_cast<unsigned char>(t[2])))
      return true;
    size_t letters = 0;
    while (letters < t.size() && std::isupper(static_cast<unsigned char>(t[letters])))
      ++letters;
    if (letters < 1 || letters > 2) return false;
    size_t digits = letters;
    while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits])))
      ++digits;
    if (digits == letters || digits - letters > 3) return false;
    return t.size() - digits <= 1 &&
           (digits == t.size() || std::isupper(static_cast<unsigned char>(t[digits])));
  };
  size_t at = 0;
  while (at < device.size()) {
    size_t end = device.find_first_of(" -_/", at);
    if (end == std::string_view::npos) end = device.size();
    const std::string_view token = device.substr(at, end - at);
    if (isModel(token)) return std::string(token);
    at = end + 1;
  }
  return std::string(device);
}

}  // namespace wl::import
