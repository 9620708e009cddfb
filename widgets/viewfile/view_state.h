// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A view of the timeline as a plain value, and its JSON (a view file, docs/format.md#view-files):
// the runs (path and content hash), the visible range and the selection, the tracks shown,
// pinned, moved and folded, the heatmap, the comparison of two runs, the y-axis mode and the
// theme. File > Save View writes one, `wattline VIEW.json` and `wattline export --view-file`
// read it.
//
// Times are ns relative to the first run's start on the display clock (B through its
// alignment), so a view does not depend on where the runs' clocks started and every value stays
// well inside a double's exact integers. The tracks are stored as the changes to the default
// tree (what a fresh window shows), so a view of a run with many tracks stays small.
//
// Reading never trusts the file: a missing field, a wrong type or an unknown version is a
// wl::Error naming the file, the JSON path ($.runs[1].path) and what was expected. Fields it
// does not know are ignored (a later version may add them). "notes" carries the notes pinned to
// the timeline (analysis/notes.h), each with its run's index; a view without it has none.
// QtCore only: no widget is needed to read or write a view.

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/notes.h"
#include "analysis/run_alignment.h"
#include "loaders/core/time_range.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/render/timeline_renderer.h"

namespace wl {

// Tree states are equal when they list the same items alike.
inline bool operator==(const TreeState& x, const TreeState& y) {
  return x.shown == y.shown && x.pinned == y.pinned && x.order == y.order;
}

inline constexpr const char* kViewFormat = "wattline-view";
inline constexpr int kViewVersion = 1;

struct ViewRun {
  // As written in the file: relative to the view file's folder ('/' separators), or absolute
  // (Copy View writes absolute paths: the one-line form has no folder of its own).
  QString path;
  QString hash;  // "sha256:<64 hex digits>" of runContentHash() (view_runs.h)
  bool operator==(const ViewRun&) const = default;
};

// The comparison of two runs (the Compare dock and View > Compare Layout).
struct ViewCompare {
  int runA = 0, runB = 1;  // indices into ViewState::runs
  AlignMode align = AlignMode::Start;
  int64_t step = 0;     // AlignMode::Iteration: the iteration aligned
  int64_t offsetB = 0;  // AlignMode::Event: display time = B's time + offsetB
  PairBy pairBy = PairBy::Rank;
  std::vector<std::string> differenceMetrics;  // metric ids with an A - B row
  CompareLayout layout = CompareLayout::Paired;
  bool operator==(const ViewCompare&) const = default;
};

// A kernel clicked in the timeline (KernelRef without its data).
struct ViewKernel {
  int run = 0, track = 0;
  int64_t event = 0;  // index within the track
  int64_t start = 0;  // its start on its run's clock, relative to the first run's start
  bool operator==(const ViewKernel&) const = default;
};

// A note of one of the view's runs (its times relative to that run's own start, as in the run's
// notes sidecar).
struct ViewNote {
  int run = 0;  // index into ViewState::runs
  Note note;
  bool operator==(const ViewNote&) const = default;
};

struct ViewState {
  std::vector<ViewRun> runs;
  TimeRange range{0, 1};                 // relative to the first run's start, display clock
  std::optional<TimeRange> selection;    // likewise
  std::optional<ViewKernel> kernel;      // the selected kernel
  TreeState tracks;                      // changes to the default tree state (by key)
  std::set<QString> folded;              // group headers folded in the timeline
  int scroll = 0;                        // vertical scroll of the rows, px
  bool heatmap = false;                  // View > Heatmap of GPUs
  std::string heatmapMetric = "temp_c";  // or kThrottleHeatmapMetric
  std::optional<ViewCompare> compare;    // two or more runs open
  YMode yMode = YMode::SharedFitted;
  bool throttleBands = false;                // View > Throttle Bands Behind Tracks
  QString theme = QStringLiteral("system");  // system, light or dark
  std::vector<ViewNote> notes;               // the runs' notes

  bool operator==(const ViewState&) const = default;
};

// JSON: indented for a file, or on one line (Copy View). Writing does not fail.
QByteArray viewToJson(const ViewState& view, bool compact = false);
// Parses a view; `source` names it in errors (the file, or "the clipboard"). Throws wl::Error
// "SOURCE: $.path: expected ..., got ...".
ViewState viewFromJson(const QByteArray& json, const QString& source);
// Reads and parses a view file, or the view a PNG or SVG figure carries (export/figure_view.h);
// wl::Error when it cannot be read.
ViewState readViewFile(const QString& path);
// Writes through a temporary file (wl::Error naming the file on failure).
void writeViewFile(const ViewState& view, const QString& path);

// Names in the file (and back: nullopt for another name).
QString yModeName(YMode mode);
std::optional<YMode> yModeFromName(const QString& name);
QString alignName(AlignMode mode);  // "warp", "iteration", "start", "absolute", "event"
std::optional<AlignMode> alignFromName(const QString& name);
QString pairByName(PairBy by);  // "rank", "slot", "index"
std::optional<PairBy> pairByFromName(const QString& name);

}  // namespace wl
