// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/throttle_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "analysis/iterations.h"
#include "analysis/report_numbers.h"
#include "analysis/run_analysis.h"

namespace wl {
namespace {

constexpr uint16_t kUnknownBit = 1u << static_cast<unsigned>(ThrottleCause::Unknown);

// One GPU's clock loss over time: the limited segments, in time order.
struct LossSeg {
  int64_t start = 0, end = 0;
  double loss = 0.0;    // 1 - clock / reference
  double busy = 1.0;    // utilization / 100 (or 1)
  uint16_t causes = 0;  // without Unknown
};
using LossTimeline = std::vector<LossSeg>;

LossTimeline lossTimeline(const GpuThrottle& g) {
  LossTimeline out;
  if (!g.has_clock || !(g.reference_clock_mhz > 0)) return out;
  for (const ThrottleSegment& s : g.segments) {
    const auto causes = static_cast<uint16_t>(s.causes & ~kUnknownBit);
    if (causes == 0 || s.end_ns <= s.start_ns) continue;
    const double loss = 1.0 - static_cast<double>(s.clock_mhz) / g.reference_clock_mhz;
    if (!(loss > 0)) continue;
    out.push_back({s.start_ns, s.end_ns, loss, static_cast<double>(s.busy), causes});
  }
  return out;
}

// Adds amount split equally over the cause bits.
void addByCause(std::array<double, kThrottleCauseCount>& to, uint16_t causes, double amount) {
  const int n = std::popcount(static_cast<unsigned>(causes));
  if (n == 0) return;
  for (size_t k = 0; k < kThrottleCauseCount; ++k)
    if (causes & (1u << k)) to[k] += amount / n;
}

// Integral of loss (x busy when withBusy) over [a, b), seconds, with its split by cause.
double integrateLoss(const LossTimeline& tl, int64_t a, int64_t b, bool withBusy,
                     std::array<double, kThrottleCauseCount>* byCause) {
  if (tl.empty() || b <= a) return 0.0;
  auto it = std::upper_bound(tl.begin(), tl.end(), a,
                             [](int64_t t, const LossSeg& s) { return t < s.end; });
  double total = 0.0;
  for (; it != tl.end() && it->start < b; ++it) {
    const int64_t lo = std::max(a, it->start), hi = std::min(b, it->end);
    if (hi <= lo) continue;
    const double v = static_cast<double>(hi - lo) * 1e-9 * it->loss * (withBusy ? it->busy : 1.0);
    total += v;
    if (byCause) addByCause(*byCause, it->causes, v);
  }
  return total;
}

// Who a lead came from: per analysed GPU index (sparse) and per cause.
struct Composition {
  std::vector<std::pair<int, double>> gpu;
  std::array<double, kThrottleCauseCount> cause{};

