// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The row plan: which rows the timeline shows, in which order, with which labels and heights.
// One pure function, planRows(), plans them for the window (from the track tree's state), for a
// comparison of two runs (stacked, paired or overlaid), and for every exported figure, so the
// screen and the files cannot disagree about what a row is.
//
// A row is a TrackRow: what it draws (RowContent, a variant with one small struct per kind: the
// run, GPU, metric, rank or stream it stands for and nothing else) plus what the label column
// shows (label, detail), its identity (key, the group header it folds under) and its height.
// Nothing here reads samples or kernels: planning looks at run metadata only, so it costs
// microseconds and is tested without widgets (tests/timeline/row_plan_test.cpp).
//
// Adding a kind of row (the throttle strip under a GPU's header, a throttle-reason heatmap, a
// package group of MI250 GCDs): a struct here, a RowKind value at the same position, where
// planRows puts it, and its geometry and painting in TimelineRenderer.

#include <QString>

#include <compare>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "loaders/format/run_file.h"

namespace wl {

// ---- What a row draws: one struct per kind ----

// A run's title bar (in windows and figures showing several runs).
struct RunHeaderRow {
  int run = 0;
  auto operator<=>(const RunHeaderRow&) const = default;
};
// The header of a group of rows: a GPU's (gpu >= 0), a rank's (rank >= 0), a pair of compared
// GPUs (gpu of run A, gpu2 of run B), a power domain's of several devices (domain >= 0: an MI250
// package, its power above its GCDs) or a section (all -1). Click to fold the group.
struct GroupHeaderRow {
  int run = 0;
  int gpu = -1, rank = -1;
  int run2 = -1, gpu2 = -1;  // pair headers: the GPU of run B
  int domain = -1;           // package headers: the PowerDomain id
  auto operator<=>(const GroupHeaderRow&) const = default;
};
// One GPU's metric over time (the min-max envelope of its samples).
struct CounterRow {
  int run = 0;
  int gpu = 0;
  int metric = 0;  // index into the run's telemetry metrics
  auto operator<=>(const CounterRow&) const = default;
};
// One kernel stream of a rank.
struct KernelsRow {
  int run = 0;
  int rank = 0;
  int track = 0;  // index into RunFile::tracks()
  auto operator<=>(const KernelsRow&) const = default;
};
// A rank's iterations (and phase annotations).
struct StepsRow {
  int run = 0;
  int rank = 0;
  auto operator<=>(const StepsRow&) const = default;
};
// Every GPU of a run as one thin line each, coloured by a metric. With domainPower (the power
// metric of a run with packages), every device's line shows its power domain's power: both GCDs
// of an MI250 package show the package's power, though only one of them reports it.
struct HeatmapRow {
  int run = 0;
  int metric = 0;
  bool domainPower = false;
  auto operator<=>(const HeatmapRow&) const = default;
};
// A metric of GPU a (run A) minus the same metric of GPU b (run B), on the display clock.
struct DifferenceRow {
  CounterRow a, b;
  auto operator<=>(const DifferenceRow&) const = default;
};

// A GPU's throttle strip: one thin row under its header, coloured by the throttle reason, its
// strength the clock deficit (throttle_strip.h).
struct ThrottleStripRow {
  int run = 0;
  int gpu = 0;
  auto operator<=>(const ThrottleStripRow&) const = default;
};
// Every GPU of a run as one thin line each, coloured by the dominant throttle reason, its
// strength the clock deficit (the heatmap's "Throttling" choice).
struct ThrottleHeatmapRow {
  int run = 0;
  auto operator<=>(const ThrottleHeatmapRow&) const = default;
};

// A metric of GPU a (run A) and of GPU b (run B) in one track, in two colours (the overlay
// layout of a comparison), B on the display clock through its alignment.
struct OverlayRow {
  CounterRow a, b;
  auto operator<=>(const OverlayRow&) const = default;
};

using RowContent =
    std::variant<RunHeaderRow, GroupHeaderRow, CounterRow, KernelsRow, StepsRow, HeatmapRow,
                 DifferenceRow, ThrottleStripRow, ThrottleHeatmapRow, OverlayRow>;

// The kinds in the variant's order (TrackRow::kind() is the variant's index).
enum class RowKind {
  RunHeader,
  GroupHeader,
  Counter,
  Kernels,
  Steps,
  Heatmap,
  Difference,
  ThrottleStrip,
  ThrottleHeatmap,
  Overlay
};
static_assert(std::variant_size_v<RowContent> == static_cast<size_t>(RowKind::Overlay) + 1);

// The run a row belongs to (run A for a difference).
int rowRun(const RowContent& c);

struct TrackRow {
  RowContent content;
  QString label;   // shown in the label column
  QString detail;  // second line / tooltip; a counter's or difference's unit
  QString key;     // stable identity (fold state, the track tree's item)
  QString group;   // key of the group header it folds under ("" for top-level headers; a GCD's
                   // header folds under its package's)
  int height = 40;
  bool pinned = false;

