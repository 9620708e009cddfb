// SPDX-License-Identifier: GPL-3.0-or-later
// The CharLLM-PPT results folder (docs/import-telemetry.md, "CharLLM-PPT").
//
// <run>/<metric>_<rank>.csv: one headerless file per metric per global rank, rows
// "epoch_seconds,value", -1 for a failed or unsupported read. All metrics of one rank come from one
// polling loop (every 50 ms), so they are merged onto one time column per GPU (tel::mergeSeries,
// tolerance min(5 ms, a quarter of the interval)). Node-level files written by local rank 0 of each
// node, system_<metric>_<rank>.csv and system_<metric>_rank_<rank>_id_<id>.csv, become
// ImportedData::nodes. Cumulative counters (PCIe bytes, NVLink KiB, InfiniBand bytes) are kept raw;
// decreases (32-bit wraps) are counted in a counter_wrap note and left to the analyses. Kineto
// traces of the run (<jobid>_kineto/rank-<N>.json anywhere below the folder) are read through the
// "kineto" importer and their ranks added.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "loaders/core/error.h"
#include "loaders/core/kernel_spool.h"
#include "loaders/core/metrics.h"
#include "loaders/import/telemetry/charllm_matrix.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/telemetry_importers.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

namespace fs = std::filesystem;

struct MetricStem {
  std::string_view stem;
  std::string_view metric;  // NVIDIA meaning
  bool counter;
  bool nvidiaOnly;  // written by the NVIDIA poller only
};

constexpr MetricStem kStems[] = {
    {"gpu_power", metric::kPower, false, false},
    {"power", metric::kPower, false, false},  // older runs of the artifact
    {"mem_power", metric::kMemPower, false, true},
    {"gpu_util", metric::kUtil, false, false},
    {"mem_util", metric::kMemUtil, false, false},  // AMD: VRAM used -> mem_used_pct
    {"gpu_thermal", metric::kTemp, false, false},
    {"mem_thermal", metric::kMemTemp, false, false},
    {"sm_clock", metric::kSmClock, false, false},
    {"mem_clock", metric::kMemClock, false, false},
    {"pcie_tx_throughput", "pcie_tx_kbs", false, true},
    {"pcie_rx_throughput", "pcie_rx_kbs", false, true},
    {"pcie_tx_bytes", "pcie_tx_bytes", true, true},
    {"pcie_rx_bytes", "pcie_rx_bytes", true, true},
    {"nvlink_tx_throughput", "nvlink_tx_kib", true, true},  // a cumulative KiB counter
    {"nvlink_rx_throughput", "nvlink_rx_kib", true, true},
};

enum class NodeRule { Cpu, Max, Sum, Plain };

struct SystemStem {
  std::string_view stem;
  std::string_view metric;
  NodeRule rule;
};

constexpr SystemStem kSystemStems[] = {
    {"cpu_usage", "cpu_usage_pct", NodeRule::Cpu},
    {"cpu_idle", "cpu_idle_pct", NodeRule::Cpu},
    {"cpu_iowait", "cpu_iowait_pct", NodeRule::Cpu},
    {"cpu_temp", "cpu_temp_c", NodeRule::Max},
    {"memory_used", "host_mem_used", NodeRule::Sum},
    {"memory_free", "host_mem_free", NodeRule::Sum},
    {"ib_rx_bytes", "ib_rx_bytes", NodeRule::Sum},
    {"ib_tx_bytes", "ib_tx_bytes", NodeRule::Sum},
};

struct MetricFile {
  fs::path path;
  const MetricStem* stem;
  int rank;
};

struct SystemFile {
  fs::path path;
  const SystemStem* stem;
  int rank;
  std::string id;  // cpu / zone / device; "" for system_<metric>_<rank>.csv
};

struct Listing {
  std::vector<MetricFile> metrics;
  std::vector<SystemFile> system;
  std::vector<fs::path> traces;  // <jobid>_kineto/rank-<N>.json[.gz]
  std::vector<int> traceRanks;
};

