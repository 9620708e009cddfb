// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/export_views.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QLogValueAxis>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <set>
#include <thread>
#include <tuple>

#include "analysis/compare/config_diff.h"
#include "analysis/compare/iteration_profile.h"
#include "analysis/compare/time_warp.h"
#include "analysis/iteration_matrix.h"
#include "analysis/notes.h"
#include "analysis/run_alignment.h"
#include "analysis/run_analysis.h"
#include "analysis/study/study.h"
#include "analysis/throttle_cost.h"
#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/core/time_format.h"
#include "widgets/charts/analysis_charts.h"
#include "widgets/charts/compare_charts.h"
#include "widgets/charts/study_charts.h"
#include "widgets/export/chart_figure.h"
#include "widgets/export/matrix_figure.h"
#include "widgets/export/timeline_figure.h"
#include "widgets/timeline/model/tile_store.h"

namespace wl {
namespace {

constexpr std::string_view kKernelsRow = "kernels";
constexpr std::string_view kStepsRow = "steps";
constexpr std::string_view kRampHistogram = "dpdt";

// The analysed range as analyzeRun() clamps it, and the range functions that plan on the
// pyramid are given ("to the end" when it reaches past the run end).
struct Ranges {
  TimeRange range, planned;
};

Ranges rangesOf(const RunFile& run, const std::optional<TimeRange>& r) {
  const RunInfo& info = run.info();
  const int64_t runEnd = std::max(info.end_ns, info.start_ns) + 1;
  Ranges out;
  out.range = rangeInsideRun(run, r.value_or(TimeRange{}));
  out.planned = {out.range.t0, out.range.t1 >= runEnd ? INT64_MAX : out.range.t1};
  return out;
}

std::vector<int> gpusOf(const RunFile& run, const std::vector<int>& asked) {
  AnalysisScope s;
  s.gpus = asked;
  return scopeGpus(run, s);
}

std::string metricList(const RunFile& run) {
  std::string s;
  for (const MetricInfo& m : run.series().metrics)
    s += (s.empty() ? "" : ", ") + m.id;
  return s.empty() ? "none" : s;
}

QString captionDetailFor(const RunFile& run, const TimeRange& range) {
  QString d = runCaptionDetail(run.info(), run.gpus().size());
  const QString r = rangeCaption(run.info(), range);
  if (!r.isEmpty()) d += QStringLiteral(" · ") + r;
  return d;
}

void setCaption(Figure& f, const RunFile& run, const TimeRange& range) {
  f.captionTitle = runCaptionTitle(run.info());
  f.captionDetail = captionDetailFor(run, range);
}

// Only the parts of a RunAnalysis a chart reads, computed with the library's functions.
RunAnalysis analysisBase(const RunFile& run, const Ranges& r) {
  RunAnalysis a;
  a.info = run.info();
  a.range = r.range;
  a.duration_s = static_cast<double>(std::min(r.range.t1, a.info.end_ns) - r.range.t0) * 1e-9;
  return a;
}

// Publication polish of a chart the view owns: axis titles with units, tick values at round
// numbers with the decimals their step needs.
void polishChart(QChart* chart, const QString& xTitle, const QString& yTitle) {
  for (QAbstractAxis* a : chart->axes()) {
    const bool horizontal = a->orientation() == Qt::Horizontal;
    const QString& title = horizontal ? xTitle : yTitle;
    if (!title.isEmpty()) a->setTitleText(title);
    if (auto* v = qobject_cast<QValueAxis*>(a)) {
      v->applyNiceNumbers();
      const double step = v->tickCount() > 1 ? (v->max() - v->min()) / (v->tickCount() - 1) : 1.0;
      int digits = 0;
      while (digits < 4 && std::fabs(step * std::pow(10.0, digits) -
                                     std::round(step * std::pow(10.0, digits))) > 1e-6)
        ++digits;
      v->setLabelFormat(QStringLiteral("%.%1f").arg(digits));
    } else if (auto* l = qobject_cast<QLogValueAxis*>(a)) {
      l->setLabelFormat(QStringLiteral("%g"));
    }
  }
}

// The two bar sets of a per-GPU chart in the metric's timeline colour (the second lighter).
void colourBars(QChart* chart, std::string_view metric) {
  const QColor c = Theme::publication().metricColor(metric);
  for (QAbstractSeries* s : chart->series())
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(s)) {
      const QList<QBarSet*> sets = bars->barSets();
      for (qsizetype i = 0; i < sets.size(); ++i) {
        const QColor ci = i == 0 ? c : c.lighter(160);
        sets[i]->setColor(ci);
        sets[i]->setBorderColor(c.darker(120));
      }
    }
}

// Runs work(i) for i in [0, n) on up to four threads, each taking the next index (the analyses
// are per GPU or per rank and independent; RunFile serializes its reads, so one thread decodes
// while another computes). The first exception is rethrown.
template <class Work>
void inParallel(size_t n, Work&& work) {
  const size_t threads =
      std::min<size_t>(n, std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i)
      work(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (size_t i = next++; i < n; i = next++)
          work(i);
      } catch (...) {
        errors[t] = std::current_exception();
        next = n;
      }
    });
  for (std::thread& th : pool)
    th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// The GPUs split into a few contiguous groups, one per task of inParallel.
