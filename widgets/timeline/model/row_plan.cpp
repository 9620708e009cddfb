// SPDX-License-Identifier: GPL-3.0-or-later
// planRows(): the rows of the window, of a comparison and of every exported figure (see
// row_plan.h). A Planner walks the runs in the order the tree state gives and appends rows; the
// per-kind helpers hold the labels and heights of each style.
#include "widgets/timeline/model/row_plan.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/compare/config_diff.h"
#include "loaders/core/metrics.h"

namespace wl {

int rowRun(const RowContent& c) {
  return std::visit(
      [](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, DifferenceRow> || std::is_same_v<T, OverlayRow>)
          return r.a.run;
        else
          return r.run;
      },
      c);
}

namespace rowkey {
QString run(int r) {
  return QStringLiteral("r%1").arg(r);
}
QString telemetry(int r) {
  return run(r) + QStringLiteral("/telemetry");
}
QString node(int r, int n) {
  return run(r) + QStringLiteral("/node%1").arg(n);
}
QString gpu(int r, int g) {
  return run(r) + QStringLiteral("/g%1").arg(g);
}
QString metric(int r, int g, const std::string& id) {
  return gpu(r, g) + QLatin1Char('/') + QString::fromStdString(id);
}
QString kernels(int r) {
  return run(r) + QStringLiteral("/kernels");
}
QString rank(int r, int rank) {
  return run(r) + QStringLiteral("/rank%1").arg(rank);
}
QString steps(int r, int rank) {
  return rowkey::rank(r, rank) + QStringLiteral("/steps");
}
QString stream(int r, int rank, int64_t s) {
  return rowkey::rank(r, rank) + QStringLiteral("/s%1").arg(s);
}
QString heatmap(int r) {
  return run(r) + QStringLiteral("/heatmap");
}
QString package(int r, int domain) {
  return run(r) + QStringLiteral("/p%1").arg(domain);
}
QString packageMetric(int r, int domain, const std::string& id) {
  return package(r, domain) + QLatin1Char('/') + QString::fromStdString(id);
}
QString throttle(int r, int g) {
  return gpu(r, g) + QStringLiteral("/throttle");
}
}  // namespace rowkey

bool TreeState::isShown(const QString& key, bool byDefault) const {
  auto it = shown.find(key);
  return it == shown.end() ? byDefault : it->second;
}

bool isDefaultMetric(const std::string& id, const SeriesGroupMeta& tel) {
  static const char* kDefault[] = {"power_w", "temp_c", "sm_clock_mhz", "util_pct"};
  bool any = false;
  for (const char* d : kDefault)
    any = any || tel.metric(d) != nullptr;
  if (!any) return true;
  for (const char* d : kDefault)
    if (id == d) return true;
  return false;
}

std::vector<MetricInfo> orderedMetrics(const SeriesGroupMeta& tel) {
  std::vector<MetricInfo> out = tel.metrics;
  auto rank = [](const MetricInfo& m) {
    const auto known = knownMetrics();
    for (size_t i = 0; i < known.size(); ++i)
      if (known[i].id == m.id) return i;
    return known.size();
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const MetricInfo& a, const MetricInfo& b) { return rank(a) < rank(b); });
  return out;
}

QString runTitle(const RunFile& run) {
  const RunInfo& info = run.info();
  QString title =
      QString::fromStdString(info.name.empty() ? run.path().filename().string() : info.name);
  if (info.simulated) title += QObject::tr(" [simulated]");
  return title;
}

int metricIndex(const RunFile& run, const std::string& id) {
  const auto& ms = run.series(SeriesKind::Gpu).metrics;
  for (size_t i = 0; i < ms.size(); ++i)
    if (ms[i].id == id) return static_cast<int>(i);
  return -1;
}

int heatmapRowHeight(size_t gpus) {
  if (gpus == 0) return 14;
  return std::clamp(static_cast<int>(600 / gpus), 2, 14);
}

bool isPackage(const PowerDomain& d) {
  return d.gpus.size() >= 2;
}

bool hasPackages(const RunFile& run) {
  return std::any_of(run.domains().begin(), run.domains().end(), isPackage);
}

bool isDomainMetric(const std::string& id) {
  return id == "power_w" || id == "energy_j";
}

