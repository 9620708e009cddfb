// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/calibration.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdint>
#include <map>
#include <numeric>

#include "analysis/gpu_series.h"
#include "analysis/kernel_categories.h"
#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/sensors.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_file.h"

namespace wl {
namespace {

constexpr double kNsPerS = 1e9;

// ---- small numerics ---------------------------------------------------------------------------

// Least squares through the normal equations with a tiny ridge (columns are few and scaled alike).
// Returns the coefficients and fills the residual sum of squares; empty when singular.
struct LeastSquares {
  size_t n = 0;
  std::vector<double> ata, atb;
  double yy = 0, ysum = 0;
  size_t rows = 0;
  explicit LeastSquares(size_t cols) : n(cols), ata(cols * cols, 0.0), atb(cols, 0.0) {}
  void add(const std::vector<double>& x, double y) {
    for (size_t i = 0; i < n; ++i) {
      atb[i] += x[i] * y;
      for (size_t j = 0; j < n; ++j)
        ata[i * n + j] += x[i] * x[j];
    }
    yy += y * y, ysum += y, ++rows;
  }
  std::vector<double> solve(double* sse) const {
    std::vector<double> a = ata, b = atb;
    for (size_t i = 0; i < n; ++i)
      a[i * n + i] += 1e-9 * (a[i * n + i] + 1.0);
    for (size_t c = 0; c < n; ++c) {
      size_t piv = c;
      for (size_t r = c + 1; r < n; ++r)
        if (std::fabs(a[r * n + c]) > std::fabs(a[piv * n + c])) piv = r;
      if (std::fabs(a[piv * n + c]) < 1e-300) return {};
      for (size_t k = 0; k < n; ++k)
        std::swap(a[c * n + k], a[piv * n + k]);
      std::swap(b[c], b[piv]);
      for (size_t r = 0; r < n; ++r) {
        if (r == c) continue;
        const double f = a[r * n + c] / a[c * n + c];
        for (size_t k = c; k < n; ++k)
          a[r * n + k] -= f * a[c * n + k];
        b[r] -= f * b[c];
      }
    }
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i)
      x[i] = b[i] / a[i * n + i];
    if (sse) {
      // ||y - Ax||^2 = y'y - 2 x'A'y + x'A'A x
      double s = yy;
      for (size_t i = 0; i < n; ++i) {
        s -= 2 * x[i] * atb[i];
        for (size_t j = 0; j < n; ++j)
          s += x[i] * ata[i * n + j] * x[j];
      }
      *sse = std::max(0.0, s);
    }
    return x;
  }
  FitQuality quality(double sse) const {
    FitQuality q;
    q.samples = rows;
    if (rows == 0) return q;
    const double r = static_cast<double>(rows);
    q.rmse = std::sqrt(sse / r);
    const double sst = yy - ysum * ysum / r;
    q.r2 = sst > 0 ? 1.0 - sse / sst : kNaN;
    return q;
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return kNaN;
  const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double s = 0;
  for (double x : v)
    s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

// Slope of y over x by ordinary least squares; NaN when x does not vary.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() < 3) return kNaN;
  LeastSquares ls(2);
  for (size_t i = 0; i < x.size(); ++i)
    ls.add({1.0, x[i]}, y[i]);
  const double n = static_cast<double>(x.size());
  const double mx = ls.atb.empty() ? 0 : ls.ata[1] / n, vx = ls.ata[3] / n - mx * mx;
  if (!(vx > 1e-9)) return kNaN;
  const std::vector<double> c = ls.solve(nullptr);
  return c.empty() ? kNaN : c[1];
}

// ---- inputs -----------------------------------------------------------------------------------

ActivityClass activityOf(KernelCategory c) {
  switch (c) {
    case KernelCategory::MatMul:
      return ActivityClass::Matmul;
    case KernelCategory::Attention:
      return ActivityClass::Attention;
    case KernelCategory::LayerNorm:
      return ActivityClass::Norm;
    case KernelCategory::AllReduce:
    case KernelCategory::ReduceScatter:
    case KernelCategory::AllGather:
    case KernelCategory::SendRecv:
    case KernelCategory::Communication:
      return ActivityClass::Communication;
    default:
      return ActivityClass::Elementwise;
  }
}

// Busy time of each activity class on one rank: the union of its kernels' intervals (s since the
// run start), with prefix sums for the busy time inside any window.
struct ClassBusy {
  std::vector<double> start, end, before;  // merged intervals; busy time before each
  double busyIn(double a, double b) const {
    if (start.empty() || b <= a) return 0;
    auto cum = [&](double t) {
      const auto it = std::upper_bound(start.begin(), start.end(), t);
      if (it == start.begin()) return 0.0;
      const size_t i = static_cast<size_t>(it - start.begin()) - 1;
      return before[i] + std::min(t, end[i]) - start[i];
    };
    return cum(b) - cum(a);
  }
};

ClassBusy mergeIntervals(std::vector<std::pair<double, double>> iv) {
  ClassBusy out;
  std::sort(iv.begin(), iv.end());
  double total = 0;
  for (const auto& [a, b] : iv) {
    if (!out.end.empty() && a <= out.end.back()) {
      if (b > out.end.back()) total += b - out.end.back(), out.end.back() = b;
      continue;
    }
    out.before.push_back(total);
    out.start.push_back(a);
    out.end.push_back(b);
    total += b - a;
  }
  return out;
}

struct RankTrace {
  std::array<ClassBusy, kActivityClassCount> busy;
  double first = kNaN, last = kNaN;  // traced span, s
};

// Kernel instances for the clock-response fit: per kernel name id, (fmax / f, duration s).
// A kernel's identity is its name with the names of the two kernels before it and the one after it
// on its stream:
// one cuBLAS kernel name serves GEMMs of several shapes, its neighbours tell them apart.
struct KernelKey {
  ActivityClass cls;
  uint32_t prev2, prev, name, next;
  auto operator<=>(const KernelKey&) const = default;
};
using Instances = std::map<KernelKey, std::vector<std::pair<double, double>>>;

double clockAt(const GpuSeries& g, double t) {
  const auto it = std::upper_bound(g.t.begin(), g.t.end(), t);
  if (it == g.t.begin() || it == g.t.end()) return kNaN;
  const size_t j = static_cast<size_t>(it - g.t.begin()), i = j - 1;
  const double w = (t - g.t[i]) / std::max(1e-12, g.t[j] - g.t[i]);
  return g.clock[i] + w * (g.clock[j] - g.clock[i]);
}

RankTrace readRankTrace(const RunFile& run, int rank, const GpuSeries* gpu, double fmax,
                        Instances& inst) {
  RankTrace rt;
  std::array<std::vector<std::pair<double, double>>, kActivityClassCount> iv;
  const int64_t t0 = run.info().start_ns;
  for (size_t tr = 0; tr < run.tracks().size(); ++tr) {
    if (run.tracks()[tr].rank != rank) continue;
    const std::vector<KernelEvent> ev = run.readAllKernels(tr);
    for (size_t i = 0; i < ev.size(); ++i) {
      const KernelEvent& e = ev[i];
      if (e.dur_ns <= 0) continue;
      const auto cls = activityOf(correctedCategory(run.str(e.name), e.cls, e.kind));
      const double a = static_cast<double>(e.start_ns - t0) / kNsPerS;
      const double d = static_cast<double>(e.dur_ns) / kNsPerS;
      iv[static_cast<size_t>(cls)].emplace_back(a, a + d);
      rt.first = std::isnan(rt.first) ? a : std::min(rt.first, a);
      rt.last = std::isnan(rt.last) ? a + d : std::max(rt.last, a + d);
      if (gpu && e.kind == GpuEventKind::Kernel && cls != ActivityClass::Communication) {
        const double f = clockAt(*gpu, a + d / 2);
        const uint32_t prev = i ? ev[i - 1].name : UINT32_MAX;
        const uint32_t prev2 = i > 1 ? ev[i - 2].name : UINT32_MAX;
        const uint32_t next = i + 1 < ev.size() ? ev[i + 1].name : UINT32_MAX;
        if (f > 0) inst[{cls, prev2, prev, e.name, next}].emplace_back(fmax / f, d);
      }
    }
  }
  for (size_t c = 0; c < kActivityClassCount; ++c)
    rt.busy[c] = mergeIntervals(std::move(iv[c]));
  return rt;
}

// ---- fits -------------------------------------------------------------------------------------

// True when every utilization sample within [t - window, t] is 0 (and there is one).
bool idleWindow(const GpuSeries& g, size_t k, double window) {
  if (std::isnan(g.util[k])) return false;
  for (size_t i = k + 1; i-- > 0 && g.t[i] >= g.t[k] - window;)
    if (!(g.util[i] == 0)) return false;
  return g.t[k] - g.t.front() >= window;
}

// The run's idle power: the idle samples before its first busy one (the GPU at its idle
// temperature, as at the start of a job); all idle samples when fewer than 5 lie there.
void fitIdle(const GpuSeries& g, double window, PowerFit& pf) {
  std::vector<double> lead, all, leadT;
  bool busySeen = false;
  for (size_t k = 0; k < g.t.size(); ++k) {
    busySeen = busySeen || g.util[k] > 0;
    if (std::isnan(g.power[k]) || !idleWindow(g, k, window)) continue;
    all.push_back(g.power[k]);
    if (!busySeen) lead.push_back(g.power[k]), leadT.push_back(g.temp[k]);
  }
  const std::vector<double>& idle = lead.size() >= 5 ? lead : all;
  pf.idle_samples = idle.size();
  pf.idle_w = median(idle);
  pf.idle_sd_w = stddev(idle);
  pf.idle_temp_c = lead.size() >= 5 ? median(leadT) : kNaN;
}

// Mean of the clock samples in (t - window, t], over fmax.
double clockRatio(const GpuSeries& g, size_t k, double window, double fmax) {
  double s = 0;
  int n = 0;
  for (size_t i = k + 1; i-- > 0 && g.t[i] > g.t[k] - window;)
    if (!std::isnan(g.clock[i])) s += g.clock[i], ++n;
  return n ? s / n / fmax : kNaN;
}

// The power fit at each clock exponent of the grid; the run's GPUs share one exponent (the one
// with the least residual over all of them: a GPU that its cap hardly moved cannot tell the
// exponents apart, one that the cap held at many clocks can), see pickClockExponent.
constexpr std::array kClockExponents = {0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5};
struct PowerTry {
  double sse = INFINITY;
  PowerFit fit;
};
using PowerTries = std::array<PowerTry, kClockExponents.size()>;

void pickClockExponent(const std::vector<PowerTries>& tries, std::vector<GpuCalibration>& gpus) {
  size_t best = kClockExponents.size();
  double bestSse = INFINITY;
  for (size_t e = 0; e < kClockExponents.size(); ++e) {
    double sse = 0;
    bool any = false;
    for (const PowerTries& t : tries)
      if (std::isfinite(t[0].sse)) sse += t[e].sse, any = true;
    if (any && sse < bestSse) bestSse = sse, best = e;
  }
  if (best == kClockExponents.size()) return;
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (!std::isfinite(tries[g][best].sse)) continue;
    PowerFit& pf = gpus[g].power;
    const PowerFit& f = tries[g][best].fit;
    pf.intercept_w = f.intercept_w, pf.temp_ref_c = f.temp_ref_c;
    pf.temp_coef_w_per_c = f.temp_coef_w_per_c, pf.clock_exponent = f.clock_exponent;
    pf.group_w = f.group_w, pf.quality = f.quality;
  }
}

void fitPower(const GpuSeries& g, const RankTrace& rt, double window, double fmax, PowerFit& pf,
              PowerTries& tries) {
  struct Row {
    std::array<double, kPowerGroupCount> share;
    double x, temp, power;
  };
  std::vector<Row> rows;
  double tsum = 0;
  for (size_t k = 0; k < g.t.size(); ++k) {
    if (std::isnan(g.power[k]) || std::isnan(g.temp[k])) continue;
    const double b = g.t[k], a = b - window;
    const bool traced = a >= rt.first && b <= rt.last;
    if (!traced && !idleWindow(g, k, window)) continue;
    Row r{};
    for (size_t c = 0; c < kActivityClassCount && traced; ++c)
      r.share[static_cast<size_t>(powerGroupOf(static_cast<ActivityClass>(c)))] +=
          rt.busy[c].busyIn(a, b) / window;
    r.x = clockRatio(g, k, window, fmax);
    if (std::isnan(r.x)) continue;
    r.temp = g.temp[k], r.power = g.power[k];
    rows.push_back(r);
    tsum += r.temp;
  }
  if (rows.size() < 3 * (kPowerGroupCount + 2)) return;
  pf.temp_ref_c = tsum / static_cast<double>(rows.size());
  double best = INFINITY;
  for (size_t e = 0; e < kClockExponents.size(); ++e) {
    const double gexp = kClockExponents[e];
    LeastSquares ls(kPowerGroupCount + 2);
    std::vector<double> x(kPowerGroupCount + 2);
    for (const Row& r : rows) {
      x[0] = 1.0, x[1] = r.temp - pf.temp_ref_c;
      const double scale = std::pow(r.x, gexp);
      for (size_t c = 0; c < kPowerGroupCount; ++c)
        x[2 + c] = r.share[c] * scale;
      ls.add(x, r.power);
    }
    double sse = 0;
    const std::vector<double> coef = ls.solve(&sse);
    if (coef.empty()) {
      tries[0].sse = INFINITY;  // no pooled exponent for this GPU
      continue;
    }
    PowerFit f = pf;
    f.intercept_w = coef[0], f.temp_coef_w_per_c = coef[1], f.clock_exponent = gexp;
    for (size_t c = 0; c < kPowerGroupCount; ++c)
      f.group_w[c] = coef[2 + c];
    f.quality = ls.quality(sse);
    if (e == 0 || std::isfinite(tries[0].sse)) tries[e] = PowerTry{sse, f};
    if (!(sse < best)) continue;
    best = sse;
    pf = f;
  }
}

// Unit-gain first-order lag of a sampled input with time constant tau (exact for an input held
// between samples), starting at equilibrium with the first sample.
std::vector<double> lag(const std::vector<double>& t, const std::vector<double>& u, double tau) {
  std::vector<double> y(u.size());
  if (u.empty()) return y;
  y[0] = u[0];
  for (size_t k = 1; k < u.size(); ++k) {
    const double d = std::exp(-(t[k] - t[k - 1]) / tau);
    y[k] = u[k - 1] + (y[k - 1] - u[k - 1]) * d;
  }
  return y;
}

// Power with gaps filled by the last valid value; empty when there is none.
std::vector<double> filledPower(const GpuSeries& g) {
  std::vector<double> p = g.power;
  double last = kNaN;
  for (double& v : p)
    if (std::isnan(v))
      v = last;
    else
      last = v;
  const auto first = std::find_if(p.begin(), p.end(), [](double v) { return !std::isnan(v); });
  if (first == p.end()) return {};
  std::fill(p.begin(), first, *first);
  return p;
}

// Power of another GPU at this GPU's sample times (sample and hold).
std::vector<double> powerAt(const GpuSeries& g, const std::vector<double>& p,
                            const std::vector<double>& t) {
  std::vector<double> out(t.size(), p.empty() ? kNaN : p.front());
  size_t j = 0;
  for (size_t i = 0; i < t.size() && !p.empty(); ++i) {
    while (j + 1 < g.t.size() && g.t[j + 1] <= t[i])
      ++j;
    out[i] = p[j];
  }
  return out;
}

struct ThermalTry {
  double sse = INFINITY;
  std::vector<double> coef;
  double tau = kNaN;
  LeastSquares ls{1};
};

ThermalTry fitThermalWith(const GpuSeries& g, const std::vector<double>& p) {
  ThermalTry best;
  for (double tau = 4; tau <= 300; tau *= 1.05) {
    const std::vector<double> y = lag(g.t, p, tau);
    LeastSquares ls(3);
    std::vector<double> x(3);
    for (size_t k = 0; k < g.t.size(); ++k) {
      if (std::isnan(g.temp[k]) || std::isnan(p[k])) continue;
      x[0] = 1.0, x[1] = p[k], x[2] = y[k] - p[k];
      ls.add(x, g.temp[k]);
    }
    if (ls.rows < 12) return best;
    double sse = 0;
    std::vector<double> c = ls.solve(&sse);
    if (!c.empty() && sse < best.sse) best = ThermalTry{sse, std::move(c), tau, ls};
  }
  return best;
}

// T = T_in + (R_die + R_sink) P + R_sink (lag(P) - P): the same model as T_in + R_die P +
// R_sink lag(P), written so that the level and the transient are separate columns. The heatsink
// starts at the equilibrium of the first power sample (a run starts idle).
ThermalFit fitOwnThermal(const GpuSeries& g, const std::vector<double>& p) {
  ThermalFit tf;
  if (p.empty()) return tf;
  const ThermalTry best = fitThermalWith(g, p);
  if (best.coef.empty()) return tf;
  tf.inlet_c = best.coef[0];
  tf.resistance_c_per_w = best.coef[1];
  tf.sink_resistance_c_per_w = best.coef[2];
  tf.die_resistance_c_per_w = best.coef[1] - best.coef[2];
  tf.tau_s = best.tau;
  tf.heat_capacity_j_per_c = best.tau / best.coef[2];
  tf.quality = best.ls.quality(best.sse);
  return tf;
}

// A GPU that breathes another's exhaust heats with the same shape of load as the one in front
// (every GPU of a training job follows the same steps), so its own resistance and the preheat
// cannot be told apart from its temperature alone. Its own resistances and time constant are
// taken from the GPUs of its node that breathe the node's inlet (the same parts), and what
// remains is fitted as T - R_die P - R_sink lag(P) = T_in + r_up lag(P_up), for each candidate
// upstream GPU; the best residual picks it.
ThermalFit fitDownstreamThermal(const GpuSeries& g, const std::vector<double>& p,
                                const ThermalFit& front, const std::vector<GpuSeries>& all,
                                const std::vector<std::vector<double>>& power,
                                const std::vector<size_t>& candidates) {
  ThermalFit tf = front;
  tf.quality = {};
  const std::vector<double> y = lag(g.t, p, front.tau_s);
  double best = INFINITY;
  for (size_t u : candidates) {
    const std::vector<double> yu = lag(g.t, powerAt(all[u], power[u], g.t), front.tau_s);
    LeastSquares ls(2);
    for (size_t k = 0; k < g.t.size(); ++k) {
      if (std::isnan(g.temp[k]) || std::isnan(p[k])) continue;
      const double own = front.die_resistance_c_per_w * p[k] + front.sink_resistance_c_per_w * y[k];
      ls.add({1.0, yu[k]}, g.temp[k] - own);
    }
    double sse = 0;
    const std::vector<double> c = ls.solve(&sse);
    if (c.empty() || !(sse < best)) continue;
    best = sse;
    tf.inlet_c = c[0], tf.upstream_c_per_w = c[1], tf.upstream_gpu = static_cast<int>(u);
    tf.quality = ls.quality(sse);
    // R2 against the temperature itself, not against what the own part leaves.
    double sst = 0, m = 0, n = 0;
    for (size_t k = 0; k < g.t.size(); ++k)
      if (!std::isnan(g.temp[k]) && !std::isnan(p[k])) m += g.temp[k], ++n;
    m /= std::max(1.0, n);
    for (size_t k = 0; k < g.t.size(); ++k)
      if (!std::isnan(g.temp[k]) && !std::isnan(p[k])) sst += (g.temp[k] - m) * (g.temp[k] - m);
    tf.quality.r2 = sst > 0 ? 1.0 - sse / sst : kNaN;
  }
  return tf;
}

bool breathesExhaustOf(const GpuInfo& me, const GpuInfo& o) {
  return o.node == me.node && o.id != me.id &&
         ((me.slot > 0 && o.slot >= 0 && o.slot < me.slot) ||
          (me.package >= 0 && o.package == me.package && o.local_index < me.local_index));
}

// Thermal fits of every GPU: first those that breathe their node's inlet, then the others with
// their node's mean own parameters.
std::vector<ThermalFit> fitThermal(const std::vector<GpuSeries>& all,
                                   const std::vector<GpuInfo>& gpus,
                                   const std::vector<std::vector<double>>& power) {
  const size_t n = gpus.size();
  std::vector<ThermalFit> out(n);
  std::vector<std::vector<size_t>> up(n);
  for (size_t g = 0; g < n; ++g)
    for (size_t u = 0; u < n; ++u)
      if (!power[u].empty() && breathesExhaustOf(gpus[g], gpus[u])) up[g].push_back(u);
  std::map<int, std::array<double, 4>> nodeMean;  // R_die, R_sink, tau, count
  for (size_t g = 0; g < n; ++g) {
    if (!up[g].empty()) continue;
    out[g] = fitOwnThermal(all[g], power[g]);
    if (std::isnan(out[g].resistance_c_per_w)) continue;
    auto& m = nodeMean[gpus[g].node];
    m[0] += out[g].die_resistance_c_per_w, m[1] += out[g].sink_resistance_c_per_w;
    m[2] += out[g].tau_s, m[3] += 1;
  }
  for (size_t g = 0; g < n; ++g) {
    if (up[g].empty() || power[g].empty()) continue;
    const auto it = nodeMean.find(gpus[g].node);
    if (it == nodeMean.end()) {
      out[g] = fitOwnThermal(all[g], power[g]);
      continue;
    }
    const auto& m = it->second;
    ThermalFit front;
    front.die_resistance_c_per_w = m[0] / m[3], front.sink_resistance_c_per_w = m[1] / m[3];
    front.tau_s = m[2] / m[3];
    front.resistance_c_per_w = front.die_resistance_c_per_w + front.sink_resistance_c_per_w;
    front.heat_capacity_j_per_c = front.tau_s / front.sink_resistance_c_per_w;
    out[g] = fitDownstreamThermal(all[g], power[g], front, all, power, up[g]);
  }
  return out;
}

// True when every sample within [t - window, t] has the SW power cap bit (and no thermal one): the
// sensor's whole averaging window was under the cap.
bool steadilyCapped(const GpuSeries& g, size_t k, double window) {
  const uint32_t thermal = throttle::kSwThermal | throttle::kHwSlowdown;
  for (size_t i = k + 1; i-- > 0 && g.t[i] >= g.t[k] - window;)
    if (g.reasons[i] == throttle::kUnknown || !(g.reasons[i] & throttle::kSwPowerCap) ||
        (g.reasons[i] & thermal))
      return false;
  return g.t[k] - g.t.front() >= window;
}

GovernorFit fitGovernor(const GpuSeries& g, const GpuInfo& info, float domainLimit, double fmax,
                        double window) {
  GovernorFit gf;
  gf.power_limit_w = std::isnan(domainLimit) ? info.power_limit_w : domainLimit;
  gf.max_clock_mhz = fmax;
  std::vector<double> capP, capF, capT, thF, thT;
  for (size_t k = 0; k < g.t.size(); ++k) {
    if (!(g.util[k] > 0)) continue;
    ++gf.busy_samples;
    const uint32_t r = g.reasons.empty() ? 0 : g.reasons[k];
    if (r == throttle::kUnknown) continue;
    if ((r & throttle::kSwPowerCap) && !(r & (throttle::kSwThermal | throttle::kHwSlowdown))) {
      if (!std::isnan(g.power[k]) && steadilyCapped(g, k, window)) capP.push_back(g.power[k]);
      if (!std::isnan(g.clock[k]) && !std::isnan(g.temp[k]))
        capF.push_back(g.clock[k]), capT.push_back(g.temp[k]);
    }
    if ((r & throttle::kSwThermal) && !(r & throttle::kHwSlowdown) && !std::isnan(g.clock[k]) &&
        !std::isnan(g.temp[k]))
      thF.push_back(g.clock[k]), thT.push_back(g.temp[k]);
  }
  gf.capped_samples = capF.size();
  gf.steady_capped_samples = capP.size();
  if (gf.busy_samples)
    gf.capped_fraction =
        static_cast<double>(gf.capped_samples) / static_cast<double>(gf.busy_samples);
  gf.cap_power_w = median(capP);
  gf.cap_power_frac = gf.cap_power_w / gf.power_limit_w;
  gf.cap_clock_mhz = median(capF);
  if (capF.size() >= 20) gf.cap_clock_per_c = slope(capT, capF);
  gf.thermal_samples = thF.size();
  if (thF.size() >= 20) gf.thermal_clock_per_c = slope(thT, thF);
  return gf;
}

std::vector<ClassResponse> fitClockResponse(const Instances& inst) {
  struct Acc {
    double w = 0, ws = 0, wss = 0, time = 0;
    size_t names = 0, instances = 0;
  };
  std::array<Acc, kActivityClassCount> acc{};
  double total = 0;
  for (const auto& [key, v] : inst) {
    Acc& a = acc[static_cast<size_t>(key.cls)];
    double dsum = 0, usum = 0;
    for (const auto& [u, d] : v)
      dsum += d, usum += u;
    a.time += dsum, total += dsum;
    if (v.size() < 30) continue;
    std::vector<double> us, ds;
    for (const auto& [u, d] : v)
      us.push_back(u), ds.push_back(d);
    const double n = static_cast<double>(v.size()), um = usum / n, dm = dsum / n;
    if (stddev(us) < 0.01 * um) continue;
    const double b = slope(us, ds);
    if (std::isnan(b)) continue;
    const double s = b * um / dm;
    a.w += dsum, a.ws += dsum * s, a.wss += dsum * s * s;
    ++a.names, a.instances += v.size();
  }
  std::vector<ClassResponse> out;
  for (size_t c = 0; c < kActivityClassCount; ++c) {
    if (c == static_cast<size_t>(ActivityClass::Communication)) continue;
    const Acc& a = acc[c];
    ClassResponse r;
    r.cls = static_cast<ActivityClass>(c);
    r.names = a.names, r.instances = a.instances;
    r.time_share = total > 0 ? a.time / total : kNaN;
    if (a.w > 0) {
      r.clock_sensitivity = a.ws / a.w;
      r.spread = std::sqrt(std::max(0.0, a.wss / a.w - r.clock_sensitivity * r.clock_sensitivity));
    }
    out.push_back(r);
  }
  return out;
}

void requireInputs(const RunFile& run) {
  const std::string file = run.path().string();
  const SeriesGroupMeta& s = run.series();
  std::vector<std::string> missing;
  if (run.gpus().empty() || s.empty()) missing.push_back("GPU telemetry");
  for (std::string_view id : {metric::kPower, metric::kTemp, metric::kSmClock, metric::kUtil})
    if (!s.empty() && !s.metric(id)) missing.push_back(fmt::format("{} telemetry", id));
  if (run.tracks().empty()) missing.push_back("kernel traces");
  if (!missing.empty()) {
    std::string what;
    for (size_t i = 0; i < missing.size(); ++i)
      what += (i ? (i + 1 == missing.size() ? " and " : ", ") : "") + missing[i];
    throw Error(
        fmt::format("{}: cannot calibrate: the run has no {} (the power, thermal and "
                    "clock fits need power, temperature, SM clock and utilization "
                    "telemetry and kernel traces)",
                    file, what));
  }
}

// The power sensor's averaging window: given, or what the run's sensor semantics say of power_w
// (docs/format.md, "/sensors"; their defaults where the file does not say), or NVML's 1 s.
void powerWindow(const RunFile& run, const CalibrationOptions& options, Calibration& cal) {
  if (options.power_window_s >= 0) {
    cal.power_window_s = options.power_window_s;
    cal.power_window_source = "given (--power-window)";
    return;
  }
  for (const SensorInfo& s : run.sensors()) {
    if (s.metric != metric::kPower) continue;
    cal.power_window_s = s.kind == SensorKind::Average ? s.window_s : 0.0;
    cal.power_window_source = fmt::format("{}: {}", sensorKindName(s.kind), s.basis);
    return;
  }
  cal.power_window_s = kNvmlPowerWindowS;
  cal.power_window_source = "assumed: NVML power.draw, a 1 s average";
}

}  // namespace

