// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/analysis_json.h"

#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/report_numbers.h"
#include "analysis/run_overview.h"
#include "loaders/core/throttle_reasons.h"

namespace wl {
namespace {

using nlohmann::json;

json toJson(const SpreadStats& s) {
  return {{"n", s.n},
          {"mean", jsonNumber(s.mean)},
          {"median", jsonNumber(s.median)},
          {"min", jsonNumber(s.min)},
          {"max", jsonNumber(s.max)},
          {"stddev", jsonNumber(s.stddev)},
          {"cv", jsonNumber(s.cv)}};
}

json toJson(const Spread& s) {
  return {{"n", s.n},
          {"min", jsonNumber(s.min)},
          {"max", jsonNumber(s.max)},
          {"spread", jsonNumber(s.spread)},
          {"mean", jsonNumber(s.mean)},
          {"cv", jsonNumber(s.cv)}};
}

json histogram(const Histogram& h, const char* weight) {
  if (h.values.empty()) return nullptr;
  return {{"edges", h.edges}, {weight, h.values}};
}

json throttleJson(const GpuThrottle& t) {
  json byReason = json::object(), byReasonS = json::object();
  for (size_t c = 0; c < kThrottleCauseCount; ++c) {
    const auto cause = static_cast<ThrottleCause>(c);
    byReason[std::string(throttleCauseId(cause))] = jsonNumber(t.causeFraction(cause));
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
                         {"min_clock_mhz", jsonNumber(iv.min_clock_mhz)},
                         {"mean_clock_mhz", jsonNumber(iv.mean_clock_mhz)},
                         {"deficit_mhz_s", jsonNumber(iv.deficit_mhz_s)}});
  return {{"fraction", jsonNumber(t.fraction())},
          {"busy_s", t.has_clock ? json(t.busy_s) : json(nullptr)},
          {"throttled_s", t.has_clock ? json(t.throttled_s) : json(nullptr)},
          {"by_reason", byReason},
          {"by_reason_s", byReasonS},
          {"clock_deficit_mhz_s", t.has_clock ? jsonNumber(t.clock_deficit_mhz_s) : json(nullptr)},
          {"reference_clock_mhz", jsonNumber(t.reference_clock_mhz)},
          {"threshold_mhz", jsonNumber(t.threshold_mhz)},
          {"busy_source", busySourceId(t.busy_source)},
          {"intervals", intervals}};
}

json burstinessJson(const Burstiness& b) {
  json runs = json::array();
  for (const Interval& r : b.excursion_runs)
    runs.push_back({{"start_ns", r.start}, {"end_ns", r.end}});
  return {{"peak_to_average", jsonNumber(b.peak_to_average)},
          {"power_limit_w", jsonNumber(b.power_limit_w)},
          {"excursions", std::isfinite(b.power_limit_w) ? json(b.excursions) : json(nullptr)},
          {"excursion_s", jsonNumber(b.excursion_s)},
          {"excursion_peak_w", jsonNumber(b.excursion_peak_w)},
          {"excursion_runs", runs},
          {"dpdt_w_per_s", b.ramp_computed ? json{{"segments", b.ramp.segments},
                                                  {"p50", jsonNumber(b.ramp.p50)},
                                                  {"p90", jsonNumber(b.ramp.p90)},
                                                  {"p99", jsonNumber(b.ramp.p99)},
                                                  {"max", jsonNumber(b.ramp.max)}}
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
          {"energy_j", jsonNumber(g.energy_j)},
          {"power_w", toJson(g.power)},
          {"temp_c", toJson(g.temp)},
          {"sm_clock_mhz", toJson(g.sm_clock)},
          {"util_pct", toJson(g.util)},
          {"metrics", metrics},
          {"throttle", throttleJson(g.throttle)},
          {"burstiness", burstinessJson(g.burstiness)},
          {"thermal",
           {{"mean_c", jsonNumber(g.temp.mean)},
            {"max_c", jsonNumber(g.temp.max)},
            {"slowdown_c", jsonNumber(th.slowdown_c)},
            {"headroom_c", jsonNumber(th.headroom_c)},
            {"time_above_slowdown_s", jsonNumber(th.time_above_slowdown_s)},
            {"time_to_first_throttle_s", jsonNumber(th.time_to_first_throttle_s)},
            {"time_constant_s", jsonNumber(th.time_constant_s)},
            {"fit_r2", jsonNumber(th.fit_r2)},
            {"lag_s", jsonNumber(th.lag_s)},
            {"lag_correlation", jsonNumber(th.lag_correlation)},
            {"fit_resolution_s", jsonNumber(th.fit_resolution_s)},
            {"package_skew_c", jsonNumber(g.package_skew_c)}}},
          {"gaps", g.gaps},
          {"package", g.info.package},
          {"domain", jsonIndex(g.domain)},
          {"power_role", powerRoleId(g.power_role)},
          {"energy_estimated_j", jsonNumber(e.energy_j)},
          {"mean_power_estimated_w", jsonNumber(e.mean_power_w)},
          {"energy_share_estimated", jsonNumber(e.share)},
          {"energy_estimate_basis", shareBasisId(e.basis)}};
}

json domainJson(const DomainAnalysis& d) {
  json j = toJson(d.domain);
  j["analysed_gpus"] = d.analysed_gpus;
  j["energy_j"] = jsonNumber(d.energy_j);
  j["power_w"] = toJson(d.power);
  j["burstiness"] = burstinessJson(d.burstiness);
  j["power_cap_throttle"] = {
      {"busy_s", d.has_clock ? json(d.busy_s) : json(nullptr)},
      {"throttled_s", d.has_clock ? json(d.power_cap_throttled_s) : json(nullptr)},
      {"fraction", jsonNumber(d.powerCapFraction())}};
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
            {"gpu", jsonIndex(b.gpu)},
            {"kernels", b.kernels},
            {"comm_kernels", b.comm_kernels},
            {"compute_kernels", b.compute_kernels},
            {"memory_ops", b.memory_ops},
            {"first_ns", jsonIndex(b.first_ns)},
            {"last_ns", jsonIndex(b.last_ns)},
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
            {"overlap_ratio", jsonNumber(b.overlap_ratio)},
            {"streams", streams},
            {"categories_seed", categoriesJson(r.seed_categories)},
            {"categories_corrected", categoriesJson(r.corrected_categories)},
            {"iteration_s", toJson(r.iteration_s)}};
  j["throttle_slowdown"] = r.slowdown
                               ? json{{"throttled_compute_ns", r.slowdown->throttled_compute_ns},
                                      {"lost_ns", r.slowdown->lost_ns}}
                               : json(nullptr);
  if (r.energy) {
    const EnergyAttribution& e = *r.energy;
    json phases = json::object();
    for (const auto& [name, v] : e.phases_j)
      phases[name] = jsonNumber(v);
    j["energy"] = {{"gpu", e.gpu},
                   {"total_j", jsonNumber(e.total_j)},
                   {"compute_j", jsonNumber(e.compute_j)},
                   {"exposed_comm_j", jsonNumber(e.exposed_comm_j)},
                   {"exposed_memory_j", jsonNumber(e.exposed_memory_j)},
                   {"other_events_j", jsonNumber(e.other_events_j)},
                   {"idle_j", jsonNumber(e.idle_j)},
                   {"outside_span_j", jsonNumber(e.outside_span_j)},
                   {"per_iteration_j", toJson(e.iteration_j)},
                   {"phases_j", phases},
                   {"sample_interval_s", jsonNumber(e.sample_interval_s)}};
  } else {
    j["energy"] = nullptr;
  }
  return j;
}

// The top kernels and the kernel categories of all ranks.
// The energy ledger of one rank (docs/analyses.md, "Energy ledger").
json ledgerJson(const EnergyLedger& l) {
  json j;
  j["rank"] = l.rank;
  j["gpu"] = l.gpu;
  j["sensor"] = {{"kind", l.sensor.average ? "average" : "instant"},
                 {"window_s", l.sensor.window_s},
                 {"period_s", jsonNumber(l.sensor.period_s)},
                 {"lag_s", l.sensor.lag_s},
                 {"assumed", l.sensor.assumed},
                 {"basis", l.sensor.basis}};
  j["sample_interval_s"] = jsonNumber(l.sample_interval_s);
  j["resolution_s"] = jsonNumber(l.resolution_s);
  if (!l.missing.empty()) {
    j["missing"] = l.missing;
    j["iterations"] = json::array();
    return j;
  }
  json power = json::object();
  for (size_t p = 0; p < kLedgerParts; ++p)
    power[ledgerPartId(static_cast<LedgerPart>(p))] = {{"w", jsonNumber(l.power_w[p])},
                                                       {"se_w", jsonNumber(l.power_se_w[p])}};
  j["class_power"] = power;
  j["residual_w"] = jsonNumber(l.residual_w);
  j["timing_s"] = jsonNumber(l.timing_s);
  j["samples"] = l.samples;
  json its = json::array();
  for (const LedgerIteration& it : l.iterations) {
    json row = {{"step", it.step}, {"start_ns", it.start_ns}, {"end_ns", it.end_ns}};
    for (size_t p = 0; p < kLedgerParts; ++p) {
      const LedgerValue& v = it.parts[p];
      row[ledgerPartId(static_cast<LedgerPart>(p))] = {
          {"s", v.s}, {"j", jsonNumber(v.j)}, {"u_j", jsonNumber(v.u_j)}, {"resolved", v.resolved}};
    }
    row["total_j"] = jsonNumber(it.total_j);
    row["total_u_j"] = jsonNumber(it.total_u_j);
    json phases = json::object();
    for (size_t q = 0; q < kLedgerPhases; ++q) {
      const LedgerValue& v = it.phases[q];
      phases[ledgerPhaseId(static_cast<LedgerPhase>(q))] = {
          {"s", v.s}, {"j", jsonNumber(v.j)}, {"u_j", jsonNumber(v.u_j)}, {"resolved", v.resolved}};
    }
    row["phases"] = std::move(phases);
    row["samples"] = it.samples;
    its.push_back(std::move(row));
  }
  j["iterations"] = std::move(its);
  return j;
}

json ledgersJson(const RunAnalysis& a) {
  json out = json::array();
  for (const RankAnalysis& r : a.ranks)
    if (r.ledger) out.push_back(ledgerJson(*r.ledger));
  return out;
}

json kernelsJson(const RunAnalysis& a) {
  json top = json::array();
  for (const KernelStat& k : a.top_kernels)
    top.push_back({{"name", k.name_text},
                   {"class", k.others ? json(nullptr) : json(kernelClassName(k.cls))},
                   {"others", k.others},
                   {"count", k.count},
                   {"total_ns", k.total_ns},
                   {"mean_ns", jsonNumber(k.mean_ns())},
                   {"min_ns", k.min_ns},
                   {"max_ns", k.max_ns}});
  return {{"top", top},
          {"categories_seed", categoriesJson(a.seed_categories)},
          {"categories_corrected", categoriesJson(a.corrected_categories)}};
}

// Step times and their spread across ranks.
json iterationsJson(const RunAnalysis& a) {
  json steps = json::array();
  for (const StepTime& s : a.iterations.steps)
    steps.push_back({{"step", s.step},
                     {"start_ns", s.start_ns},
                     {"end_ns", s.end_ns},
                     {"duration_s", s.duration_s},
                     {"rank_spread_s", s.rank_spread_s},
                     {"ranks", s.ranks}});
  return {{"step_s", toJson(a.iterations.step_s)},
          {"rank_spread_s", toJson(a.iterations.rank_spread_s)},
          {"steps", steps}};
}

// Collective arrival skew: per rank, the straggler and its condition, the worst instances.
json stragglersJson(const RunAnalysis& a) {
  const StragglerReport& s = a.stragglers;
  json sr = json::array();
  for (const RankArrivals& r : s.ranks)
    sr.push_back({{"rank", r.rank},
                  {"gpu", jsonIndex(r.gpu)},
                  {"instances", r.instances},
                  {"last", r.last},
                  {"caused_skew_ns", r.caused_skew_ns}});
  json worst = json::array();
  for (const StragglerSample& w : s.worst)
    worst.push_back({{"at_ns", w.at_ns},
                     {"skew_ns", w.skew_ns},
                     {"collective", w.collective},
                     {"clock_mhz", jsonNumber(w.clock_mhz)},
                     {"temp_c", jsonNumber(w.temp_c)},
                     {"power_w", jsonNumber(w.power_w)}});
  auto cond = [](const GpuCondition& c) {
    return json{{"clock_mhz", jsonNumber(c.clock_mhz)},
                {"temp_c", jsonNumber(c.temp_c)},
                {"power_w", jsonNumber(c.power_w)},
                {"throttled_fraction", jsonNumber(c.throttled_fraction)}};
  };
  return {{"instances", s.instances},
          {"skew_ns",
           {{"mean", jsonNumber(s.skew_mean_ns)},
            {"p50", jsonNumber(s.skew_p50_ns)},
            {"p99", jsonNumber(s.skew_p99_ns)},
            {"max", jsonNumber(s.skew_max_ns)}}},
          {"ranks", sr},
          {"straggler_rank", jsonIndex(s.straggler_rank)},
          {"straggler_gpu", jsonIndex(s.straggler_gpu)},
          {"straggler_share", jsonNumber(s.straggler_share)},
          {"straggler_condition", s.straggler_rank >= 0 ? cond(s.straggler) : json(nullptr)},
          {"others_condition", s.straggler_rank >= 0 ? cond(s.others) : json(nullptr)},
          {"likely_cause", s.likely_cause.empty() ? json(nullptr) : json(s.likely_cause)},
          {"worst", worst}};
}

// Imbalance across nodes, slots and inside packages.
json spatialJson(const RunAnalysis& a) {
  const SpatialImbalance& sp = a.spatial;
  json nodes = json::array();
  for (const NodeImbalance& n : sp.nodes) {
    json g = json::array();
    for (const SlotCondition& c : n.gpus)
      g.push_back({{"gpu", c.gpu},
                   {"slot", c.slot},
                   {"temp_mean_c", jsonNumber(c.temp_mean_c)},
                   {"temp_max_c", jsonNumber(c.temp_max_c)},
                   {"clock_mean_mhz", jsonNumber(c.clock_mean_mhz)},
                   {"power_mean_w", jsonNumber(c.power_mean_w)}});
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
                     {"temp_mean_c", jsonNumber(sl.temp_mean_c)},
                     {"clock_mean_mhz", jsonNumber(sl.clock_mean_mhz)},
                     {"power_mean_w", jsonNumber(sl.power_mean_w)}});
  json packages = json::array();
  for (const PackageSkew& p : sp.packages) {
    json temps = json::array();
    for (double v : p.temp_mean_c)
      temps.push_back(jsonNumber(v));
    packages.push_back({{"domain", p.domain},
                        {"name", p.name},
                        {"node", p.node},
                        {"gpus", p.gpus},
                        {"temp_mean_c", temps},
                        {"temp_skew_c", jsonNumber(p.temp_skew_c)},
                        {"temp_max_skew_c", jsonNumber(p.temp_max_skew_c)},
                        {"clock_skew_mhz", jsonNumber(p.clock_skew_mhz)},
                        {"hottest_gpu", jsonIndex(p.hottest_gpu)}});
  }
  return {{"nodes", nodes},
          {"slots", slots},
          {"temp_mean_c", toJson(sp.temp_mean_c)},
          {"clock_mean_mhz", toJson(sp.clock_mean_mhz)},
          {"power_mean_w", toJson(sp.power_mean_w)},
          {"hottest_slot", jsonIndex(sp.hottest_slot)},
          {"coolest_slot", jsonIndex(sp.coolest_slot)},
          {"hottest_vs_coolest_pct", jsonNumber(sp.hottest_vs_coolest_pct)},
          {"packages", packages},
          {"package_temp_skew_c", toJson(sp.package_temp_skew_c)},
          {"package_clock_skew_mhz", toJson(sp.package_clock_skew_mhz)}};
}