std::vector<std::vector<int>> gpuGroups(const std::vector<int>& gpus, size_t groups) {
  groups = std::max<size_t>(1, std::min(groups, gpus.size()));
  std::vector<std::vector<int>> out(groups);
  for (size_t k = 0; k < gpus.size(); ++k)
    out[k * groups / gpus.size()].push_back(gpus[k]);
  return out;
}

// "2–11" for consecutive steps, else "2, 4, 7" (at most 8 listed).
QString stepList(const std::vector<int64_t>& steps) {
  if (steps.empty()) return QObject::tr("none");
  bool consecutive = true;
  for (size_t i = 1; i < steps.size(); ++i)
    consecutive = consecutive && steps[i] == steps[i - 1] + 1;
  if (consecutive && steps.size() > 2)
    return QStringLiteral("%1–%2").arg(steps.front()).arg(steps.back());
  QStringList parts;
  for (size_t i = 0; i < steps.size() && i < 8; ++i)
    parts << QString::number(steps[i]);
  if (steps.size() > 8) parts << QStringLiteral("…");
  return parts.join(QStringLiteral(", "));
}

// The GPU pairs of a comparison (by rank, else by index), restricted to A's GPUs asked for, or
// the first `defaultPairs` of them.
std::vector<std::pair<int, int>> comparePairs(const RunFile& a, const RunFile& b,
                                              const std::vector<int>& asked, size_t defaultPairs) {
  std::vector<std::pair<int, int>> pairs = pairGpus(a, b, PairBy::Rank);
  if (pairs.empty()) pairs = pairGpus(a, b, PairBy::Index);
  if (pairs.empty())
    throw Error(fmt::format("{} and {}: no GPU of one run pairs with a GPU of the other",
                            a.path().string(), b.path().string()));
  if (!asked.empty()) {
    const std::vector<int> wanted = gpusOf(a, asked);
    std::erase_if(pairs, [&](const auto& pr) {
      return std::find(wanted.begin(), wanted.end(), pr.first) == wanted.end();
    });
  } else if (pairs.size() > defaultPairs) {
    pairs.resize(defaultPairs);  // a figure of a few pairs stays readable; --gpus picks others
  }
  return pairs;
}

// B on A's clock for a figure: the warp of the mode asked for (default: warp when both runs
// have iterations), and a caption saying how.
std::pair<TimeWarp, QString> compareAlignment(const RunFile& a, const RunFile& b,
                                              std::optional<AlignMode> asked) {
  int64_t step = -1;
  const AlignMode mode = asked.value_or(defaultAlignment(a, b, &step).first);
  if (mode == AlignMode::Iteration || mode == AlignMode::Warp) defaultAlignment(a, b, &step);
  switch (mode) {
    case AlignMode::Warp:
      if (auto w = iterationWarp(a, b))
        return {*w, QObject::tr("B warped onto A's clock at every common iteration")};
      return {TimeWarp::shift(alignAtStart(a, b)),
              QObject::tr("B aligned at the runs' starts (no common iteration to warp)")};
    case AlignMode::Iteration:
      if (auto off = alignAtIteration(a, b, step))
        return {TimeWarp::shift(*off),
                QObject::tr("B shifted to align iteration %1 of both runs").arg(step)};
      return {TimeWarp::shift(alignAtStart(a, b)),
              QObject::tr("B aligned at the runs' starts (no common iteration)")};
    case AlignMode::Absolute:
      return {TimeWarp{}, QObject::tr("both runs on wall-clock time")};
    case AlignMode::Start:
    case AlignMode::Event:
      break;
  }
  return {TimeWarp::shift(alignAtStart(a, b)), QObject::tr("B aligned at the runs' starts")};
}

}  // namespace