  void add(int g, double v, const std::array<double, kThrottleCauseCount>& c) {
    auto it = std::find_if(gpu.begin(), gpu.end(), [&](const auto& p) { return p.first == g; });
    if (it == gpu.end())
      gpu.emplace_back(g, v);
    else
      it->second += v;
    for (size_t k = 0; k < kThrottleCauseCount; ++k)
      cause[k] += c[k];
  }
  Composition scaled(double f) const {
    Composition out = *this;
    for (auto& p : out.gpu)
      p.second *= f;
    for (double& c : out.cause)
      c *= f;
    return out;
  }
};

struct ReplayEvent {
  int64_t start = 0;
  int rank = 0;           // index into the analysed ranks
  int32_t instance = -1;  // collective instance within the iteration, -1 for none
  double saving = 0.0;    // seconds a compute kernel would save unthrottled
  std::array<double, kThrottleCauseCount> cause{};  // the saving by cause
};

struct ReplayResult {
  double cost_s = 0.0;
  Composition who;
  std::vector<double> late_s;
};

// The replay of one traced iteration (see the header). Only the savings of GPU index `only`
// count when only >= 0 (that GPU alone unthrottled); composition is tracked when only < 0.
ReplayResult replay(const std::vector<ReplayEvent>& events, const std::vector<int>& expected,
                    const std::vector<int>& rankGpu, const std::vector<int64_t>& rankEnd,
                    int64_t iterEnd, int only) {
  const size_t R = rankGpu.size();
  std::vector<double> lead(R, 0.0);
  std::vector<Composition> comp(only < 0 ? R : 0);
  struct Pending {
    std::vector<std::pair<int, int64_t>> arrivals;  // rank, start
    std::vector<double> leads;
  };
  std::unordered_map<int32_t, Pending> pending;
  ReplayResult out;
  out.late_s.assign(R, kNaN);
  for (const ReplayEvent& e : events) {
    const auto r = static_cast<size_t>(e.rank);
    if (e.saving > 0 && (only < 0 || rankGpu[r] == only)) {
      lead[r] += e.saving;
      if (only < 0) comp[r].add(rankGpu[r], e.saving, e.cause);
    }
    if (e.instance < 0) continue;
    Pending& p = pending[e.instance];
    p.arrivals.emplace_back(e.rank, e.start);
    p.leads.push_back(lead[r]);
    if (static_cast<int>(p.arrivals.size()) < expected[static_cast<size_t>(e.instance)]) continue;
    // The actual last arrival made the collective late: the lead after it is that rank's lead
    // less the slack to the latest arrival with leads (<= its lead), and comes from whoever made
    // that rank's lead.
    int64_t latest = INT64_MIN, earliest = INT64_MAX;
    double latestWithLead = -1e300;
    size_t last = 0;
    for (size_t i = 0; i < p.arrivals.size(); ++i) {
      if (p.arrivals[i].second > latest) latest = p.arrivals[i].second, last = i;
      earliest = std::min(earliest, p.arrivals[i].second);
      latestWithLead =
          std::max(latestWithLead, static_cast<double>(p.arrivals[i].second) - p.leads[i] * 1e9);
    }
    const double delta = std::max(0.0, (static_cast<double>(latest) - latestWithLead) * 1e-9);
    Composition c;
    if (only < 0) {
      const double ll = p.leads[last];
      c = ll > 0 ? comp[static_cast<size_t>(p.arrivals[last].first)].scaled(delta / ll)
                 : Composition{};
    }
    for (const auto& [m, start] : p.arrivals) {
      lead[static_cast<size_t>(m)] = delta;
      if (only < 0) comp[static_cast<size_t>(m)] = c;
      out.late_s[static_cast<size_t>(m)] = static_cast<double>(start - earliest) * 1e-9;
    }
    pending.erase(e.instance);
  }
  double latestWithLead = -1e300;
  size_t last = 0;
  for (size_t r = 0; r < R; ++r) {
    latestWithLead = std::max(latestWithLead, static_cast<double>(rankEnd[r]) - lead[r] * 1e9);
    if (rankEnd[r] > rankEnd[last]) last = r;
  }
  out.cost_s = std::max(0.0, (static_cast<double>(iterEnd) - latestWithLead) * 1e-9);
  if (only < 0 && lead[last] > 0)
    out.who = comp[last].scaled(std::min(1.0, out.cost_s / lead[last]));
  return out;
}

// Shapley values of the game v(S) = max over S of own: sorted descending o1 >= o2 >= ...,
// phi(j) = sum over i >= j of (o_i - o_{i+1}) / i.
std::vector<double> shapleyOfMax(const std::vector<double>& own) {
  std::vector<size_t> order(own.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return own[a] > own[b]; });
  std::vector<double> phi(own.size(), 0.0);
  double acc = 0.0;
  for (size_t i = order.size(); i-- > 0;) {
    const double next = i + 1 < order.size() ? own[order[i + 1]] : 0.0;
    acc += (own[order[i]] - next) / static_cast<double>(i + 1);
    phi[order[i]] = acc;
  }
  return phi;
}

// The least-squares slope of step time against the largest own lost time over the iterations:
// when the GPUs heat up (or cool down) during the run, how much of each second a GPU loses
// shows in the step time. Usable with at least kSlopeMinIterations iterations whose largest own
// loss spreads over at least 20 % of its mean (or 10 ms), and a slope known to +-50 %.
struct Slope {
  bool ok = false;
  double k = kNaN, se = kNaN;
};
constexpr size_t kSlopeMinIterations = 8;

Slope stepSlope(const std::vector<IterationCost>& its) {
  Slope out;
  const size_t n = its.size();
  if (n < kSlopeMinIterations) return out;
  std::vector<double> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = its[i].gpu_own_s.empty()
               ? 0.0
               : *std::max_element(its[i].gpu_own_s.begin(), its[i].gpu_own_s.end());
    y[i] = its[i].step_s;
  }
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i)
    sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  if (!(sxx > 0) || *hi - *lo < std::max(0.2 * mx, 0.01)) return out;
  out.k = sxy / sxx;
  double rss = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = y[i] - my - out.k * (x[i] - mx);
    rss += r * r;
  }
  out.se = std::sqrt(rss / static_cast<double>(n - 2) / sxx);
  out.ok = out.k > 0 && out.se < 0.5 * out.k;
  return out;
}

