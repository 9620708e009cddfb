// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/track_rows.h"

#include <algorithm>
#include <set>

#include "track_tree.h"

namespace wl {
namespace {

bool shown(const QStandardItem* item) {
  return item->checkState() != Qt::Unchecked;
}
int kindOf(const QStandardItem* item) {
  return item->data(TrackTree::KindRole).toInt();
}

int metricIndex(const RunFile& run, const QString& id) {
  const auto& ms = run.series(SeriesKind::Gpu).metrics;
  for (size_t i = 0; i < ms.size(); ++i)
    if (QString::fromStdString(ms[i].id) == id) return static_cast<int>(i);
  return -1;
}

}  // namespace

int heatmapRowHeight(size_t gpus) {
  if (gpus == 0) return 14;
  return std::clamp(static_cast<int>(600 / gpus), 2, 14);
}

std::vector<TrackRow> buildRows(const QStandardItemModel& tree,
                                const std::vector<std::shared_ptr<const RunFile>>& runs,
                                const RowOptions& options) {
  std::vector<TrackRow> rows;
  for (int ri = 0; ri < tree.rowCount(); ++ri) {
    const QStandardItem* runItem = tree.item(ri);
    if (!shown(runItem)) continue;
    const int r = runItem->data(TrackTree::RunRole).toInt();
    if (r < 0 || static_cast<size_t>(r) >= runs.size()) continue;
    const RunFile& run = *runs[static_cast<size_t>(r)];
    const QString runKey = QStringLiteral("r%1").arg(r);
    TrackRow header;
    header.kind = RowKind::RunHeader;
    header.run = r;
    header.label = runItem->text();
    header.detail = QString::fromStdString(run.path().string());
    header.key = runKey;
    header.height = 24;
    rows.push_back(header);

    for (int gi = 0; gi < runItem->rowCount(); ++gi) {
      const QStandardItem* group = runItem->child(gi);
      if (!shown(group)) continue;
      const bool telemetry =
          group->rowCount() > 0 && kindOf(group->child(0)) == TrackTree::NodeItem;
      if (telemetry && options.heatmap) {
        TrackRow h;
        h.kind = RowKind::Heatmap;
        h.run = r;
        h.metric = metricIndex(run, QString::fromStdString(options.heatmapMetric));
        if (h.metric < 0 && !run.series().metrics.empty()) h.metric = 0;
        if (h.metric < 0) continue;
        h.label = QObject::tr("Heatmap: %1")
                      .arg(QString::fromStdString(
                          run.series().metrics[static_cast<size_t>(h.metric)].label));
        h.detail = QObject::tr("%1 GPUs, one row each").arg(run.gpus().size());
        h.key = runKey + QStringLiteral("/heatmap");
        h.height = heatmapRowHeight(run.gpus().size()) * static_cast<int>(run.gpus().size());
        rows.push_back(h);
        continue;
      }
      for (int ni = 0; ni < group->rowCount(); ++ni) {
        const QStandardItem* node = group->child(ni);
        if (!shown(node)) continue;
        if (kindOf(node) == TrackTree::NodeItem) {
          for (int k = 0; k < node->rowCount(); ++k) {
            const QStandardItem* gpuItem = node->child(k);
            if (!shown(gpuItem)) continue;
            const int gpu = gpuItem->data(TrackTree::EntityRole).toInt();
            const GpuInfo& gi_ = run.gpus()[static_cast<size_t>(gpu)];
            TrackRow gh;
            gh.kind = RowKind::GroupHeader;
            gh.run = r;
            gh.gpu = gpu;
            gh.label = QObject::tr("GPU %1").arg(gpu);
            QStringList d;
            d << QObject::tr("node %1").arg(gi_.node)
              << QObject::tr("local %1").arg(gi_.local_index);
            if (gi_.slot >= 0) d << QObject::tr("slot %1").arg(gi_.slot);
            if (gi_.rank >= 0) d << QObject::tr("rank %1").arg(gi_.rank);
            gh.detail = d.join(QStringLiteral(" · "));
            gh.key = runKey + QStringLiteral("/g%1").arg(gpu);
            gh.height = 20;
            gh.pinned = gpuItem->data(TrackTree::PinnedRole).toBool();
            rows.push_back(gh);
            for (int m = 0; m < gpuItem->rowCount(); ++m) {
              const QStandardItem* mi = gpuItem->child(m);
              if (!shown(mi)) continue;
              TrackRow c;
              c.kind = RowKind::Counter;
              c.run = r;
              c.gpu = gpu;
              c.metric = metricIndex(run, mi->data(TrackTree::MetricRole).toString());
              if (c.metric < 0) continue;
              const MetricInfo& info = run.series().metrics[static_cast<size_t>(c.metric)];
              c.label = QString::fromStdString(info.label);
              c.detail = QString::fromStdString(info.unit);
              c.key = gh.key + QStringLiteral("/") + QString::fromStdString(info.id);
              c.group = gh.key;
              c.height = options.counterHeight;
              c.pinned = gh.pinned || mi->data(TrackTree::PinnedRole).toBool();
              if (c.pinned && !gh.pinned) c.label = gh.label + QStringLiteral(" · ") + c.label;
              rows.push_back(c);
            }
          }
        } else if (kindOf(node) == TrackTree::RankItem) {
          const int rank = node->data(TrackTree::EntityRole).toInt();
          TrackRow rh;
          rh.kind = RowKind::GroupHeader;
          rh.run = r;
          rh.rank = rank;
          rh.label = QObject::tr("Rank %1").arg(rank);
          for (const RankInfo& ri_ : run.ranks())
            if (ri_.rank == rank && ri_.gpu >= 0) rh.detail = QObject::tr("GPU %1").arg(ri_.gpu);
          rh.key = runKey + QStringLiteral("/rank%1").arg(rank);
          rh.height = 20;
          rh.pinned = node->data(TrackTree::PinnedRole).toBool();
          rows.push_back(rh);
          for (int s = 0; s < node->rowCount(); ++s) {
            const QStandardItem* si = node->child(s);
            if (!shown(si)) continue;
            TrackRow k;
            k.run = r;
            k.rank = rank;
            k.group = rh.key;
            k.pinned = rh.pinned || si->data(TrackTree::PinnedRole).toBool();
            if (kindOf(si) == TrackTree::StepsItem) {
              k.kind = RowKind::Steps;
              k.label = QObject::tr("Steps");
              k.key = rh.key + QStringLiteral("/steps");
              bool phases = false;
              for (const Annotation& a : run.annotations())
                phases = phases || a.rank == rank;
              k.height = phases ? 32 : 18;
              if (phases) k.detail = QObject::tr("phases");
            } else {
              k.kind = RowKind::Kernels;
              k.track = si->data(TrackTree::EntityRole).toInt();
              const TrackInfo& ti = run.tracks()[static_cast<size_t>(k.track)];
              k.label = QObject::tr("Stream %1").arg(ti.stream);
              k.detail = QObject::tr("%L1 events").arg(ti.count);
              k.key = rh.key + QStringLiteral("/s%1").arg(ti.stream);
              k.height = options.kernelHeight;
            }
            rows.push_back(k);
          }
        }
      }
    }
  }
  // Pinned rows first (keeping their order), then the rest.
  std::stable_partition(rows.begin(), rows.end(), [](const TrackRow& r) { return r.pinned; });
  return rows;
}

}  // namespace wl
