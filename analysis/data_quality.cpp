// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/data_quality.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "loaders/core/time_format.h"
#include "loaders/format/run_file.h"

namespace wl {

std::vector<std::string> invalidatingNotes(const std::vector<QualityNote>& notes) {
  std::vector<std::string> out;
  for (const QualityNote& n : notes)
    if (n.code == "out_of_memory") out.push_back(n.message);
  return out;
}

DataQualityReport assessDataQuality(const RunFile& run, const QualityInputs& in) {
  DataQualityReport r;
  r.notes = run.quality();
  const RunInfo& info = run.info();
  auto invalid = [&](std::string why) { r.invalid_reasons.push_back(std::move(why)); };

  if (info.config.nodes && info.config.gpus_per_node) {
    r.expected_gpus = *info.config.nodes * *info.config.gpus_per_node;
    if (static_cast<int>(run.gpus().size()) < r.expected_gpus) {
      const std::string m = fmt::format("the configuration has {} GPUs, the run {}",
                                        r.expected_gpus, run.gpus().size());
      r.notes.push_back({Severity::Warning, "missing_gpu", "run", m});
      invalid(m);
    }
  }
  // Power, per power domain: the columns that make a domain's power must have samples; a GPU whose
  // domain's power is on another GPU needs none.
  double energy = 0.0;
  bool anyEnergy = false;
  r.has_telemetry = !run.series(SeriesKind::Gpu).empty();
  std::vector<int> shared;
  for (const DomainPowerInput& d : in.domains) {
    const bool board = d.domain.gpus.size() == 1;
    uint64_t samples = 0;
    for (const auto& [g, p] : d.power) {
      samples += p.samples;
      if (std::isfinite(p.integral)) {
        energy += p.integral;
        anyEnergy = true;
      }
    }
    for (int g : d.analysed)
      if (powerRole(d.domain, g) == PowerRole::None) shared.push_back(g);
    if (!r.has_telemetry) continue;
    if (samples == 0) r.domains_without_power.push_back(d.domain.id);
    for (const auto& [g, p] : d.power) {
      const std::string subject = fmt::format("gpu {}", g);
      const bool analysed = std::find(d.analysed.begin(), d.analysed.end(), g) != d.analysed.end();
      if (p.samples == 0) {
        if (analysed) r.gpus_without_power.push_back(g);
        if (board) {
          r.notes.push_back(
              {Severity::Warning, "missing_gpu", subject, "no power samples in the range"});
          invalid(subject + " has no power samples");
        } else if (samples > 0) {
          // Its GPUs report their shares of the package's power: one share is missing.
          invalid(fmt::format("{} has no power samples, the other GPUs of {} have", subject,
                              d.domain.name));
        }
      } else if (p.samples < 10) {
        invalid(board ? fmt::format("{} has {} power samples (fewer than 10)", subject, p.samples)
                      : fmt::format("{} ({}) has {} power samples (fewer than 10)", d.domain.name,
                                    subject, p.samples));
      }
    }
    if (!board && samples == 0) {
      std::string gpus;
      for (int g : d.domain.gpus)
        gpus += fmt::format("{}{}", gpus.empty() ? "" : ", ", g);
      const std::string m = fmt::format("{} (gpus {}) has no power samples", d.domain.name, gpus);
      r.notes.push_back({Severity::Warning, "missing_gpu", d.domain.name,
                         "no power samples in the range on any of its GPUs"});
      invalid(m);
    }
  }
  std::sort(shared.begin(), shared.end());
  r.gpus_without_own_power = shared;
  if (!shared.empty()) {
    std::string list;
    for (size_t k = 0; k < shared.size(); ++k)
      list += fmt::format("{}{}", k ? ", " : "", shared[k]);
    r.notes.push_back(
        {Severity::Info, "power_domain", "gpus",
         fmt::format("no power of their own on GPUs {} (expected): each shares a package with a "
                     "GPU that reports the package's power (MI250 GCD pairs), so power and energy "
                     "are counted per package",
                     list)});
  }
  if (in.duration_s <= 0) invalid("the analysed duration is not positive");
  if (!r.has_telemetry) {
    if (!in.gpus.empty())
      r.notes.push_back({Severity::Info, "no_telemetry", "run",
                         "the run has no GPU telemetry (a kernel trace alone): energy, power and "
                         "efficiency are unknown"});
  } else if (!in.gpus.empty() && (!anyEnergy || energy <= 0)) {
    invalid("the energy is not positive");
  }

  for (int rank : in.ranks)
    if (std::find(in.ranksWithKernels.begin(), in.ranksWithKernels.end(), rank) ==
            in.ranksWithKernels.end() &&
        !in.ranksWithKernels.empty()) {
      r.ranks_without_kernels.push_back(rank);
      r.notes.push_back({Severity::Warning, "missing_rank", fmt::format("rank {}", rank),
                         "no kernel events in the range while other ranks have some"});
    }

  r.gaps = in.gaps;
  for (const Gap& g : in.gaps) {
    r.gap_s += g.length_s();
    r.notes.push_back({Severity::Warning, "sampling_gap", fmt::format("gpu {}", g.gpu),
                       fmt::format("no samples for {} from {}",
                                   formatDuration(g.end_ns - g.start_ns), formatUtc(g.start_ns))});
  }
  for (const CounterSummary& c : in.counters) {
    if (c.wraps == 0 && c.resets == 0) continue;
    r.counter_problems.push_back(c);
    r.notes.push_back({c.resets ? Severity::Warning : Severity::Info, "counter_wrap",
                       fmt::format("gpu {}", c.gpu),
                       fmt::format("{}: {} 32-bit wraps (unwrapped), {} resets (left out)",
                                   c.metric, c.wraps, c.resets)});
  }
  r.notes.insert(r.notes.end(), in.findings.begin(), in.findings.end());
  for (std::string& why : invalidatingNotes(run.quality()))
    invalid(std::move(why));
  r.valid = r.invalid_reasons.empty();
  return r;
}

}  // namespace wl