std::string dominantCause(const std::array<double, kThrottleCauseCount>& c) {
  size_t best = kThrottleCauseCount;
  for (size_t k = 0; k < kThrottleCauseCount; ++k)
    if (c[k] > 0 && (best == kThrottleCauseCount || c[k] > c[best])) best = k;
  return best == kThrottleCauseCount
             ? std::string()
             : std::string(throttleCauseId(static_cast<ThrottleCause>(best)));
}

}  // namespace

std::string_view costMethodId(CostMethod m) {
  return m == CostMethod::Traced ? "traced" : "telemetry";
}

std::string ThrottleCost::tracedSteps() const {
  std::string out;
  for (size_t i = 0; i < per_iteration.size();) {
    if (per_iteration[i].method != CostMethod::Traced) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < per_iteration.size() && per_iteration[j + 1].method == CostMethod::Traced &&
           per_iteration[j + 1].step == per_iteration[j].step + 1)
      ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", per_iteration[i].step)
                  : fmt::format("{}-{}", per_iteration[i].step, per_iteration[j].step);
    i = j + 1;
  }
  return out;
}

std::string costSecondsText(double s) {
  return std::fabs(s) >= 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.3f} s", s);
}

std::string costJoulesText(double j) {
  if (j >= 3.6e6) return fmt::format("{:.2f} kWh", j / 3.6e6);
  if (j >= 1e3) return fmt::format("{:.1f} kJ", j * 1e-3);
  return fmt::format("{:.0f} J", j);
}

std::string throttleCauseText(const std::string& id) {
  for (size_t k = 0; k < kThrottleCauseCount; ++k)
    if (throttleCauseId(static_cast<ThrottleCause>(k)) == id)
      return std::string(throttleCauseLabel(static_cast<ThrottleCause>(k)));
  return id;
}

std::string slotText(int slot) {
  if (slot < 0) return "";
  return slot == 0 ? "front slot" : fmt::format("slot {}, behind the front", slot);
}