std::optional<int> rankNumber(std::string_view s) {
  if (s.empty() || s.size() > 7) return std::nullopt;
  const auto v = text::parseInt(s);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<int>(*v);
}

// Classifies one file name (relative path) of the folder.
void classify(const fs::path& rel, const fs::path& full, Listing& out) {
  const std::string file = rel.filename().string();
  const std::string parent = rel.has_parent_path() ? rel.parent_path().filename().string() : "";
  // Kineto traces: <jobid>_kineto/rank-<N>.json[.gz]
  if (parent.size() > 7 && parent.substr(parent.size() - 7) == "_kineto" &&
      file.rfind("rank-", 0) == 0) {
    std::string_view rest = std::string_view(file).substr(5);
    for (std::string_view ext : {".json.gz", ".json"})
      if (rest.size() > ext.size() && rest.substr(rest.size() - ext.size()) == ext) {
        if (const auto n = rankNumber(rest.substr(0, rest.size() - ext.size()))) {
          out.traces.push_back(full);
          out.traceRanks.push_back(*n);
        }
        return;
      }
    return;
  }
  if (rel.has_parent_path()) return;  // metric files lie directly in the run folder
  if (file.size() < 5 || file.substr(file.size() - 4) != ".csv") return;
  const std::string_view base = std::string_view(file).substr(0, file.size() - 4);
  if (base.rfind("system_", 0) == 0) {
    const std::string_view body = base.substr(7);
    // system_<metric>_rank_<rank>_id_<id>
    const size_t r = body.find("_rank_");
    if (r != std::string_view::npos) {
      const size_t id = body.find("_id_", r + 6);
      if (id == std::string_view::npos) return;
      const auto rank = rankNumber(body.substr(r + 6, id - r - 6));
      for (const SystemStem& s : kSystemStems)
        if (body.substr(0, r) == s.stem && rank) {
          out.system.push_back({full, &s, *rank, std::string(body.substr(id + 4))});
          return;
        }
      return;
    }
    // system_<metric>_<rank>
    const size_t us = body.rfind('_');
    if (us == std::string_view::npos) return;
    const auto rank = rankNumber(body.substr(us + 1));
    for (const SystemStem& s : kSystemStems)
      if (body.substr(0, us) == s.stem && rank) {
        out.system.push_back({full, &s, *rank, ""});
        return;
      }
    return;
  }
  const size_t us = base.rfind('_');
  if (us == std::string_view::npos) return;
  const auto rank = rankNumber(base.substr(us + 1));
  if (!rank) return;
  for (const MetricStem& s : kStems)
    if (base.substr(0, us) == s.stem) {
      out.metrics.push_back({full, &s, *rank});
      return;
    }
}

Listing listFolder(const fs::path& folder) {
  Listing out;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
  if (ec)
    throw Error(fmt::format("{}: cannot list the folder ({})", folder.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() >= 6) it.disable_recursion_pending();
    if (!it->is_regular_file(ec)) continue;
    classify(fs::relative(it->path(), folder, ec), it->path(), out);
  }
  auto byName = [](const auto& a, const auto& b) { return a.path < b.path; };
  std::sort(out.metrics.begin(), out.metrics.end(), byName);
  std::sort(out.system.begin(), out.system.end(), byName);
  return out;
}

struct ReadCounts {
  size_t minusOne = 0;
  tel::Tally nonFinite;
  std::map<std::string, size_t> minusOneByStem;
};