namespace {
constexpr std::array<std::pair<std::string_view, AlignMode>, 4> kAlignNames = {{
    {"warp", AlignMode::Warp},
    {"iteration", AlignMode::Iteration},
    {"start", AlignMode::Start},
    {"absolute", AlignMode::Absolute},
}};
}  // namespace

std::optional<AlignMode> alignModeFromName(std::string_view name) {
  for (const auto& [n, mode] : kAlignNames)
    if (n == name) return mode;
  return std::nullopt;
}

std::vector<std::string> alignModeNames() {
  std::vector<std::string> names;
  for (const auto& a : kAlignNames)
    names.emplace_back(a.first);
  return names;
}

// Two runs on A's clock, B aligned and laid out as asked (default: warped, paired): per GPU
// pair and metric, A's row, B's row (or both in one overlaid row) and A - B.
std::unique_ptr<Figure> makeCompareFigure(const ExportRequest& rq) {
  const RunFile& a = *rq.run;
  const RunFile& b = *rq.compare;
  const Ranges r = rangesOf(a, rq.range);
  const std::vector<std::pair<int, int>> pairs = comparePairs(a, b, rq.gpus, 4);
  std::vector<std::string> metrics = rq.metrics;
  if (metrics.empty())
    metrics = {std::string(metric::kPower), std::string(metric::kTemp),
               std::string(metric::kSmClock)};
  for (const std::string& id : metrics)
    if (metricIndex(a, id) < 0 || metricIndex(b, id) < 0)
      throw Error(fmt::format("{}: no metric '{}' in both runs (A has: {}; B has: {})",
                              a.path().string(), id, metricList(a), metricList(b)));

  auto store = std::make_unique<TileStore>();
  const int ia = store->addRun(rq.run);
  const int ib = store->addRun(rq.compare);
  const auto [warp, how] = compareAlignment(a, b, rq.align);
  const RunDifferences diff = runDifferences(a, b);
  const ComparePlan cmp =
      comparePlan(store->runs(), ia, ib, pairs, metrics, rq.layout.value_or(CompareLayout::Paired));
  TimelineFigureSpec spec;
  spec.range = r.range;
  spec.origin = a.info().start_ns;
  spec.runWarps = {{ib, warp}};
  spec.runLabels = {{ia, cmp.labelA}, {ib, cmp.labelB}};
  FigureSelection selA, selB;
  for (const auto& [ga, gb] : pairs) {
    selA.gpus.push_back(ga);
    selB.gpus.push_back(gb);
  }
  selA.metrics = selB.metrics = metrics;
  TreeState tree = figureTreeState(a, ia, selA);
  const TreeState treeB = figureTreeState(b, ib, selB);  // keys of run B: "r1/..."
  tree.shown.insert(treeB.shown.begin(), treeB.shown.end());
  tree.order.insert(treeB.order.begin(), treeB.order.end());
  RowPlanOptions o;
  o.style = RowStyle::Figure;
  o.compareCounterHeight = 48;
  o.differenceHeight = 40;
  spec.rows = planRows(store->runs(), tree, cmp, o);
  auto fig = std::make_unique<TimelineFigure>(std::move(store), std::move(spec));
  fig->captionTitle =
      QObject::tr("A: %1 · B: %2")
          .arg(QString::fromStdString(a.info().name), QString::fromStdString(b.info().name));
  QString detail = how;
  if (!diff.label_a.empty() && diff.label_a != a.info().name)
    detail += QObject::tr(" · A %1, B %2")
                  .arg(QString::fromStdString(diff.label_a), QString::fromStdString(diff.label_b));
  const QString range = rangeCaption(a.info(), r.range);
  if (!range.isEmpty()) detail += QStringLiteral(" · ") + range;
  fig->captionDetail = detail;
  return fig;
}

