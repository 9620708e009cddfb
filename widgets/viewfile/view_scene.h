// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A view (view_state.h) on a timeline page: what the main window and `wattline export
// --view-file` share, so that a view drawn headless is the view the window shows.
//
// - The window's rows (planWindowRows) from the track tree's state, the heatmap and the
//   comparison: the main window plans its rows with it too.
// - A comparison's alignment computed at once (viewAlignment), as the Compare dock computes it
//   off the UI thread.
// - The tree state as changes to the default tree (what a fresh window shows for the runs).
// - The page's part of a view (range, selection, kernel, folds, scroll, y-axis mode, throttle
//   bands) captured from a page and shown on one.
// - A headless page showing a whole view, and the figure File > Export Timeline draws of it.

#include <QSize>

#include <memory>
#include <string>
#include <vector>

#include "analysis/compare/time_warp.h"
#include "loaders/format/run_file.h"
#include "widgets/export/export_views.h"
#include "widgets/export/timeline_figure.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/viewfile/view_state.h"

namespace wl {

class TimelinePage;

using OpenRuns = std::vector<std::shared_ptr<const RunFile>>;

// The rows of the main window: its row heights for the runs, a throttle strip per GPU, the
// heatmap of `heatmapMetric` (empty: the default) when `heatmap`, and the comparison `compare`.
std::vector<TrackRow> planWindowRows(const OpenRuns& runs, const TreeState& tree, bool heatmap,
                                     const std::string& heatmapMetric, const ComparePlan& compare);

// GPU pairs of a comparison: by `by`, and by index when pairing by rank finds none (runs
// without ranks), as the Compare dock pairs them.
std::vector<std::pair<int, int>> comparedGpus(const RunFile& a, const RunFile& b, PairBy by);
// The comparison plan of a view (its runs, pairs, A - B metrics both runs have, layout).
ComparePlan viewComparePlan(const OpenRuns& runs, const ViewCompare& compare);
// B's time onto A's clock as the Compare dock aligns it: the iteration warp (else the starts),
// iteration `step` (else the starts), the starts, none (absolute) or the view's event offset.
TimeWarp viewAlignment(const RunFile& a, const RunFile& b, const ViewCompare& compare);

// The track tree's state for freshly opened runs (every item at its default).
TreeState defaultTreeState(const OpenRuns& runs);
// What differs from `defaults` (check states and positions; the pins, all of them).
TreeState treeChanges(const TreeState& now, const TreeState& defaults);
// `defaults` with `changes` applied (the inverse of treeChanges).
TreeState withTreeChanges(TreeState defaults, const TreeState& changes);

// The page's part of the view: range, selection, kernel (relative to run 0's start), folded
// groups, scroll, y-axis mode, throttle bands and the notes drawn. The page must show runs.
void capturePage(const TimelinePage& page, ViewState& view);
// Shows that part on a page whose runs, alignment and rows are the view's.
void showOnPage(TimelinePage& page, const ViewState& view);

// The renderer's theme for a view's theme name (system: the application's palette).
Theme viewTheme(const QString& name);

// A page (not shown) with the runs of a view, aligned, its rows planned and the view shown, at
// `size` (the scroll and rows on screen depend on it).
std::unique_ptr<TimelinePage> makeViewPage(const OpenRuns& runs, const ViewState& view,
                                           QSize size = QSize(1400, 880));

// What `wattline export --view-file` draws: the timeline of a view, every row not folded away,
// as File > Export Timeline draws it (timelineFigure), from a page it owns.
class ViewFigure {
 public:
  ViewFigure(const OpenRuns& runs, const ViewState& view);
  ~ViewFigure();
  Figure& figure();

 private:
  std::unique_ptr<TimelinePage> page_;  // outlives the figure, which draws from its store
  std::unique_ptr<TimelineFigure> figure_;
};

// A view as the request of an export view (`wattline export --view-file V.json --view NAME`):
// run A (the first run without a comparison) and B, the range, A's shown GPUs, the metrics shown
// for its first shown GPU (and kernels, steps), or the heatmap's metric for `heatmap`, the
// alignment and the layout.
ExportRequest viewExportRequest(const OpenRuns& runs, const ViewState& view,
                                std::string_view viewName);

}  // namespace wl
