// SPDX-License-Identifier: GPL-3.0-or-later
// wattline info RUN.h5 [--json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/projected_run.h"
#include "analysis/run_overview.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/time_format.h"
#include "loaders/format/run_file.h"

namespace wl::cli {
namespace {

std::string configText(const ParallelConfig& c) {
  std::string out;
  auto add = [&](const char* k, const std::optional<int>& v) {
    if (v) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, *v);
  };
  add("tp", c.tp), add("pp", c.pp), add("dp", c.dp), add("ep", c.ep), add("cp", c.cp);
  add("vpp", c.vpp), add("mbs", c.mbs), add("gbs", c.gbs), add("seq", c.seq_len);
  add("nodes", c.nodes), add("gpus/node", c.gpus_per_node);
  if (c.recompute)
    out += fmt::format("{}recompute={}", out.empty() ? "" : " ", *c.recompute ? "on" : "off");
  if (c.overlap)
    out += fmt::format("{}overlap={}", out.empty() ? "" : " ", *c.overlap ? "on" : "off");
  return out.empty() ? "(unknown)" : out;
}

// The power domains: one line when every GPU is a board of its own, else one line per domain.
std::string domainsText(const std::vector<PowerDomain>& domains) {
  const bool allBoards = std::all_of(domains.begin(), domains.end(),
                                     [](const PowerDomain& d) { return d.gpus.size() == 1; });
  if (allBoards) return fmt::format("\npower domains: {} (one board per GPU)\n", domains.size());
  std::string s = fmt::format("\npower domains ({})\n", domains.size());
  for (const PowerDomain& d : domains) {
    std::string gpus;
    for (int g : d.gpus)
      gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    s += fmt::format("  {:>4} {:<8} {:<12} node {:>3}  gpus {:<8} {:<22} cap {}\n", d.id, d.kind,
                     d.name, d.node, gpus,
                     d.power_gpu >= 0 ? fmt::format("power on gpu {}", d.power_gpu)
                                      : std::string("power = sum of its GPUs"),
                     std::isfinite(d.power_limit_w) ? fmt::format("{:.0f} W", d.power_limit_w)
                                                    : std::string("-"));
  }
  return s;
}

// A number of seconds, or null where unknown.
nlohmann::json seconds(double s) {
  return std::isfinite(s) ? nlohmann::json(s) : nlohmann::json(nullptr);
}

nlohmann::json sensorJson(const SensorInfo& s) {
  return {{"kind", sensorKindName(s.kind)},
          {"window_s", seconds(s.window_s)},
          {"period_s", seconds(s.period_s)},
          {"lag_s", seconds(s.lag_s)},
          {"assumed", s.assumed},
          {"basis", s.basis}};
}

// Sensor semantics in the JSON: sources[i].metrics[METRIC].sensor, and "sensors" as a list that
// also holds entries of no known source (source -1).
void addSensors(nlohmann::json& j, const std::vector<SensorInfo>& sensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const SensorInfo& s : sensors) {
    list.push_back({{"source", s.source}, {"metric", s.metric}, {"sensor", sensorJson(s)}});
    if (s.source >= 0 && static_cast<size_t>(s.source) < j["sources"].size())
      j["sources"][static_cast<size_t>(s.source)]["metrics"][s.metric]["sensor"] = sensorJson(s);
  }
  j["sensors"] = list;
}

std::string secondsText(double s) {
  return std::isfinite(s) ? fmt::format("{:g} s", s) : std::string("?");
}

// One line per source and metric: "power_w  average over 1 s, updates every 0.1 s (basis)".
std::string sensorsText(const std::vector<SensorInfo>& sensors) {
  if (sensors.empty()) return {};
  std::string s = "\nsensors (what each source's samples mean)\n";
  for (const SensorInfo& x : sensors) {
    std::string what(sensorKindName(x.kind));
    if (x.kind == SensorKind::Average) what += " over " + secondsText(x.window_s);
    if (std::isfinite(x.period_s)) what += ", updates every " + secondsText(x.period_s);
    if (!std::isfinite(x.lag_s) || x.lag_s != 0) what += ", lag " + secondsText(x.lag_s);
    s += fmt::format("  {:<7} {:<16} {}{} ({})\n",
                     x.source >= 0 ? fmt::format("src {}", x.source) : std::string("-"), x.metric,
                     what, x.assumed ? " [assumed]" : "", x.basis);
  }
  return s;
}