std::vector<size_t> unfoldedRows(const std::vector<TrackRow>& rows,
                                 const std::set<QString>& collapsed) {
  std::vector<size_t> out;
  std::set<QString> hiddenHeaders;  // headers hidden by a folded outer group
  for (size_t i = 0; i < rows.size(); ++i) {
    const TrackRow& r = rows[i];
    if (!r.group.isEmpty() && (collapsed.count(r.group) || hiddenHeaders.count(r.group))) {
      if (r.isHeader()) hiddenHeaders.insert(r.key);
      continue;
    }
    out.push_back(i);
  }
  return out;
}

namespace {

// Items sorted by the tree state's order (moved items), else kept in their natural order.
template <class T, class Key>
std::vector<T> inTreeOrder(std::vector<T> items, const TreeState& tree, Key key) {
  std::vector<std::pair<int, size_t>> pos(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto it = tree.order.find(key(items[i]));
    pos[i] = {it == tree.order.end() ? static_cast<int>(i) : it->second, i};
  }
  std::stable_sort(pos.begin(), pos.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<T> out;
  out.reserve(items.size());
  for (const auto& p : pos)
    out.push_back(std::move(items[p.second]));
  return out;
}

// The ranks of a GPU by the run's rank table (the GPU's own rank when the table has none).
std::vector<int> ranksOfGpu(const RunFile& run, int gpu) {
  std::vector<int> out;
  for (const RankInfo& ri : run.ranks())
    if (ri.gpu == gpu) out.push_back(ri.rank);
  const GpuInfo& gi = run.gpus()[static_cast<size_t>(gpu)];
  if (out.empty() && gi.rank >= 0) out.push_back(gi.rank);
  return out;
}

bool rankHasIterations(const RunFile& run, int rank) {
  return std::any_of(run.iterations().begin(), run.iterations().end(),
                     [rank](const Iteration& it) { return it.rank == rank; });
}
bool rankHasAnnotations(const RunFile& run, int rank) {
  return std::any_of(run.annotations().begin(), run.annotations().end(),
                     [rank](const Annotation& a) { return a.rank == rank; });
}

class Planner {
 public:
  Planner(const std::vector<std::shared_ptr<const RunFile>>& runs, const TreeState& tree,
          const RowPlanOptions& o)
      : runs_(runs), tree_(tree), o_(o), figure_(o.style == RowStyle::Figure) {}

  std::vector<TrackRow> rows;

  // Window: the run's header, its GPU telemetry (heatmap or nodes > GPUs), its ranks.
  void windowRun(int r) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    TrackRow h = row(RunHeaderRow{r}, runTitle(run), rowkey::run(r), {}, 24);
    h.detail = QString::fromStdString(run.path().string());
    rows.push_back(h);
    if (!run.gpus().empty() && !run.series().metrics.empty() && shown(rowkey::telemetry(r))) {
      if (o_.heatmap)
        heatmap(r);
      else
        for (int node : nodesOf(r))
          if (shown(rowkey::node(r, node)))
            for (const Unit& u : unitsOfNode(r, node)) {
              if (u.package && shown(rowkey::package(r, u.id)))
                package(r, u.id, gcdsOf(r, u.id));
              else if (!u.package && shown(rowkey::gpu(r, u.id)))
                gpu(r, u.id);
            }
    }
    if (!run.tracks().empty() && shown(rowkey::kernels(r)))
      for (int rank : ranksOf(r))
        if (shown(rowkey::rank(r, rank))) rankWithHeader(r, rank);
  }

  // Figure: the shown GPUs with their counters and their ranks' steps and streams; when every
  // GPU is shown, then the ranks no GPU ran, under their own headers. In heatmap mode, one
  // heatmap per shown metric instead.
  void figureRun(int r) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    if (o_.heatmap) {
      figureHeatmaps(r);
      return;
    }
    std::set<int> done, packages;
    bool every = true;
    auto gpuWithRanks = [&](int g, const QString& parent) {
      gpu(r, g, parent);
      for (int rank : ranksOfGpu(run, g)) {
        rankRows(r, rank, rowkey::gpu(r, g), false);
        done.insert(rank);
      }
    };
    for (int g : gpusInOrder(r)) {
      if (!shown(rowkey::gpu(r, g))) {
        every = false;
        continue;
      }
      const PowerDomain& d = run.domainOf(g);
      if (!isPackage(d)) {
        gpuWithRanks(g, {});
      } else if (packages.insert(d.id).second) {
        // A package's shown GCDs follow its header together, in the selection's order.
        std::vector<int> gcds;
        for (int m : gpusInOrder(r))
          if (run.domainOf(m).id == d.id && shown(rowkey::gpu(r, m))) gcds.push_back(m);
        package(r, d.id, {});
        for (int m : gcds)
          gpuWithRanks(m, rowkey::package(r, d.id));
      }
    }
    if (!every) return;
    for (int rank : ranksOf(r))
      if (!done.count(rank) && hasShownRows(r, rank)) rankWithHeader(r, rank);
  }