// Validity, gaps, counter problems and quality notes.
json dataQualityJson(const RunAnalysis& a) {
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
                   {"total", jsonNumber(c.total)}});
  json notes = json::array();
  for (const QualityNote& n : q.notes)
    notes.push_back({{"severity", n.severity == Severity::Warning ? "warning" : "info"},
                     {"code", n.code},
                     {"subject", n.subject},
                     {"message", n.message}});
  return {{"valid", q.valid},
          {"invalid_reasons", q.invalid_reasons},
          {"expected_gpus", jsonIndex(q.expected_gpus)},
          {"gpus_without_power", q.gpus_without_power},
          {"gpus_without_own_power", q.gpus_without_own_power},
          {"domains_without_power", q.domains_without_power},
          {"has_telemetry", q.has_telemetry},
          {"ranks_without_kernels", q.ranks_without_kernels},
          {"gaps", gaps},
          {"gap_s", q.gap_s},
          {"counters", ctr},
          {"notes", notes}};
}

}  // namespace

json toJson(const MetricStats& s) {
  return {{"mean", jsonNumber(s.mean)}, {"min", jsonNumber(s.min)},
          {"max", jsonNumber(s.max)},   {"samples", s.samples},
          {"covered_s", s.covered_s},   {"integral", jsonNumber(s.integral)}};
}

