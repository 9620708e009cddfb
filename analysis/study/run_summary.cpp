// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/study/run_summary.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "analysis/analysis_json.h"
#include "analysis/report_numbers.h"
#include "analysis/run_overview.h"
#include "loaders/core/error.h"

namespace wl {
namespace {

using nlohmann::json;

// Aggregates over GPUs that skip unknown values; NaN when no value is known.
struct Agg {
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  size_t n = 0;
  void add(double v) {
    if (!std::isfinite(v)) return;
    sum += v, lo = std::min(lo, v), hi = std::max(hi, v), ++n;
  }
  double mean() const { return n ? sum / static_cast<double>(n) : kNaN; }
  double total() const { return n ? sum : kNaN; }
  double min() const { return n ? lo : kNaN; }
  double max() const { return n ? hi : kNaN; }
};

// Reading back, with the JSON path in the error.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  const json& at(const char* key) const {
    if (!j_.is_object()) fail("", "an object");
    auto it = j_.find(key);
    if (it == j_.end()) fail(key, "present");
    return *it;
  }
  Reader sub(const char* key) const { return Reader(at(key), path_ + "." + key); }
  double dbl(const char* key) const {
    const json& v = at(key);
    if (v.is_null()) return kNaN;
    if (!v.is_number()) fail(key, "a number or null");
    return v.get<double>();
  }
  template <class T>
  T integer(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer()) fail(key, "an integer");
    return v.get<T>();
  }
  bool boolean(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, "true or false");
    return v.get<bool>();
  }
  std::string str(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "a string");
    return v.get<std::string>();
  }
  std::optional<int> optInt(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    return integer<int>(key);
  }
  std::optional<bool> optBool(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    return boolean(key);
  }
  const json& self() const { return j_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& key, const char* expected) const {
    throw Error(fmt::format("run summary {}{}{}: expected {}", path_, key.empty() ? "" : ".", key,
                            expected));
  }

 private:
  const json& j_;
  std::string path_;
};

// Reads categoriesJson() (analysis_json.h): one time per kernel category, by category id.
CategoryTimes categoriesFrom(const Reader& r, const char* key) {
  const Reader o = r.sub(key);
  CategoryTimes t{};
  for (size_t c = 0; c < kKernelCategoryCount; ++c)
    t[c] =
        o.integer<int64_t>(std::string(kernelCategoryId(static_cast<KernelCategory>(c))).c_str());
  return t;
}

ParallelConfig configFrom(const Reader& r) {
  ParallelConfig c;
  c.tp = r.optInt("tp"), c.pp = r.optInt("pp"), c.dp = r.optInt("dp"), c.ep = r.optInt("ep");
  c.cp = r.optInt("cp"), c.vpp = r.optInt("vpp"), c.mbs = r.optInt("mbs"), c.gbs = r.optInt("gbs");
  c.seq_len = r.optInt("seq_len"), c.nodes = r.optInt("nodes");
  c.gpus_per_node = r.optInt("gpus_per_node");
  c.recompute = r.optBool("recompute"), c.overlap = r.optBool("overlap");
  return c;
}

RunTotals totalsFrom(const Reader& r) {
  RunTotals t;
  t.energy_j = r.dbl("energy_j");
  t.mean_power_w = r.dbl("mean_power_w");
  t.peak_power_w = r.dbl("peak_power_w");
  t.busy_s = r.dbl("busy_s");
  t.throttled_s = r.dbl("throttled_s");
  t.throttled_fraction = r.dbl("throttled_fraction");
  const Reader by = r.sub("throttled_by_reason");
  for (size_t c = 0; c < kThrottleCauseCount; ++c)
    t.by_cause_fraction[c] =
        by.dbl(std::string(throttleCauseId(static_cast<ThrottleCause>(c))).c_str());
  t.iterations = r.integer<size_t>("iterations");
  t.iteration_time_s = r.dbl("iteration_time_s");
  t.iteration_window_s = r.dbl("iteration_window_s");
  t.iteration_window_power_w = r.dbl("iteration_window_power_w");
  t.throughput_samples_per_s = r.dbl("throughput_samples_per_s");
  t.tokens_per_s = r.dbl("tokens_per_s");
  t.energy_per_iteration_j = r.dbl("energy_per_iteration_j");
  t.energy_per_token_j = r.dbl("energy_per_token_j");
  t.efficiency_samples_per_s_mj = r.dbl("efficiency_samples_per_s_mj");
  t.domains = r.integer<size_t>("domains");
  t.domain_gpus = r.integer<size_t>("domain_gpus");
  t.domain_kind = r.at("domain_kind").is_null() ? std::string() : r.str("domain_kind");
  t.mean_power_per_device_w = r.dbl("mean_power_per_device_w");
  return t;
}