// A typical iteration of both runs: per GPU pair and metric, A's and B's mean over the step
// phase with their min-max bands (compare/iteration_profile.h).
std::unique_ptr<Figure> makeIterationProfileFigure(const ExportRequest& rq) {
  const RunFile& a = *rq.run;
  const RunFile& b = *rq.compare;
  const std::vector<std::pair<int, int>> pairs = comparePairs(a, b, rq.gpus, 1);
  IterationProfileOptions opt;
  if (!rq.metrics.empty()) opt.metrics = rq.metrics;
  const IterationProfiles prof = iterationProfiles(a, b, pairs, opt);
  if (prof.pairs.empty())
    throw Error(fmt::format("{} and {}: a typical iteration needs iterations in both runs",
                            a.path().string(), b.path().string()));
  const RunDifferences diff = runDifferences(a, b);
  const QString la = QString::fromStdString(diff.label_a),
                lb = QString::fromStdString(diff.label_b);
  std::vector<QChart*> charts;
  size_t columns = 0;
  for (const PairProfile& pp : prof.pairs) {
    columns = std::max(columns, pp.metrics.size());
    for (const MetricProfilePair& m : pp.metrics)
      charts.push_back(makeIterationProfileChart(m, pp.gpu_a, pp.gpu_b, la, lb));
  }
  if (charts.empty())
    throw Error(fmt::format("{} and {}: none of the metrics asked for is in both runs",
                            a.path().string(), b.path().string()));
  auto fig = std::make_unique<ChartFigure>(std::move(charts), QStringLiteral("iteration-profile"),
                                           static_cast<int>(columns));
  fig->captionTitle = QObject::tr("A typical iteration · A: %1 · B: %2").arg(la, lb);
  fig->captionDetail = QObject::tr("mean and min–max over steps %1 of A and %2 of B")
                           .arg(stepList(prof.steps_a), stepList(prof.steps_b));
  return fig;
}

namespace {

// Throughput against energy per token of the runs, with the Pareto front: the study figure of the
// GUI, from the same summaries `wattline compare` prints (no cache file is written).
std::unique_ptr<Figure> makeParetoFigure(const ExportRequest& rq) {
  StudyLoadOptions o;
  o.cache.write = false;
  o.threads = 1;
  const Study study = loadStudy({rq.run->path(), rq.compare->path()}, o);
  QChart* chart = makeStudyChart(study, {0, 1}, StudyChart::Pareto);
  auto fig = std::make_unique<ChartFigure>(std::vector<QChart*>{chart}, QStringLiteral("pareto"));
  fig->captionTitle = QObject::tr("Throughput against energy per token");
  fig->captionDetail = QStringLiteral("%1 · %2").arg(QString::fromStdString(study.runs[0].label),
                                                     QString::fromStdString(study.runs[1].label));
  return fig;
}

constexpr unsigned kRange = ExportView::kUsesRange, kGpus = ExportView::kUsesGpus,
                   kMetrics = ExportView::kUsesMetrics, kCompare = ExportView::kNeedsCompare;

const std::array kViews = {
    ExportView{"timeline",
               "GPU telemetry rows with y axes, kernel streams and a time axis (--gpus, --metrics "
               "with metric ids, kernels, steps)",
               kRange | kGpus | kMetrics, &makeTimelineFigure},
    ExportView{"heatmap",
               "one row per GPU over time, coloured by a metric (--metrics: one row each; "
               "throttle: by throttle reason and clock deficit)",
               kRange | kMetrics, &makeHeatmapFigure},
    ExportView{"summary", "per-GPU bars: mean and peak power, temperature, SM clock",
               kRange | kGpus, &makeSummaryFigure},
    ExportView{"breakdown",
               "HTA kernel breakdown per rank: compute, exposed communication, memory, idle "
               "(--gpus: the ranks on those GPUs)",
               kRange | kGpus, &makeBreakdownFigure},
    ExportView{"throttle", "per-GPU share of kernel time throttled, stacked by cause",
               kRange | kGpus, &makeThrottleFigure},
    ExportView{"iteration-matrix",
               "one row per GPU, one column per step, coloured by the seconds its throttling cost "
               "the step (--metrics lateness: per rank, its lateness into the step's last "
               "collective; traced steps only)",
               kRange | kGpus | kMetrics, &makeIterationMatrixFigure},
    ExportView{"histogram",
               "power histogram (seconds per 10 W); --metrics power_w,dpdt adds |dP/dt|",
               kRange | kGpus | kMetrics, &makeHistogramFigure},
    ExportView{"compare",
               "two runs on A's clock with A - B rows (needs --compare; --align warp|iteration|"
               "start|absolute, default warp; --layout paired|overlay|stacked, default paired; "
               "--gpus: A's GPUs, default the first 4 pairs; --metrics)",
               kRange | kGpus | kMetrics | kCompare | ExportView::kUsesAlign, &makeCompareFigure},
    ExportView{"iteration-profile",
               "a typical iteration of both runs: mean and min-max band of each metric over the "
               "step phase, A and B overlaid (needs --compare; --gpus: A's GPUs, default the "
               "first pair; --metrics)",
               kGpus | kMetrics | kCompare, &makeIterationProfileFigure},
    ExportView{"pareto",
               "throughput against energy per token of the two runs, with the Pareto front "
               "(needs --compare)",
               kCompare, &makeParetoFigure},
};

}  // namespace