std::vector<std::string> explainCost(const ThrottleCost& c) {
  std::vector<std::string> out;
  if (!c.unknown.empty()) {
    out.push_back(fmt::format("The cost of throttling is unknown: {}.", c.unknown));
    return out;
  }
  const std::string its = fmt::format("{} iteration{}", c.iterations, c.iterations == 1 ? "" : "s");
  if (!(c.step_s > 0)) {
    out.push_back(fmt::format(
        "Heat and power limits cost nothing measurable: no analysed GPU's clock was lowered by a "
        "power or thermal limit while busy in the {}.",
        its));
  } else {
    out.push_back(fmt::format(
        "Heat and power limits cost {:.1f} % of step time: {} of every {} step (+- {}){}, over {}.",
        100.0 * c.fraction, costSecondsText(c.step_s), costSecondsText(c.mean_step_s),
        costSecondsText(c.uncertainty_s),
        std::isfinite(c.energy_j)
            ? fmt::format(", {} drawn in the lost time", costJoulesText(c.energy_j))
            : std::string(),
        its));
    std::vector<std::pair<double, size_t>> reasons;
    for (size_t k = 0; k < kThrottleCauseCount; ++k)
      if (c.by_cause_s[k] > 0) reasons.emplace_back(c.by_cause_s[k], k);
    std::sort(reasons.rbegin(), reasons.rend());
    std::string r;
    for (const auto& [v, k] : reasons)
      r += fmt::format("{}{} {}", r.empty() ? "" : ", ",
                       throttleCauseLabel(static_cast<ThrottleCause>(k)), costSecondsText(v));
    if (!r.empty()) out.push_back(fmt::format("By reason, per step: {}.", r));
    for (size_t i = 0; i < c.by_gpu.size() && i < 3; ++i) {
      const GpuCost& g = c.by_gpu[i];
      if (!(g.share >= 0.1) && i > 0) break;
      if (!(g.step_s > 0)) break;
      std::string where = slotText(g.slot);
      if (!g.cause.empty()) where += (where.empty() ? "" : "; ") + throttleCauseText(g.cause);
      out.push_back(fmt::format(
          "GPU {}{} caused {:.0f} % of it{}.", g.gpu, where.empty() ? "" : " (" + where + ")",
          100.0 * g.share,
          std::isfinite(g.unthrottled_step_s)
              ? fmt::format("; with it alone unthrottled a step would take {} ({})",
                            costSecondsText(g.unthrottled_step_s),
                            c.mean_step_s - g.unthrottled_step_s >= 0.0005
                                ? "-" + costSecondsText(c.mean_step_s - g.unthrottled_step_s)
                                : std::string("no gain: another GPU would hold the step"))
              : std::string()));
    }
  }
  std::set<int> never;
  for (const GpuCost& g : c.by_gpu)
    if (!(g.own_s > 0)) never.insert(g.gpu);
  if (!never.empty() && never.size() < c.by_gpu.size())
    out.push_back(
        fmt::format("GPU{} {} never throttled.", never.size() == 1 ? "" : "s", compactList(never)));
  if (c.traced_iterations == c.iterations) {
    out.push_back(fmt::format(
        "Method: replayed from the kernel traces of {} (kernel durations at the clock they ran "
        "at, collectives matched across ranks).",
        c.iterations == 1 ? "the iteration" : "every iteration"));
  } else if (c.traced_iterations > 0) {
    out.push_back(fmt::format(
        "Method: replayed from the kernel traces of step{} {}; the {} untraced iteration{} "
        "estimated from telemetry (clock deficit x busy time x {:.2f}, the share the traced "
        "iterations put on the critical path).",
        c.traced_iterations == 1 ? "" : "s", c.tracedSteps(), c.iterations - c.traced_iterations,
        c.iterations - c.traced_iterations == 1 ? "" : "s", c.telemetry_scale));
  } else if (c.telemetry_scale_source == "step times") {
    out.push_back(fmt::format(
        "Method: estimated from telemetry, no iteration is traced on all analysed ranks: clock "
        "deficit x busy time x "
        "{:.2f}, the slope of step time against the largest lost time over the {} iterations.",
        c.telemetry_scale, c.iterations));
  } else {
    out.push_back(fmt::format(
        "Method: estimated from telemetry alone, no iteration is traced on all analysed ranks "
        "(clock deficit x busy "
        "time x {:.2f}, a prior for the share on the critical path): +- {:.0f} %.",
        c.telemetry_scale, 100.0 * kCostPriorUncertainty));
  }
  return out;
}

namespace {

// The estimate in its stages (see the header): what the run says about ranks, tracks and
// collectives; each traced iteration replayed; the telemetry estimate of the others; the totals.
class CostEstimator {
 public:
  CostEstimator(const RunFile& run, const std::vector<int>& gpus, const std::vector<int>& ranks,
                std::vector<LossTimeline> loss)
      : run_(run), G_(gpus.size()), R_(ranks.size()), loss_(std::move(loss)) {
    std::unordered_map<int, int> gpuIndex, rankIndex;
    for (size_t i = 0; i < G_; ++i)
      gpuIndex[gpus[i]] = static_cast<int>(i);
    for (size_t i = 0; i < R_; ++i)
      rankIndex[ranks[i]] = static_cast<int>(i);
    rankGpu_.assign(R_, -1);
    for (const RankInfo& ri : run.ranks())
      if (auto r = rankIndex.find(ri.rank); r != rankIndex.end())
        if (auto g = gpuIndex.find(ri.gpu); g != gpuIndex.end())
          rankGpu_[static_cast<size_t>(r->second)] = g->second;
    rankTracks_.resize(R_);
    for (size_t t = 0; t < run.tracks().size(); ++t)
      if (auto r = rankIndex.find(run.tracks()[t].rank); r != rankIndex.end())
        rankTracks_[static_cast<size_t>(r->second)].push_back(t);
    coll_.resize(run.tracks().size());
    window_.resize(run.tracks().size());
    // The replay's collectives: only keys (24 B each, not the table's 72), only for iterations.
    if (R_ > 0 && !run.iterations().empty()) {
      const std::vector<std::vector<CollectiveKey>> keys = run.collectiveKeysByTrack();
      for (size_t t = 0; t < keys.size() && t < coll_.size(); ++t)
        for (const CollectiveKey& k : keys[t])
          if (k.seq >= 0) coll_[t].push_back({k.event, {k.pg_name, k.seq}});
    }
    for (auto& v : coll_)
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const Iteration& it : run.iterations())
      if (auto r = rankIndex.find(it.rank); r != rankIndex.end())
        rankSpan_[{it.step, r->second}] = {it.start_ns, it.end_ns};
  }