namespace wl {

ActivityLag estimateActivityLag(std::span<const int64_t> t, std::span<const double> p,
                                const IntervalSet& busy, TimeRange range, int64_t binNs,
                                int64_t maxLagNs) {
  ActivityLag out;
  if (busy.empty() || binNs <= 0 || range.empty()) return out;
  const int64_t lo = std::max(range.t0, busy.front().start);
  const int64_t hi = std::min(range.t1, busy.back().end);
  if (hi - lo < 20 * binNs) return out;
  const auto nb = static_cast<size_t>((hi - lo) / binNs);
  std::vector<double> act(nb, 0.0), pw(nb, 0.0);
  std::vector<int> cnt(nb, 0);
  // Bin k = (a - lo) / binNs, found by a division only when an interval starts outside the bin
  // the previous one ended in (the sorted busy intervals mostly stay in it).
  size_t k = 0;
  int64_t binEnd = lo + binNs;
  for (const Interval& iv : busy) {
    int64_t a = std::max(iv.start, lo);
    const int64_t b = std::min(iv.end, lo + static_cast<int64_t>(nb) * binNs);
    if (a >= b) continue;
    if (a >= binEnd || a < binEnd - binNs) {
      k = static_cast<size_t>((a - lo) / binNs);
      binEnd = lo + static_cast<int64_t>(k + 1) * binNs;
    }
    while (a < b) {
      const int64_t e = std::min(b, binEnd);
      act[k] += static_cast<double>(e - a) / static_cast<double>(binNs);
      a = e;
      if (a == binEnd) {
        ++k;
        binEnd += binNs;
      }
    }
  }
  for (size_t i = 0; i < std::min(t.size(), p.size()); ++i) {
    if (!std::isfinite(p[i]) || t[i] < lo) continue;
    const auto k = static_cast<size_t>((t[i] - lo) / binNs);
    if (k >= nb) continue;
    pw[k] += p[i];
    ++cnt[k];
  }
  for (size_t k = 0; k < nb; ++k)
    pw[k] = cnt[k] ? pw[k] / cnt[k] : kNaN;
  const auto maxLag = static_cast<long>(maxLagNs / binNs);
  for (long lag = -maxLag; lag <= maxLag; ++lag) {
    double sa = 0, sp = 0, saa = 0, spp = 0, sap = 0;
    size_t c = 0;
    for (size_t k = 0; k < nb; ++k) {
      const long j = static_cast<long>(k) + lag;
      if (j < 0 || j >= static_cast<long>(nb) || !std::isfinite(pw[static_cast<size_t>(j)]))
        continue;
      const double a = act[k], q = pw[static_cast<size_t>(j)];
      sa += a, sp += q, saa += a * a, spp += q * q, sap += a * q;
      ++c;
    }
    if (c < 20) continue;
    const double n = static_cast<double>(c);
    const double va = saa - sa * sa / n, vp = spp - sp * sp / n;
    if (va <= 0 || vp <= 0) continue;
    const double corr = (sap - sa * sp / n) / std::sqrt(va * vp);
    if (std::isnan(out.correlation) || corr > out.correlation) {
      out.correlation = corr;
      out.lag_s = static_cast<double>(lag * binNs) * 1e-9;
    }
  }
  return out;
}

}  // namespace wl