  // A figure's heatmaps: one per metric shown (for the first GPU: a figure selects metrics for
  // every GPU alike), at least 160 px high.
  void figureHeatmaps(int r) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    if (run.gpus().empty()) return;
    const int rows0 = heatmapRowHeight(run.gpus().size()) * static_cast<int>(run.gpus().size());
    for (const MetricInfo& m : metricsInOrder(r, 0)) {
      const QString key = rowkey::metric(r, 0, m.id);
      if (!shown(key, false)) continue;
      const bool byDomain = m.id == "power_w" && hasPackages(run);
      TrackRow h = row(HeatmapRow{r, metricIndex(run, m.id), byDomain},
                       byDomain ? QObject::tr("Package power") : QString::fromStdString(m.label),
                       rowkey::heatmap(r) + QLatin1Char('/') + QString::fromStdString(m.id), {},
                       std::max(160, rows0));
      h.detail = QString::fromStdString(m.unit);
      rows.push_back(h);
    }
    if (o_.throttleHeatmap) throttleHeatmap(r, std::max(160, rows0));
  }

  // A GPU's header and its shown counters. A GCD of a package (`parent` is the package's key)
  // folds under the package's header, and leaves the package's power to the package's rows.
  void gpu(int r, int g, const QString& parent = {}) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    const GpuInfo& gi = run.gpus()[static_cast<size_t>(g)];
    const bool gcd = !parent.isEmpty();
    TrackRow h = row(GroupHeaderRow{r, g, -1, -1, -1},
                     (gcd ? QObject::tr("GCD %1") : QObject::tr("GPU %1")).arg(g),
                     rowkey::gpu(r, g), parent, figure_ ? 18 : 20);
    QStringList d;
    d << QObject::tr("node %1").arg(gi.node) << QObject::tr("local %1").arg(gi.local_index);
    if (gi.slot >= 0) d << QObject::tr("slot %1").arg(gi.slot);
    for (int rank : ranksOfGpu(run, g))
      d << QObject::tr("rank %1").arg(rank);
    h.detail = d.join(QStringLiteral(" · "));
    h.pinned = tree_.isPinned(h.key) || (gcd && tree_.isPinned(parent));
    rows.push_back(h);
    const bool packagePower = gcd && run.domainOf(g).power_gpu >= 0;
    throttleStrip(r, g, h);
    for (const MetricInfo& m : metricsInOrder(r, g)) {
      const QString key = rowkey::metric(r, g, m.id);
      if (packagePower && isDomainMetric(m.id)) continue;
      if (!shown(key, isDefaultMetric(m.id, run.series()))) continue;
      TrackRow c = row(CounterRow{r, g, metricIndex(run, m.id)}, QString::fromStdString(m.label),
                       key, h.key, o_.counterHeight);
      c.detail = QString::fromStdString(m.unit);
      c.pinned = h.pinned || tree_.isPinned(key);
      if (c.pinned && !h.pinned) c.label = h.label + QStringLiteral(" · ") + c.label;
      rows.push_back(c);
    }
  }

  // A package's header, its power (when one GCD reports the package's) and its GCDs `gcds`.
  void package(int r, int id, const std::vector<int>& gcds) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    const PowerDomain& dom = run.domains()[static_cast<size_t>(id)];
    const int number = run.gpus()[static_cast<size_t>(dom.gpus.front())].package;
    TrackRow h = row(GroupHeaderRow{r, -1, -1, -1, -1, id},
                     QObject::tr("Package %1").arg(number >= 0 ? number : id),
                     rowkey::package(r, id), {}, figure_ ? 18 : 20);
    QStringList members, d;
    for (int g : dom.gpus)
      members << QString::number(g);
    d << QObject::tr("GCD %1").arg(members.join(QStringLiteral(", ")))
      << QObject::tr("node %1").arg(dom.node);
    if (std::isfinite(dom.power_limit_w)) d << QObject::tr("cap %1 W").arg(dom.power_limit_w);
    if (dom.power_gpu < 0) d << QObject::tr("power per GCD");
    h.detail = d.join(QStringLiteral(" · "));
    h.pinned = tree_.isPinned(h.key);
    rows.push_back(h);
    if (dom.power_gpu >= 0)
      for (const MetricInfo& m : packageMetricsInOrder(r, id)) {
        const QString key = rowkey::packageMetric(r, id, m.id);
        if (!shown(key, isDefaultMetric(m.id, run.series()))) continue;
        TrackRow c = row(CounterRow{r, dom.power_gpu, metricIndex(run, m.id)},
                         QObject::tr("Package %1").arg(QString::fromStdString(m.label).toLower()),
                         key, h.key, o_.counterHeight);
        c.detail = QString::fromStdString(m.unit);
        c.pinned = h.pinned || tree_.isPinned(key);
        if (c.pinned && !h.pinned) c.label = h.label + QStringLiteral(" · ") + c.label;
        rows.push_back(c);
      }
    for (int g : gcds)
      if (shown(rowkey::gpu(r, g))) gpu(r, g, h.key);
  }

  // The throttle strip right under a GPU's header: only for runs with an SM clock (the
  // detector has nothing to say without one).
  void throttleStrip(int r, int g, const TrackRow& header) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    const QString key = rowkey::throttle(r, g);
    if (!o_.throttleStrip || metricIndex(run, std::string(metric::kSmClock)) < 0 || !shown(key))
      return;
    TrackRow s = row(ThrottleStripRow{r, g}, QObject::tr("Throttling"), key, header.key,
                     figure_ ? std::max(o_.throttleStripHeight, 12) : o_.throttleStripHeight);
    s.detail = QObject::tr("reason by colour, depth of the clock deficit by strength");
    s.pinned = header.pinned || tree_.isPinned(key);
    rows.push_back(s);
  }

  // A run's reason heatmap (window: the heatmap's "Throttling" choice; figures: after the
  // metrics' heatmaps).
  void throttleHeatmap(int r, int height) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    if (metricIndex(run, std::string(metric::kSmClock)) < 0) return;
    TrackRow h = row(ThrottleHeatmapRow{r}, QObject::tr("Heatmap: throttling"),
                     rowkey::heatmap(r) + QStringLiteral("/throttle"), {}, height);
    if (figure_) h.label = QObject::tr("Throttling");
    h.detail =
        QObject::tr("%1 GPUs · reason by colour, clock deficit by strength").arg(run.gpus().size());
    rows.push_back(h);
  }

  // A rank under its own header (window: "Rank 2", figure: ranks no shown GPU ran).
  void rankWithHeader(int r, int rank) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    TrackRow h = row(GroupHeaderRow{r, -1, rank, -1, -1}, QObject::tr("Rank %1").arg(rank),
                     rowkey::rank(r, rank), {}, figure_ ? 18 : 20);
    if (!figure_)
      for (const RankInfo& ri : run.ranks())
        if (ri.rank == rank && ri.gpu >= 0) h.detail = QObject::tr("GPU %1").arg(ri.gpu);
    h.pinned = tree_.isPinned(h.key);
    rows.push_back(h);
    rankRows(r, rank, h.key, h.pinned);
  }

  // A rank's steps row and its shown streams, folding under `group`.
  void rankRows(int r, int rank, const QString& group, bool pinnedGroup) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    const bool annotated = rankHasAnnotations(run, rank);
    const bool hasSteps =
        rankHasIterations(run, rank) || (!figure_ && annotated);  // figures: iterations only
    const QString stepsKey = rowkey::steps(r, rank);
    if (hasSteps && shown(stepsKey)) {
      TrackRow s = row(StepsRow{r, rank},
                       figure_ ? QObject::tr("Rank %1 steps").arg(rank) : QObject::tr("Steps"),
                       stepsKey, figure_ ? QString() : group, 18);
      if (!figure_ && annotated) {
        s.height = 32;
        s.detail = QObject::tr("phases");
      }
      s.pinned = pinnedGroup || tree_.isPinned(stepsKey);
      rows.push_back(s);
    }
    for (size_t t : tracksOfRank(r, rank)) {
      const TrackInfo& ti = run.tracks()[t];
      const QString key = rowkey::stream(r, rank, ti.stream);
      if (!shown(key)) continue;
      TrackRow k = row(KernelsRow{r, rank, static_cast<int>(t)},
                       figure_ ? QObject::tr("Rank %1 stream %2").arg(rank).arg(ti.stream)
                               : QObject::tr("Stream %1").arg(ti.stream),
                       key, figure_ ? QString() : group, o_.kernelHeight);
      if (!figure_) k.detail = QObject::tr("%L1 events").arg(ti.count);
      k.pinned = pinnedGroup || tree_.isPinned(key);
      rows.push_back(k);
    }
  }

  void heatmap(int r) {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    if (o_.heatmapMetric == kThrottleHeatmapMetric &&
        metricIndex(run, std::string(metric::kSmClock)) >= 0) {
      throttleHeatmap(r, heatmapRowHeight(run.gpus().size()) * static_cast<int>(run.gpus().size()));
      return;
    }
    int m = metricIndex(run, o_.heatmapMetric);
    if (m < 0 && !run.series().metrics.empty()) m = 0;
    if (m < 0) return;
    const MetricInfo& mi = run.series().metrics[static_cast<size_t>(m)];
    // Power of a run with packages: each GCD's row shows its package's power (only one GCD of a
    // pair reports it; the other's own column is empty).
    const bool byDomain = mi.id == "power_w" && hasPackages(run);
    TrackRow h =
        row(HeatmapRow{r, m, byDomain},
            QObject::tr("Heatmap: %1")
                .arg(byDomain ? QObject::tr("Package power") : QString::fromStdString(mi.label)),
            rowkey::heatmap(r), {},
            heatmapRowHeight(run.gpus().size()) * static_cast<int>(run.gpus().size()));
    h.detail = QObject::tr("%1 GPUs, one row each").arg(run.gpus().size());
    if (byDomain)
      h.detail = QObject::tr("%1 GCDs, one row each, coloured by their package's power")
                     .arg(run.gpus().size());
    rows.push_back(h);
  }

  // Stacked comparison: the A - B section after everything else.
  void differenceSection(const ComparePlan& c) {
    if (c.differenceMetrics.empty() || c.pairs.empty()) return;
    const RunFile& a = *runs_[static_cast<size_t>(c.runA)];
    const RunFile& b = *runs_[static_cast<size_t>(c.runB)];
    TrackRow h = row(GroupHeaderRow{c.runA, -1, -1, c.runB, -1}, QObject::tr("A − B"),
                     QStringLiteral("diff"), {}, 20);
    h.detail =
        QObject::tr("%1 minus %2")
            .arg(QString::fromStdString(a.info().name), QString::fromStdString(b.info().name));
    rows.push_back(h);
    for (const auto& [ga, gb] : c.pairs)
      for (const std::string& id : c.differenceMetrics) {
        const int ma = metricIndex(a, id), mb = metricIndex(b, id);
        if (ma < 0 || mb < 0) continue;
        TrackRow d =
            row(DifferenceRow{{c.runA, ga, ma}, {c.runB, gb, mb}},
                QObject::tr("Δ %1 · GPU %2−%3")
                    .arg(QString::fromStdString(metricLabel(id)))
                    .arg(ga)
                    .arg(gb),
                QStringLiteral("diff/%1-%2/%3").arg(ga).arg(gb).arg(QString::fromStdString(id)),
                h.key, o_.differenceHeight);
        d.detail = QString::fromStdString(std::string(metricUnit(id)));
        rows.push_back(d);
      }
  }

  // Paired comparison: per pair, for every metric shown for A's GPU, A's row, B's row and A - B.
  void pairedSection(const ComparePlan& c) {
    const RunFile& a = *runs_[static_cast<size_t>(c.runA)];
    const RunFile& b = *runs_[static_cast<size_t>(c.runB)];
    for (const auto& [ga, gb] : c.pairs) {
      if (!shown(rowkey::gpu(c.runA, ga))) continue;
      TrackRow h = row(GroupHeaderRow{c.runA, ga, -1, c.runB, gb},
                       QObject::tr("GPU %1 (A) · GPU %2 (B)").arg(ga).arg(gb),
                       QStringLiteral("pair%1-%2").arg(ga).arg(gb), {}, 18);
      rows.push_back(h);
      for (const MetricInfo& m : metricsInOrder(c.runA, ga)) {
        if (!shown(rowkey::metric(c.runA, ga, m.id), isDefaultMetric(m.id, a.series()))) continue;
        const int ma = metricIndex(a, m.id), mb = metricIndex(b, m.id);
        if (mb < 0) continue;
        const QString label = QString::fromStdString(m.label),
                      unit = QString::fromStdString(m.unit);
        if (c.layout == CompareLayout::Overlay) {
          TrackRow r = row(OverlayRow{{c.runA, ga, ma}, {c.runB, gb, mb}},
                           QObject::tr("%1 · %2 vs %3").arg(label, c.labelA, c.labelB),
                           h.key + QStringLiteral("/AB/") + QString::fromStdString(m.id), h.key,
                           o_.compareCounterHeight);
          r.detail = unit;
          rows.push_back(r);
        }
        for (const auto& [run, gpu, metric, tag] :
             {std::tuple{c.runA, ga, ma, QStringLiteral("A")},
              std::tuple{c.runB, gb, mb, QStringLiteral("B")}}) {
          if (c.layout == CompareLayout::Overlay) break;
          TrackRow r = row(CounterRow{run, gpu, metric}, QStringLiteral("%1 · %2").arg(tag, label),
                           h.key + QStringLiteral("/%1/").arg(tag) + QString::fromStdString(m.id),
                           h.key, o_.compareCounterHeight);
          r.detail = unit;
          rows.push_back(r);
        }
        if (std::find(c.differenceMetrics.begin(), c.differenceMetrics.end(), m.id) ==
            c.differenceMetrics.end())
          continue;
        // A figure's A - B row has a y axis with ticks (its frame adds the unit); the screen
        // shows only the range ends, so its title says where zero is.
        TrackRow d =
            row(DifferenceRow{{c.runA, ga, ma}, {c.runB, gb, mb}},
                figure_ ? QObject::tr("A − B · %1").arg(label)
                        : QObject::tr("A − B · %1 (%2, zero in the middle)").arg(label, unit),
                h.key + QStringLiteral("/diff/") + QString::fromStdString(m.id), h.key,
                o_.differenceHeight);
        d.detail = unit;
        rows.push_back(d);
      }
      pairedKernels(c, ga, gb, h.key);
    }
  }

  // Under a pair's header: the steps and kernel streams of the ranks that drove A's GPU, then
  // those of B's, labelled by run and rank.
  void pairedKernels(const ComparePlan& c, int ga, int gb, const QString& group) {
    for (const auto& [r, g, tag] : {std::tuple{c.runA, ga, QStringLiteral("A")},
                                    std::tuple{c.runB, gb, QStringLiteral("B")}}) {
      for (int rank : ranksOfGpu(*runs_[static_cast<size_t>(r)], g)) {
        const size_t first = rows.size();
        rankRows(r, rank, group, false);
        for (size_t i = first; i < rows.size(); ++i) {
          if (figure_) {
            rows[i].label = tag + QStringLiteral(" · ") + rows[i].label;
            continue;
          }
          rows[i].label = QObject::tr("%1 · rank %2 · %3").arg(tag).arg(rank).arg(rows[i].label);
          rows[i].detail.clear();  // the longer label needs the room ("phases", event counts)
        }
      }
    }
  }

 private:
  static TrackRow row(RowContent content, const QString& label, const QString& key,
                      const QString& group, int height) {
    TrackRow r;
    r.content = content;
    r.label = label;
    r.key = key;
    r.group = group;
    r.height = height;
    return r;
  }
  bool shown(const QString& key, bool byDefault = true) const {
    return tree_.isShown(key, byDefault);
  }
  bool hasShownRows(int r, int rank) const {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    if (rankHasIterations(run, rank) && shown(rowkey::steps(r, rank))) return true;
    for (size_t t : tracksOfRank(r, rank))
      if (shown(rowkey::stream(r, rank, run.tracks()[t].stream))) return true;
    return false;
  }
  std::vector<int> nodesOf(int r) const {
    std::set<int> nodes;
    for (const GpuInfo& g : runs_[static_cast<size_t>(r)]->gpus())
      nodes.insert(g.node);
    return inTreeOrder(std::vector<int>(nodes.begin(), nodes.end()), tree_,
                       [r](int n) { return rowkey::node(r, n); });
  }
  std::vector<int> gpusOfNode(int r, int node) const {
    std::vector<int> out;
    for (const GpuInfo& g : runs_[static_cast<size_t>(r)]->gpus())
      if (g.node == node) out.push_back(g.id);
    return inTreeOrder(out, tree_, [r](int g) { return rowkey::gpu(r, g); });
  }
  // A node's GPUs and packages (Unit::package: id is a PowerDomain id), in the order of their
  // first GPU unless the tree moved them. A run without packages gives gpusOfNode's order.
  struct Unit {
    bool package = false;
    int id = 0;
  };
  std::vector<Unit> unitsOfNode(int r, int node) const {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    std::vector<Unit> out;
    std::set<int> seen;
    for (const GpuInfo& g : run.gpus()) {
      if (g.node != node) continue;
      const PowerDomain& d = run.domainOf(g.id);
      if (!isPackage(d))
        out.push_back({false, g.id});
      else if (seen.insert(d.id).second)
        out.push_back({true, d.id});
    }
    return inTreeOrder(out, tree_, [r](const Unit& u) {
      return u.package ? rowkey::package(r, u.id) : rowkey::gpu(r, u.id);
    });
  }
  std::vector<int> gcdsOf(int r, int domain) const {
    const RunFile& run = *runs_[static_cast<size_t>(r)];
    return inTreeOrder(run.domains()[static_cast<size_t>(domain)].gpus, tree_,
                       [r](int g) { return rowkey::gpu(r, g); });
  }
  std::vector<MetricInfo> packageMetricsInOrder(int r, int domain) const {
    std::vector<MetricInfo> out;
    for (const MetricInfo& m : orderedMetrics(runs_[static_cast<size_t>(r)]->series()))
      if (isDomainMetric(m.id)) out.push_back(m);
    return inTreeOrder(out, tree_, [r, domain](const MetricInfo& m) {
      return rowkey::packageMetric(r, domain, m.id);
    });
  }
  std::vector<int> gpusInOrder(int r) const {
    std::vector<int> out;
    for (const GpuInfo& g : runs_[static_cast<size_t>(r)]->gpus())
      out.push_back(g.id);
    return inTreeOrder(out, tree_, [r](int g) { return rowkey::gpu(r, g); });
  }
  std::vector<MetricInfo> metricsInOrder(int r, int g) const {
    return inTreeOrder(orderedMetrics(runs_[static_cast<size_t>(r)]->series()), tree_,
                       [r, g](const MetricInfo& m) { return rowkey::metric(r, g, m.id); });
  }
  // Ranks with kernel streams, in the order they first appear among the tracks.
  std::vector<int> ranksOf(int r) const {
    std::vector<int> out;
    for (const TrackInfo& t : runs_[static_cast<size_t>(r)]->tracks())
      if (std::find(out.begin(), out.end(), t.rank) == out.end()) out.push_back(t.rank);
    if (figure_) std::sort(out.begin(), out.end());
    return inTreeOrder(out, tree_, [r](int rank) { return rowkey::rank(r, rank); });
  }
  std::vector<size_t> tracksOfRank(int r, int rank) const {
    std::vector<size_t> out;
    const auto& tracks = runs_[static_cast<size_t>(r)]->tracks();
    for (size_t t = 0; t < tracks.size(); ++t)
      if (tracks[t].rank == rank) out.push_back(t);
    return out;
  }

  const std::vector<std::shared_ptr<const RunFile>>& runs_;
  const TreeState& tree_;
  const RowPlanOptions& o_;
  bool figure_;
};