std::span<const ExportView> exportViews() {
  return kViews;
}

const ExportView* findExportView(std::string_view name) {
  for (const ExportView& v : kViews)
    if (v.name == name) return &v;
  return nullptr;
}

QString rangeCaption(const RunInfo& info, const TimeRange& range) {
  const int64_t t0 = std::max(range.t0, info.start_ns);
  const int64_t t1 = std::min(range.t1, info.end_ns);
  if (t0 <= info.start_ns && t1 >= info.end_ns) return {};
  auto at = [&](int64_t t) {
    return t <= info.start_ns ? QStringLiteral("0 s")
                              : QString::fromStdString(formatDuration(t - info.start_ns));
  };
  return QObject::tr("%1 – %2 of %3")
      .arg(at(t0), at(t1), QString::fromStdString(formatDuration(info.end_ns - info.start_ns)));
}

TimelineSelection defaultTimelineSelection(const RunFile& run) {
  TimelineSelection s;
  const auto& gpus = run.gpus();
  if (!gpus.empty()) {
    const int node = gpus.front().node;
    for (const GpuInfo& g : gpus)
      if (g.node == node && s.gpus.size() < 8) s.gpus.push_back(g.id);
  }
  for (std::string_view m : {metric::kPower, metric::kTemp, metric::kSmClock})
    if (run.series().metric(m)) s.metrics.emplace_back(m);
  if (!run.tracks().empty()) s.metrics.emplace_back(kKernelsRow);
  return s;
}

std::unique_ptr<Figure> makeTimelineFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  const TimelineSelection def = defaultTimelineSelection(run);
  const std::vector<int> gpus = rq.gpus.empty() ? def.gpus : gpusOf(run, rq.gpus);
  const std::vector<std::string> metrics = rq.metrics.empty() ? def.metrics : rq.metrics;
  std::vector<int> metricRows;
  bool kernels = false, steps = false;
  for (const std::string& m : metrics) {
    if (m == kKernelsRow) {
      kernels = true;
    } else if (m == kStepsRow) {
      steps = true;
    } else {
      const int idx = metricIndex(run, m);
      if (idx < 0)
        throw Error(fmt::format("{}: no metric '{}' in the run (it has: {}; and kernels, steps)",
                                run.path().string(), m, metricList(run)));
      metricRows.push_back(idx);
    }
  }

  auto store = std::make_unique<TileStore>();
  const int runIndex = store->addRun(rq.run);
  TimelineFigureSpec spec;
  spec.range = {r.range.t0, std::min(r.range.t1, std::max(run.info().end_ns, r.range.t0 + 1))};
  spec.origin = run.info().start_ns;
  FigureSelection sel{gpus, {}, kernels, steps};
  for (int m : metricRows)
    sel.metrics.push_back(run.series().metrics[static_cast<size_t>(m)].id);
  RowPlanOptions o;
  o.style = RowStyle::Figure;
  o.counterHeight = 56;
  o.kernelHeight = 22;
  o.throttleStrip = true;
  spec.rows = planRows(store->runs(), figureTreeState(run, runIndex, sel), {}, o);
  // The run's notes (its sidecar) are drawn as on screen; a bad sidecar is named, not fatal.
  try {
    spec.notes = noteMarks(runIndex, readNotes(run.path().string()), run.info().start_ns);
  } catch (const Error& e) {
    qWarning("wattline: warning: notes not drawn: %s", e.what());
  }
  auto fig = std::make_unique<TimelineFigure>(std::move(store), std::move(spec));
  setCaption(*fig, run, r.range);
  return fig;
}

