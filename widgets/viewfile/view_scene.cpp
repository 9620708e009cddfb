// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/viewfile/view_scene.h"

#include <QApplication>
#include <QScrollBar>

#include <algorithm>

#include "loaders/core/error.h"
#include "widgets/export/export_dialog.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/track_tree.h"

namespace wl {

std::vector<TrackRow> planWindowRows(const OpenRuns& runs, const TreeState& tree, bool heatmap,
                                     const std::string& heatmapMetric, const ComparePlan& compare) {
  RowPlanOptions o = windowRowOptions(runs);
  o.heatmap = heatmap;
  o.throttleStrip = true;
  if (!heatmapMetric.empty()) o.heatmapMetric = heatmapMetric;
  return planRows(runs, tree, compare, o);
}

std::vector<std::pair<int, int>> comparedGpus(const RunFile& a, const RunFile& b, PairBy by) {
  std::vector<std::pair<int, int>> pairs = pairGpus(a, b, by);
  if (pairs.empty() && by == PairBy::Rank) pairs = pairGpus(a, b, PairBy::Index);
  return pairs;
}

ComparePlan viewComparePlan(const OpenRuns& runs, const ViewCompare& c) {
  const RunFile& a = *runs.at(static_cast<size_t>(c.runA));
  const RunFile& b = *runs.at(static_cast<size_t>(c.runB));
  std::vector<std::string> metrics;
  for (const std::string& id : c.differenceMetrics)
    if (a.series().metric(id) && b.series().metric(id)) metrics.push_back(id);
  return comparePlan(runs, c.runA, c.runB, comparedGpus(a, b, c.pairBy), std::move(metrics),
                     c.layout);
}

TimeWarp viewAlignment(const RunFile& a, const RunFile& b, const ViewCompare& c) {
  switch (c.align) {
    case AlignMode::Absolute:
      return TimeWarp::shift(0);
    case AlignMode::Start:
      break;
    case AlignMode::Warp:
      if (auto w = iterationWarp(a, b)) return *w;
      break;
    case AlignMode::Iteration:
      if (auto off = alignAtIteration(a, b, c.step)) return TimeWarp::shift(*off);
      break;
    case AlignMode::Event:
      return TimeWarp::shift(c.offsetB);
  }
  return TimeWarp::shift(alignAtStart(a, b));
}

TreeState defaultTreeState(const OpenRuns& runs) {
  TrackTree tree;
  for (size_t i = 0; i < runs.size(); ++i)
    tree.addRun(runs[i], static_cast<int>(i));
  return tree.state();
}

TreeState treeChanges(const TreeState& now, const TreeState& defaults) {
  TreeState changes;
  for (const auto& [key, shown] : now.shown)
    if (defaults.isShown(key) != shown) changes.shown[key] = shown;
  for (const auto& [key, pos] : now.order) {
    auto it = defaults.order.find(key);
    if (it == defaults.order.end() || it->second != pos) changes.order[key] = pos;
  }
  changes.pinned = now.pinned;
  return changes;
}

TreeState withTreeChanges(TreeState defaults, const TreeState& changes) {
  for (const auto& [key, shown] : changes.shown)
    defaults.shown[key] = shown;
  for (const auto& [key, pos] : changes.order)
    defaults.order[key] = pos;
  defaults.pinned = changes.pinned;
  return defaults;
}

namespace {

int64_t originOf(const TimelinePage& page) {
  return page.store()->run(0).info().start_ns;
}

TimeRange shifted(TimeRange r, int64_t by) {
  return {r.t0 + by, r.t1 + by};
}

}  // namespace

void capturePage(const TimelinePage& page, ViewState& view) {
  const int64_t origin = originOf(page);
  view.range = shifted(page.viewport()->range(), -origin);
  view.selection.reset();
  if (auto s = page.viewport()->selection()) view.selection = shifted(*s, -origin);
  TimelineView* tv = page.view();
  view.kernel.reset();
  if (const KernelRef k = tv->selectedKernel(); k.valid())
    view.kernel =
        ViewKernel{k.run, k.track, static_cast<int64_t>(k.event), k.data.start_ns - origin};
  view.folded.clear();
  for (const TrackRow& r : tv->rows())
    if (r.isHeader() && tv->isCollapsed(r.key)) view.folded.insert(r.key);
  view.scroll = tv->verticalScrollBar()->value();
  view.yMode = tv->renderer().style().yMode;
  view.throttleBands = tv->renderer().style().throttleTint;
  // The notes the page draws, back on their runs' own starts.
  view.notes.clear();
  for (const NoteMark& m : tv->notes()) {
    const int64_t start = page.store()->run(m.run).info().start_ns;
    view.notes.push_back(ViewNote{m.run, Note{m.range.t0 - start, m.range.t1 - start, m.gpus,
                                              m.ranks, m.text.toStdString()}});
  }
}

namespace {

// The kernel of a view with its data (name, class) read from the run; invalid when the run has
// no such event.
KernelRef readKernel(const TileStore& store, const ViewKernel& k, int64_t origin) {
  if (k.run < 0 || static_cast<size_t>(k.run) >= store.runs().size()) return {};
  const RunFile& run = store.run(k.run);
  if (k.track < 0 || static_cast<size_t>(k.track) >= run.tracks().size()) return {};
  try {
    const int64_t t = origin + k.start;
    const KernelSlice s =
        run.readKernels(static_cast<size_t>(k.track), t, t + 1, RunFile::kAllKernelColumns);
    for (size_t i = 0; i < s.events.size(); ++i) {
      const size_t index = s.index.empty() ? s.first + i : s.index[i];
      if (index == static_cast<size_t>(k.event))
        return KernelRef{k.run, k.track, static_cast<long>(k.event), s.events[i]};
    }
  } catch (const Error&) {
  }
  return {};
}

}  // namespace

void showOnPage(TimelinePage& page, const ViewState& view) {
  const int64_t origin = originOf(page);
  TimelineView* tv = page.view();
  tv->setYMode(view.yMode);
  page.setThrottleTint(view.throttleBands);
  for (const TrackRow& r : tv->rows())
    if (r.isHeader()) tv->setCollapsed(r.key, view.folded.count(r.key) > 0);
  page.viewport()->setRange(shifted(view.range, origin));
  page.viewport()->setSelection(view.selection ? std::optional(shifted(*view.selection, origin))
                                               : std::nullopt);
  tv->selectKernel(view.kernel ? readKernel(*page.store(), *view.kernel, origin) : KernelRef{});
  tv->verticalScrollBar()->setValue(view.scroll);
  std::vector<NoteMark> marks;
  for (const ViewNote& n : view.notes)
    if (n.run >= 0 && static_cast<size_t>(n.run) < page.store()->runs().size())
      for (NoteMark& m : noteMarks(n.run, {n.note}, page.store()->run(n.run).info().start_ns))
        marks.push_back(std::move(m));
  tv->setNotes(std::move(marks));
}

Theme viewTheme(const QString& name) {
  if (name == QLatin1String("dark")) return Theme::dark();
  if (name == QLatin1String("light")) return Theme::light();
  return Theme::fromPalette(QApplication::palette());
}

std::unique_ptr<TimelinePage> makeViewPage(const OpenRuns& runs, const ViewState& view,
                                           QSize size) {
  auto page = std::make_unique<TimelinePage>();
  page->resize(size);
  for (const auto& run : runs)
    page->addRun(run);
  page->setTheme(viewTheme(view.theme));
  ComparePlan cmp;
  TimelineRenderer& r = page->view()->renderer();
  if (view.compare && runs.size() >= 2) {
    const ViewCompare& c = *view.compare;
    cmp = viewComparePlan(runs, c);
    const TimeWarp warp =
        viewAlignment(*runs[static_cast<size_t>(c.runA)], *runs[static_cast<size_t>(c.runB)], c);
    r.setRunDisplay(c.runB, r.displays().of(c.runB).withWarp(warp));
    r.setRunDisplay(c.runA, r.displays().of(c.runA).withLabel(cmp.labelA));
    r.setRunDisplay(c.runB, r.displays().of(c.runB).withLabel(cmp.labelB));
    page->updateBounds();
  }
  const TreeState tree = withTreeChanges(defaultTreeState(runs), view.tracks);
  page->setRows(planWindowRows(runs, tree, view.heatmap, view.heatmapMetric, cmp));
  showOnPage(*page, view);
  return page;
}

ViewFigure::ViewFigure(const OpenRuns& runs, const ViewState& view)
    : page_(makeViewPage(runs, view)), figure_(timelineFigure(*page_, false)) {}

ViewFigure::~ViewFigure() = default;

Figure& ViewFigure::figure() {
  return *figure_;
}

ExportRequest viewExportRequest(const OpenRuns& runs, const ViewState& view,
                                std::string_view viewName) {
  ExportRequest rq;
  const int a = view.compare ? view.compare->runA : 0;
  rq.run = runs.at(static_cast<size_t>(a));
  if (view.compare) {
    rq.compare = runs.at(static_cast<size_t>(view.compare->runB));
    rq.align = view.compare->align == AlignMode::Event ? AlignMode::Start : view.compare->align;
    rq.layout = view.compare->layout;
  }
  const int64_t origin = runs.front()->info().start_ns;
  rq.range = shifted(view.range, origin);
  const TreeState tree = withTreeChanges(defaultTreeState(runs), view.tracks);
  const RunFile& run = *rq.run;
  for (const GpuInfo& g : run.gpus())
    if (tree.isShown(rowkey::gpu(a, g.id))) rq.gpus.push_back(g.id);
  if (viewName == "heatmap") {
    rq.metrics = {view.heatmapMetric};
    return rq;
  }
  if (!rq.gpus.empty())
    for (const MetricInfo& m : orderedMetrics(run.series()))
      if (tree.isShown(rowkey::metric(a, rq.gpus.front(), m.id),
                       isDefaultMetric(m.id, run.series())))
        rq.metrics.push_back(m.id);
  if (!run.tracks().empty() && tree.isShown(rowkey::kernels(a))) {
    rq.metrics.emplace_back("kernels");
    // Steps when the steps of a rank of the GPUs shown are (a figure has them for all or none).
    for (const RankInfo& rank : run.ranks())
      if (std::find(rq.gpus.begin(), rq.gpus.end(), rank.gpu) != rq.gpus.end() &&
          !run.iterations().empty() && tree.isShown(rowkey::steps(a, rank.rank))) {
        rq.metrics.emplace_back("steps");
        break;
      }
  }
  return rq;
}

}  // namespace wl
