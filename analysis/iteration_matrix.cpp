// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/iteration_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace wl {

std::string_view matrixMeasureId(MatrixMeasure m) {
  return m == MatrixMeasure::Cost ? "cost" : "lateness";
}

bool matrixMeasureFromId(std::string_view id, MatrixMeasure& out) {
  for (MatrixMeasure m : {MatrixMeasure::Cost, MatrixMeasure::Lateness})
    if (matrixMeasureId(m) == id) {
      out = m;
      return true;
    }
  return false;
}

IterationMatrix buildIterationMatrix(const ThrottleCost& cost, const std::vector<RankInfo>& ranks,
                                     MatrixMeasure measure) {
  IterationMatrix m;
  m.measure = measure;
  if (!cost.unknown.empty()) return m;
  std::map<int, int> gpuOfRank, rankOfGpu;
  for (const RankInfo& r : ranks) {
    gpuOfRank[r.rank] = r.gpu;
    if (r.gpu >= 0 && !rankOfGpu.count(r.gpu)) rankOfGpu[r.gpu] = r.rank;
  }
  const bool byGpu = measure == MatrixMeasure::Cost;
  m.ids = byGpu ? cost.gpus : cost.ranks;
  for (int id : m.ids) {
    if (byGpu) {
      m.gpuOf.push_back(id);
      m.rankOf.push_back(rankOfGpu.count(id) ? rankOfGpu[id] : -1);
    } else {
      m.gpuOf.push_back(gpuOfRank.count(id) ? gpuOfRank[id] : -1);
      m.rankOf.push_back(id);
    }
  }
  for (const IterationCost& it : cost.per_iteration)
    m.columns.push_back({it.step, it.start_ns, it.end_ns, it.step_s, it.cost_s, it.method});
  const size_t C = m.columns.size();
  m.values.assign(m.ids.size() * C, kNaN);
  for (size_t c = 0; c < C; ++c) {
    const IterationCost& it = cost.per_iteration[c];
    const std::vector<double>& v = byGpu ? it.gpu_cost_s : it.rank_late_s;
    for (size_t r = 0; r < m.ids.size() && r < v.size(); ++r) {
      m.values[r * C + c] = v[r];
      if (std::isfinite(v[r])) m.max = std::max(m.max, v[r]);
    }
  }
  return m;
}

std::string matrixRowLabel(const IterationMatrix& m, size_t row) {
  return fmt::format("{} {}", m.measure == MatrixMeasure::Cost ? "GPU" : "rank", m.ids[row]);
}

namespace {

// Seconds as the verdict writes them, and milliseconds below 10 ms so a small cell does not read
// "0.000 s".
std::string cellSeconds(double s) {
  return std::fabs(s) >= 0.01 || s == 0 ? costSecondsText(s) : fmt::format("{:.2f} ms", s * 1e3);
}

std::string percentOf(double part, double whole) {
  if (!(whole > 0)) return {};
  const double pct = 100.0 * part / whole;
  return pct == 0 || pct >= 0.1 ? fmt::format(" ({:.1f} %)", pct) : fmt::format(" ({:.2g} %)", pct);
}

std::string methodLine(const ThrottleCost& cost, const IterationCost& it) {
  if (it.method == CostMethod::Traced)
    return "Replayed from the kernel traces of this step (kernel durations at the clock they ran "
           "at, collectives matched across ranks).";
  return fmt::format(
      "Estimated from telemetry (this step is not traced): clock deficit x busy time x {:.2f}, "
      "the share from {}.",
      cost.telemetry_scale, cost.telemetry_scale_source);
}

std::vector<std::string> costCellText(const IterationMatrix& m, const ThrottleCost& cost,
                                      size_t row, size_t col) {
  const IterationCost& it = cost.per_iteration[col];
  const int gpu = m.ids[row];
  std::vector<std::string> out;
  out.push_back(fmt::format("Step {} · GPU {}{}", it.step, gpu,
                            m.rankOf[row] >= 0 ? fmt::format(" (rank {})", m.rankOf[row]) : ""));
  const double v = m.at(row, col);
  const double own = row < it.gpu_own_s.size() ? it.gpu_own_s[row] : kNaN;
  if (v > 0)
    out.push_back(fmt::format(
        "Its throttling cost the step {} of {}{}; the step's whole cost was {}.", cellSeconds(v),
        cellSeconds(it.step_s), percentOf(v, it.step_s), cellSeconds(it.cost_s)));
  else
    out.push_back("Its throttling cost the step nothing.");
  if (own > 0) {
    std::string absorbed;
    if (own > v + 5e-4)
      absorbed = v > 0 ? "; waits and slack absorbed the rest"
                       : "; none of it reached the critical path (waits and slack absorbed it)";
    out.push_back(fmt::format("Its own clock lost {} of busy time{}.", cellSeconds(own), absorbed));
  } else if (own == 0) {
    out.push_back("Its clock was not lowered by a power or thermal limit while it was busy.");
  }
  for (const GpuCost& g : cost.by_gpu)
    if (g.gpu == gpu && !g.cause.empty()) {
      const std::string slot = slotText(g.slot);
      out.push_back(fmt::format("Over the analysed steps its cost is mostly {}{}.",
                                throttleCauseText(g.cause), slot.empty() ? "" : "; " + slot));
    }
  out.push_back(methodLine(cost, it));
  return out;
}

std::vector<std::string> latenessCellText(const IterationMatrix& m, const ThrottleCost& cost,
                                          size_t row, size_t col) {
  const IterationCost& it = cost.per_iteration[col];
  std::vector<std::string> out;
  out.push_back(fmt::format("Step {} · rank {}{}", it.step, m.ids[row],
                            m.gpuOf[row] >= 0 ? fmt::format(" (GPU {})", m.gpuOf[row]) : ""));
  const double v = m.at(row, col);
  if (!std::isfinite(v)) {
    out.push_back(
        "Not traced: no kernel trace of this rank spans this step, so its arrival at the step's "
        "last collective is unknown.");
    return out;
  }
  double latest = 0;
  for (size_t r = 0; r < m.rows(); ++r)
    if (std::isfinite(m.at(r, col))) latest = std::max(latest, m.at(r, col));
  if (v > 0)
    out.push_back(fmt::format(
        "It arrived {} after the earliest rank at the step's last collective.", cellSeconds(v)));
  else
    out.push_back("It arrived first at the step's last collective.");
  if (latest > 0 && v >= latest - 1e-6)
    out.push_back("It arrived last: the collective, and so the step, waited for it.");
  for (size_t g = 0; g < cost.gpus.size(); ++g)
    if (cost.gpus[g] == m.gpuOf[row] && g < it.gpu_cost_s.size())
      out.push_back(fmt::format("Its GPU's throttling cost the step {}{}.",
                                cellSeconds(it.gpu_cost_s[g]),
                                percentOf(it.gpu_cost_s[g], it.step_s)));
  out.push_back(methodLine(cost, it));
  return out;
}

}  // namespace

std::vector<std::string> matrixCellText(const IterationMatrix& m, const ThrottleCost& cost,
                                        size_t row, size_t col) {
  if (row >= m.rows() || col >= m.cols() || col >= cost.per_iteration.size()) return {};
  return m.measure == MatrixMeasure::Cost ? costCellText(m, cost, row, col)
                                          : latenessCellText(m, cost, row, col);
}

}  // namespace wl
