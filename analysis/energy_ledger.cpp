// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/energy_ledger.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/energy_attribution.h"
#include "analysis/kernel_breakdown.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/format/run_file.h"

namespace wl {
namespace {

constexpr size_t P = kLedgerParts;

struct Segment {
  int64_t start, end;
  size_t part;
};

// Solves a x = b (P x P, Gaussian elimination with pivoting); false if singular.
bool solve(std::array<std::array<double, P>, P> a, std::array<double, P>& b) {
  for (size_t c = 0; c < P; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < P; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    if (std::abs(a[p][c]) < 1e-12) return false;
    std::swap(a[p], a[c]), std::swap(b[p], b[c]);
    for (size_t r = 0; r < P; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k < P; ++k)
        a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (size_t c = 0; c < P; ++c)
    b[c] /= a[c][c];
  return true;
}

// The share of each part in the window [a, b] of the segments (a point when b == a); false when
// the window is not wholly inside them.
bool shares(const std::vector<Segment>& segs, int64_t a, int64_t b, std::array<double, P>& x) {
  x.fill(0.0);
  auto it = std::upper_bound(segs.begin(), segs.end(), a,
                             [](int64_t t, const Segment& s) { return t < s.end; });
  if (b <= a) {
    if (it == segs.end() || it->start > a) return false;
    x[it->part] = 1.0;
    return true;
  }
  int64_t covered = 0;
  for (; it != segs.end() && it->start < b; ++it) {
    const int64_t o = std::min(b, it->end) - std::max(a, it->start);
    if (o > 0) x[it->part] += static_cast<double>(o), covered += o;
  }
  if (covered < b - a) return false;
  for (double& v : x)
    v /= static_cast<double>(b - a);
  return true;
}

}  // namespace

const char* ledgerPartId(LedgerPart p) {
  switch (p) {
    case LedgerPart::Compute:
      return "compute";
    case LedgerPart::Communication:
      return "communication";
    case LedgerPart::Idle:
      return "idle";
    case LedgerPart::Optimizer:
      return "optimizer";
  }
  return "?";
}

const char* ledgerPhaseId(LedgerPhase p) {
  switch (p) {
    case LedgerPhase::Forward:
      return "forward";
    case LedgerPhase::Backward:
      return "backward";
    case LedgerPhase::Optimizer:
      return "optimizer";
  }
  return "?";
}

LedgerSensor ledgerSensorOf(const std::vector<SensorInfo>& sensors) {
  LedgerSensor s;
  for (const SensorInfo& i : sensors) {
    if (i.metric != metric::kPower) continue;
    s.average = i.kind == SensorKind::Average && i.window_s > 0;
    s.window_s = s.average ? i.window_s : 0.0;
    s.period_s = i.period_s;
    s.lag_s = std::isfinite(i.lag_s) ? i.lag_s : 0.0;
    s.assumed = i.assumed;
    s.basis = i.basis;
    return s;
  }
  s.basis = "no power sensor entry: an instantaneous reading assumed";
  return s;
}

std::array<IntervalSet, kLedgerParts> ledgerParts(const LedgerInput& in, const Iteration& it) {
  const IntervalSet whole = {{it.start_ns, it.end_ns}};
  std::array<IntervalSet, P> part;
  part[3] = clip(in.optimizer, it.start_ns, it.end_ns);
  part[0] = subtract(clip(in.nonCommunication, it.start_ns, it.end_ns), part[3]);
  part[1] = subtract(subtract(clip(in.communication, it.start_ns, it.end_ns), part[3]), part[0]);
  part[2] = subtract(subtract(subtract(whole, part[0]), part[1]), part[3]);
  return part;
}

LedgerInput ledgerInputFrom(const Samples& power, double sampleIntervalS,
                            const std::vector<SensorInfo>& sensors, const ClassUnions& unions,
                            const std::vector<std::pair<std::string, IntervalSet>>& phases,
                            std::vector<Iteration> iterations, TimeRange range) {
  LedgerInput in;
  in.t_ns = power.t_ns, in.power_w = power.v;
  in.sample_interval_s = sampleIntervalS;
  in.sensor = ledgerSensorOf(sensors);
  in.nonCommunication = unite(unite(unions.compute, unions.memory), unions.other);
  in.communication = unions.communication;
  for (const auto& [name, set] : phases) {
    if (name == "optimizer") in.optimizer = set;
    if (name == "forward") in.forward = set;
    if (name == "backward") in.backward = set;
  }
  in.iterations = std::move(iterations);
  in.range = range;
  return in;
}

LedgerInput ledgerInputOf(const RunFile& run, int rank, TimeRange range, int64_t telemetryShiftNs) {
  std::vector<std::vector<KernelEvent>> events;
  for (size_t t = 0; t < run.tracks().size(); ++t)
    if (run.tracks()[t].rank == rank)
      events.push_back(run.readAllKernels(t, RunFile::kKernelClass | RunFile::kKernelKind));
  std::vector<std::span<const KernelEvent>> spans(events.begin(), events.end());
  std::vector<Iteration> its;
  for (const Iteration& it : run.iterations())
    if (it.rank == rank) its.push_back(it);
  int gpu = -1;
  for (const RankInfo& r : run.ranks())
    if (r.rank == rank) gpu = r.gpu;
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  Samples power;
  double interval = kNaN;
  if (gpu >= 0 && static_cast<size_t>(gpu) < meta.entities && meta.metric(metric::kPower)) {
    power = run.readAllSamples(SeriesKind::Gpu, static_cast<size_t>(gpu), metric::kPower);
    interval = static_cast<double>(meta.medianIntervalNs[static_cast<size_t>(gpu)]) * 1e-9;
  }
  LedgerInput in = ledgerInputFrom(power, interval, run.sensors(), classUnions(spans, range),
                                   phasesOfRank(run, rank), std::move(its), range);
  in.telemetry_shift_ns = telemetryShiftNs;
  return in;
}

namespace {

// A power sample as the sensor saw the parts: the share of each in its window [a, b].
struct Row {
  std::array<double, P> x;
  double y;
  int64_t a, b;
};

// The analysed iterations (into L), split into parts laid out as segments sorted by start.
std::vector<Segment> ledgerIterations(const LedgerInput& in, EnergyLedger& L) {
  std::vector<Iteration> its;
  for (const Iteration& it : in.iterations)
    if (it.start_ns >= in.range.t0 && it.end_ns <= in.range.t1 && it.end_ns > it.start_ns)
      its.push_back(it);
  std::sort(its.begin(), its.end(),
            [](const Iteration& a, const Iteration& b) { return a.start_ns < b.start_ns; });
  std::vector<Segment> segs;
  int64_t covered = INT64_MIN;
  for (const Iteration& it : its) {
    if (it.start_ns < covered) continue;  // overlapping iterations: the first counts
    // A step always launches kernels: an iteration without any was not traced, and what ran in
    // it is unknown (not idle).
    if (clip(in.nonCommunication, it.start_ns, it.end_ns).empty() &&
        clip(in.communication, it.start_ns, it.end_ns).empty())
      continue;
    covered = it.end_ns;
    const std::array<IntervalSet, P> part = ledgerParts(in, it);
    LedgerIteration li;
    li.step = it.step, li.start_ns = it.start_ns, li.end_ns = it.end_ns;
    const size_t first = segs.size();
    for (size_t p = 0; p < P; ++p) {
      li.parts[p].s = static_cast<double>(totalLength(part[p])) * 1e-9;
      for (const Interval& v : part[p])
        segs.push_back({v.start, v.end, p});
    }
    const std::array<const IntervalSet*, kLedgerPhases> phases = {&in.forward, &in.backward,
                                                                  &in.optimizer};
    for (size_t q = 0; q < kLedgerPhases; ++q) {
      const IntervalSet ph = clip(*phases[q], it.start_ns, it.end_ns);
      double s = 0;
      for (size_t p = 0; p < P; ++p) {
        li.phase_part_s[q][p] = static_cast<double>(totalLength(intersect(ph, part[p]))) * 1e-9;
        s += li.phase_part_s[q][p];
      }
      li.phases[q].s = s;
    }
    std::sort(segs.begin() + static_cast<std::ptrdiff_t>(first), segs.end(),
              [](const Segment& a, const Segment& b) { return a.start < b.start; });
    L.iterations.push_back(li);
  }
  return segs;
}

// The power samples whose window lies wholly inside the iterations.
// `extraShiftNs` moves the samples further (the timing term of ledgerTiming()).
std::vector<Row> sensorRows(const LedgerInput& in, const std::vector<Segment>& segs,
                            int64_t extraShiftNs = 0) {
  const int64_t windowNs = std::llround(in.sensor.window_s * 1e9);
  const int64_t lagNs = std::llround(in.sensor.lag_s * 1e9);
  std::vector<Row> rows;
  for (size_t k = 0; k < in.t_ns.size() && k < in.power_w.size(); ++k) {
    if (!std::isfinite(in.power_w[k])) continue;
    const int64_t b = in.t_ns[k] + in.telemetry_shift_ns + extraShiftNs - lagNs, a = b - windowNs;
    Row r{{}, in.power_w[k], a, b};
    if (shares(segs, a, b, r.x)) rows.push_back(r);
  }
  return rows;
}

// The class powers fitted to the rows by least squares (parts no sample saw left out of `use`),
// into L with their standard errors and the residual; the fitted value of each row. An empty
// string, or why the fit cannot be made.
struct ClassFit {
  std::array<bool, P> use{};
  std::array<double, P> coef{};
  std::vector<double> fitted;
};

std::string fitClassPowers(const std::vector<Row>& rows, EnergyLedger& L, ClassFit& f) {
  std::array<double, P> seen{};
  for (const Row& r : rows)
    for (size_t p = 0; p < P; ++p)
      seen[p] += r.x[p];
  size_t k = 0;
  for (size_t p = 0; p < P; ++p)
    if ((f.use[p] = seen[p] > 1e-6)) ++k;
  if (rows.size() < k + 2 || k == 0) return "too few power samples inside the traced iterations";
  std::array<std::array<double, P>, P> xx{};
  std::array<double, P> xy{};
  for (const Row& r : rows)
    for (size_t i = 0; i < P; ++i) {
      for (size_t j = 0; j < P; ++j)
        xx[i][j] += r.x[i] * r.x[j];
      xy[i] += r.x[i] * r.y;
    }
  for (size_t i = 0; i < P; ++i)
    if (!f.use[i]) {
      for (size_t j = 0; j < P; ++j)
        xx[i][j] = xx[j][i] = 0;
      xx[i][i] = 1, xy[i] = 0;
    }
  f.coef = xy;
  if (!solve(xx, f.coef)) return "the parts cannot be told apart in the power samples";
  double rss = 0;
  f.fitted.assign(rows.size(), 0.0);
  for (size_t r = 0; r < rows.size(); ++r) {
    double v = 0;
    for (size_t p = 0; p < P; ++p)
      v += f.coef[p] * rows[r].x[p];
    f.fitted[r] = v;
    rss += (rows[r].y - v) * (rows[r].y - v);
  }
  const double sigma2 = rss / static_cast<double>(rows.size() - k);
  L.residual_w = std::sqrt(sigma2);
  L.samples = rows.size();
  for (size_t p = 0; p < P; ++p) {
    if (!f.use[p]) continue;
    std::array<double, P> e{};
    e[p] = 1.0;
    if (solve(xx, e)) L.power_se_w[p] = std::sqrt(std::max(0.0, sigma2 * e[p]));
    L.power_w[p] = f.coef[p];
  }
  return {};
}

// Per iteration, the class powers scaled by what the samples that saw it say: sy / sf over the
// rows whose window reaches into it (counted into li.samples when `count`).
double iterationScale(const std::vector<Row>& rows, const std::vector<double>& fitted,
                      LedgerIteration& li, size_t& r0, bool count) {
  while (r0 < rows.size() && rows[r0].b < li.start_ns)
    ++r0;
  double sy = 0, sf = 0;
  size_t n = 0;
  for (size_t r = r0; r < rows.size() && rows[r].a < li.end_ns; ++r)
    sy += rows[r].y, sf += fitted[r], ++n;
  if (count) li.samples += n;
  return n > 0 && sf > 0 ? sy / sf : 1.0;
}

// An iteration's phases in joules from the parts' powers: a resolved phase (as long as the
// sensor resolves) gets the parts' power uncertainties weighted by its time in each, summed; a
// shorter one the GPU's whole power range.
void ledgerPhases(const ClassFit& f, const EnergyLedger& L, double scale, double spread, double lo,
                  double hi, LedgerIteration& li) {
  for (size_t q = 0; q < kLedgerPhases; ++q) {
    LedgerValue& v = li.phases[q];
    if (v.s <= 0) {  // no annotation of the phase: unknown, not zero
      v.j = kNaN, v.u_j = kNaN, v.resolved = false;
      continue;
    }
    double j = 0, u = 0;
    for (size_t p = 0; p < P; ++p) {
      const double t = li.phase_part_s[q][p];
      if (t <= 0) continue;
      if (!f.use[p]) j = kNaN;
      const double w = std::clamp(scale * f.coef[p], lo, hi);
      j += w * t;
      u += 2.0 * t * std::hypot(std::hypot(L.power_se_w[p], L.residual_w), spread * w);
    }
    v.j = j;
    v.resolved = v.s >= L.resolution_s;
    if (!v.resolved) {
      const double w = j / v.s;
      u = v.s * std::max(w - lo, hi - w);
    }
    v.u_j = std::isfinite(j) ? u : kNaN;
  }
}

// Each iteration's parts in joules with their uncertainties, from the fit.
void ledgerJoules(const std::vector<Row>& rows, const ClassFit& f, EnergyLedger& L) {
  // The range of power the GPU drew: what the samples and the class powers span, widened by the
  // residual scatter (an averaged reading hides the extremes it averages over).
  double lo = INFINITY, hi = -INFINITY;
  for (const Row& r : rows)
    lo = std::min(lo, r.y), hi = std::max(hi, r.y);
  for (size_t p = 0; p < P; ++p)
    if (f.use[p]) lo = std::min(lo, f.coef[p]), hi = std::max(hi, f.coef[p]);
  lo = std::max(0.0, lo - 2 * L.residual_w), hi += 2 * L.residual_w;
  L.power_range_w = {lo, hi};

  // How much the scale varies between iterations says how much a class's power does, which the
  // residual of an averaging sensor hides: its spread joins the resolved parts' uncertainty.
  std::vector<double> scales(L.iterations.size(), 1.0);
  size_t q0 = 0;
  for (size_t i = 0; i < L.iterations.size(); ++i) {
    LedgerIteration probe = L.iterations[i];
    scales[i] = iterationScale(rows, f.fitted, probe, q0, false);
  }
  double spread = 0;
  if (scales.size() > 1) {
    double m = 0;
    for (double k : scales)
      m += k;
    m /= static_cast<double>(scales.size());
    for (double k : scales)
      spread += (k - m) * (k - m);
    spread = std::sqrt(spread / static_cast<double>(scales.size() - 1));
  }
  size_t r0 = 0;
  for (LedgerIteration& li : L.iterations) {
    const double scale = iterationScale(rows, f.fitted, li, r0, true);
    double total = 0, u2 = 0;
    for (size_t p = 0; p < P; ++p) {
      LedgerValue& v = li.parts[p];
      if (v.s <= 0) {
        v.j = 0, v.u_j = 0, v.resolved = true;
        continue;
      }
      if (!f.use[p]) {  // never seen by a sample: unknown, and so is the total
        total = u2 = kNaN;
        continue;
      }
      const double w = std::clamp(scale * f.coef[p], lo, hi);
      v.j = w * v.s;
      v.resolved = v.s >= L.resolution_s;
      // Resolved: the class power's standard error and the samples' scatter about the model, two
      // of each. Not resolved: no sample saw the part apart from the rest, so it may have drawn
      // anything in the GPU's range.
      v.u_j = v.resolved
                  ? 2.0 * v.s * std::hypot(std::hypot(L.power_se_w[p], L.residual_w), spread * w)
                  : v.s * std::max(w - lo, hi - w);
      total += v.j, u2 += v.u_j * v.u_j;
    }
    li.total_j = total;
    li.total_u_j = std::sqrt(u2);
    ledgerPhases(f, L, scale, spread, lo, hi, li);
  }
}

// The timing term of the resolved parts: the samples are on the traces' clock only to within
// timing_s (an alignment is an estimate), and a part that fills most of an averaging window takes
// its power from where the window's edges fall. The ledger is computed again with the samples
// moved by -timing_s, -timing_s / 2, +timing_s / 2 and +timing_s; the largest change of a
// resolved part's energy joins its uncertainty in quadrature (and the iteration's total).
void ledgerTiming(const LedgerInput& in, const std::vector<Segment>& segs, EnergyLedger& L) {
  if (!(L.timing_s > 0)) return;
  const size_t n = L.iterations.size();
  std::vector<std::array<double, P>> dev(n, std::array<double, P>{});
  std::vector<std::array<double, kLedgerPhases>> devPhase(n, std::array<double, kLedgerPhases>{});
  for (double f : {-1.0, -0.5, 0.5, 1.0}) {
    EnergyLedger M = L;
    const std::vector<Row> rows = sensorRows(in, segs, std::llround(f * L.timing_s * 1e9));
    ClassFit fit;
    if (!fitClassPowers(rows, M, fit).empty()) continue;
    ledgerJoules(rows, fit, M);
    for (size_t i = 0; i < n; ++i) {
      for (size_t p = 0; p < P; ++p) {
        const double d = std::abs(M.iterations[i].parts[p].j - L.iterations[i].parts[p].j);
        if (std::isfinite(d)) dev[i][p] = std::max(dev[i][p], d);
      }
      for (size_t q = 0; q < kLedgerPhases; ++q) {
        const double d = std::abs(M.iterations[i].phases[q].j - L.iterations[i].phases[q].j);
        if (std::isfinite(d)) devPhase[i][q] = std::max(devPhase[i][q], d);
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    LedgerIteration& li = L.iterations[i];
    double u2 = 0;
    for (size_t p = 0; p < P; ++p) {
      LedgerValue& v = li.parts[p];
      if (v.s > 0 && v.resolved && std::isfinite(v.j)) v.u_j = std::hypot(v.u_j, dev[i][p]);
      u2 += v.u_j * v.u_j;
    }
    if (std::isfinite(li.total_j)) li.total_u_j = std::sqrt(u2);
    for (size_t q = 0; q < kLedgerPhases; ++q) {
      LedgerValue& v = li.phases[q];
      if (v.s > 0 && v.resolved && std::isfinite(v.j)) v.u_j = std::hypot(v.u_j, devPhase[i][q]);
    }
  }
}

}  // namespace

double ledgerTimingS(double sampleIntervalS) {
  return std::isfinite(sampleIntervalS) ? std::max(0.005, sampleIntervalS / 4) : 0.005;
}

EnergyLedger energyLedger(const LedgerInput& in) {
  EnergyLedger L;
  L.sensor = in.sensor;
  L.sample_interval_s = in.sample_interval_s;
  L.power_w.fill(kNaN);
  L.power_se_w.fill(kNaN);
  double res = in.sensor.window_s;
  if (std::isfinite(in.sample_interval_s)) res = std::max(res, in.sample_interval_s);
  if (std::isfinite(in.sensor.period_s)) res = std::max(res, in.sensor.period_s);
  L.resolution_s = res;
  const std::vector<Segment> segs = ledgerIterations(in, L);
  if (L.iterations.empty()) {
    L.missing = "no whole iteration in the range";
    return L;
  }
  const std::vector<Row> rows = sensorRows(in, segs);
  ClassFit fit;
  if (std::string why = fitClassPowers(rows, L, fit); !why.empty()) {
    L.missing = std::move(why);
    L.iterations.clear();
    return L;
  }
  ledgerJoules(rows, fit, L);
  L.timing_s = ledgerTimingS(in.sample_interval_s);
  ledgerTiming(in, segs, L);
  return L;
}

}  // namespace wl