void printText(const RunOverview& o, const std::vector<SensorInfo>& sensors) {
  const RunInfo& i = o.info;
  std::string s;
  s += fmt::format("run        {}{}\n", i.name.empty() ? "(unnamed)" : i.name,
                   i.simulated         ? "  [SIMULATED]"
                   : isProjectedRun(i) ? "  [PROJECTED]"
                                       : "");
  s += fmt::format("platform   {}\n", i.platform.empty() ? "(unknown)" : i.platform);
  if (!i.model.empty()) s += fmt::format("model      {}\n", i.model);
  s += fmt::format("config     {}\n", configText(i.config));
  s += fmt::format("span       {} .. {} ({})\n", formatUtc(i.start_ns), formatUtc(i.end_ns),
                   formatDuration(i.end_ns - i.start_ns));
  for (const SourceInfo& src : i.sources)
    s += fmt::format("source     {} ({}{}{})\n", src.path, src.format,
                     src.detail.empty() ? "" : ", " + src.detail,
                     src.offset_ns ? ", offset " + formatDuration(src.offset_ns) : "");
  s += sensorsText(sensors);
  s += fmt::format("\nGPUs ({})\n", o.gpus.size());
  if (!o.gpus.empty()) {
    s += fmt::format("  {:>4} {:>4} {:>5} {:>5}  {:<22} {:>9}", "id", "node", "local", "rank",
                     "device", "samples");
    for (const std::string& m : o.metrics)
      s += fmt::format(" {:>14}", m);
    s += "\n";
    for (const GpuOverview& g : o.gpus) {
      s += fmt::format("  {:>4} {:>4} {:>5} {:>5}  {:<22} {:>9}", g.gpu.id, g.gpu.node,
                       g.gpu.local_index, g.gpu.rank, g.gpu.device_name.substr(0, 22), g.samples);
      for (const auto& [id, n] : g.metrics)
        s += fmt::format(" {:>14}", n);
      s += "\n";
    }
  }
  s += domainsText(o.domains);
  s += fmt::format("\nranks ({})\n", o.ranks.size());
  if (!o.ranks.empty()) {
    s += fmt::format("  {:>5} {:>4} {:>10} {:>10} {:>10} {:>7} {:>10}\n", "rank", "gpu", "kernels",
                     "comm", "memory", "streams", "iterations");
    for (const RankOverview& r : o.ranks)
      s += fmt::format("  {:>5} {:>4} {:>10} {:>10} {:>10} {:>7} {:>10}\n", r.rank, r.gpu,
                       r.kernels, r.comm_kernels, r.memory_ops, r.streams, r.iterations);
  }
  s += fmt::format("\ndata quality ({} notes)\n", o.quality.size());
  for (const QualityNote& n : o.quality)
    s += fmt::format("  {:<7} {}: {}\n", n.severity == Severity::Warning ? "warning" : "info",
                     n.subject, n.message);
  std::fputs(s.c_str(), stdout);
}

}  // namespace

int cmdInfo(const Args& args) {
  ArgParser p(
      "info",
      "Show what a run holds: metadata, configuration, what each source's sensors measure, "
      "GPUs with their samples per metric, ranks with their kernels, and data-quality notes.");
  p.flag("json", "print JSON instead of text").positionals("RUN.h5", "a Wattline run", 1, 1);
  if (!p.parse(args)) return 0;
  const auto run = RunFile::open(p.positional().front());
  const RunOverview o = overview(*run);
  const std::vector<SensorInfo> sensors = run->sensors();
  if (p.has("json")) {
    nlohmann::json j = toJson(o);
    addSensors(j, sensors);
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else {
    printText(o, sensors);
  }
  return 0;
}

}  // namespace wl::cli