std::unique_ptr<Figure> makeHeatmapFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  std::vector<std::string> metrics = rq.metrics;
  if (metrics.empty()) {
    if (run.series().metric(metric::kTemp))
      metrics.emplace_back(metric::kTemp);
    else if (!run.series().metrics.empty())
      metrics.push_back(run.series().metrics.front().id);
  }
  if (metrics.empty())
    throw Error(
        fmt::format("{}: the run has no GPU telemetry to draw a heatmap of", run.path().string()));
  auto store = std::make_unique<TileStore>();
  const int runIndex = store->addRun(rq.run);
  TimelineFigureSpec spec;
  spec.range = {r.range.t0, std::min(r.range.t1, std::max(run.info().end_ns, r.range.t0 + 1))};
  spec.origin = run.info().start_ns;
  // "throttle": the reason heatmap (GPU x time by dominant throttle reason and clock deficit).
  const bool throttle = std::erase(metrics, std::string(kThrottleHeatmapMetric)) > 0;
  if (throttle && metricIndex(run, std::string(metric::kSmClock)) < 0)
    throw Error(fmt::format("{}: the run has no SM clock ({}), so no throttling to draw",
                            run.path().string(), metric::kSmClock));
  for (const std::string& m : metrics)
    if (metricIndex(run, m) < 0)
      throw Error(fmt::format("{}: no metric '{}' in the run (it has: {}; and throttle)",
                              run.path().string(), m, metricList(run)));
  RowPlanOptions o;
  o.style = RowStyle::Figure;
  o.heatmap = true;
  o.throttleHeatmap = throttle;
  spec.rows =
      planRows(store->runs(), figureTreeState(run, runIndex, {{}, metrics, false, false}), {}, o);
  auto fig = std::make_unique<TimelineFigure>(std::move(store), std::move(spec));
  setCaption(*fig, run, r.range);
  return fig;
}

std::unique_ptr<Figure> makeIterationMatrixFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  MatrixMeasure measure = MatrixMeasure::Cost;
  if (rq.metrics.size() > 1 ||
      (rq.metrics.size() == 1 && !matrixMeasureFromId(rq.metrics.front(), measure)))
    throw Error(fmt::format("{}: --metrics takes one of cost, lateness for the iteration matrix",
                            run.path().string()));
  const ThrottleCost cost =
      estimateThrottleCost(run, gpusOf(run, rq.gpus), scopeRanks(run, {}), r.range, {});
  if (!cost.unknown.empty())
    throw Error(fmt::format("{}: no iteration matrix: the cost of throttling is unknown ({})",
                            run.path().string(), cost.unknown));
  auto fig =
      std::make_unique<IterationMatrixFigure>(buildIterationMatrix(cost, run.ranks(), measure));
  setCaption(*fig, run, r.range);
  return fig;
}

std::unique_ptr<Figure> makeSummaryFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  const std::vector<int> gpus = gpusOf(run, rq.gpus);
  RunAnalysis a = analysisBase(run, r);
  const std::vector<MetricStats> power = metricStats(run, metric::kPower, gpus, r.planned);
  const std::vector<MetricStats> temp = metricStats(run, metric::kTemp, gpus, r.planned);
  const std::vector<MetricStats> clock = metricStats(run, metric::kSmClock, gpus, r.planned);
  for (size_t k = 0; k < gpus.size(); ++k) {
    GpuAnalysis g;
    g.info = run.gpus()[static_cast<size_t>(gpus[k])];
    g.power = power[k];
    g.temp = temp[k];
    g.sm_clock = clock[k];
    g.energy_j = g.power.integral;
    a.gpus.push_back(std::move(g));
  }
  std::vector<QChart*> charts;
  struct Panel {
    AnalysisChart chart;
    std::string_view metric;
    QString title;
  };
  for (const Panel& panel :
       {Panel{AnalysisChart::GpuPower, metric::kPower, QObject::tr("Power (W)")},
        Panel{AnalysisChart::GpuTemperature, metric::kTemp, QObject::tr("Temperature (°C)")},
        Panel{AnalysisChart::GpuClock, metric::kSmClock, QObject::tr("SM clock (MHz)")}}) {
    QChart* c = makeAnalysisChart(a, panel.chart);
    polishChart(c, QObject::tr("GPU"), panel.title);
    colourBars(c, panel.metric);
    charts.push_back(c);
  }
  auto fig = std::make_unique<ChartFigure>(std::move(charts), QStringLiteral("summary"));
  setCaption(*fig, run, r.range);
  return fig;
}

