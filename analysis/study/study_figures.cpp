// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/study/study_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace wl {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const CategoryTimes& categoriesOf(const RankSummary& r, CategoryOrder order) {
  return order == CategoryOrder::SeedPaper ? r.seed_categories : r.corrected_categories;
}

// Fills a CategoryStack from per-bar lists of ranks (mean per rank of each category).
CategoryStack stackOf(const std::vector<std::string>& bars,
                      const std::vector<std::vector<const RankSummary*>>& ranks,
                      const std::vector<bool>& valid, CategoryOrder order) {
  CategoryStack s;
  s.bars = bars;
  std::vector<std::array<double, kKernelCategoryCount>> mean(bars.size());
  std::array<bool, kKernelCategoryCount> used{};
  for (size_t b = 0; b < bars.size(); ++b) {
    mean[b].fill(kNaN);
    const bool has = valid[b] && !ranks[b].empty();
    s.bar_has_data.push_back(has);
    if (!has) continue;
    for (size_t c = 0; c < kKernelCategoryCount; ++c) {
      double sum = 0;
      for (const RankSummary* r : ranks[b])
        sum += static_cast<double>(categoriesOf(*r, order)[c]) * 1e-9;
      mean[b][c] = sum / static_cast<double>(ranks[b].size());
      if (mean[b][c] > 0) used[c] = true;
    }
  }
  for (size_t c = 0; c < kKernelCategoryCount; ++c) {
    if (!used[c]) continue;
    s.categories.push_back(static_cast<KernelCategory>(c));
    std::vector<double> row;
    for (size_t b = 0; b < bars.size(); ++b)
      row.push_back(mean[b][c]);
    s.seconds.push_back(std::move(row));
  }
  return s;
}

}  // namespace

// What names a run on a figure's axis: what differs between the study's runs.
static const std::string& axisLabel(const StudyRun& r) {
  return r.short_label.empty() ? r.label : r.short_label;
}

std::vector<size_t> tableRuns(const StudyTable& table) {
  std::vector<size_t> out;
  for (const StudyRow& r : table.rows)
    out.push_back(r.run);
  return out;
}

std::vector<ConfigBar> configBars(const Study& study, const std::vector<size_t>& runs,
                                  PerUnit per) {
  std::vector<ConfigBar> bars;
  std::map<std::string, double> best;  // per model (lower-cased): the best efficiency
  std::map<std::string, std::set<size_t>> iterations;  // per model: iteration counts seen
  for (size_t i : runs) {
    const StudyRun& r = study.runs.at(i);
    const RunSummary& s = r.summary;
    ConfigBar b;
    b.run = i;
    b.label = axisLabel(r);
    b.model = s.model;
    b.valid = s.valid;
    if (s.valid) {
      b.temp_mean_c = s.temp_mean_c, b.temp_max_c = s.temp_max_c;
      b.power_mean_w = per == PerUnit::Device ? s.meanPowerPerDevice() : s.totals.mean_power_w;
      b.power_max_w = s.totals.peak_power_w;
      b.clock_mean_mhz = s.clock_mean_mhz, b.clock_max_mhz = s.clock_max_mhz;
      b.efficiency = s.totals.efficiency_samples_per_s_mj;
      if (std::isfinite(b.efficiency) && b.efficiency > 0) {
        double& m = best[lower(s.model)];
        m = std::max(m, b.efficiency);
        iterations[lower(s.model)].insert(s.totals.iterations);
      }
    }
    bars.push_back(std::move(b));
  }
  for (ConfigBar& b : bars) {
    auto it = best.find(lower(b.model));
    if (std::isfinite(b.efficiency) && it != best.end() && it->second > 0)
      b.efficiency_normalized = b.efficiency / it->second;
    b.efficiency_comparable = iterations[lower(b.model)].size() <= 1;
  }
  return bars;
}

std::string_view heatmapMetricLabel(HeatmapMetric m) {
  switch (m) {
    case HeatmapMetric::TempMean:
      return "mean temperature";
    case HeatmapMetric::TempMax:
      return "peak temperature";
    case HeatmapMetric::PowerMean:
      return "mean power";
    case HeatmapMetric::PowerMax:
      return "peak power";
    case HeatmapMetric::ClockMean:
      return "mean SM clock";
    case HeatmapMetric::ClockMin:
      return "min SM clock";
    case HeatmapMetric::ThrottledFraction:
      return "throttled share";
    case HeatmapMetric::Energy:
      return "energy";
  }
  return "";
}