json categoriesJson(const CategoryTimes& t) {
  json j = json::object();
  for (size_t c = 0; c < kKernelCategoryCount; ++c)
    j[std::string(kernelCategoryId(static_cast<KernelCategory>(c)))] = t[c];
  return j;
}

json toJson(const RunTotals& t) {
  json byReason = json::object();
  for (size_t c = 0; c < kThrottleCauseCount; ++c)
    byReason[std::string(throttleCauseId(static_cast<ThrottleCause>(c)))] =
        jsonNumber(t.by_cause_fraction[c]);
  return {{"energy_j", jsonNumber(t.energy_j)},
          {"mean_power_w", jsonNumber(t.mean_power_w)},
          {"peak_power_w", jsonNumber(t.peak_power_w)},
          {"busy_s", t.busy_s},
          {"throttled_s", t.throttled_s},
          {"throttled_fraction", jsonNumber(t.throttled_fraction)},
          {"throttled_by_reason", byReason},
          {"iterations", t.iterations},
          {"iteration_time_s", jsonNumber(t.iteration_time_s)},
          {"iteration_window_s", jsonNumber(t.iteration_window_s)},
          {"iteration_window_power_w", jsonNumber(t.iteration_window_power_w)},
          {"throughput_samples_per_s", jsonNumber(t.throughput_samples_per_s)},
          {"tokens_per_s", jsonNumber(t.tokens_per_s)},
          {"energy_per_iteration_j", jsonNumber(t.energy_per_iteration_j)},
          {"energy_per_token_j", jsonNumber(t.energy_per_token_j)},
          {"efficiency_samples_per_s_mj", jsonNumber(t.efficiency_samples_per_s_mj)},
          {"domains", t.domains},
          {"domain_gpus", t.domain_gpus},
          {"domain_kind", t.domain_kind.empty() ? json(nullptr) : json(t.domain_kind)},
          {"mean_power_per_device_w", jsonNumber(t.mean_power_per_device_w)}};
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
  j["totals"] = toJson(a.totals);
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

  j["kernels"] = kernelsJson(a);
  j["iterations"] = iterationsJson(a);
  j["stragglers"] = stragglersJson(a);
  j["cost"] = toJson(a.cost);
  j["energy_ledger"] = ledgersJson(a);
  j["spatial"] = spatialJson(a);
  j["histograms"] = {{"power_w", histogram(a.power_hist, "seconds")},
                     {"dpdt_w_per_s", histogram(a.ramp_hist, "segments")}};

  j["data_quality"] = dataQualityJson(a);
  j["notes"] = a.notes;
  return j;
}