std::unique_ptr<Figure> makeBreakdownFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  AnalysisScope scope;
  if (!rq.gpus.empty()) {
    const std::vector<int> gpus = gpusOf(run, rq.gpus);
    for (const RankInfo& ri : run.ranks())
      if (std::find(gpus.begin(), gpus.end(), ri.gpu) != gpus.end()) scope.ranks.push_back(ri.rank);
    if (scope.ranks.empty())
      throw Error(fmt::format("{}: no rank runs on the GPUs asked for", run.path().string()));
  }
  const std::vector<int> ranks = scopeRanks(run, scope);
  if (run.tracks().empty())
    throw Error(fmt::format("{}: the run has no kernel traces to break down", run.path().string()));
  RunAnalysis a = analysisBase(run, r);
  const AnalysisOptions options;
  const bool wholeRange =
      r.range.t0 <= run.info().start_ns && r.range.t1 > std::max(run.info().end_ns, r.range.t0);
  a.ranks.resize(ranks.size());
  inParallel(ranks.size(), [&](size_t i) {
    const int rank = ranks[i];
    std::vector<std::vector<KernelEvent>> events;
    std::vector<int64_t> streamIds;
    for (size_t t = 0; t < run.tracks().size(); ++t) {
      if (run.tracks()[t].rank != rank) continue;
      events.push_back(wholeRange ? run.readAllKernels(t)
                                  : run.readKernels(t, r.range.t0, r.range.t1).events);
      streamIds.push_back(run.tracks()[t].stream);
    }
    const std::vector<std::span<const KernelEvent>> spans(events.begin(), events.end());
    const ClassUnions unions = classUnions(spans, r.range);
    const ClassStateTotals states = sweepClassStates(unions);
    RankAnalysis& ra = a.ranks[i];
    ra.breakdown =
        breakdownRank(rank, spans, streamIds, r.range, options.kernelWaitNs, unions, states);
    for (const RankInfo& ri : run.ranks())
      if (ri.rank == rank) ra.breakdown.gpu = ri.gpu;
  });
  QChart* chart = makeAnalysisChart(a, AnalysisChart::RankBreakdown);
  polishChart(chart, QObject::tr("Rank"), QObject::tr("Time (ms)"));
  // The timeline's kernel-class colours, so the figure and the timeline agree.
  const Theme th = Theme::publication();
  for (QAbstractSeries* s : chart->series())
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(s)) {
      const QList<QBarSet*> sets = bars->barSets();
      const std::array<QColor, 4> colours = {th.kernelClass[0], th.kernelClass[1],
                                             th.kernelClass[2], QColor(0xb8, 0xbc, 0xc4)};
      for (qsizetype i = 0; i < sets.size() && i < 4; ++i) {
        sets[i]->setColor(colours[static_cast<size_t>(i)]);
        sets[i]->setBorderColor(colours[static_cast<size_t>(i)].darker(120));
      }
    }
  auto fig =
      std::make_unique<ChartFigure>(std::vector<QChart*>{chart}, QStringLiteral("breakdown"));
  setCaption(*fig, run, r.range);
  return fig;
}

std::unique_ptr<Figure> makeThrottleFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  const std::vector<int> gpus = gpusOf(run, rq.gpus);
  // detectThrottle per group of GPUs, in parallel (each GPU's result depends on it alone; the
  // observed reference clock is the whole run's, whatever the GPUs asked for).
  const std::vector<std::vector<int>> groups = gpuGroups(gpus, 8);
  std::vector<std::vector<GpuThrottle>> parts(groups.size());
  inParallel(groups.size(), [&](size_t i) {
    parts[i] = detectThrottle(run, groups[i], r.planned, AnalysisOptions{});
  });
  std::vector<GpuThrottle> thr;
  for (auto& part : parts)
    for (GpuThrottle& g : part)
      thr.push_back(std::move(g));
  auto* chart = new QChart;
  chart->setTitle(QObject::tr("Throttled share of kernel time per GPU, by cause"));
  // Causes that occur, in the order of ThrottleCause; a sample with several recorded reasons
  // counts toward each (docs/analyses.md), so a stack can exceed the throttled share.
  const Theme th = Theme::publication();
  const std::array<QColor, kThrottleCauseCount> colours = {
      QColor(0xff, 0xa8, 0x00), QColor(0x80, 0x50, 0xd0), QColor(0xff, 0x40, 0x30),
      QColor(0xb0, 0x00, 0x20), QColor(0xc0, 0x30, 0xc0), QColor(0xf0, 0x90, 0x80),
      QColor(0xff, 0xd0, 0x70), QColor(0x90, 0x90, 0x90)};
  auto* series = new QStackedBarSeries;
  bool any = false;
  for (size_t c = 0; c < kThrottleCauseCount; ++c) {
    bool present = false;
    for (const GpuThrottle& g : thr)
      present = present || g.by_cause_s[c] > 0;
    if (!present) continue;
    any = true;
    const auto cause = static_cast<ThrottleCause>(c);
    auto* set = new QBarSet(QString::fromUtf8(throttleCauseLabel(cause).data(),
                                              static_cast<int>(throttleCauseLabel(cause).size())));
    for (const GpuThrottle& g : thr) {
      const double f = g.causeFraction(cause);
      *set << (std::isfinite(f) ? 100.0 * f : 0.0);
    }
    set->setColor(colours[c]);
    set->setBorderColor(colours[c].darker(120));
    series->append(set);
  }
  if (!any) {
    // No throttling: one empty set keeps the axes (and the legend says why).
    auto* set = new QBarSet(QObject::tr("no throttling detected"));
    for (size_t k = 0; k < thr.size(); ++k)
      *set << 0.0;
    set->setColor(th.gridLine);
    series->append(set);
  }
  chart->addSeries(series);
  QStringList cats;
  for (int g : gpus)
    cats << QString::number(g);
  auto* ax = new QBarCategoryAxis;
  ax->append(cats);
  ax->setTitleText(QStringLiteral("GPU"));
  auto* ay = new QValueAxis;
  double hi = 0;
  for (size_t k = 0; k < thr.size(); ++k) {
    double sum = 0;
    for (size_t c = 0; c < kThrottleCauseCount; ++c) {
      const double f = thr[k].causeFraction(static_cast<ThrottleCause>(c));
      if (std::isfinite(f)) sum += 100.0 * f;
    }
    hi = std::max(hi, sum);
  }
  ay->setRange(0, hi > 0 ? hi * 1.08 : 1.0);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  series->attachAxis(ax);
  series->attachAxis(ay);
  polishChart(chart, QObject::tr("GPU"), QObject::tr("Throttled (% of kernel time)"));
  auto fig = std::make_unique<ChartFigure>(std::vector<QChart*>{chart}, QStringLiteral("throttle"));
  setCaption(*fig, run, r.range);
  return fig;
}