std::string_view heatmapMetricUnit(HeatmapMetric m) {
  switch (m) {
    case HeatmapMetric::TempMean:
    case HeatmapMetric::TempMax:
      return "C";
    case HeatmapMetric::PowerMean:
    case HeatmapMetric::PowerMax:
      return "W";
    case HeatmapMetric::ClockMean:
    case HeatmapMetric::ClockMin:
      return "MHz";
    case HeatmapMetric::ThrottledFraction:
      return "";
    case HeatmapMetric::Energy:
      return "J";
  }
  return "";
}

double gpuValue(const GpuSummary& g, HeatmapMetric m) {
  switch (m) {
    case HeatmapMetric::TempMean:
      return g.temp_mean_c;
    case HeatmapMetric::TempMax:
      return g.temp_max_c;
    case HeatmapMetric::PowerMean:
      return g.power_mean_w;
    case HeatmapMetric::PowerMax:
      return g.power_max_w;
    case HeatmapMetric::ClockMean:
      return g.clock_mean_mhz;
    case HeatmapMetric::ClockMin:
      return g.clock_min_mhz;
    case HeatmapMetric::ThrottledFraction:
      return g.throttled_fraction;
    case HeatmapMetric::Energy:
      return g.energy_j;
  }
  return kNaN;
}

GpuHeatmap gpuHeatmap(const Study& study, const std::vector<size_t>& runs, HeatmapMetric metric) {
  GpuHeatmap h;
  h.metric = metric;
  size_t rows = 0;
  const RunSummary* layout = nullptr;  // the run with the most GPUs sets the node separators
  for (size_t i : runs) {
    const RunSummary& s = study.runs.at(i).summary;
    if (s.gpus.size() > rows) rows = s.gpus.size(), layout = &s;
  }
  for (size_t g = 0; g < rows; ++g)
    h.gpus.push_back(static_cast<int>(g));
  if (layout)
    for (size_t g = 1; g < layout->gpus.size(); ++g)
      if (layout->gpus[g].node != layout->gpus[g - 1].node)
        h.node_starts.push_back(static_cast<int>(g));
  h.values.assign(rows, std::vector<double>(runs.size(), kNaN));
  double lo = INFINITY, hi = -INFINITY;
  for (size_t c = 0; c < runs.size(); ++c) {
    const StudyRun& r = study.runs.at(runs[c]);
    h.configs.push_back(axisLabel(r));
    h.config_valid.push_back(r.summary.valid);
    double sum = 0;
    size_t n = 0;
    if (r.summary.valid)
      for (const GpuSummary& g : r.summary.gpus) {
        const double v = gpuValue(g, metric);
        if (g.id < 0 || static_cast<size_t>(g.id) >= rows || !std::isfinite(v)) continue;
        h.values[static_cast<size_t>(g.id)][c] = v;
        sum += v, ++n;
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
    h.average.push_back(n ? sum / static_cast<double>(n) : kNaN);
  }
  if (std::isfinite(lo)) h.min = lo, h.max = hi;
  return h;
}

CategoryStack categoriesByConfig(const Study& study, const std::vector<size_t>& runs,
                                 CategoryOrder order) {
  std::vector<std::string> bars;
  std::vector<std::vector<const RankSummary*>> ranks;
  std::vector<bool> valid;
  for (size_t i : runs) {
    const StudyRun& r = study.runs.at(i);
    bars.push_back(axisLabel(r));
    valid.push_back(r.summary.valid);
    std::vector<const RankSummary*> rs;
    for (const RankSummary& x : r.summary.ranks)
      rs.push_back(&x);
    ranks.push_back(std::move(rs));
  }
  return stackOf(bars, ranks, valid, order);
}

CategoryStack categoriesByStage(const Study& study, const std::vector<size_t>& runs,
                                CategoryOrder order) {
  std::vector<std::string> bars;
  std::vector<std::vector<const RankSummary*>> ranks;
  std::vector<bool> valid;
  for (size_t i : runs) {
    const StudyRun& r = study.runs.at(i);
    std::map<int, std::vector<const RankSummary*>> byStage;
    for (const RankSummary& x : r.summary.ranks)
      byStage[x.stage].push_back(&x);
    if (byStage.empty()) {
      bars.push_back(axisLabel(r));
      ranks.emplace_back();
      valid.push_back(r.summary.valid);
      continue;
    }
    for (auto& [stage, list] : byStage) {
      bars.push_back(stage >= 0 ? fmt::format("{} / PP {}", axisLabel(r), stage)
                                : fmt::format("{} / PP ?", axisLabel(r)));
      ranks.push_back(std::move(list));
      valid.push_back(r.summary.valid);
    }
  }
  return stackOf(bars, ranks, valid, order);
}

std::vector<bool> paretoFront(std::span<const ParetoPoint> points) {
  std::vector<bool> on(points.size(), false);
  auto finite = [](const ParetoPoint& p) {
    return std::isfinite(p.throughput) && std::isfinite(p.energy_per_token);
  };
  for (size_t i = 0; i < points.size(); ++i) {
    if (!finite(points[i])) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      if (j == i || !finite(points[j])) continue;
      const ParetoPoint &p = points[i], &q = points[j];
      dominated = q.throughput >= p.throughput && q.energy_per_token <= p.energy_per_token &&
                  (q.throughput > p.throughput || q.energy_per_token < p.energy_per_token);
    }
    on[i] = !dominated;
  }
  return on;
}