// Reads one headerless "epoch_seconds,value" file. Rows sharing a timestamp stay separate.
tel::Series readSeries(const fs::path& path, std::string_view stem, ReadCounts& counts) {
  tel::Series s;
  text::LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(line)) {
    const int64_t lineNo = reader.lineNumber();
    const std::string_view trimmed = text::trim(line);
    if (trimmed.empty()) continue;
    text::splitCsv(trimmed, fields);
    if (fields.size() != 2) {
      if (!reader.lastLineTerminated()) break;  // cut off while being written
      text::fail(path, lineNo,
                 fmt::format("expected 2 fields 'epoch_seconds,value', found {}", fields.size()));
    }
    const auto t = text::parseEpochSeconds(fields[0]);
    if (!t) {
      if (lineNo == 1 && text::parseValue(fields[0]).kind == text::ValueKind::Text)
        continue;  // a header line some post-processing added
      text::fail(path, lineNo,
                 fmt::format("expected epoch seconds, found '{}'", text::excerpt(fields[0])));
    }
    const text::Value v = text::parseValue(fields[1]);
    double value = kNaN;
    switch (v.kind) {
      case text::ValueKind::Number:
        if (v.number == -1.0) {
          ++counts.minusOne;
          ++counts.minusOneByStem[std::string(stem)];
        } else {
          value = v.number;
        }
        break;
      case text::ValueKind::NonFinite:
        counts.nonFinite.add(lineNo, fields[1]);
        break;
      case text::ValueKind::Missing:
        break;
      case text::ValueKind::Text:
        text::fail(path, lineNo,
                   fmt::format("expected a number (or -1), found '{}'", text::excerpt(fields[1])));
    }
    s.t_ns.push_back(*t);
    s.values.push_back(value);
  }
  return s;
}

// Sums rows of one file that share a timestamp (cpu seconds per mode), keeping time order.
void sumEqualTimes(tel::Series& s) {
  std::map<int64_t, std::pair<double, bool>> byTime;  // t -> (sum, all finite)
  for (size_t i = 0; i < s.t_ns.size(); ++i) {
    auto& [sum, ok] = byTime.try_emplace(s.t_ns[i], 0.0, true).first->second;
    if (std::isfinite(s.values[i]))
      sum += s.values[i];
    else
      ok = false;
  }
  s.t_ns.clear();
  s.values.clear();
  for (const auto& [t, v] : byTime) {
    s.t_ns.push_back(t);
    s.values.push_back(v.second ? v.first : kNaN);
  }
}

// Combines the per-id files of one node metric into one series by the metric's rule.
tel::Series combineIds(std::vector<tel::Series> files, const SystemStem& stem) {
  tel::Series out;
  out.metric = std::string(stem.metric);
  for (tel::Series& f : files)
    sumEqualTimes(f);
  std::map<int64_t, std::vector<double>> byTime;
  for (const tel::Series& f : files)
    for (size_t i = 0; i < f.t_ns.size(); ++i)
      byTime[f.t_ns[i]].push_back(f.values[i]);
  const size_t ids = files.size();
  if (stem.rule == NodeRule::Cpu) {
    double maxValue = 0;
    for (const auto& [t, vs] : byTime)
      for (double v : vs)
        if (std::isfinite(v)) maxValue = std::max(maxValue, v);
    const bool cumulative = maxValue > 100.0;  // node_cpu_seconds since boot, not a percentage
    int64_t prevT = 0;
    double prevSum = kNaN;
    for (const auto& [t, vs] : byTime) {
      double sum = 0;
      bool complete = vs.size() == ids;
      for (double v : vs) {
        if (std::isfinite(v))
          sum += v;
        else
          complete = false;
      }
      double value = kNaN;
      if (cumulative) {
        if (complete && std::isfinite(prevSum) && t > prevT)
          value = 100.0 * (sum - prevSum) /
                  (static_cast<double>(t - prevT) / 1e9 * static_cast<double>(ids));
        prevSum = complete ? sum : kNaN;
        prevT = t;
      } else if (complete) {
        value = sum / static_cast<double>(ids);
      }
      out.t_ns.push_back(t);
      out.values.push_back(value);
    }
    return out;
  }
  for (const auto& [t, vs] : byTime) {
    double acc = stem.rule == NodeRule::Max ? -INFINITY : 0.0;
    bool complete = vs.size() == ids;
    for (double v : vs) {
      if (!std::isfinite(v)) {
        complete = false;
        continue;
      }
      acc = stem.rule == NodeRule::Max ? std::max(acc, v) : acc + v;
    }
    out.t_ns.push_back(t);
    out.values.push_back(complete ? acc : kNaN);
  }
  return out;
}