// Pinned rows first (keeping their order), then the rest.
void pinnedFirst(std::vector<TrackRow>& rows) {
  std::stable_partition(rows.begin(), rows.end(), [](const TrackRow& r) { return r.pinned; });
}

}  // namespace

std::vector<TrackRow> planRows(const std::vector<std::shared_ptr<const RunFile>>& runs,
                               const TreeState& tree, const ComparePlan& compare,
                               const RowPlanOptions& options) {
  Planner plan(runs, tree, options);
  const bool comparing = compare.active && runs.size() > static_cast<size_t>(compare.runA) &&
                         runs.size() > static_cast<size_t>(compare.runB);
  if (comparing && compare.layout != CompareLayout::Stacked) {
    plan.pairedSection(compare);
    return std::move(plan.rows);
  }
  std::vector<int> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  order = inTreeOrder(order, tree, [](int r) { return rowkey::run(r); });
  for (int r : order) {
    if (!tree.isShown(rowkey::run(r))) continue;
    if (options.style == RowStyle::Figure)
      plan.figureRun(r);
    else
      plan.windowRun(r);
  }
  pinnedFirst(plan.rows);
  if (comparing) {
    // Stacked: run A's rows, then run B's, then the others, then the differences.
    auto rank = [&](const TrackRow& r) {
      return r.pinned ? -1 : (r.run() == compare.runA ? 0 : (r.run() == compare.runB ? 1 : 2));
    };
    std::stable_sort(plan.rows.begin(), plan.rows.end(),
                     [&](const TrackRow& x, const TrackRow& y) { return rank(x) < rank(y); });
    if (options.style == RowStyle::Figure) {
      // A figure's runs have no headers; a stacked comparison needs them to tell A's GPU 0 from
      // B's.
      for (const auto& [r, tag] : {std::pair{compare.runA, QStringLiteral("A")},
                                   std::pair{compare.runB, QStringLiteral("B")}}) {
        const auto first = std::find_if(plan.rows.begin(), plan.rows.end(), [r](const TrackRow& x) {
          return !x.pinned && x.run() == r;
        });
        if (first == plan.rows.end()) continue;
        TrackRow h;
        h.content = RunHeaderRow{r};
        const RunFile& run = *runs[static_cast<size_t>(r)];
        h.label = QStringLiteral("%1: %2").arg(
            tag, QString::fromStdString(run.info().name.empty() ? run.path().filename().string()
                                                                : run.info().name));
        h.key = rowkey::run(r);
        h.height = 20;
        plan.rows.insert(first, h);
      }
    }
    plan.differenceSection(compare);
  }
  return std::move(plan.rows);
}

