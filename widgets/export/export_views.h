// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The views `wattline export --view NAME` can write, in one table.
//
// A view turns a request (a run, an optional second run, a time range, GPUs, metrics) into a
// Figure. Each view is one function; adding one (the comparison views `compare` and `pareto`
// come with comparison studies) is one function and one row:
//
//   std::unique_ptr<Figure> makeCompareFigure(const ExportRequest& rq);  // rq.compare is set
//   ExportView{"compare", "...", ExportView::kNeedsCompare | ..., &makeCompareFigure},
//
// The analysis views compute only what their chart needs, with the same library functions
// analyzeRun() uses (metricStats, detectThrottle, classUnions/breakdownRank, analyzeBurstiness),
// and draw the same Qt Charts as the analysis panel (analysis_charts.h), so a figure shows the
// numbers `wattline analyze --json` prints.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run_alignment.h"
#include "loaders/core/time_range.h"
#include "loaders/format/run_file.h"
#include "widgets/export/figure.h"
#include "widgets/timeline/model/row_plan.h"

namespace wl {

struct ExportRequest {
  std::shared_ptr<const RunFile> run;
  std::shared_ptr<const RunFile> compare;  // --compare OTHER.h5 (comparison views)
  std::optional<TimeRange> range;          // absolute ns; the whole run when unset
  std::vector<int> gpus;                   // empty: the view's default
  std::vector<std::string> metrics;        // metric ids (timeline also: kernels, steps)
  // Comparisons: how B is placed on A's clock (default: the iteration warp when both runs have
  // iterations, else the starts) and how the rows are laid out (default: paired).
  std::optional<AlignMode> align;
  std::optional<CompareLayout> layout;
};

// --align names: "warp", "iteration" (a shift at the second common iteration), "start",
// "absolute"; nullopt for another.
std::optional<AlignMode> alignModeFromName(std::string_view name);
// The --align names, in that order (the man pages and shell completion list them).
std::vector<std::string> alignModeNames();

struct ExportView {
  // Which request fields a view reads (the CLI rejects the others as bad usage).
  enum Uses : unsigned {
    kUsesRange = 1,
    kUsesGpus = 2,
    kUsesMetrics = 4,
    kNeedsCompare = 8,  // --compare is required
    kUsesAlign = 16,    // --align and --layout (comparisons on a timeline)
  };
  std::string_view name;
  std::string_view summary;
  unsigned uses = 0;
  // Builds the figure; throws wl::Error (one line) when the request does not fit the run.
  std::unique_ptr<Figure> (*make)(const ExportRequest& request) = nullptr;
};

std::span<const ExportView> exportViews();
const ExportView* findExportView(std::string_view name);

// The timeline rows of a headless export: per GPU a header, one counter row per metric, and
// (with "kernels" / "steps" among the metrics) the kernel streams and steps of its rank.
// Defaults: the GPUs of the first node (at most 8) and power, temperature, SM clock and kernels.
struct TimelineSelection {
  std::vector<int> gpus;
  std::vector<std::string> metrics;
};
TimelineSelection defaultTimelineSelection(const RunFile& run);

// The views, callable directly (tests, the GUI).
std::unique_ptr<Figure> makeTimelineFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeHeatmapFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeSummaryFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeBreakdownFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeThrottleFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeIterationMatrixFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeHistogramFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeCompareFigure(const ExportRequest& request);
std::unique_ptr<Figure> makeIterationProfileFigure(const ExportRequest& request);

// "12.5 s – 30 s of 1 h 00 min" for a range of a run ("" for the whole run).
QString rangeCaption(const RunInfo& info, const TimeRange& range);

}  // namespace wl