std::string platformFromPath(const fs::path& folder) {
  for (const fs::path& part : folder) {
    const std::string l = text::lower(part.string());
    if (l.find("h100") != std::string::npos) return "H100";
    if (l.find("h200") != std::string::npos) return "H200";
    if (l.find("mi250") != std::string::npos) return "MI250";
    if (l.find("mi300") != std::string::npos) return "MI300X";
  }
  return {};
}

bool isAmdPlatform(std::string_view p) {
  return p.rfind("MI", 0) == 0;
}

// Moves the ranks of `src` into `dst`, re-interning their strings in dst's table.
void appendRanks(ImportedData& dst, ImportedData&& src, int fileRank, const fs::path& file) {
  std::vector<uint32_t> remap(src.strings.size());
  for (uint32_t i = 0; i < src.strings.size(); ++i)
    remap[i] = dst.strings.intern(src.strings.at(i));
  auto map = [&](uint32_t id) { return id < remap.size() ? remap[id] : 0u; };
  for (ImportedRank& r : src.ranks) {
    if (r.info.rank < 0) r.info.rank = fileRank;
    if (r.info.source.empty()) r.info.source = file.string();
    for (const auto& spilled : r.spilled) {
      // The records keep their ids: the writer maps them as it reads them.
      std::vector<uint32_t>& names = spilled->names;
      if (names.empty())
        names = remap;
      else
        for (uint32_t& id : names)
          id = map(id);
    }
    for (KernelTrack& tr : r.tracks) {
      if (tr.rank < 0) tr.rank = r.info.rank;
      for (KernelEvent& e : tr.events)
        e.name = map(e.name);
      for (CollectiveInfo& c : tr.collectives) {
        c.collective = map(c.collective);
        c.dtype = map(c.dtype);
        c.pg_name = map(c.pg_name);
        c.pg_desc = map(c.pg_desc);
        c.pg_ranks = map(c.pg_ranks);
      }
    }
    for (Annotation& a : r.annotations)
      a.name = map(a.name);
    dst.ranks.push_back(std::move(r));
  }
  for (QualityNote& n : src.notes)
    dst.notes.push_back(std::move(n));
}