  // The iteration's own losses, and its replay when every analysed rank is traced through it.
  void iteration(const StepTime& st, IterationCost& ic, std::vector<double>& gain,
                 std::array<double, kThrottleCauseCount>* ownCause) {
    ic.step = st.step;
    ic.start_ns = st.start_ns;
    ic.end_ns = st.end_ns;
    ic.step_s = st.duration_s;
    ic.gpu_own_s.assign(G_, 0.0);
    ic.gpu_cost_s.assign(G_, 0.0);
    ic.rank_late_s.assign(R_, kNaN);
    for (size_t g = 0; g < G_; ++g)
      ic.gpu_own_s[g] = integrateLoss(loss_[g], st.start_ns, st.end_ns, true, &ownCause[g]);
    const Work w = gather(st);
    if (!w.traced) return;
    ic.method = CostMethod::Traced;
    const ReplayResult rr = replay(w.events, w.expected, rankGpu_, w.rankEnd, st.end_ns, -1);
    ic.cost_s = rr.cost_s;
    ic.rank_late_s = rr.late_s;
    for (const auto& [g, v] : rr.who.gpu)
      ic.gpu_cost_s[static_cast<size_t>(g)] = v;
    ic.by_cause_s = rr.who.cause;
    // The GPUs of most own loss, each alone unthrottled.
    std::vector<size_t> order(G_);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return ic.gpu_own_s[a] > ic.gpu_own_s[b]; });
    gain.assign(G_, kNaN);
    for (size_t k = 0; k < std::min(G_, kCostProjectedGpus); ++k) {
      const size_t g = order[k];
      gain[g] = ic.gpu_own_s[g] > 0 ? replay(w.events, w.expected, rankGpu_, w.rankEnd, st.end_ns,
                                             static_cast<int>(g))
                                          .cost_s
                                    : 0.0;
    }
  }

 private:
  struct Work {
    std::vector<ReplayEvent> events;
    std::vector<int> expected;
    std::vector<int64_t> rankEnd;
    bool traced = false;
  };

  // The events of one rank in its span of the step, appended; false when its kernels do not
  // span enough of the step (or hold no compute kernel).
  bool gatherRank(size_t r, int64_t s, int64_t e, Work& w,
                  std::map<std::pair<uint32_t, int64_t>, int32_t>& instances) const {
    int64_t first = INT64_MAX, last = INT64_MIN;
    bool compute = false;
    for (size_t t : rankTracks_[r]) {
      const KernelSlice& ks = readAhead(t, s, e);
      const auto& cs = coll_[t];
      auto ci = cs.begin();
      // The track's events are sorted by start (docs/format.md): those that start in [s, e).
      const auto from =
          std::partition_point(ks.events.begin(), ks.events.end(),
                               [s](const KernelEvent& ev) { return ev.start_ns < s; });
      for (auto k = static_cast<size_t>(from - ks.events.begin()); k < ks.events.size(); ++k) {
        const KernelEvent& ev = ks.events[k];
        if (ev.start_ns >= e) break;
        first = std::min(first, ev.start_ns);
        last = std::max(last, ev.start_ns + ev.dur_ns);
        ReplayEvent re;
        re.start = ev.start_ns;
        re.rank = static_cast<int>(r);
        if (ev.cls == KernelClass::Compute) {
          compute = true;
          if (rankGpu_[r] >= 0)
            re.saving = integrateLoss(loss_[static_cast<size_t>(rankGpu_[r])], ev.start_ns,
                                      ev.start_ns + ev.dur_ns, false, &re.cause);
        }
        const size_t idx = ks.index[k];
        ci = std::lower_bound(ci, cs.end(), idx,
                              [](const auto& p, size_t i) { return p.first < i; });
        if (ci != cs.end() && ci->first == idx) {
          auto [pos, added] =
              instances.try_emplace(ci->second, static_cast<int32_t>(w.expected.size()));
          if (added) w.expected.push_back(0);
          ++w.expected[static_cast<size_t>(pos->second)];
          re.instance = pos->second;
        }
        w.events.push_back(re);
      }
    }
    return compute && last > first &&
           static_cast<double>(last - first) >= kTracedSpanFraction * static_cast<double>(e - s);
  }

  // The track's events over [s, e) and the next kReadAheadSpans spans of its length: the
  // iterations come in order of time, and a read per iteration inflated the same event chunks
  // again for each of the many iterations one chunk holds (the 1,024-GPU bench run in
  // docs/performance.md, "Followed up"). A window is one track's events of a few iterations.
  const KernelSlice& readAhead(size_t t, int64_t s, int64_t e) const {
    Window& w = window_[t];
    if (!w.read || s < w.t0 || e > w.t1) {
      w.t0 = s;
      const int64_t len = std::max<int64_t>(e - s, 1);
      w.t1 = e > INT64_MAX - kReadAheadSpans * len ? INT64_MAX : e + kReadAheadSpans * len;
      w.slice = run_.readKernels(t, w.t0, w.t1, RunFile::kKernelClass);
      w.read = true;
    }
    return w.slice;
  }

  Work gather(const StepTime& st) const {
    Work w;
    if (R_ == 0) return w;
    std::map<std::pair<uint32_t, int64_t>, int32_t> instances;
    w.rankEnd.assign(R_, st.end_ns);
    for (size_t r = 0; r < R_; ++r) {
      auto span = rankSpan_.find({st.step, static_cast<int>(r)});
      if (span == rankSpan_.end()) return {};
      const auto [s, e] = span->second;
      w.rankEnd[r] = e;
      if (!gatherRank(r, s, e, w, instances)) return {};
    }
    w.traced = true;
    std::stable_sort(w.events.begin(), w.events.end(),
                     [](const ReplayEvent& a, const ReplayEvent& b) { return a.start < b.start; });
    return w;
  }

  const RunFile& run_;
  size_t G_, R_;
  std::vector<LossTimeline> loss_;
  std::vector<int> rankGpu_;  // analysed GPU index of each analysed rank
  std::vector<std::vector<size_t>> rankTracks_;
  // Collective metadata per track, by event index: (pg name, seq).
  std::vector<std::vector<std::pair<size_t, std::pair<uint32_t, int64_t>>>> coll_;
  std::map<std::pair<int64_t, int>, std::pair<int64_t, int64_t>> rankSpan_;  // (step, rank)
  static constexpr int64_t kReadAheadSpans = 64;
  struct Window {
    bool read = false;
    int64_t t0 = 0, t1 = 0;
    KernelSlice slice;
  };
  mutable std::vector<Window> window_;  // per track: the events read ahead
};

