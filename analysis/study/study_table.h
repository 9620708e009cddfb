// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The comparison table of a study (docs/compare.md): one row per run, one column per analysis
// metric, each value optionally normalized per GPU, per token or per iteration, with its delta to a
// baseline run (absolute and relative) and its rank among the valid runs shown. Rows can be
// filtered by configuration (model, platform, tp, pp, dp, ep, microbatch, recompute, overlap...)
// and sorted by any column. `wattline compare` prints this table and the study view shows it; both
// build it with makeStudyTable().

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/study/study.h"

namespace wl {

enum class Normalization { None, PerGpu, PerToken, PerIteration };
std::string_view normalizationId(Normalization n);  // "none", "gpu", "token", "iteration"
// Parses an id (or "per-gpu", "per-token", "per-iteration"); throws wl::Error naming the choices.
Normalization parseNormalization(std::string_view text);

// What "per GPU" means (docs/compare.md, "Per device or per package"): per device (a GPU; one GCD
// of an MI250) or per power domain (an H100/H200 board; an MI250 package of two GCDs). It sets the
// divisor of the per-GPU normalization and what the mean power is a mean over. On runs of boards
// both are the same.
enum class PerUnit { Device, Package };
std::string_view perUnitId(PerUnit p);  // "device", "package"
// "device" (or "gpu", "gcd"), "package" (or "board", "domain"); throws wl::Error naming the
// choices.
PerUnit parsePerUnit(std::string_view text);
// How a table's header says it: "per device (GPU; GCD on MI250)", "per package (MI250 package;
// board on H100/H200)".
std::string perUnitText(PerUnit p);

// Which way a column is better, for ranks.
enum class Better { None, Lower, Higher };

// How a column scales, which says which normalizations divide it (docs/compare.md):
//  - Total: summed over GPUs and over the run (energy, throttled seconds, excursions): divided by
//    the GPUs in the per-GPU view and by the work done in the per-token and per-iteration views;
//  - GpuSum: a rate or a per-iteration quantity summed over GPUs (throughput, energy per token):
//    divided by the GPUs only;
//  - PerRank: a time or energy per traced rank over the run: divided by the work only;
//  - Intensive: means, maxima, fractions and ratios: never divided.
enum class Scaling { Total, GpuSum, PerRank, Intensive };

struct StudyColumn {
  std::string_view id;     // "energy_j", also the JSON key and the CSV header
  std::string_view label;  // "energy"
  std::string_view unit;   // "J" (of the raw value)
  Better better = Better::None;
  Scaling scaling = Scaling::Intensive;
  double (*value)(const RunSummary&) = nullptr;  // raw value; NaN when unknown
  // The value per device where the raw value is per power domain (mean power: per package on
  // MI250), used under PerUnit::Device; nullptr when the column does not depend on it.
  double (*device_value)(const RunSummary&) = nullptr;
};

// Every metric column, in table order.
std::span<const StudyColumn> studyColumns();
// The column with this id, or nullptr.
const StudyColumn* findStudyColumn(std::string_view id);

// The divisor a normalization applies to a column of this scaling for this run: 1 when it does
// not apply, NaN when it applies but is unknown (no iterations, no batch size). Per GPU divides by
// the run's devices (PerUnit::Device) or its power domains (PerUnit::Package).
double normalizationDivisor(const RunSummary& run, Scaling scaling, Normalization n,
                            PerUnit per = PerUnit::Device);
double normalizedValue(const RunSummary& run, const StudyColumn& column, Normalization n,
                       PerUnit per = PerUnit::Device);
// The unit of a column under a normalization, e.g. "J/GPU", "J/package", "J/token".
std::string normalizedUnit(const StudyColumn& column, Normalization n,
                           PerUnit per = PerUnit::Device);

// Configuration keys that filter and sort runs: name, label, model, platform, gpus, nodes, tp, pp,
// dp, ep, cp, mbs, gbs, seq_len, recompute, overlap, valid, simulated.
std::span<const std::string_view> studyConfigKeys();
// The text of a configuration key for a run ("" when unknown), as filters compare it.
std::string configValue(const StudyRun& run, std::string_view key);

// "key=value,key=value": runs whose key equals one of the values given for it (values of the same
// key are alternatives, different keys must all match). Names and platforms compare without
// regard to case; booleans accept true/false, yes/no, on/off, 1/0. Throws wl::Error for an unknown
// key or a term without '='.
struct RunFilter {
  std::vector<std::pair<std::string, std::vector<std::string>>> terms;
  bool empty() const { return terms.empty(); }
  bool matches(const StudyRun& run) const;
};
RunFilter parseRunFilter(std::string_view text);

// A sort key: a column id or configuration key, "-KEY" or "KEY:desc" for descending ("KEY:asc"
// is accepted too). An empty text sorts nothing. Throws wl::Error for an unknown key.
struct SortKey {
  std::string key;  // empty: keep the study order
  bool descending = false;
  int column = -1;  // index into studyColumns(), or -1 for a configuration key
};
SortKey parseSortKey(std::string_view text);

struct Delta {
  double absolute = kNaN;  // value - baseline
  double relative = kNaN;  // (value - baseline) / |baseline|; NaN when the baseline is 0
};
Delta deltaOf(double value, double baseline);

struct StudyRow {
  size_t run = 0;              // index into Study::runs
  std::vector<double> values;  // per column, normalized
  std::vector<Delta> deltas;   // per column; NaN without a baseline, or for invalid runs
  std::vector<int> ranks;      // per column; 0 = no rank (invalid run, unknown value, no direction)
};

struct StudyTableOptions {
  Normalization normalization = Normalization::None;
  PerUnit per = PerUnit::Device;
  std::string baseline;  // a key for Study::find; empty: no deltas
  std::string filter;    // parseRunFilter syntax
  // A column id or configuration key; "-KEY" or "KEY:desc" sorts descending. Empty: study order.
  std::string sort;
};

struct StudyTable {
  Normalization normalization = Normalization::None;
  PerUnit per = PerUnit::Device;
  int baseline = -1;           // index into Study::runs, -1 without
  std::vector<StudyRow> rows;  // the runs that pass the filter, sorted
};

// Builds the table. Throws wl::Error for a baseline that names no run (or several), a bad filter
// or an unknown sort key.
StudyTable makeStudyTable(const Study& study, const StudyTableOptions& options);

// Competition ranks ("1224") of values among the entries where `eligible` is true and the value
// is finite: 1 is the best; 0 for the others. Better::None gives no ranks (all 0).
std::vector<int> rankValues(const std::vector<double>& values, const std::vector<bool>& eligible,
                            Better better);

}  // namespace wl