const char* activityClassId(ActivityClass c) {
  switch (c) {
    case ActivityClass::Matmul:
      return "matmul";
    case ActivityClass::Attention:
      return "attention";
    case ActivityClass::Norm:
      return "norm";
    case ActivityClass::Elementwise:
      return "elementwise";
    case ActivityClass::Communication:
      return "communication";
  }
  return "?";
}

const char* powerGroupId(PowerGroup g) {
  switch (g) {
    case PowerGroup::Compute:
      return "compute";
    case PowerGroup::Memory:
      return "memory";
    case PowerGroup::Communication:
      return "communication";
  }
  return "?";
}

PowerGroup powerGroupOf(ActivityClass c) {
  switch (c) {
    case ActivityClass::Matmul:
    case ActivityClass::Attention:
      return PowerGroup::Compute;
    case ActivityClass::Communication:
      return PowerGroup::Communication;
    default:
      return PowerGroup::Memory;
  }
}

double predictPower(const PowerFit& p, double clockRatio, double tempC,
                    const std::array<double, kPowerGroupCount>& share) {
  double w = p.intercept_w + p.temp_coef_w_per_c * (tempC - p.temp_ref_c);
  const double scale = std::pow(clockRatio, p.clock_exponent);
  for (size_t k = 0; k < kPowerGroupCount; ++k)
    w += p.group_w[k] * share[k] * scale;
  return w;
}