const json& arrayAt(const Reader& r, const char* key) {
  const json& a = r.at(key);
  if (!a.is_array()) r.fail(key, "an array");
  return a;
}

}  // namespace

double RunSummary::tokens() const {
  if (!config.gbs || !config.seq_len || *config.gbs <= 0 || *config.seq_len <= 0 ||
      totals.iterations == 0)
    return kNaN;
  return static_cast<double>(totals.iterations) * static_cast<double>(*config.gbs) *
         static_cast<double>(*config.seq_len);
}

int pipelineStage(int rank, const ParallelConfig& config, int gpuCount) {
  int world = gpuCount;
  if (config.nodes && config.gpus_per_node) world = *config.nodes * *config.gpus_per_node;
  if (!config.pp || *config.pp < 1 || world < 1 || world % *config.pp != 0 || rank < 0) return -1;
  const int perStage = world / *config.pp;
  const int stage = rank / perStage;
  return stage < *config.pp ? stage : -1;
}

RunSummary summarizeAnalysis(const RunAnalysis& a) {
  RunSummary s;
  const RunInfo& i = a.info;
  s.name = i.name, s.platform = i.platform, s.model = i.model, s.config = i.config;
  s.simulated = i.simulated, s.start_ns = i.start_ns, s.end_ns = i.end_ns;
  s.gpu_count = static_cast<int>(a.gpus.size());
  if (!a.gpus.empty()) s.device_name = a.gpus.front().info.device_name;
  s.valid = a.quality.valid;
  s.invalid_reasons = a.quality.invalid_reasons;
  s.duration_s = a.duration_s;
  s.totals = a.totals;

  Agg tMean, tMax, cMean, cMin, cMax, p2a, exc, excS, above, head, deficit;
  for (const GpuAnalysis& g : a.gpus) {
    GpuSummary gs;
    gs.id = g.info.id;
    gs.node = g.info.node;
    gs.domain = g.domain;
    gs.slot = g.info.slot >= 0 ? g.info.slot : g.info.local_index;
    gs.power_mean_w = g.power.mean, gs.power_max_w = g.power.max;
    gs.temp_mean_c = g.temp.mean, gs.temp_max_c = g.temp.max;
    gs.clock_mean_mhz = g.sm_clock.mean, gs.clock_min_mhz = g.sm_clock.min;
    gs.clock_max_mhz = g.sm_clock.max;
    gs.energy_j = g.energy_j;
    gs.throttled_fraction = g.throttle.fraction();
    gs.peak_to_average = g.burstiness.peak_to_average;
    s.gpus.push_back(gs);

    tMean.add(g.temp.mean), tMax.add(g.temp.max);
    cMean.add(g.sm_clock.mean), cMin.add(g.sm_clock.min), cMax.add(g.sm_clock.max);
    p2a.add(g.burstiness.peak_to_average);
    if (std::isfinite(g.burstiness.power_limit_w)) {
      exc.add(static_cast<double>(g.burstiness.excursions));
      excS.add(g.burstiness.excursion_s);
    }
    if (std::isfinite(g.thermal.slowdown_c)) above.add(g.thermal.time_above_slowdown_s);
    head.add(g.thermal.headroom_c);
    if (g.throttle.has_clock) deficit.add(g.throttle.clock_deficit_mhz_s);
  }
  s.temp_mean_c = tMean.mean(), s.temp_max_c = tMax.max();
  s.clock_mean_mhz = cMean.mean(), s.clock_min_mhz = cMin.min(), s.clock_max_mhz = cMax.max();
  s.peak_to_average = p2a.mean();
  s.excursions = exc.total(), s.excursion_s = excS.total();
  s.time_above_slowdown_s = above.total();
  s.headroom_c = head.min();
  s.clock_deficit_mhz_s = deficit.total();
  s.iteration_cv = a.iterations.step_s.cv;
  s.rank_spread_s = a.iterations.rank_spread_s.mean;
  s.straggler_skew_p99_ns = a.stragglers.skew_p99_ns;
  if (a.cost.unknown.empty()) {
    s.throttle_cost_s = a.cost.step_s;
    s.throttle_cost_fraction = a.cost.fraction;
  }
  s.temp_spread_c = a.spatial.temp_mean_c.spread;
  s.hottest_vs_coolest_pct = a.spatial.hottest_vs_coolest_pct;
  s.package_temp_skew_c = a.spatial.package_temp_skew_c.mean;
  s.gap_s = a.quality.gap_s;
  s.seed_categories = a.seed_categories;
  s.corrected_categories = a.corrected_categories;

  for (const RankAnalysis& r : a.ranks) {
    const RankBreakdown& b = r.breakdown;
    if (b.kernels == 0) continue;
    RankSummary rs;
    rs.rank = b.rank;
    rs.gpu = b.gpu;
    rs.stage = pipelineStage(b.rank, i.config, s.gpu_count);
    rs.kernels = b.kernels;
    rs.span_ns = b.span_ns, rs.compute_ns = b.compute_ns, rs.exposed_comm_ns = b.exposed_comm_ns;
    rs.exposed_memory_ns = b.exposed_memory_ns, rs.idle_ns = b.idle_ns;
    rs.overlap_ratio = b.overlap_ratio;
    if (r.slowdown) rs.lost_ns = r.slowdown->lost_ns;
    if (r.energy) {
      rs.compute_j = r.energy->compute_j;
      rs.exposed_comm_j = r.energy->exposed_comm_j;
      rs.idle_j = r.energy->idle_j;
    }
    rs.seed_categories = r.seed_categories;
    rs.corrected_categories = r.corrected_categories;
    s.ranks.push_back(rs);
  }
  return s;
}