std::unique_ptr<Figure> makeHistogramFigure(const ExportRequest& rq) {
  const RunFile& run = *rq.run;
  const Ranges r = rangesOf(run, rq.range);
  const std::vector<int> gpus = gpusOf(run, rq.gpus);
  bool wantPower = rq.metrics.empty(), wantRamp = false;
  for (const std::string& m : rq.metrics) {
    if (m == metric::kPower)
      wantPower = true;
    else if (m == kRampHistogram)
      wantRamp = true;
    else
      throw Error(fmt::format("--view histogram: '{}' is not a histogram (expected {} or {})", m,
                              metric::kPower, kRampHistogram));
  }
  const SeriesGroupMeta& meta = run.series(SeriesKind::Gpu);
  if (!meta.metric(metric::kPower))
    throw Error(fmt::format("{}: the run has no power samples", run.path().string()));
  // The raw part of analyzeBurstiness(): every power sample of each GPU through rampStats(), which
  // fills the histograms exactly as `wattline analyze` does; per GPU in parallel, then summed.
  // The |dP/dt| histogram costs a logarithm per sample, so it is drawn only when asked for.
  RunAnalysis a = analysisBase(run, r);
  std::vector<Histogram> powerParts(gpus.size(), powerHistogram());
  std::vector<Histogram> rampParts(gpus.size(), rampHistogram());
  inParallel(gpus.size(), [&](size_t k) {
    const auto gi = static_cast<size_t>(gpus[k]);
    const TimeRange& range = r.planned;
    const Samples s = run.readSamples(SeriesKind::Gpu, gi, metric::kPower, range.t0,
                                      range.t1 == INT64_MAX ? INT64_MAX : range.t1 - 1, false);
    rampStats(s.t_ns, s.v, meta.gapThresholdNs[gi], range, &powerParts[k],
              wantRamp ? &rampParts[k] : nullptr);
  });
  a.raw_analyses = true;
  a.power_hist = powerHistogram();
  a.ramp_hist = rampHistogram();
  for (size_t k = 0; k < gpus.size(); ++k) {
    a.power_hist += powerParts[k];
    a.ramp_hist += rampParts[k];
  }
  std::vector<QChart*> charts;
  if (wantPower) {
    charts.push_back(makeAnalysisChart(a, AnalysisChart::PowerHistogram));
    polishChart(charts.back(), QObject::tr("Power (W)"), QObject::tr("Time (s)"));
  }
  if (wantRamp) {
    charts.push_back(makeAnalysisChart(a, AnalysisChart::RampHistogram));
    polishChart(charts.back(), QObject::tr("|dP/dt| (W/s)"), QObject::tr("Sample intervals"));
  }
  auto fig = std::make_unique<ChartFigure>(std::move(charts), QStringLiteral("histogram"));
  setCaption(*fig, run, r.range);
  return fig;
}

}  // namespace wl