Calibration calibrateRun(const RunFile& run, const CalibrationOptions& options) {
  requireInputs(run);
  Calibration cal;
  cal.run = run.path().string();
  cal.platform = run.info().platform;
  cal.config = run.info().config;
  powerWindow(run, options, cal);
  const size_t n = run.gpus().size();
  std::vector<GpuSeries> series(n);
  std::vector<std::vector<double>> power(n);
  for (size_t g = 0; g < n; ++g) {
    series[g] = readGpuSeries(run, g);
    power[g] = filledPower(series[g]);
  }
  Instances inst;
  bool anyTraced = false;
  std::vector<PowerTries> powerTries(n);
  for (size_t g = 0; g < n; ++g) {
    const GpuInfo& info = run.gpus()[g];
    const GpuSeries& s = series[g];
    GpuCalibration gc;
    gc.gpu = info.id, gc.node = info.node, gc.slot = info.slot, gc.package = info.package;
    gc.rank = info.rank;
    double fmax = info.max_sm_clock_mhz;
    if (!(fmax > 0))
      for (double f : s.clock)
        if (f > fmax || std::isnan(fmax)) fmax = f;
    // Sample spacing wider than the sensor window: the window is the spacing.
    double spacing = s.t.size() > 1 ? (s.t.back() - s.t.front()) / (s.t.size() - 1) : 0;
    const double window = std::max(cal.power_window_s, spacing);
    fitIdle(s, window, gc.power);
    if (info.rank >= 0) {
      const RankTrace rt = readRankTrace(run, info.rank, &s, fmax, inst);
      if (!std::isnan(rt.first)) {
        anyTraced = true;
        fitPower(s, rt, window, fmax, gc.power, powerTries[g]);
      }
    }
    gc.governor =
        fitGovernor(s, info, run.domainOf(static_cast<int>(g)).power_limit_w, fmax, window);
    cal.gpus.push_back(std::move(gc));
  }
  if (!anyTraced)
    throw Error(
        fmt::format("{}: cannot calibrate: no kernel trace belongs to a GPU's rank (the "
                    "power and clock fits need the kernels each GPU ran)",
                    run.path().string()));
  pickClockExponent(powerTries, cal.gpus);
  const std::vector<ThermalFit> thermal = fitThermal(series, run.gpus(), power);
  for (size_t g = 0; g < n; ++g)
    cal.gpus[g].thermal = thermal[g];
  cal.classes = fitClockResponse(inst);
  return cal;
}

