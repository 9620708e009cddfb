// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis_json.h"

#include <nlohmann/json.hpp>

#include <cmath>

#include "core/throttle_reasons.h"
#include "run_overview.h"

namespace wl {
namespace {

using nlohmann::json;

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json nsOrNull(int64_t v) {
  return v >= 0 ? json(v) : json(nullptr);
}

json toJson(const SpreadStats& s) {
  return {{"n", s.n},          {"mean", num(s.mean)}, {"median", num(s.median)},
          {"min", num(s.min)}, {"max", num(s.max)},   {"stddev", num(s.stddev)},
          {"cv", num(s.cv)}};
}

json toJson(const Spread& s) {
  return {{"n", s.n},
          {"min", num(s.min)},
          {"max", num(s.max)},
          {"spread", num(s.spread)},
          {"mean", num(s.mean)},
          {"cv", num(s.cv)}};
}

json categories(const CategoryTimes& t) {
  json j = json::object();
  for (size_t c = 0; c < kKernelCategoryCount; ++c)
    j[std::string(kernelCategoryId(static_cast<KernelCategory>(c)))] = t[c];
  return j;
}

json histogram(const Histogram& h, const char* weight) {
  if (h.values.empty()) return nullptr;
  return {{"edges", h.edges}, {weight, h.values}};
}

json throttleJson(const GpuThrottle& t) {
  json byReason = json::object(), byReasonS = json::object();
  for (size_t c = 0; c < kThrottleCauseCount; ++c) {
    const auto cause = static_cast<ThrottleCause>(c);
    byReason[std::string(throttleCauseId(cause))] = num(t.causeFraction(cause));
    byReasonS[std::string(throttleCauseId(cause))] =
        t.has_clock ? json(t.by_cause_s[c]) : json(nullptr);
  }
  json intervals = json::array();
  for (const ThrottleInterval& iv : t.intervals)
    intervals.push_back({{"start_ns", iv.start_ns},
                         {"end_ns", iv.end_ns},
                         {"duration_s", static_cast<double>(iv.end_ns - iv.start_ns) * 1e-9},
                         {"cause", throttleCauseId(iv.cause)},
                         {"recorded_reasons", throttle::describe(iv.recorded_reasons)},
                         {"min_clock_mhz", num(iv.min_clock_mhz)},
                         {"mean_clock_mhz", num(iv.mean_clock_mhz)},
                         {"deficit_mhz_s", num(iv.deficit_mhz_s)}});
  return {{"fraction", num(t.fraction())},
          {"busy_s", t.has_clock ? json(t.busy_s) : json(nullptr)},
          {"throttled_s", t.has_clock ? json(t.throttled_s) : json(nullptr)},
          {"by_reason", byReason},
          {"by_reason_s", byReasonS},
          {"clock_deficit_mhz_s", t.has_clock ? num(t.clock_deficit_mhz_s) : json(nullptr)},
          {"reference_clock_mhz", num(t.reference_clock_mhz)},
          {"threshold_mhz", num(t.threshold_mhz)},
          {"busy_source", busySourceId(t.busy_source)},
          {"intervals", intervals}};
}

json burstinessJson(const Burstiness& b) {
  json runs = json::array();
  for (const Interval& r : b.excursion_runs)
    runs.push_back({{"start_ns", r.start}, {"end_ns", r.end}});
  return {{"peak_to_average", num(b.peak_to_average)},
          {"power_limit_w", num(b.power_limit_w)},
          {"excursions", std::isfinite(b.power_limit_w) ? json(b.excursions) : json(nullptr)},
          {"excursion_s", num(b.excursion_s)},
          {"excursion_peak_w", num(b.excursion_peak_w)},
          {"excursion_runs", runs},
          {"dpdt_w_per_s", b.ramp_computed ? json{{"segments", b.ramp.segments},
                                                  {"p50", num(b.ramp.p50)},
                                                  {"p90", num(b.ramp.p90)},
                                                  {"p99", num(b.ramp.p99)},
                                                  {"max", num(b.ramp.max)}}
                                           : json(nullptr)}};
}

json gpuJson(const GpuAnalysis& g) {
  const ThermalResponse& th = g.thermal;
  json metrics = json::object();
  for (const auto& [id, s] : g.metrics)
    metrics[id] = toJson(s);
  const EnergyShare& e = g.energy_share;
  return {{"id", g.info.id},
          {"node", g.info.node},
          {"local_index", g.info.local_index},
          {"slot", g.info.slot},
          {"rank", g.info.rank},
          {"hostname", g.info.hostname},
          {"energy_j", num(g.energy_j)},
          {"power_w", toJson(g.power)},
          {"temp_c", toJson(g.temp)},
          {"sm_clock_mhz", toJson(g.sm_clock)},
          {"util_pct", toJson(g.util)},
          {"metrics", metrics},
          {"throttle", throttleJson(g.throttle)},
          {"burstiness", burstinessJson(g.burstiness)},
          {"thermal",
           {{"mean_c", num(g.temp.mean)},
            {"max_c", num(g.temp.max)},
            {"slowdown_c", num(th.slowdown_c)},
            {"headroom_c", num(th.headroom_c)},
            {"time_above_slowdown_s", num(th.time_above_slowdown_s)},
            {"time_to_first_throttle_s", num(th.time_to_first_throttle_s)},
            {"time_constant_s", num(th.time_constant_s)},
            {"fit_r2", num(th.fit_r2)},
            {"lag_s", num(th.lag_s)},
            {"lag_correlation", num(th.lag_correlation)},
            {"fit_resolution_s", num(th.fit_resolution_s)},
            {"package_skew_c", num(g.package_skew_c)}}},
          {"gaps", g.gaps},
          {"package", g.info.package},
          {"domain", g.domain >= 0 ? json(g.domain) : json(nullptr)},
          {"power_role", powerRoleId(g.power_role)},
          {"energy_estimated_j", num(e.energy_j)},
          {"mean_power_estimated_w", num(e.mean_power_w)},
          {"energy_share_estimated", num(e.share)},
          {"energy_estimate_basis", shareBasisId(e.basis)}};
}

json domainJson(const DomainAnalysis& d) {
  json j = toJson(d.domain);
  j["analysed_gpus"] = d.analysed_gpus;
  j["energy_j"] = num(d.energy_j);
  j["power_w"] = toJson(d.power);
  j["burstiness"] = burstinessJson(d.burstiness);
  j["power_cap_throttle"] = {
      {"busy_s", d.has_clock ? json(d.busy_s) : json(nullptr)},
      {"throttled_s", d.has_clock ? json(d.power_cap_throttled_s) : json(nullptr)},
      {"fraction", num(d.powerCapFraction())}};
  return j;
}

json rankJson(const RankAnalysis& r) {
  const RankBreakdown& b = r.breakdown;
  json streams = json::array();
  for (const StreamIdle& s : b.streams)
    streams.push_back({{"stream", s.stream},
                       {"events", s.events},
                       {"busy_ns", s.busy_ns},
                       {"idle_ns", s.idle_ns},
                       {"kernel_wait_ns", s.kernel_wait_ns},
                       {"other_wait_ns", s.other_wait_ns},
                       {"host_wait_ns", nullptr},
                       {"gaps", s.gaps}});
  json j = {{"rank", b.rank},
            {"gpu", b.gpu >= 0 ? json(b.gpu) : json(nullptr)},
            {"kernels", b.kernels},
            {"comm_kernels", b.comm_kernels},
            {"compute_kernels", b.compute_kernels},
            {"memory_ops", b.memory_ops},
            {"first_ns", nsOrNull(b.first_ns)},
            {"last_ns", nsOrNull(b.last_ns)},
            {"span_ns", b.span_ns},
            {"busy_ns", b.busy_ns},
            {"idle_ns", b.idle_ns},
            {"compute_ns", b.compute_ns},
            {"non_compute_ns", b.non_compute_ns},
            {"comm_ns", b.comm_ns},
            {"exposed_comm_ns", b.exposed_comm_ns},
            {"memory_ns", b.memory_ns},
            {"exposed_memory_ns", b.exposed_memory_ns},
            {"overlap_ns", b.overlap_ns},
            {"overlap_ratio", num(b.overlap_ratio)},
            {"streams", streams},
            {"categories_seed", categories(r.seed_categories)},
            {"categories_corrected", categories(r.corrected_categories)},
            {"iteration_s", toJson(r.iteration_s)}};
  j["throttle_slowdown"] = r.slowdown
                               ? json{{"throttled_compute_ns", r.slowdown->throttled_compute_ns},
                                      {"lost_ns", r.slowdown->lost_ns}}
                               : json(nullptr);
  if (r.energy) {
    const EnergyAttribution& e = *r.energy;
    json phases = json::object();
    for (const auto& [name, v] : e.phases_j)
      phases[name] = num(v);
    j["energy"] = {{"gpu", e.gpu},
                   {"total_j", num(e.total_j)},
                   {"compute_j", num(e.compute_j)},
                   {"exposed_comm_j", num(e.exposed_comm_j)},
                   {"exposed_memory_j", num(e.exposed_memory_j)},
                   {"other_events_j", num(e.other_events_j)},
                   {"idle_j", num(e.idle_j)},
                   {"outside_span_j", num(e.outside_span_j)},
                   {"per_iteration_j", toJson(e.iteration_j)},
                   {"phases_j", phases},
                   {"sample_interval_s", num(e.sample_interval_s)}};
  } else {
    j["energy"] = nullptr;
  }
  return j;
}

}  // namespace

json toJson(const MetricStats& s) {
  return {{"mean", num(s.mean)},  {"min", num(s.min)},        {"max", num(s.max)},
          {"samples", s.samples}, {"covered_s", s.covered_s}, {"integral", num(s.integral)}};
}

json toJson(const RunAnalysis& a) {
  json j;
  j["run"] = {{"name", a.info.name},
              {"platform", a.info.platform},
              {"model", a.info.model},
              {"simulated", a.info.simulated},
              {"start_ns", a.info.start_ns},
              {"end_ns", a.info.end_ns},
              {"duration_s", static_cast<double>(a.info.end_ns - a.info.start_ns) * 1e-9},
              {"iterations", a.totals.iterations},
              {"config", toJson(a.info.config)}};
  j["range"] = {{"start_ns", a.range.t0},
                {"end_ns", a.range.t1},
                {"duration_s", a.duration_s},
                {"gpus", a.gpus.size()},
                {"ranks", a.ranks.size()}};
  const AnalysisOptions& o = a.options;
  j["options"] = {
      {"clock_threshold_fraction", o.clockThresholdFraction},
      {"clock_reference", o.clockReference == ClockReference::Observed ? "observed" : "nominal"},
      {"busy_util_pct", o.busyUtilPct},
      {"power_cap_fraction", o.powerCapFraction},
      {"kernel_wait_ns", o.kernelWaitNs},
      {"raw_sample_budget", o.rawSampleBudget}};
  const RunTotals& t = a.totals;
  json byReason = json::object();
  for (size_t c = 0; c < kThrottleCauseCount; ++c)
    byReason[std::string(throttleCauseId(static_cast<ThrottleCause>(c)))] =
        num(t.by_cause_fraction[c]);
  j["totals"] = {{"energy_j", num(t.energy_j)},
                 {"mean_power_w", num(t.mean_power_w)},
                 {"peak_power_w", num(t.peak_power_w)},
                 {"busy_s", t.busy_s},
                 {"throttled_s", t.throttled_s},
                 {"throttled_fraction", num(t.throttled_fraction)},
                 {"throttled_by_reason", byReason},
                 {"iterations", t.iterations},
                 {"iteration_time_s", num(t.iteration_time_s)},
                 {"iteration_window_s", num(t.iteration_window_s)},
                 {"iteration_window_power_w", num(t.iteration_window_power_w)},
                 {"throughput_samples_per_s", num(t.throughput_samples_per_s)},
                 {"tokens_per_s", num(t.tokens_per_s)},
                 {"energy_per_iteration_j", num(t.energy_per_iteration_j)},
                 {"energy_per_token_j", num(t.energy_per_token_j)},
                 {"efficiency_samples_per_s_mj", num(t.efficiency_samples_per_s_mj)},
                 {"domains", t.domains},
                 {"domain_gpus", t.domain_gpus},
                 {"domain_kind", t.domain_kind.empty() ? json(nullptr) : json(t.domain_kind)},
                 {"mean_power_per_device_w", num(t.mean_power_per_device_w)}};
  json gpus = json::array();
  for (const GpuAnalysis& g : a.gpus)
    gpus.push_back(gpuJson(g));
  j["gpus"] = gpus;
  json domains = json::array();
  for (const DomainAnalysis& d : a.domains)
    domains.push_back(domainJson(d));
  j["domains"] = domains;
  json ranks = json::array();
  for (const RankAnalysis& r : a.ranks)
    ranks.push_back(rankJson(r));
  j["ranks"] = ranks;

  json top = json::array();
  for (const KernelStat& k : a.top_kernels)
    top.push_back({{"name", k.name_text},
                   {"class", k.others ? json(nullptr) : json(kernelClassName(k.cls))},
                   {"others", k.others},
                   {"count", k.count},
                   {"total_ns", k.total_ns},
                   {"mean_ns", num(k.mean_ns())},
                   {"min_ns", k.min_ns},
                   {"max_ns", k.max_ns}});
  j["kernels"] = {{"top", top},
                  {"categories_seed", categories(a.seed_categories)},
                  {"categories_corrected", categories(a.corrected_categories)}};

  json steps = json::array();
  for (const StepTime& s : a.iterations.steps)
    steps.push_back({{"step", s.step},
                     {"start_ns", s.start_ns},
                     {"end_ns", s.end_ns},
                     {"duration_s", s.duration_s},
                     {"rank_spread_s", s.rank_spread_s},
                     {"ranks", s.ranks}});
  j["iterations"] = {{"step_s", toJson(a.iterations.step_s)},
                     {"rank_spread_s", toJson(a.iterations.rank_spread_s)},
                     {"steps", steps}};

  const StragglerReport& s = a.stragglers;
  json sr = json::array();
  for (const RankArrivals& r : s.ranks)
    sr.push_back({{"rank", r.rank},
                  {"gpu", r.gpu >= 0 ? json(r.gpu) : json(nullptr)},
                  {"instances", r.instances},
                  {"last", r.last},
                  {"caused_skew_ns", r.caused_skew_ns}});
  json worst = json::array();
  for (const StragglerSample& w : s.worst)
    worst.push_back({{"at_ns", w.at_ns},
                     {"skew_ns", w.skew_ns},
                     {"collective", w.collective},
                     {"clock_mhz", num(w.clock_mhz)},
                     {"temp_c", num(w.temp_c)},
                     {"power_w", num(w.power_w)}});
  auto cond = [](const GpuCondition& c) {
    return json{{"clock_mhz", num(c.clock_mhz)},
                {"temp_c", num(c.temp_c)},
                {"power_w", num(c.power_w)},
                {"throttled_fraction", num(c.throttled_fraction)}};
  };
  j["stragglers"] = {
      {"instances", s.instances},
      {"skew_ns",
       {{"mean", num(s.skew_mean_ns)},
        {"p50", num(s.skew_p50_ns)},
        {"p99", num(s.skew_p99_ns)},
        {"max", num(s.skew_max_ns)}}},
      {"ranks", sr},
      {"straggler_rank", s.straggler_rank >= 0 ? json(s.straggler_rank) : json(nullptr)},
      {"straggler_gpu", s.straggler_gpu >= 0 ? json(s.straggler_gpu) : json(nullptr)},
      {"straggler_share", num(s.straggler_share)},
      {"straggler_condition", s.straggler_rank >= 0 ? cond(s.straggler) : json(nullptr)},
      {"others_condition", s.straggler_rank >= 0 ? cond(s.others) : json(nullptr)},
      {"likely_cause", s.likely_cause.empty() ? json(nullptr) : json(s.likely_cause)},
      {"worst", worst}};

  const SpatialImbalance& sp = a.spatial;
  json nodes = json::array();
  for (const NodeImbalance& n : sp.nodes) {
    json g = json::array();
    for (const SlotCondition& c : n.gpus)
      g.push_back({{"gpu", c.gpu},
                   {"slot", c.slot},
                   {"temp_mean_c", num(c.temp_mean_c)},
                   {"temp_max_c", num(c.temp_max_c)},
                   {"clock_mean_mhz", num(c.clock_mean_mhz)},
                   {"power_mean_w", num(c.power_mean_w)}});
    nodes.push_back({{"node", n.node},
                     {"hostname", n.hostname},
                     {"gpus", g},
                     {"temp_mean_c", toJson(n.temp_mean_c)},
                     {"clock_mean_mhz", toJson(n.clock_mean_mhz)},
                     {"power_mean_w", toJson(n.power_mean_w)}});
  }
  json slots = json::array();
  for (const SlotSummary& sl : sp.by_slot)
    slots.push_back({{"slot", sl.slot},
                     {"gpus", sl.gpus},
                     {"temp_mean_c", num(sl.temp_mean_c)},
                     {"clock_mean_mhz", num(sl.clock_mean_mhz)},
                     {"power_mean_w", num(sl.power_mean_w)}});
  json packages = json::array();
  for (const PackageSkew& p : sp.packages) {
    json temps = json::array();
    for (double v : p.temp_mean_c)
      temps.push_back(num(v));
    packages.push_back({{"domain", p.domain},
                        {"name", p.name},
                        {"node", p.node},
                        {"gpus", p.gpus},
                        {"temp_mean_c", temps},
                        {"temp_skew_c", num(p.temp_skew_c)},
                        {"temp_max_skew_c", num(p.temp_max_skew_c)},
                        {"clock_skew_mhz", num(p.clock_skew_mhz)},
                        {"hottest_gpu", p.hottest_gpu >= 0 ? json(p.hottest_gpu) : json(nullptr)}});
  }
  j["spatial"] = {{"nodes", nodes},
                  {"slots", slots},
                  {"temp_mean_c", toJson(sp.temp_mean_c)},
                  {"clock_mean_mhz", toJson(sp.clock_mean_mhz)},
                  {"power_mean_w", toJson(sp.power_mean_w)},
                  {"hottest_slot", sp.hottest_slot >= 0 ? json(sp.hottest_slot) : json(nullptr)},
                  {"coolest_slot", sp.coolest_slot >= 0 ? json(sp.coolest_slot) : json(nullptr)},
                  {"hottest_vs_coolest_pct", num(sp.hottest_vs_coolest_pct)},
                  {"packages", packages},
                  {"package_temp_skew_c", toJson(sp.package_temp_skew_c)},
                  {"package_clock_skew_mhz", toJson(sp.package_clock_skew_mhz)}};

  j["histograms"] = {{"power_w", histogram(a.power_hist, "seconds")},
                     {"dpdt_w_per_s", histogram(a.ramp_hist, "segments")}};

  const DataQualityReport& q = a.quality;
  json gaps = json::array();
  for (const Gap& g : q.gaps)
    gaps.push_back({{"gpu", g.gpu},
                    {"start_ns", g.start_ns},
                    {"end_ns", g.end_ns},
                    {"duration_s", g.length_s()}});
  json ctr = json::array();
  for (const CounterSummary& c : q.counter_problems)
    ctr.push_back({{"gpu", c.gpu},
                   {"metric", c.metric},
                   {"wraps", c.wraps},
                   {"resets", c.resets},
                   {"total", num(c.total)}});
  json notes = json::array();
  for (const QualityNote& n : q.notes)
    notes.push_back({{"severity", n.severity == Severity::Warning ? "warning" : "info"},
                     {"code", n.code},
                     {"subject", n.subject},
                     {"message", n.message}});
  j["data_quality"] = {
      {"valid", q.valid},
      {"invalid_reasons", q.invalid_reasons},
      {"expected_gpus", q.expected_gpus >= 0 ? json(q.expected_gpus) : json(nullptr)},
      {"gpus_without_power", q.gpus_without_power},
      {"gpus_without_own_power", q.gpus_without_own_power},
      {"domains_without_power", q.domains_without_power},
      {"has_telemetry", q.has_telemetry},
      {"ranks_without_kernels", q.ranks_without_kernels},
      {"gaps", gaps},
      {"gap_s", q.gap_s},
      {"counters", ctr},
      {"notes", notes}};
  j["notes"] = a.notes;
  return j;
}

json toJson(const RangeSummary& s) {
  json gpus = json::array();
  for (const GpuRangeSummary& g : s.gpus) {
    json metrics = json::object();
    for (const auto& [id, st] : g.metrics)
      metrics[id] = toJson(st);
    json byReason = json::object();
    for (size_t c = 0; c < kThrottleCauseCount; ++c)
      byReason[std::string(throttleCauseId(static_cast<ThrottleCause>(c)))] =
          num(g.by_cause_fraction[c]);
    gpus.push_back({{"gpu", g.gpu},
                    {"energy_j", num(g.energy_j)},
                    {"metrics", metrics},
                    {"throttled_fraction", num(g.throttled_fraction)},
                    {"throttled_by_reason", byReason}});
  }
  json ranks = json::array();
  for (const RankRangeSummary& r : s.ranks) {
    json busy = json::object();
    for (size_t c = 0; c < kKernelClassCount; ++c)
      busy[std::string(kernelClassName(static_cast<KernelClass>(c)))] = r.stream_busy_ns[c];
    ranks.push_back({{"rank", r.rank}, {"events", r.events}, {"stream_busy_ns", busy}});
  }
  return {{"start_ns", s.range.t0}, {"end_ns", s.range.t1}, {"gpus", gpus}, {"ranks", ranks}};
}

}  // namespace wl