  RowKind kind() const { return static_cast<RowKind>(content.index()); }
  int run() const { return rowRun(content); }
  template <class T>
  const T* as() const {
    return std::get_if<T>(&content);
  }
  bool isHeader() const { return kind() == RowKind::RunHeader || kind() == RowKind::GroupHeader; }
};

// ---- Keys: one scheme for rows and track-tree items ----
namespace rowkey {
QString run(int run);                                     // "r0"
QString telemetry(int run);                               // "r0/telemetry" (the tree's group)
QString node(int run, int node);                          // "r0/node1"
QString gpu(int run, int gpu);                            // "r0/g3"
QString metric(int run, int gpu, const std::string& id);  // "r0/g3/power_w"
QString kernels(int run);                                 // "r0/kernels" (the tree's group)
QString rank(int run, int rank);                          // "r0/rank2"
QString steps(int run, int rank);                         // "r0/rank2/steps"
QString stream(int run, int rank, int64_t stream);        // "r0/rank2/s7"
QString heatmap(int run);                                 // "r0/heatmap"
QString package(int run, int domain);                     // "r0/p1" (a domain of several GPUs)
QString packageMetric(int run, int domain, const std::string& id);  // "r0/p1/power_w"
QString throttle(int run, int gpu);                                 // "r0/g3/throttle"
}  // namespace rowkey

// ---- The inputs of a plan ----

// What the user chose in the track tree, as a plain value: check states, pins and the order of
// items moved by drag and drop, by key (rowkey). An item not listed keeps its default: shown
// (metrics: the default metrics only, see isDefaultMetric), not pinned, in the run's order.
// Unchecking an item hides everything under it.
struct TreeState {
  std::map<QString, bool> shown;
  std::set<QString> pinned;
  std::map<QString, int> order;  // position among its siblings

