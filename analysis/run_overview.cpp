// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/run_overview.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace wl {

RunOverview overview(const RunFile& run) {
  RunOverview o;
  o.info = run.info();
  o.duration_s = static_cast<double>(o.info.end_ns - o.info.start_ns) * 1e-9;
  o.quality = run.quality();

  const SeriesGroupMeta& tel = run.series(SeriesKind::Gpu);
  std::vector<std::vector<uint64_t>> counts;
  for (const MetricInfo& m : tel.metrics) {
    o.metrics.push_back(m.id);
    counts.push_back(run.validCounts(SeriesKind::Gpu, m.id));
  }
  o.domains = run.domains();
  for (const GpuInfo& g : run.gpus()) {
    GpuOverview go;
    go.gpu = g;
    go.samples = tel.samples(static_cast<size_t>(g.id));
    for (size_t m = 0; m < tel.metrics.size(); ++m)
      go.metrics.emplace_back(tel.metrics[m].id, counts[m][static_cast<size_t>(g.id)]);
    o.gpus.push_back(std::move(go));
  }

  std::map<int, RankOverview> ranks;
  for (const RankInfo& r : run.ranks()) {
    RankOverview& ro = ranks[r.rank];
    ro.rank = r.rank;
    ro.gpu = r.gpu;
  }
  for (const TrackInfo& t : run.tracks()) {
    RankOverview& ro = ranks[t.rank];
    ro.rank = t.rank;
    ro.kernels += t.count;
    ro.comm_kernels += t.classCount[static_cast<size_t>(KernelClass::Communication)];
    ro.compute_kernels += t.classCount[static_cast<size_t>(KernelClass::Compute)];
    ro.memory_ops += t.classCount[static_cast<size_t>(KernelClass::Memory)];
    ++ro.streams;
  }
  for (const Iteration& it : run.iterations()) {
    RankOverview& ro = ranks[it.rank];
    ro.rank = it.rank;
    ++ro.iterations;
  }
  for (auto& [rank, ro] : ranks)
    o.ranks.push_back(ro);
  return o;
}

nlohmann::json toJson(const ParallelConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  auto put = [&](const char* k, const std::optional<int>& v) {
    if (v) j[k] = *v;
  };
  put("tp", c.tp), put("pp", c.pp), put("dp", c.dp), put("ep", c.ep), put("cp", c.cp);
  put("vpp", c.vpp), put("mbs", c.mbs), put("gbs", c.gbs), put("seq_len", c.seq_len);
  put("nodes", c.nodes), put("gpus_per_node", c.gpus_per_node);
  if (c.recompute) j["recompute"] = *c.recompute;
  if (c.overlap) j["overlap"] = *c.overlap;
  return j;
}

namespace {

nlohmann::json finiteOrNull(float v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json toJson(const PowerDomain& d) {
  using nlohmann::json;
  return {{"id", d.id},
          {"kind", d.kind},
          {"name", d.name},
          {"node", d.node},
          {"gpus", d.gpus},
          {"power_gpu", d.power_gpu >= 0 ? json(d.power_gpu) : json(nullptr)},
          {"power_limit_w", finiteOrNull(d.power_limit_w)}};
}

nlohmann::json toJson(const RunOverview& o) {
  using nlohmann::json;
  json j;
  j["name"] = o.info.name;
  j["platform"] = o.info.platform;
  j["model"] = o.info.model;
  j["simulated"] = o.info.simulated;
  j["start_ns"] = o.info.start_ns;
  j["end_ns"] = o.info.end_ns;
  j["duration_s"] = o.duration_s;
  j["sample_interval_s"] = o.info.sample_interval_s;
  j["config"] = toJson(o.info.config);
  j["metrics"] = o.metrics;
  json sources = json::array();
  for (const SourceInfo& s : o.info.sources)
    sources.push_back(
        {{"path", s.path}, {"format", s.format}, {"offset_ns", s.offset_ns}, {"detail", s.detail}});
  j["sources"] = sources;
  const std::vector<int> domainOf = domainOfGpus(o.domains, o.gpus.size());
  json gpus = json::array();
  for (const GpuOverview& g : o.gpus) {
    json metrics = json::object();
    for (const auto& [id, n] : g.metrics)
      metrics[id] = n;
    const auto gi = static_cast<size_t>(g.gpu.id);
    const int dom = gi < domainOf.size() ? domainOf[gi] : -1;
    gpus.push_back({{"id", g.gpu.id},
                    {"node", g.gpu.node},
                    {"local_index", g.gpu.local_index},
                    {"rank", g.gpu.rank},
                    {"slot", g.gpu.slot},
                    {"hostname", g.gpu.hostname},
                    {"device_name", g.gpu.device_name},
                    {"power_limit_w", finiteOrNull(g.gpu.power_limit_w)},
                    {"max_sm_clock_mhz", finiteOrNull(g.gpu.max_sm_clock_mhz)},
                    {"samples", g.samples},
                    {"metrics", metrics},
                    {"package", g.gpu.package},
                    {"domain", dom >= 0 ? json(dom) : json(nullptr)},
                    {"power_role", dom >= 0 ? json(powerRoleId(powerRole(
                                                  o.domains[static_cast<size_t>(dom)], g.gpu.id)))
                                            : json(nullptr)}});
  }
  j["gpus"] = gpus;
  json domains = json::array();
  for (const PowerDomain& d : o.domains)
    domains.push_back(toJson(d));
  j["domains"] = domains;
  json ranks = json::array();
  for (const RankOverview& r : o.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"gpu", r.gpu},
                     {"kernels", r.kernels},
                     {"comm_kernels", r.comm_kernels},
                     {"compute_kernels", r.compute_kernels},
                     {"memory_ops", r.memory_ops},
                     {"streams", r.streams},
                     {"iterations", r.iterations}});
  j["ranks"] = ranks;
  json q = json::array();
  for (const QualityNote& n : o.quality)
    q.push_back({{"severity", n.severity == Severity::Warning ? "warning" : "info"},
                 {"code", n.code},
                 {"subject", n.subject},
                 {"message", n.message}});
  j["data_quality"] = q;
  return j;
}

}  // namespace wl