namespace {

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json qualityJson(const FitQuality& q) {
  return {{"samples", q.samples}, {"rmse", num(q.rmse)}, {"r2", num(q.r2)}};
}

}  // namespace

nlohmann::json toJson(const Calibration& c) {
  nlohmann::json j;
  j["run"] = c.run;
  j["platform"] = c.platform;
  j["power_window_s"] = c.power_window_s;
  j["power_window_source"] = c.power_window_source;
  nlohmann::json cfg = nlohmann::json::object();
  auto put = [&](const char* k, const std::optional<int>& v) {
    if (v) cfg[k] = *v;
  };
  put("tp", c.config.tp), put("pp", c.config.pp), put("dp", c.config.dp);
  put("mbs", c.config.mbs), put("gbs", c.config.gbs), put("seq_len", c.config.seq_len);
  j["config"] = cfg;
  j["gpus"] = nlohmann::json::array();
  for (const GpuCalibration& g : c.gpus) {
    nlohmann::json classes = nlohmann::json::object();
    for (size_t k = 0; k < kPowerGroupCount; ++k)
      classes[powerGroupId(static_cast<PowerGroup>(k))] = num(g.power.group_w[k]);
    const PowerFit& p = g.power;
    const ThermalFit& t = g.thermal;
    const GovernorFit& v = g.governor;
    j["gpus"].push_back({{"gpu", g.gpu},
                         {"node", g.node},
                         {"slot", g.slot},
                         {"package", g.package},
                         {"rank", g.rank},
                         {"power",
                          {{"idle_w", num(p.idle_w)},
                           {"idle_sd_w", num(p.idle_sd_w)},
                           {"idle_samples", p.idle_samples},
                           {"idle_temp_c", num(p.idle_temp_c)},
                           {"intercept_w", num(p.intercept_w)},
                           {"temp_ref_c", num(p.temp_ref_c)},
                           {"temp_coef_w_per_c", num(p.temp_coef_w_per_c)},
                           {"clock_exponent", num(p.clock_exponent)},
                           {"group_w", classes},
                           {"fit", qualityJson(p.quality)}}},
                         {"thermal",
                          {{"inlet_c", num(t.inlet_c)},
                           {"die_resistance_c_per_w", num(t.die_resistance_c_per_w)},
                           {"sink_resistance_c_per_w", num(t.sink_resistance_c_per_w)},
                           {"resistance_c_per_w", num(t.resistance_c_per_w)},
                           {"tau_s", num(t.tau_s)},
                           {"heat_capacity_j_per_c", num(t.heat_capacity_j_per_c)},
                           {"upstream_gpu", t.upstream_gpu},
                           {"upstream_c_per_w", num(t.upstream_c_per_w)},
                           {"fit", qualityJson(t.quality)}}},
                         {"governor",
                          {{"power_limit_w", num(v.power_limit_w)},
                           {"max_clock_mhz", num(v.max_clock_mhz)},
                           {"busy_samples", v.busy_samples},
                           {"capped_samples", v.capped_samples},
                           {"steady_capped_samples", v.steady_capped_samples},
                           {"capped_fraction", num(v.capped_fraction)},
                           {"cap_power_w", num(v.cap_power_w)},
                           {"cap_power_frac", num(v.cap_power_frac)},
                           {"cap_clock_mhz", num(v.cap_clock_mhz)},
                           {"cap_clock_per_c", num(v.cap_clock_per_c)},
                           {"thermal_samples", v.thermal_samples},
                           {"thermal_clock_per_c", num(v.thermal_clock_per_c)}}}});
  }
  j["kernel_classes"] = nlohmann::json::array();
  for (const ClassResponse& r : c.classes)
    j["kernel_classes"].push_back({{"class", activityClassId(r.cls)},
                                   {"clock_sensitivity", num(r.clock_sensitivity)},
                                   {"spread", num(r.spread)},
                                   {"names", r.names},
                                   {"instances", r.instances},
                                   {"time_share", num(r.time_share)}});
  return j;
}

}  // namespace wl
