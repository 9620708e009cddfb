// SPDX-License-Identifier: GPL-3.0-or-later
// Configuration and data differences of two runs, their warnings and legend labels
// (config_diff.h).
#include "analysis/compare/config_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "analysis/compare/iteration_compare.h"
#include "analysis/projected_run.h"
#include "analysis/report_numbers.h"
#include "analysis/run_alignment.h"

namespace wl {
namespace {

constexpr const char* kUnknown = "unknown";

std::string yesNo(bool v) {
  return v ? "yes" : "no";
}

// Where a run's numbers come from: "simulated", "projected" (a what-if projection of a measured
// run, analysis/projected_run.h) or "measured".
std::string origin(const RunInfo& i) {
  if (i.simulated) return "simulated";
  return isProjectedRun(i) ? "projected" : "measured";
}

// The warning when the runs' origins differ: which side a model sets, and which model.
std::string originWarning(const std::string& oa, const std::string& ob) {
  const bool aProjected = oa == "projected", bProjected = ob == "projected";
  if (!aProjected && !bProjected)  // simulated and measured
    return fmt::format(
        "{} is simulated and {} measured: the simulator's model, not the hardware, sets {}'s "
        "numbers.",
        oa == "simulated" ? "A" : "B", oa == "simulated" ? "B" : "A",
        oa == "simulated" ? "A" : "B");
  const char* p = aProjected ? "A" : "B";
  const char* other = aProjected ? "B" : "A";
  const std::string& otherOrigin = aProjected ? ob : oa;
  if (otherOrigin == "simulated")
    return fmt::format(
        "{} is projected and {} simulated: the what-if model calibrated on a run sets {}'s "
        "numbers and the simulator {}'s; neither side is a measurement.",
        p, other, p, other);
  return fmt::format(
      "{} is projected and {} measured: the what-if model calibrated on a run, not the hardware, "
      "sets {}'s numbers.",
      p, other, p);
}

// One configuration key: its label, how it reads, and its token in a legend label.
struct ConfigKey {
  const char* key;
  const char* label;
  std::function<std::optional<std::string>(const RunInfo&, const RunFile&)> value;
  std::function<std::string(const std::string&)> token;
};

std::function<std::optional<std::string>(const RunInfo&, const RunFile&)> intKey(
    std::optional<int> ParallelConfig::*m) {
  return [m](const RunInfo& i, const RunFile&) -> std::optional<std::string> {
    const auto& v = i.config.*m;
    return v ? std::optional(std::to_string(*v)) : std::nullopt;
  };
}

std::function<std::optional<std::string>(const RunInfo&, const RunFile&)> boolKey(
    std::optional<bool> ParallelConfig::*m) {
  return [m](const RunInfo& i, const RunFile&) -> std::optional<std::string> {
    const auto& v = i.config.*m;
    return v ? std::optional(yesNo(*v)) : std::nullopt;
  };
}

std::function<std::string(const std::string&)> prefixed(std::string prefix) {
  return [prefix](const std::string& v) { return prefix + v; };
}

std::function<std::string(const std::string&)> flag(std::string name) {
  return [name](const std::string& v) { return v == "yes" ? name : "no-" + name; };
}

std::string asIs(const std::string& s) {
  return s;
}

// The power limit of every GPU when they agree ("700 W"), "mixed" otherwise.
std::optional<std::string> powerLimit(const RunFile& run) {
  std::optional<float> limit;
  for (const GpuInfo& g : run.gpus()) {
    if (!std::isfinite(g.power_limit_w)) return std::nullopt;
    if (limit && *limit != g.power_limit_w) return "mixed";
    limit = g.power_limit_w;
  }
  if (!limit) return std::nullopt;
  return fmt::format("{:g} W", *limit);
}

const std::vector<ConfigKey>& configKeys() {
  static const std::vector<ConfigKey> kKeys{
      {"platform", "platform",
       [](const RunInfo& i, const RunFile&) {
         return i.platform.empty() ? std::nullopt : std::optional(i.platform);
       },
       asIs},
      {"model", "model",
       [](const RunInfo& i, const RunFile&) {
         return i.model.empty() ? std::nullopt : std::optional(i.model);
       },
       asIs},
      {"tp", "tensor parallel", intKey(&ParallelConfig::tp), prefixed("tp")},
      {"pp", "pipeline parallel", intKey(&ParallelConfig::pp), prefixed("pp")},
      {"dp", "data parallel", intKey(&ParallelConfig::dp), prefixed("dp")},
      {"ep", "expert parallel", intKey(&ParallelConfig::ep), prefixed("ep")},
      {"cp", "context parallel", intKey(&ParallelConfig::cp), prefixed("cp")},
      {"vpp", "virtual pipeline stages", intKey(&ParallelConfig::vpp), prefixed("vpp")},
      {"mbs", "microbatch", intKey(&ParallelConfig::mbs), prefixed("mbs")},
      {"gbs", "global batch", intKey(&ParallelConfig::gbs), prefixed("gbs")},
      {"seq_len", "sequence length", intKey(&ParallelConfig::seq_len), prefixed("seq")},
      {"recompute", "activation recompute", boolKey(&ParallelConfig::recompute), flag("recompute")},
      {"overlap", "communication overlap", boolKey(&ParallelConfig::overlap), flag("overlap")},
      {"nodes", "nodes", intKey(&ParallelConfig::nodes), prefixed("nodes")},
      {"gpus_per_node", "GPUs per node", intKey(&ParallelConfig::gpus_per_node), prefixed("gpn")},
      {"power_limit", "power limit", [](const RunInfo&, const RunFile& r) { return powerLimit(r); },
       [](const std::string& v) {
         std::string t = v;
         std::erase(t, ' ');
         return t;
       }},
  };
  return kKeys;
}

double samplingHz(const RunFile& run) {
  std::vector<int64_t> iv;
  for (int64_t v : run.series().medianIntervalNs)
    if (v > 0) iv.push_back(v);
  if (iv.empty())
    return run.info().sample_interval_s > 0 ? 1.0 / run.info().sample_interval_s : kNaN;
  std::nth_element(iv.begin(), iv.begin() + static_cast<std::ptrdiff_t>(iv.size() / 2), iv.end());
  return 1e9 / static_cast<double>(iv[iv.size() / 2]);
}

std::set<int> tracedRanks(const RunFile& run) {
  std::set<int> out;
  for (const TrackInfo& t : run.tracks())
    if (t.count > 0) out.insert(t.rank);
  return out;
}

std::set<std::string> metricIds(const RunFile& run) {
  std::set<std::string> out;
  for (const MetricInfo& m : run.series().metrics)
    out.insert(m.id);
  return out;
}

std::string runName(const RunFile& r) {
  return r.info().name.empty() ? r.path().stem().string() : r.info().name;
}

}  // namespace

RunDifferences runDifferences(const RunFile& a, const RunFile& b) {
  RunDifferences d;
  std::vector<std::string> tokA, tokB;
  for (const ConfigKey& k : configKeys()) {
    const auto va = k.value(a.info(), a), vb = k.value(b.info(), b);
    if (va == vb) continue;
    d.config.push_back({k.key, k.label, va.value_or(kUnknown), vb.value_or(kUnknown)});
    tokA.push_back(va ? k.token(*va) : std::string(k.key) + "?");
    tokB.push_back(vb ? k.token(*vb) : std::string(k.key) + "?");
  }
  auto join = [](const std::vector<std::string>& t) {
    std::string s;
    for (const std::string& x : t)
      s += (s.empty() ? "" : " ") + x;
    return s;
  };
  d.label_a = join(tokA);
  d.label_b = join(tokB);
  if (d.label_a.empty() || d.label_a == d.label_b) {
    d.label_a = runName(a), d.label_b = runName(b);
    if (d.label_a == d.label_b)
      d.label_a = a.path().filename().string(), d.label_b = b.path().filename().string();
    if (d.label_a == d.label_b) d.label_a = "A", d.label_b = "B";
  }

  const RunInfo &ia = a.info(), &ib = b.info();
  auto data = [&](const char* key, const char* label, const std::string& x, const std::string& y) {
    if (x != y) d.data.push_back({key, label, x, y});
  };
  const size_t ga = a.gpus().size(), gb = b.gpus().size();
  data("gpus", "GPUs", std::to_string(ga), std::to_string(gb));
  const double ha = samplingHz(a), hb = samplingHz(b);
  auto hz = [](double h) { return std::isfinite(h) ? fmt::format("{:.3g} Hz", h) : kUnknown; };
  // Rates within 10 % of each other read as equal (jitter moves the median interval).
  if (!(std::isfinite(ha) && std::isfinite(hb) && std::fabs(ha - hb) <= 0.1 * std::max(ha, hb)))
    data("sampling_hz", "sampling rate", hz(ha), hz(hb));
  const auto ma = metricIds(a), mb = metricIds(b);
  auto list = [](const std::set<std::string>& s) {
    std::string out;
    for (const std::string& x : s)
      out += (out.empty() ? "" : ", ") + x;
    return out.empty() ? std::string("none") : out;
  };
  data("metrics", "GPU metrics", list(ma), list(mb));
  const bool ra = a.series().hasThrottle, rb = b.series().hasThrottle;
  data("throttle_reasons", "throttle reasons recorded", yesNo(ra), yesNo(rb));
  const auto ta = tracedRanks(a), tb = tracedRanks(b);
  data("traced_ranks", "traced ranks", compactList(ta), compactList(tb));
  // With a projected run, its origin (a projection is not simulated, nor measured).
  const std::string oa = origin(ia), ob = origin(ib);
  if (oa == "projected" || ob == "projected")
    data("origin", "origin", oa, ob);
  else
    data("simulated", "simulated", yesNo(ia.simulated), yesNo(ib.simulated));
  const size_t sa = completedSteps(a).size(), sb = completedSteps(b).size();
  data("steps", "completed steps", std::to_string(sa), std::to_string(sb));

  // Warnings: where a difference makes part of the comparison unfair.
  auto& w = d.warnings;
  if (!ia.model.empty() && !ib.model.empty() && ia.model != ib.model)
    w.push_back(fmt::format(
        "The runs train different models ({} and {}): step time and energy per step compare "
        "different work; compare energy per token.",
        ia.model, ib.model));
  const auto& ca = ia.config;
  const auto& cb = ib.config;
  if (ca.gbs && ca.seq_len && cb.gbs && cb.seq_len &&
      static_cast<int64_t>(*ca.gbs) * *ca.seq_len != static_cast<int64_t>(*cb.gbs) * *cb.seq_len)
    w.push_back(fmt::format(
        "Each step processes {} tokens in A and {} in B: compare energy per token, not step time "
        "or energy per step.",
        static_cast<int64_t>(*ca.gbs) * *ca.seq_len, static_cast<int64_t>(*cb.gbs) * *cb.seq_len));
  if (ga != gb)
    w.push_back(fmt::format(
        "A has {} GPUs and B {}: energy and throttled time are sums over different numbers of "
        "GPUs, and only paired GPUs get difference rows.",
        ga, gb));
  if (std::isfinite(ha) && std::isfinite(hb) && std::max(ha, hb) > 1.5 * std::min(ha, hb))
    w.push_back(fmt::format(
        "A samples at {} and B at {}: peaks and the A − B rows are limited by the coarser rate "
        "(short spikes show only in the finer run).",
        hz(ha), hz(hb)));
  for (const std::string& m : ma)
    if (!mb.count(m))
      w.push_back(
          fmt::format("{} is only in A: no difference or typical-iteration row for it.", m));
  for (const std::string& m : mb)
    if (!ma.count(m))
      w.push_back(
          fmt::format("{} is only in B: no difference or typical-iteration row for it.", m));
  if (ra != rb)
    w.push_back(fmt::format(
        "Only {} records throttle reasons: {}'s causes are inferred (thermal, power cap or "
        "unknown), so the reasons compare recorded with inferred causes.",
        ra ? "A" : "B", ra ? "B" : "A"));
  if (ta.empty() != tb.empty())
    w.push_back(fmt::format(
        "{} has no kernel trace: its exposed communication and bubble time are unknown.",
        ta.empty() ? "A" : "B"));
  else if (!ta.empty() && ta != tb)
    w.push_back(fmt::format(
        "Exposed communication and bubble time are means over different traced ranks (A: {}; "
        "B: {}).",
        compactList(ta), compactList(tb)));
  if (oa != ob) w.push_back(originWarning(oa, ob));
  if (commonSteps(a, b).empty())
    w.push_back(
        "The runs share no step number: no per-iteration comparison and no iteration warp (B is "
        "aligned at the starts).");
  return d;
}

}  // namespace wl
