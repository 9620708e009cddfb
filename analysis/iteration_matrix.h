// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rank x iteration matrix (docs/user-guide.md, "The iteration matrix"): one row per GPU or
// rank, one column per iteration, each cell one number of the cost of throttling
// (throttle_cost.h) so the eye finds which GPU cost which steps:
//
//   - Cost: the seconds a GPU's throttling added to the iteration's duration (its share of the
//     iteration's cost after propagation through the collectives and what slack absorbed:
//     IterationCost::gpu_cost_s). Every iteration has it, traced or estimated from telemetry.
//   - Lateness: the seconds a rank arrived after the earliest rank at the iteration's last
//     collective (IterationCost::rank_late_s). Only traced iterations have it; the others are
//     unknown ("not traced"), never 0.
//
// A plain value built from a ThrottleCost, with the words for a cell (the GUI's hover, tests), so
// the matrix, `wattline explain` and `analyze --json` give one number.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/throttle_cost.h"
#include "loaders/core/run_model.h"

namespace wl {

enum class MatrixMeasure : uint8_t { Cost, Lateness };
// "cost", "lateness"; and back (false for another name).
std::string_view matrixMeasureId(MatrixMeasure m);
bool matrixMeasureFromId(std::string_view id, MatrixMeasure& out);

struct MatrixColumn {
  int64_t step = 0;
  int64_t start_ns = 0, end_ns = 0;
  double step_s = 0.0;
  double cost_s = 0.0;  // the iteration's whole cost
  CostMethod method = CostMethod::Telemetry;
};

struct IterationMatrix {
  MatrixMeasure measure = MatrixMeasure::Cost;
  std::vector<int> ids;     // per row: the GPU id (Cost) or rank id (Lateness)
  std::vector<int> gpuOf;   // per row: its GPU id (-1: unknown)
  std::vector<int> rankOf;  // per row: its (first) rank (-1: none)
  std::vector<MatrixColumn> columns;
  std::vector<double> values;  // [row * columns + column], seconds; NaN: unknown
  double max = 0.0;            // the largest known value (0 when none)

  size_t rows() const { return ids.size(); }
  size_t cols() const { return columns.size(); }
  double at(size_t row, size_t col) const { return values[row * columns.size() + col]; }
  bool empty() const { return ids.empty() || columns.empty(); }
};

// The matrix of `cost` (an estimate over the whole run or a range) for `ranks` (the run's, to
// name a rank's GPU and a GPU's rank).
IterationMatrix buildIterationMatrix(const ThrottleCost& cost, const std::vector<RankInfo>& ranks,
                                     MatrixMeasure measure);

// A cell in words, one sentence a line: which step and row, what the number means and how it was
// obtained ("Step 14 · GPU 7", "Its throttling cost the step 0.213 s of 6.480 s (3.3 %) ...").
std::vector<std::string> matrixCellText(const IterationMatrix& m, const ThrottleCost& cost,
                                        size_t row, size_t col);

// The row label: "GPU 7" / "rank 7".
std::string matrixRowLabel(const IterationMatrix& m, size_t row);

}  // namespace wl