// The untraced iterations: k x the largest own loss, split by the Shapley value of the max; the
// gain of unthrottling the slowest GPU alone. Returns the summed stated uncertainty.
double telemetryEstimate(ThrottleCost& out, std::vector<std::vector<double>>& gain,
                         const std::vector<std::array<double, kThrottleCauseCount>>& ownCause,
                         double tracedCost, double tracedTelemetry) {
  const size_t G = out.gpus.size();
  double k = kCostTelemetryPrior;
  out.telemetry_scale_source = "prior";
  double kRelativeError = kCostPriorUncertainty;
  if (tracedTelemetry > 0) {
    k = std::clamp(tracedCost / tracedTelemetry, 0.0, 1.0);
    out.telemetry_scale_source = "traced iterations";
    kRelativeError = kCostCalibratedUncertainty;
  } else if (const Slope fit = stepSlope(out.per_iteration); fit.ok) {
    k = std::clamp(fit.k, 0.0, 1.0);
    out.telemetry_scale_source = "step times";
    kRelativeError = std::max(kCostCalibratedUncertainty, fit.k > 0 ? fit.se / fit.k : 1.0);
  }
  out.telemetry_scale = k;
  double uncertainty = 0.0;
  for (size_t i = 0; i < out.per_iteration.size(); ++i) {
    IterationCost& ic = out.per_iteration[i];
    if (ic.method == CostMethod::Traced) {
      uncertainty += kCostTracedUncertainty * ic.cost_s;
      continue;
    }
    if (G == 0) continue;
    const auto top = static_cast<size_t>(
        std::max_element(ic.gpu_own_s.begin(), ic.gpu_own_s.end()) - ic.gpu_own_s.begin());
    double second = 0.0;
    for (size_t g = 0; g < G; ++g)
      if (g != top) second = std::max(second, ic.gpu_own_s[g]);
    ic.cost_s = k * ic.gpu_own_s[top];
    const std::vector<double> phi = shapleyOfMax(ic.gpu_own_s);
    gain[i].assign(G, 0.0);
    gain[i][top] = k * (ic.gpu_own_s[top] - second);
    for (size_t g = 0; g < G; ++g) {
      ic.gpu_cost_s[g] = k * phi[g];
      if (ic.gpu_own_s[g] > 0)
        for (size_t c = 0; c < kThrottleCauseCount; ++c)
          ic.by_cause_s[c] += k * phi[g] * ownCause[i * G + g][c] / ic.gpu_own_s[g];
    }
    uncertainty += kRelativeError * ic.cost_s;
  }
  return uncertainty;
}