ComparePlan comparePlan(const std::vector<std::shared_ptr<const RunFile>>& runs, int runA, int runB,
                        std::vector<std::pair<int, int>> pairs,
                        std::vector<std::string> differenceMetrics, CompareLayout layout) {
  ComparePlan cmp;
  cmp.active = true;
  cmp.runA = runA;
  cmp.runB = runB;
  cmp.layout = layout;
  cmp.pairs = std::move(pairs);
  cmp.differenceMetrics = std::move(differenceMetrics);
  const RunDifferences d =
      runDifferences(*runs[static_cast<size_t>(runA)], *runs[static_cast<size_t>(runB)]);
  cmp.labelA = QString::fromStdString(d.label_a);
  cmp.labelB = QString::fromStdString(d.label_b);
  return cmp;
}

RowPlanOptions windowRowOptions(const std::vector<std::shared_ptr<const RunFile>>& runs) {
  RowPlanOptions o;
  size_t gpus = 0;
  for (const auto& r : runs)
    gpus += r->gpus().size();
  if (gpus >= 8) {
    o.counterHeight = 32;
    o.kernelHeight = 20;
  }
  o.compareCounterHeight = o.differenceHeight = o.counterHeight;
  return o;
}

QString compareLayoutName(CompareLayout layout) {
  switch (layout) {
    case CompareLayout::Stacked:
      return QStringLiteral("stacked");
    case CompareLayout::Paired:
      return QStringLiteral("paired");
    case CompareLayout::Overlay:
      return QStringLiteral("overlay");
  }
  return {};
}