ThroughputEnergyScatter throughputEnergyScatter(const Study& study,
                                                const std::vector<size_t>& runs) {
  ThroughputEnergyScatter s;
  std::vector<ParetoPoint> pts;
  for (size_t i : runs) {
    const StudyRun& r = study.runs.at(i);
    const RunTotals& t = r.summary.totals;
    if (!r.summary.valid || !std::isfinite(t.tokens_per_s) ||
        !std::isfinite(t.energy_per_token_j)) {
      s.left_out.push_back(axisLabel(r));
      continue;
    }
    s.points.push_back(
        {i, axisLabel(r), r.summary.model, t.tokens_per_s, t.energy_per_token_j, false});
    pts.push_back({t.tokens_per_s, t.energy_per_token_j});
  }
  const std::vector<bool> on = paretoFront(pts);
  for (size_t k = 0; k < s.points.size(); ++k)
    if (on[k]) {
      s.points[k].on_front = true;
      s.front.push_back(k);
    }
  std::stable_sort(s.front.begin(), s.front.end(), [&](size_t a, size_t b) {
    return s.points[a].tokens_per_s < s.points[b].tokens_per_s;
  });
  return s;
}

std::vector<ScaleComparison> scaleUpVsOut(const Study& study, const std::vector<size_t>& runs) {
  // model -> (platform, GPUs) -> group
  std::map<std::string, std::map<std::pair<std::string, int>, ScaleGroup>> models;
  std::map<std::string, std::string> modelName;
  for (size_t i : runs) {
    const StudyRun& r = study.runs.at(i);
    const RunSummary& s = r.summary;
    const RunTotals& t = s.totals;
    if (!s.valid || s.model.empty() || !std::isfinite(t.energy_per_token_j) ||
        !std::isfinite(t.tokens_per_s) || s.gpu_count <= 0)
      continue;
    const double mem = gpuMemoryGb(s.platform, s.device_name);
    if (!std::isfinite(mem)) continue;
    modelName.emplace(lower(s.model), s.model);
    ScaleGroup& g = models[lower(s.model)][{s.platform, s.gpu_count}];
    g.platform = s.platform;
    g.gpus = s.gpu_count;
    g.memory_gb = mem;
    ++g.runs;
    if (!std::isfinite(g.best_tokens_per_s) || t.tokens_per_s > g.best_tokens_per_s)
      g.best_tokens_per_s = t.tokens_per_s;
    if (!std::isfinite(g.energy_per_token_j) || t.energy_per_token_j < g.energy_per_token_j) {
      g.best_run = i;
      g.best_label = axisLabel(r);
      g.energy_per_token_j = t.energy_per_token_j;
      g.tokens_per_s = t.tokens_per_s;
      g.tokens_per_s_per_gpu = t.tokens_per_s / s.gpu_count;
      g.gpu_seconds_per_token = s.gpu_count / t.tokens_per_s;
      g.mean_power_w = t.mean_power_w;
      g.temp_max_c = s.temp_max_c;
    }
  }
  std::vector<ScaleComparison> out;
  for (const auto& [key, groups] : models) {
    if (groups.size() < 2) continue;
    const ScaleGroup* up = nullptr;
    const ScaleGroup* down = nullptr;
    for (const auto& [k, g] : groups) {
      if (!up || g.memory_gb > up->memory_gb || (g.memory_gb == up->memory_gb && g.gpus < up->gpus))
        up = &g;
      if (!down || g.memory_gb < down->memory_gb ||
          (g.memory_gb == down->memory_gb && g.gpus > down->gpus))
        down = &g;
    }
    if (!(up->memory_gb > down->memory_gb && up->gpus < down->gpus)) continue;
    ScaleComparison c;
    c.model = modelName.at(key);
    c.up = *up;
    c.out = *down;
    c.energy_per_token_ratio = up->energy_per_token_j / down->energy_per_token_j;
    c.tokens_per_s_ratio = up->tokens_per_s / down->tokens_per_s;
    c.tokens_per_s_per_gpu_ratio = up->tokens_per_s_per_gpu / down->tokens_per_s_per_gpu;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace wl