  bool isShown(const QString& key, bool byDefault = true) const;
  bool isPinned(const QString& key) const { return pinned.count(key) > 0; }
};

// How two open runs are laid out for a comparison. Stacked: all of run A, all of run B, then
// the A - B rows. Paired: per GPU pair, for each metric GPU k of A, GPU k of B and A - B, then
// the kernels of the pair's ranks. Overlay: as paired, but A and B in one track (OverlayRow)
// in two colours, named by what differs between the runs (labelA, labelB).
enum class CompareLayout { Stacked, Paired, Overlay };

struct ComparePlan {
  bool active = false;
  int runA = 0, runB = 1;
  CompareLayout layout = CompareLayout::Stacked;
  std::vector<std::pair<int, int>> pairs;      // (GPU of A, GPU of B)
  std::vector<std::string> differenceMetrics;  // metric ids with an A - B row
  QString labelA = QStringLiteral("A"), labelB = QStringLiteral("B");  // overlay legends
};

// The one place a comparison is planned (the window's compare mode and `wattline export --view
// compare`): runs A and B (indices into `runs`), these GPU pairs, an A - B row per metric in
// `differenceMetrics`, and the overlay legends named by what differs between the two runs
// (runDifferences: "mbs4" / "mbs1", else the run names).
ComparePlan comparePlan(const std::vector<std::shared_ptr<const RunFile>>& runs, int runA, int runB,
                        std::vector<std::pair<int, int>> pairs,
                        std::vector<std::string> differenceMetrics, CompareLayout layout);

// "paired" / "overlay" / "stacked" (the CLI's --layout, the GUI's settings) and back; nullopt
// for another name.
QString compareLayoutName(CompareLayout layout);
std::optional<CompareLayout> compareLayoutFromName(const QString& name);

// Window: the track tree's structure (per run: its GPUs by node, then its ranks) and short
// labels under headers. Figure: self-describing rows for a paper, a GPU's ranks under it
// ("Rank 1 stream 7"), no run header for a single run.
enum class RowStyle { Window, Figure };

struct RowPlanOptions {
  RowStyle style = RowStyle::Window;
  bool heatmap = false;                  // the window's GPU telemetry as one heatmap row per run
  std::string heatmapMetric = "temp_c";  // kThrottleHeatmapMetric: the reason heatmap
  // A throttle strip under each GPU's header (runs with an SM clock). The window and the
  // timeline figures turn it on; off here so plans that do not ask for it stay as they were.
  bool throttleStrip = false;
  // Figures in heatmap mode: the reason heatmap after the metrics' heatmaps.
  bool throttleHeatmap = false;
  int throttleStripHeight = 10;
  int counterHeight = 44;
  int kernelHeight = 24;
  int compareCounterHeight = 44;  // the A and B rows of a paired comparison
  int differenceHeight = 44;
};

// The window's row heights for the open runs: compact rows (counters 32 px, kernels 20 px) from
// 8 GPUs on, so the kernels are not far below the counters; comparison rows as high as counters.
RowPlanOptions windowRowOptions(const std::vector<std::shared_ptr<const RunFile>>& runs);

// The rows, in order. Pinned rows come first (in their order). Throws nothing: keys that name no
// item are ignored.
std::vector<TrackRow> planRows(const std::vector<std::shared_ptr<const RunFile>>& runs,
                               const TreeState& tree, const ComparePlan& compare,
                               const RowPlanOptions& options);

// What a figure of one run shows: these GPUs (in this order), these metrics (ids, in this order)
// and, per GPU, its ranks' kernel streams and steps. A tree state for planRows (rows of other
// GPUs and metrics hidden; the order given).
struct FigureSelection {
  std::vector<int> gpus;
  std::vector<std::string> metrics;
  bool kernels = false, steps = false;
};
TreeState figureTreeState(const RunFile& run, int runIndex, const FigureSelection& selection);

// The heatmap "metric" that draws the reason heatmap (ThrottleHeatmapRow).
inline constexpr const char* kThrottleHeatmapMetric = "throttle";

// ---- Helpers shared with the track tree ----

// Shown by default: power, GPU temperature, SM clock and utilization, when the run has any of
// them (a run with none of them shows everything).
bool isDefaultMetric(const std::string& id, const SeriesGroupMeta& tel);
// The run's metrics in the order of core/metrics.h, unknown ones after them in file order.
std::vector<MetricInfo> orderedMetrics(const SeriesGroupMeta& tel);
// The title of a run: its name (or file name), "[simulated]" when it is.
QString runTitle(const RunFile& run);
// Index of a metric id in a run's telemetry metrics, or -1.
int metricIndex(const RunFile& run, const std::string& id);
// Heatmap row height for n GPUs: rows of 2..14 px, about 600 px in all.
int heatmapRowHeight(size_t gpus);
// Power domains shown as a package (node > package > GCD): domains of several devices. Boards
// (H100, H200) are not, so their runs keep the plain node > GPU structure.
bool isPackage(const PowerDomain& d);
bool hasPackages(const RunFile& run);
// Metrics a package owns when one of its devices reports the package's value (power_gpu >= 0):
// power and the energy counter. They are shown once, above the package's GCDs.
bool isDomainMetric(const std::string& id);
// The rows left when the groups in `collapsed` are folded: a row is hidden when its group is
// folded or its group's header is hidden (a folded package hides its GCDs and their counters).
std::vector<size_t> unfoldedRows(const std::vector<TrackRow>& rows,
                                 const std::set<QString>& collapsed);

}  // namespace wl