std::optional<CompareLayout> compareLayoutFromName(const QString& name) {
  for (CompareLayout l : {CompareLayout::Paired, CompareLayout::Overlay, CompareLayout::Stacked})
    if (compareLayoutName(l) == name) return l;
  return std::nullopt;
}

TreeState figureTreeState(const RunFile& run, int r, const FigureSelection& s) {
  TreeState t;
  for (const GpuInfo& g : run.gpus()) {
    const auto pos = std::find(s.gpus.begin(), s.gpus.end(), g.id);
    t.shown[rowkey::gpu(r, g.id)] = pos != s.gpus.end();
    t.order[rowkey::gpu(r, g.id)] =
        static_cast<int>(pos != s.gpus.end() ? pos - s.gpus.begin() : s.gpus.size() + g.id);
    for (const MetricInfo& m : run.series().metrics) {
      const QString key = rowkey::metric(r, g.id, m.id);
      const auto mp = std::find(s.metrics.begin(), s.metrics.end(), m.id);
      t.shown[key] = mp != s.metrics.end();
      if (mp != s.metrics.end()) t.order[key] = static_cast<int>(mp - s.metrics.begin());
    }
  }
  // A package is shown with any of its GCDs, its power when the figure's metrics have it.
  for (const PowerDomain& d : run.domains()) {
    if (!isPackage(d)) continue;
    t.shown[rowkey::package(r, d.id)] = std::any_of(d.gpus.begin(), d.gpus.end(), [&](int g) {
      return std::find(s.gpus.begin(), s.gpus.end(), g) != s.gpus.end();
    });
    for (const MetricInfo& m : run.series().metrics) {
      if (!isDomainMetric(m.id)) continue;
      const auto mp = std::find(s.metrics.begin(), s.metrics.end(), m.id);
      t.shown[rowkey::packageMetric(r, d.id, m.id)] = mp != s.metrics.end();
    }
  }
  for (const TrackInfo& ti : run.tracks()) {
    t.shown[rowkey::steps(r, ti.rank)] = s.steps;
    t.shown[rowkey::stream(r, ti.rank, ti.stream)] = s.kernels;
  }
  for (const Iteration& it : run.iterations())
    t.shown[rowkey::steps(r, it.rank)] = s.steps;
  return t;
}

}  // namespace wl