json toJson(const ThrottleCost& c, bool perIteration) {
  if (!c.unknown.empty()) return {{"unknown", c.unknown}};
  auto byCause = [](const std::array<double, kThrottleCauseCount>& v) {
    json o = json::object();
    for (size_t k = 0; k < kThrottleCauseCount; ++k)
      if (v[k] > 0) o[std::string(throttleCauseId(static_cast<ThrottleCause>(k)))] = v[k];
    return o;
  };
  json gpus = json::array();
  for (const GpuCost& g : c.by_gpu)
    gpus.push_back({{"gpu", g.gpu},
                    {"slot", g.slot < 0 ? json(nullptr) : json(g.slot)},
                    {"step_s", g.step_s},
                    {"share", jsonNumber(g.share)},
                    {"own_s", g.own_s},
                    {"cause", g.cause.empty() ? json(nullptr) : json(g.cause)},
                    {"unthrottled_step_s", jsonNumber(g.unthrottled_step_s)}});
  json j = {{"step_s", c.step_s},
            {"mean_step_s", c.mean_step_s},
            {"fraction", jsonNumber(c.fraction)},
            {"uncertainty_s", jsonNumber(c.uncertainty_s)},
            {"energy_j", jsonNumber(c.energy_j)},
            {"method", c.method},
            {"iterations", c.iterations},
            {"traced_iterations", c.traced_iterations},
            {"traced_steps", c.tracedSteps()},
            {"telemetry_scale", jsonNumber(c.telemetry_scale)},
            {"telemetry_scale_source", c.telemetry_scale_source},
            {"by_reason", byCause(c.by_cause_s)},
            {"by_gpu", gpus}};
  if (perIteration) {
    json its = json::array();
    for (const IterationCost& ic : c.per_iteration) {
      json late = json::array();
      for (double v : ic.rank_late_s)
        late.push_back(jsonNumber(v));
      its.push_back({{"step", ic.step},
                     {"start_ns", ic.start_ns},
                     {"end_ns", ic.end_ns},
                     {"step_s", ic.step_s},
                     {"method", costMethodId(ic.method)},
                     {"cost_s", ic.cost_s},
                     {"energy_j", jsonNumber(ic.energy_j)},
                     {"by_reason", byCause(ic.by_cause_s)},
                     {"gpu_cost_s", ic.gpu_cost_s},
                     {"gpu_own_s", ic.gpu_own_s},
                     {"rank_late_s", late}});
    }
    j["per_iteration"] = its;
    j["gpus"] = c.gpus;
    j["ranks"] = c.ranks;
  }
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
          jsonNumber(g.by_cause_fraction[c]);
    gpus.push_back({{"gpu", g.gpu},
                    {"energy_j", jsonNumber(g.energy_j)},
                    {"metrics", metrics},
                    {"throttled_fraction", jsonNumber(g.throttled_fraction)},
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