// Means per iteration, the energy, and the ranked list of GPUs.
void totals(const RunFile& run, ThrottleCost& out, const std::vector<std::vector<double>>& gain,
            const std::vector<std::array<double, kThrottleCauseCount>>& ownCause, int threads) {
  const size_t N = out.per_iteration.size(), G = out.gpus.size();
  // Energy: the mean power of the analysed GPUs in each iteration x its cost.
  std::vector<TimeRange> windows;
  windows.reserve(out.per_iteration.size());
  for (const IterationCost& ic : out.per_iteration)
    windows.push_back({ic.start_ns, ic.end_ns});
  const std::vector<std::vector<double>> means =
      windowMeansOfWindows(run, "power_w", out.gpus, windows, size_t{1} << 20, nullptr, threads);
  for (size_t i = 0; i < out.per_iteration.size(); ++i) {
    IterationCost& ic = out.per_iteration[i];
    const std::vector<double>& p = means[i];
    double sum = 0.0;
    bool any = false;
    for (double v : p)
      if (std::isfinite(v)) sum += v, any = true;
    ic.energy_j = any ? sum * ic.cost_s : kNaN;
  }
  out.iterations = N;
  out.method = out.traced_iterations == N   ? "traced"
               : out.traced_iterations == 0 ? "telemetry"
                                            : "mixed";
  double stepSum = 0.0, costSum = 0.0, energy = 0.0;
  bool energyKnown = true;
  std::vector<double> gpuCost(G, 0.0), gpuOwn(G, 0.0), gainSum(G, 0.0);
  std::vector<size_t> gainN(G, 0);
  std::vector<std::array<double, kThrottleCauseCount>> gpuCause(G);
  for (size_t i = 0; i < N; ++i) {
    const IterationCost& ic = out.per_iteration[i];
    stepSum += ic.step_s;
    costSum += ic.cost_s;
    if (std::isfinite(ic.energy_j))
      energy += ic.energy_j;
    else
      energyKnown = false;
    for (size_t c = 0; c < kThrottleCauseCount; ++c)
      out.by_cause_s[c] += ic.by_cause_s[c];
    for (size_t g = 0; g < G; ++g) {
      gpuCost[g] += ic.gpu_cost_s[g];
      gpuOwn[g] += ic.gpu_own_s[g];
      if (g < gain[i].size() && std::isfinite(gain[i][g])) gainSum[g] += gain[i][g], ++gainN[g];
      for (size_t c = 0; c < kThrottleCauseCount; ++c)
        gpuCause[g][c] += ownCause[i * G + g][c];
    }
  }
  const auto n = static_cast<double>(N);
  out.mean_step_s = stepSum / n;
  out.step_s = costSum / n;
  out.fraction = out.mean_step_s > 0 ? out.step_s / out.mean_step_s : kNaN;
  out.energy_j = energyKnown ? energy : kNaN;
  for (double& c : out.by_cause_s)
    c /= n;
  for (size_t g = 0; g < G; ++g) {
    GpuCost gc;
    gc.gpu = out.gpus[g];
    gc.slot = run.gpus()[static_cast<size_t>(out.gpus[g])].slot;
    gc.step_s = gpuCost[g] / n;
    gc.share = costSum > 0 ? gpuCost[g] / costSum : kNaN;
    gc.own_s = gpuOwn[g] / n;
    gc.cause = dominantCause(gpuCause[g]);
    // Projected only where every iteration has a projection for it.
    if (gainN[g] == N) gc.unthrottled_step_s = out.mean_step_s - gainSum[g] / n;
    out.by_gpu.push_back(gc);
  }
  std::stable_sort(out.by_gpu.begin(), out.by_gpu.end(),
                   [](const GpuCost& a, const GpuCost& b) { return a.step_s > b.step_s; });
}

}  // namespace