// The experiment matrix: a file named experiment-matrix.csv in the run folder or one of its
// four parents wins over the compiled-in copy.
std::vector<charllm::MatrixRow> loadMatrix(const fs::path& folder,
                                           std::vector<QualityNote>& notes) {
  fs::path dir = folder;
  for (int i = 0; i < 5 && !dir.empty(); ++i) {
    const fs::path candidate = dir / "experiment-matrix.csv";
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) {
      std::string csv;
      text::LineReader reader(candidate);
      std::string_view line;
      while (reader.next(line)) {
        csv.append(line);
        csv.push_back('\n');
      }
      notes.push_back({Severity::Info, "config_matrix", "run",
                       fmt::format("configuration looked up in {}", candidate.string())});
      return charllm::parseMatrix(csv, candidate);
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return charllm::parseMatrix(charllm::embeddedMatrixCsv(), "charllm-experiment-matrix.csv");
}

// Progress over the files of a results folder.
struct FileProgress {
  const Progress& progress;
  size_t files = 0, done = 0;
  void step(std::string_view stage) {
    progress.report(static_cast<double>(done++) / static_cast<double>(std::max<size_t>(files, 1)),
                    stage);
  }
};

// Step: the Kineto traces of the folder, first: their device names help to tell the platform.
void readTraces(ImportedData& data, const Listing& listing, const ImportOptions& options,
                FileProgress& fp) {
  if (listing.traces.empty()) return;
  const Importer* kineto = findImporter("kineto");
  if (!kineto) {
    data.notes.push_back(
        {Severity::Warning, "kineto_importer_unavailable", "traces",
         fmt::format("{} Kineto traces were found ({} ...) but this build has no 'kineto' "
                     "importer; they were not imported",
                     listing.traces.size(), listing.traces.front().filename().string())});
    return;
  }
  for (size_t i = 0; i < listing.traces.size(); ++i) {
    const double from = static_cast<double>(fp.done) / static_cast<double>(fp.files);
    const double to = static_cast<double>(fp.done + 1) / static_cast<double>(fp.files);
    ImportedData trace = kineto->read(listing.traces[i], options, fp.progress.sub(from, to));
    appendRanks(data, std::move(trace), listing.traceRanks[i], listing.traces[i]);
    ++fp.done;
  }
}

// Step: the platform: folder names (the sweeps name their GPU), else the traces' device names,
// else the set of metric files (only the NVIDIA poller writes PCIe, NVLink and memory power).
// Returns whether the run is AMD's.
bool inferPlatform(const fs::path& input, const Listing& listing, ImportedData& data) {
  std::string platform = platformFromPath(input);
  for (const ImportedRank& r : data.ranks)
    if (platform.empty() && !r.deviceName.empty())
      platform = tel::platformFromDeviceName(r.deviceName);
  const bool nvidiaFiles = std::any_of(listing.metrics.begin(), listing.metrics.end(),
                                       [](const MetricFile& m) { return m.stem->nvidiaOnly; });
  const bool amd = platform.empty() ? !nvidiaFiles : isAmdPlatform(platform);
  if (platform.empty())
    data.notes.push_back(
        {Severity::Info, "platform_inferred", "run",
         amd ? std::string("no PCIe, NVLink or memory-power files: read as an AMD run "
                           "(mem_util is VRAM used, stored as mem_used_pct)")
             : std::string("PCIe / NVLink / memory-power files present: read as an NVIDIA "
                           "run")});
  data.platform = platform;
  return amd;
}

// Step: the GPU metric files, grouped by rank.
std::map<int, std::vector<tel::Series>> readMetricFiles(const Listing& listing, bool amd,
                                                        ReadCounts& counts, FileProgress& fp) {
  std::map<int, std::vector<tel::Series>> byRank;
  for (const MetricFile& m : listing.metrics) {
    fp.step("reading CharLLM-PPT metric files");
    tel::Series s = readSeries(m.path, m.stem->stem, counts);
    s.metric = std::string(m.stem->metric);
    if (amd && m.stem->stem == "mem_util") s.metric = std::string(metric::kMemUsedPct);
    auto& list = byRank[m.rank];
    // gpu_power and the older power file both map to power_w: keep the first.
    if (std::any_of(list.begin(), list.end(),
                    [&](const tel::Series& o) { return o.metric == s.metric; }))
      continue;
    list.push_back(std::move(s));
  }
  return byRank;
}

// Step: GPUs per node: the experiment matrix's, else from the ranks that wrote system files
// (each leads a node), else 8; fills in the configuration's GPUs per node and nodes.
int nodeLayout(const Listing& listing, const std::map<int, std::vector<tel::Series>>& byRank,
               ImportedData& data) {
  std::set<int> leaders;
  for (const SystemFile& f : listing.system)
    leaders.insert(f.rank);
  const int distinctRanks = static_cast<int>(byRank.size());
  int gpn = 8;
  std::string gpnSource = "the default of 8";
  if (data.config.gpus_per_node) {
    gpn = *data.config.gpus_per_node;
    gpnSource = "the experiment matrix";
  } else if (!leaders.empty()) {
    const int nodes = static_cast<int>(leaders.size());
    const int guess = (distinctRanks + nodes - 1) / nodes;
    if (guess > 0 &&
        std::all_of(leaders.begin(), leaders.end(), [&](int r) { return r % guess == 0; })) {
      gpn = guess;
      gpnSource =
          fmt::format("{} ranks on {} nodes (ranks with system files)", distinctRanks, nodes);
    }
  }
  if (gpn <= 0) gpn = 8;
  for (int r : leaders)
    if (r % gpn != 0)
      data.notes.push_back(
          {Severity::Warning, "node_layout", fmt::format("rank {}", r),
           fmt::format("rank {} wrote node-level system files but is not local rank 0 with {} "
                       "GPUs per node ({})",
                       r, gpn, gpnSource)});
  if (!data.config.gpus_per_node) data.config.gpus_per_node = gpn;
  if (!data.config.nodes && distinctRanks > 0)
    data.config.nodes = (byRank.rbegin()->first + gpn) / gpn;
  return gpn;
}

// Counter columns whose values decrease (wraps or resets), as "WHO METRIC xN".
void findWraps(const TelemetryTable& table, const std::string& who,
               std::vector<std::string>& wraps) {
  for (const TelemetryColumn& c : table.columns) {
    const MetricDef* def = findMetric(c.metric);
    if (def && def->kind == MetricKind::Counter)
      if (const size_t n = tel::countDecreases(c.values); n > 0)
        wraps.push_back(fmt::format("{} {} x{}", who, c.metric, n));
  }
}

// Step: one GPU per rank, its series merged onto one time column.
void gpusOfRanks(std::map<int, std::vector<tel::Series>>& byRank, int gpn, ImportedData& data,
                 std::vector<std::string>& wraps, size_t& unsorted) {
  for (auto& [rank, list] : byRank) {
    const int64_t tol = tel::mergeTolerance(list);
    tel::MergedTable merged = tel::mergeSeries(std::move(list), tol);
    unsorted += merged.unsortedSeries;
    ImportedGpu gpu;
    gpu.info.rank = rank;
    gpu.info.node = rank / gpn;
    gpu.info.local_index = rank % gpn;
    gpu.nodeKnown = true;
    findWraps(merged.table, fmt::format("rank {}", rank), wraps);
    gpu.table = std::move(merged.table);
    std::erase_if(gpu.table.columns, [](const TelemetryColumn& c) {
      return std::none_of(c.values.begin(), c.values.end(),
                          [](double v) { return std::isfinite(v); });
    });
    data.gpus.push_back(std::move(gpu));
  }
}

// Step: the node-level system files, one node per leading rank.
void readSystemFiles(const Listing& listing, int gpn, ImportedData& data, ReadCounts& counts,
                     std::vector<std::string>& wraps, FileProgress& fp) {
  std::map<int, std::map<const SystemStem*, std::vector<tel::Series>>> bySystem;
  for (const SystemFile& f : listing.system) {
    fp.step("reading CharLLM-PPT system files");
    bySystem[f.rank][f.stem].push_back(readSeries(f.path, f.stem->stem, counts));
  }
  for (auto& [rank, stems] : bySystem) {
    std::vector<tel::Series> list;
    for (auto& [stem, filesOfStem] : stems)
      list.push_back(combineIds(std::move(filesOfStem), *stem));
    const int64_t tol = tel::mergeTolerance(list);
    tel::MergedTable merged = tel::mergeSeries(std::move(list), tol);
    findWraps(merged.table, fmt::format("node {}", rank / gpn), wraps);
    ImportedNode node;
    node.node = rank / gpn;
    node.table = std::move(merged.table);
    data.nodes.push_back(std::move(node));
  }
}

// Step: the notes of the read: counter wraps, -1 samples, non-finite values, unsorted files.
void addReadNotes(ImportedData& data, const fs::path& input, const std::vector<std::string>& wraps,
                  const ReadCounts& counts, size_t unsorted) {
  if (!wraps.empty()) {
    std::string list;
    for (size_t i = 0; i < wraps.size() && i < 16; ++i)
      list += (i ? ", " : "") + wraps[i];
    if (wraps.size() > 16) list += fmt::format(", ... ({} more)", wraps.size() - 16);
    data.notes.push_back(
        {Severity::Warning, "counter_wrap", "counters",
         fmt::format("cumulative counters decreased (32-bit wraps or resets): {}; raw values "
                     "are kept, analyses take deltas as (2^32 - 1 - prev) + cur",
                     list)});
  }
  if (counts.minusOne > 0) {
    std::string byStem;
    for (const auto& [stem, n] : counts.minusOneByStem)
      byStem += fmt::format("{}{} {}", byStem.empty() ? "" : ", ", stem, n);
    data.notes.push_back(
        {Severity::Info, "missing_values", "files",
         fmt::format("{} samples were -1 (read failed or unsupported) and were read as missing "
                     "({})",
                     counts.minusOne, byStem)});
  }
  tel::addTallyNote(data.notes, counts.nonFinite, "non_finite_values", input,
                    "NaN or infinite values", "they were read as missing values");
  if (unsorted > 0)
    data.notes.push_back({Severity::Warning, "non_monotonic_timestamps", "files",
                          fmt::format("{} metric files had timestamps out of order; they were "
                                      "sorted by time",
                                      unsorted)});
}

class CharLlmImporter final : public Importer {
 public:
  std::string_view name() const override { return "charllm"; }
  std::string_view description() const override {
    return "CharLLM-PPT results folder (<metric>_<rank>.csv per rank, system files, Kineto "
           "traces)";
  }
  bool telemetry() const override { return true; }

  int detect(const InputProbe& probe) const override {
    if (!probe.isDirectory) return 0;
    Listing l;
    for (const fs::path& e : probe.entries)
      classify(e, probe.path / e, l);
    const bool power = std::any_of(l.metrics.begin(), l.metrics.end(), [](const MetricFile& m) {
      return m.stem->metric == metric::kPower;
    });
    if (power) return 90;
    return l.metrics.empty() ? 0 : 60;
  }

  ImportedData read(const fs::path& inputArg, const ImportOptions& options,
                    const Progress& progress) const override {
    const fs::path input = inputArg.has_filename() ? inputArg : inputArg.parent_path();
    std::error_code ec;
    if (!fs::is_directory(input, ec))
      text::fail(input, 0,
                 "expected a CharLLM-PPT results folder (with <metric>_<rank>.csv files), found a "
                 "file");
    ImportedData data;
    data.format = std::string(name());
    data.path = inputArg;
    Listing listing = listFolder(input);
    if (listing.metrics.empty())
      text::fail(input, 0,
                 "no CharLLM-PPT metric files (<metric>_<rank>.csv such as gpu_power_0.csv) in the "
                 "folder");

    // Configuration from the folder names and the experiment matrix.
    const std::string run = input.filename().string();
    const std::string model = input.parent_path().filename().string();
    const std::string sweep = input.parent_path().parent_path().filename().string();
    const std::vector<charllm::MatrixRow> matrix = loadMatrix(input, data.notes);
    charllm::RunLookup lookup = charllm::lookupRun(matrix, run, model, sweep);
    data.name = run;
    data.model = lookup.model;
    data.config = lookup.config;
    for (QualityNote& n : lookup.notes)
      data.notes.push_back(std::move(n));

    FileProgress fp{progress,
                    listing.metrics.size() + listing.system.size() + listing.traces.size()};
    readTraces(data, listing, options, fp);
    const bool amd = inferPlatform(input, listing, data);
    ReadCounts counts;
    std::map<int, std::vector<tel::Series>> byRank = readMetricFiles(listing, amd, counts, fp);
    const int gpn = nodeLayout(listing, byRank, data);
    std::vector<std::string> wraps;
    size_t unsorted = 0;
    gpusOfRanks(byRank, gpn, data, wraps, unsorted);
    if (amd) tel::applyGcdPairs(data.gpus, data.platform.rfind("MI250", 0) == 0, data.notes);
    readSystemFiles(listing, gpn, data, counts, wraps, fp);
    if (!data.gpus.empty())
      data.sample_interval_s = tel::medianIntervalSeconds(data.gpus.front().table.t_ns);
    addReadNotes(data, input, wraps, counts, unsorted);
    progress.report(1.0, "reading CharLLM-PPT results");
    return data;
  }
};

}  // namespace

std::unique_ptr<Importer> makeCharLlmImporter() {
  return std::make_unique<CharLlmImporter>();
}

}  // namespace wl::import