RunSummary unreadableRun(const std::string& path, const std::string& error) {
  RunSummary s;
  s.path = path;
  s.readable = false;
  s.load_error = error;
  s.valid = false;
  s.invalid_reasons = {"cannot be read: " + error};
  return s;
}

json toJson(const RunSummary& s) {
  json gpus = json::array();
  for (const GpuSummary& g : s.gpus)
    gpus.push_back({{"id", g.id},
                    {"node", g.node},
                    {"domain", g.domain},
                    {"slot", g.slot},
                    {"power_mean_w", jsonNumber(g.power_mean_w)},
                    {"power_max_w", jsonNumber(g.power_max_w)},
                    {"temp_mean_c", jsonNumber(g.temp_mean_c)},
                    {"temp_max_c", jsonNumber(g.temp_max_c)},
                    {"clock_mean_mhz", jsonNumber(g.clock_mean_mhz)},
                    {"clock_min_mhz", jsonNumber(g.clock_min_mhz)},
                    {"clock_max_mhz", jsonNumber(g.clock_max_mhz)},
                    {"energy_j", jsonNumber(g.energy_j)},
                    {"throttled_fraction", jsonNumber(g.throttled_fraction)},
                    {"peak_to_average", jsonNumber(g.peak_to_average)}});
  json ranks = json::array();
  for (const RankSummary& r : s.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"gpu", r.gpu},
                     {"stage", r.stage},
                     {"kernels", r.kernels},
                     {"span_ns", r.span_ns},
                     {"compute_ns", r.compute_ns},
                     {"exposed_comm_ns", r.exposed_comm_ns},
                     {"exposed_memory_ns", r.exposed_memory_ns},
                     {"idle_ns", r.idle_ns},
                     {"overlap_ratio", jsonNumber(r.overlap_ratio)},
                     {"lost_ns", jsonNumber(r.lost_ns)},
                     {"compute_j", jsonNumber(r.compute_j)},
                     {"exposed_comm_j", jsonNumber(r.exposed_comm_j)},
                     {"idle_j", jsonNumber(r.idle_j)},
                     {"seed_categories", categoriesJson(r.seed_categories)},
                     {"corrected_categories", categoriesJson(r.corrected_categories)}});
  return {{"path", s.path},
          {"file_size", s.file_size},
          {"file_mtime_ns", s.file_mtime_ns},
          {"readable", s.readable},
          {"load_error", s.load_error},
          {"name", s.name},
          {"platform", s.platform},
          {"model", s.model},
          {"device_name", s.device_name},
          {"config", toJson(s.config)},
          {"simulated", s.simulated},
          {"start_ns", s.start_ns},
          {"end_ns", s.end_ns},
          {"gpu_count", s.gpu_count},
          {"valid", s.valid},
          {"invalid_reasons", s.invalid_reasons},
          {"duration_s", jsonNumber(s.duration_s)},
          {"totals", toJson(s.totals)},
          {"temp_mean_c", jsonNumber(s.temp_mean_c)},
          {"temp_max_c", jsonNumber(s.temp_max_c)},
          {"clock_mean_mhz", jsonNumber(s.clock_mean_mhz)},
          {"clock_min_mhz", jsonNumber(s.clock_min_mhz)},
          {"clock_max_mhz", jsonNumber(s.clock_max_mhz)},
          {"peak_to_average", jsonNumber(s.peak_to_average)},
          {"excursions", jsonNumber(s.excursions)},
          {"excursion_s", jsonNumber(s.excursion_s)},
          {"time_above_slowdown_s", jsonNumber(s.time_above_slowdown_s)},
          {"headroom_c", jsonNumber(s.headroom_c)},
          {"clock_deficit_mhz_s", jsonNumber(s.clock_deficit_mhz_s)},
          {"iteration_cv", jsonNumber(s.iteration_cv)},
          {"rank_spread_s", jsonNumber(s.rank_spread_s)},
          {"straggler_skew_p99_ns", jsonNumber(s.straggler_skew_p99_ns)},
          {"throttle_cost_s", jsonNumber(s.throttle_cost_s)},
          {"throttle_cost_fraction", jsonNumber(s.throttle_cost_fraction)},
          {"temp_spread_c", jsonNumber(s.temp_spread_c)},
          {"hottest_vs_coolest_pct", jsonNumber(s.hottest_vs_coolest_pct)},
          {"package_temp_skew_c", jsonNumber(s.package_temp_skew_c)},
          {"gap_s", jsonNumber(s.gap_s)},
          {"seed_categories", categoriesJson(s.seed_categories)},
          {"corrected_categories", categoriesJson(s.corrected_categories)},
          {"gpus", gpus},
          {"ranks", ranks}};
}