ThrottleCost estimateThrottleCost(const RunFile& run, const std::vector<int>& gpus,
                                  const std::vector<int>& ranks, TimeRange range,
                                  const AnalysisOptions& options, const Progress& progress) {
  ThrottleCost out;
  out.gpus = gpus;
  out.ranks = ranks;
  const IterationStats its = analyzeIterations(run.iterations(), ranks, range);
  if (run.iterations().empty()) {
    // A telemetry-only import: the cost is seconds per step, and nothing says where steps are.
    out.unknown =
        "the run has no iterations (steps come from its kernel traces' ProfilerStep annotations "
        "or the simulator; a telemetry-only import has none)";
    return out;
  }
  if (its.steps.empty()) {
    out.unknown = "no whole iteration in the range";
    return out;
  }
  // Every busy sample below the reference clock, with its cause.
  AnalysisOptions o = options;
  o.clockThresholdFraction = 1.0;
  const std::vector<GpuThrottle> throttle = detectThrottle(run, gpus, range, o);
  if (std::none_of(throttle.begin(), throttle.end(),
                   [](const GpuThrottle& g) { return g.has_clock; })) {
    out.unknown = "no SM clock recorded";
    return out;
  }
  std::vector<LossTimeline> loss;
  for (const GpuThrottle& g : throttle)
    loss.push_back(lossTimeline(g));
  progress.report(0.2, "cost of throttling");

  const size_t N = its.steps.size(), G = gpus.size();
  CostEstimator est(run, gpus, ranks, std::move(loss));
  out.per_iteration.resize(N);
  std::vector<std::vector<double>> gain(N);  // per iteration, per GPU: the unthrottled gain
  std::vector<std::array<double, kThrottleCauseCount>> ownCause(N * G);
  double tracedCost = 0.0, tracedTelemetry = 0.0;
  for (size_t i = 0; i < N; ++i) {
    IterationCost& ic = out.per_iteration[i];
    est.iteration(its.steps[i], ic, gain[i], ownCause.data() + i * G);
    if (ic.method == CostMethod::Traced) {
      ++out.traced_iterations;
      tracedCost += ic.cost_s;
      if (G) tracedTelemetry += *std::max_element(ic.gpu_own_s.begin(), ic.gpu_own_s.end());
    }
    progress.report(0.2 + 0.7 * static_cast<double>(i + 1) / static_cast<double>(N),
                    "cost of throttling");
  }
  const double uncertainty = telemetryEstimate(out, gain, ownCause, tracedCost, tracedTelemetry);
  totals(run, out, gain, ownCause, options.threads);
  out.uncertainty_s = uncertainty / static_cast<double>(N);
  progress.report(1.0, "cost of throttling");
  return out;
}

}  // namespace wl
