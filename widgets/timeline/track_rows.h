// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rows of the timeline, in the order and visibility of the track tree: per run a header;
// per GPU a group header and one counter row per shown metric (or, in heatmap mode, one heatmap
// row for all GPUs); per rank a group header, a steps row and one row per shown stream.

#include <QStandardItemModel>
#include <QString>

#include <memory>
#include <string>
#include <vector>

#include "format/run_file.h"

namespace wl {

enum class RowKind { RunHeader, GroupHeader, Counter, Kernels, Steps, Heatmap, Difference };

struct TrackRow {
  RowKind kind = RowKind::Counter;
  int run = 0;
  int gpu = -1;     // Counter, GroupHeader of a GPU
  int metric = -1;  // Counter, Heatmap: index into the run's telemetry metrics
  int track = -1;   // Kernels: index into RunFile::tracks()
  int rank = -1;    // Kernels, Steps, GroupHeader of a rank
  // Difference rows (A - B): the second run, its GPU and metric index (run/gpu/metric are A's).
  int run2 = -1, gpu2 = -1, metric2 = -1;
  QString label;   // shown in the label column
  QString detail;  // second line / tooltip
  QString key;     // stable identity (collapse state, settings)
  QString group;   // key of the group header it belongs to ("" for headers)
  int height = 40;
  bool pinned = false;
};

struct RowOptions {
  bool heatmap = false;  // GPU telemetry as one heatmap row per run
  std::string heatmapMetric = "temp_c";
  int counterHeight = 44;
  int kernelHeight = 24;
};

// Walks the track tree's model (see TrackTree) in order.
std::vector<TrackRow> buildRows(const QStandardItemModel& tree,
                                const std::vector<std::shared_ptr<const RunFile>>& runs,
                                const RowOptions& options);

// Heatmap row height for n GPUs: rows of 2..14 px, about 600 px in all.
int heatmapRowHeight(size_t gpus);

}  // namespace wl