RunSummary runSummaryFromJson(const json& j) {
  const Reader r(j, "$");
  RunSummary s;
  s.path = r.str("path");
  s.file_size = r.integer<uint64_t>("file_size");
  s.file_mtime_ns = r.integer<int64_t>("file_mtime_ns");
  s.readable = r.boolean("readable");
  s.load_error = r.str("load_error");
  s.name = r.str("name"), s.platform = r.str("platform"), s.model = r.str("model");
  s.device_name = r.str("device_name");
  s.config = configFrom(r.sub("config"));
  s.simulated = r.boolean("simulated");
  s.start_ns = r.integer<int64_t>("start_ns"), s.end_ns = r.integer<int64_t>("end_ns");
  s.gpu_count = r.integer<int>("gpu_count");
  s.valid = r.boolean("valid");
  for (const json& v : arrayAt(r, "invalid_reasons")) {
    if (!v.is_string()) r.fail("invalid_reasons", "an array of strings");
    s.invalid_reasons.push_back(v.get<std::string>());
  }
  s.duration_s = r.dbl("duration_s");
  s.totals = totalsFrom(r.sub("totals"));
  s.temp_mean_c = r.dbl("temp_mean_c"), s.temp_max_c = r.dbl("temp_max_c");
  s.clock_mean_mhz = r.dbl("clock_mean_mhz"), s.clock_min_mhz = r.dbl("clock_min_mhz");
  s.clock_max_mhz = r.dbl("clock_max_mhz");
  s.peak_to_average = r.dbl("peak_to_average");
  s.excursions = r.dbl("excursions"), s.excursion_s = r.dbl("excursion_s");
  s.time_above_slowdown_s = r.dbl("time_above_slowdown_s");
  s.headroom_c = r.dbl("headroom_c");
  s.clock_deficit_mhz_s = r.dbl("clock_deficit_mhz_s");
  s.iteration_cv = r.dbl("iteration_cv"), s.rank_spread_s = r.dbl("rank_spread_s");
  s.straggler_skew_p99_ns = r.dbl("straggler_skew_p99_ns");
  s.throttle_cost_s = r.dbl("throttle_cost_s");
  s.throttle_cost_fraction = r.dbl("throttle_cost_fraction");
  s.temp_spread_c = r.dbl("temp_spread_c");
  s.hottest_vs_coolest_pct = r.dbl("hottest_vs_coolest_pct");
  s.package_temp_skew_c = r.dbl("package_temp_skew_c");
  s.gap_s = r.dbl("gap_s");
  s.seed_categories = categoriesFrom(r, "seed_categories");
  s.corrected_categories = categoriesFrom(r, "corrected_categories");
  const json& gpus = arrayAt(r, "gpus");
  for (size_t k = 0; k < gpus.size(); ++k) {
    const Reader g(gpus[k], fmt::format("$.gpus[{}]", k));
    GpuSummary gs;
    gs.id = g.integer<int>("id"), gs.node = g.integer<int>("node"),
    gs.slot = g.integer<int>("slot");
    gs.domain = g.integer<int>("domain");
    gs.power_mean_w = g.dbl("power_mean_w"), gs.power_max_w = g.dbl("power_max_w");
    gs.temp_mean_c = g.dbl("temp_mean_c"), gs.temp_max_c = g.dbl("temp_max_c");
    gs.clock_mean_mhz = g.dbl("clock_mean_mhz"), gs.clock_min_mhz = g.dbl("clock_min_mhz");
    gs.clock_max_mhz = g.dbl("clock_max_mhz");
    gs.energy_j = g.dbl("energy_j");
    gs.throttled_fraction = g.dbl("throttled_fraction");
    gs.peak_to_average = g.dbl("peak_to_average");
    s.gpus.push_back(gs);
  }
  const json& ranks = arrayAt(r, "ranks");
  for (size_t k = 0; k < ranks.size(); ++k) {
    const Reader x(ranks[k], fmt::format("$.ranks[{}]", k));
    RankSummary rs;
    rs.rank = x.integer<int>("rank"), rs.gpu = x.integer<int>("gpu");
    rs.stage = x.integer<int>("stage");
    rs.kernels = x.integer<uint64_t>("kernels");
    rs.span_ns = x.integer<int64_t>("span_ns"), rs.compute_ns = x.integer<int64_t>("compute_ns");
    rs.exposed_comm_ns = x.integer<int64_t>("exposed_comm_ns");
    rs.exposed_memory_ns = x.integer<int64_t>("exposed_memory_ns");
    rs.idle_ns = x.integer<int64_t>("idle_ns");
    rs.overlap_ratio = x.dbl("overlap_ratio"), rs.lost_ns = x.dbl("lost_ns");
    rs.compute_j = x.dbl("compute_j"), rs.exposed_comm_j = x.dbl("exposed_comm_j");
    rs.idle_j = x.dbl("idle_j");
    rs.seed_categories = categoriesFrom(x, "seed_categories");
    rs.corrected_categories = categoriesFrom(x, "corrected_categories");
    s.ranks.push_back(rs);
  }
  return s;
}

double gpuMemoryGb(const std::string& platform, const std::string& deviceName) {
  // "... 80GB ..." or "... 80 GB ...": the number right before "GB".
  for (size_t pos = deviceName.find("GB"); pos != std::string::npos;
       pos = deviceName.find("GB", pos + 2)) {
    size_t end = pos;
    while (end > 0 && deviceName[end - 1] == ' ')
      --end;
    size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(deviceName[begin - 1])))
      --begin;
    if (begin < end) return std::stod(deviceName.substr(begin, end - begin));
  }
  std::string p;
  for (char c : platform)
    p += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  struct Known {
    const char* platform;
    double gb;
  };
  // Datasheets: H100 SXM 80 GB, H200 141 GB, MI250 128 GB per OAM = 64 per GCD, MI300X 192 GB.
  static constexpr Known kKnown[] = {
      {"H100", 80}, {"H200", 141}, {"MI250", 64}, {"MI250X", 64}, {"MI300X", 192}};
  for (const Known& k : kKnown)
    if (p == k.platform) return k.gb;
  return kNaN;
}

}  // namespace wl
