// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The data of the study figures (docs/compare.md, "Figures"): the seed paper's per-configuration
// bars of temperature, power and SM clock with its efficiency line (its Fig. 4, 8, 13), GPU x
// configuration heatmaps with node separators and a per-GPU-average row (Fig. 5, 17), stacked
// kernel-category time per configuration and per pipeline stage (Fig. 10, 15), the throughput vs
// energy-per-token scatter with its Pareto front, and the scale-up vs scale-out comparison.
//
// Plain values computed from a study, so that the GUI's Qt Charts, the figure export and the tests
// all use the same numbers. `runs` lists the runs to show, in order (a table's rows, usually).
// Invalid runs stay in the figures as labelled gaps: their numbers are NaN, never 0.

#include <span>
#include <string>
#include <vector>

#include "analysis/kernel_categories.h"
#include "analysis/study/study.h"
#include "analysis/study/study_table.h"

namespace wl {

// The runs of a table, in its order.
std::vector<size_t> tableRuns(const StudyTable& table);

// --- Per-configuration bars with the efficiency line ---------------------------------------------

struct ConfigBar {
  size_t run = 0;
  std::string label, model;
  bool valid = false;
  double temp_mean_c = kNaN, temp_max_c = kNaN;  // mean over GPUs, max over GPUs
  // Mean power per device (a GPU, an MI250 GCD) or per power domain (an MI250 package), as the
  // table's PerUnit says; max over power domains.
  double power_mean_w = kNaN, power_max_w = kNaN;
  double clock_mean_mhz = kNaN, clock_max_mhz = kNaN;  // mean over GPUs, max over GPUs
  double efficiency = kNaN;  // throughput / energy of the measured iterations, samples/(s*MJ)
  // efficiency / the best efficiency among the valid runs of the same model shown (1 = best).
  double efficiency_normalized = kNaN;
  // False when the valid runs of this model shown differ in their number of iterations: the
  // seed paper's efficiency divides by the energy of all measured iterations, so it compares
  // runs of equal length only.
  bool efficiency_comparable = true;
};
std::vector<ConfigBar> configBars(const Study& study, const std::vector<size_t>& runs,
                                  PerUnit per = PerUnit::Device);

// --- GPU x configuration heatmap -----------------------------------------------------------------

enum class HeatmapMetric {
  TempMean,
  TempMax,
  PowerMean,
  PowerMax,
  ClockMean,
  ClockMin,
  ThrottledFraction,
  Energy
};
inline constexpr int kHeatmapMetricCount = 8;
std::string_view heatmapMetricLabel(HeatmapMetric m);  // "mean temperature"
std::string_view heatmapMetricUnit(HeatmapMetric m);   // "C"
double gpuValue(const GpuSummary& g, HeatmapMetric m);

struct GpuHeatmap {
  HeatmapMetric metric = HeatmapMetric::TempMean;
  std::vector<std::string> configs;  // columns
  std::vector<bool> config_valid;
  std::vector<int> gpus;         // rows: GPU ids 0 .. (most GPUs of a run shown) - 1
  std::vector<int> node_starts;  // rows at which a new node begins (the separators), ascending
  std::vector<std::vector<double>> values;  // [row][column]; NaN: no such GPU, or invalid run
  std::vector<double> average;              // per column: mean over the run's GPUs
  double min = kNaN, max = kNaN;            // over every finite value and the average row
};
GpuHeatmap gpuHeatmap(const Study& study, const std::vector<size_t>& runs, HeatmapMetric metric);

// --- Stacked kernel-category time
// -----------------------------------------------------------------

enum class CategoryOrder { SeedPaper, Corrected };

struct CategoryStack {
  std::vector<std::string> bars;
  std::vector<bool> bar_has_data;            // false: invalid run or no kernel trace
  std::vector<KernelCategory> categories;    // those with time in some bar, in category order
  std::vector<std::vector<double>> seconds;  // [category][bar]: mean per traced rank, s
};
// One bar per run: the mean over its traced ranks of each category's kernel time.
CategoryStack categoriesByConfig(const Study& study, const std::vector<size_t>& runs,
                                 CategoryOrder order);
// One bar per run and pipeline stage ("LABEL / PP s"): the mean over the stage's traced ranks.
CategoryStack categoriesByStage(const Study& study, const std::vector<size_t>& runs,
                                CategoryOrder order);

// --- Throughput vs energy per token, Pareto front
// ---------------------------------------------------

struct ParetoPoint {
  double throughput = kNaN;        // higher is better
  double energy_per_token = kNaN;  // lower is better
};
// on_front[i] is true iff point i is finite and no other finite point has throughput >= and energy
// per token <= with at least one of the two strict. Equal points are all on the front together.
std::vector<bool> paretoFront(std::span<const ParetoPoint> points);

struct ScatterPoint {
  size_t run = 0;
  std::string label, model;
  double tokens_per_s = kNaN, energy_per_token_j = kNaN;
  bool on_front = false;
};
struct ThroughputEnergyScatter {
  std::vector<ScatterPoint> points;   // valid runs with both numbers
  std::vector<size_t> front;          // indices into points, by increasing throughput
  std::vector<std::string> left_out;  // labels of the runs shown without both numbers or invalid
};
ThroughputEnergyScatter throughputEnergyScatter(const Study& study,
                                                const std::vector<size_t>& runs);

// --- Scale-up vs scale-out
// --------------------------------------------------------------------------

struct ScaleGroup {
  std::string platform;
  int gpus = 0;
  double memory_gb = kNaN;  // per GPU (gpuMemoryGb)
  size_t runs = 0;          // valid runs of the model on this platform and GPU count
  size_t best_run = 0;      // the one with the lowest energy per token
  std::string best_label;
  double energy_per_token_j = kNaN;     // of the best run
  double tokens_per_s = kNaN;           // of the best run
  double tokens_per_s_per_gpu = kNaN;   // of the best run
  double gpu_seconds_per_token = kNaN;  // gpus / tokens_per_s of the best run
  double mean_power_w = kNaN;           // of the best run, mean over GPUs
  double temp_max_c = kNaN;             // of the best run
  double best_tokens_per_s = kNaN;      // highest tokens/s of any run of the group
};
struct ScaleComparison {
  std::string model;
  ScaleGroup up;                         // fewer GPUs with more memory each
  ScaleGroup out;                        // more GPUs with less memory each
  double energy_per_token_ratio = kNaN;  // up / out (< 1: scale-up spends less per token)
  double tokens_per_s_ratio = kNaN;      // up / out
  double tokens_per_s_per_gpu_ratio = kNaN;
};
// For every model with valid runs on a platform with more memory per GPU and fewer GPUs (scale-up)
// and on one with less memory per GPU and more GPUs (scale-out): the best run of each, per token.
std::vector<ScaleComparison> scaleUpVsOut(const Study& study, const std::vector<size_t>& runs);

}  // namespace wl
