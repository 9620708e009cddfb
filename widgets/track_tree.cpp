// SPDX-License-Identifier: GPL-3.0-or-later
#include "track_tree.h"

#include <QHeaderView>

#include <map>

#include "core/metrics.h"

namespace wl {
namespace {

QStandardItem* makeItem(const QString& text, TrackTree::Kind kind, int run, int entity = -1,
                        const QString& metric = {}) {
  auto* item = new QStandardItem(text);
  item->setEditable(false);
  item->setCheckable(true);
  item->setCheckState(Qt::Checked);
  item->setData(kind, TrackTree::KindRole);
  item->setData(run, TrackTree::RunRole);
  item->setData(entity, TrackTree::EntityRole);
  if (!metric.isEmpty()) item->setData(metric, TrackTree::MetricRole);
  return item;
}

}  // namespace

TrackTree::TrackTree(QWidget* parent) : QTreeView(parent), model_(new QStandardItemModel(this)) {
  model_->setHorizontalHeaderLabels({tr("Tracks"), tr("Details")});
  setModel(model_);
  setUniformRowHeights(true);
  setAlternatingRowColors(true);
  header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  connect(model_, &QStandardItemModel::itemChanged, this, [this] { emit visibilityChanged(); });
}

void TrackTree::clear() {
  model_->removeRows(0, model_->rowCount());
  runs_ = 0;
}

void TrackTree::addRun(const std::shared_ptr<const RunFile>& run) {
  const int r = runs_++;
  const RunInfo& info = run->info();
  QString title =
      QString::fromStdString(info.name.empty() ? run->path().filename().string() : info.name);
  if (info.simulated) title += tr(" [simulated]");
  auto* root = makeItem(title, RunItem, r);
  root->setToolTip(QString::fromStdString(run->path().string()));
  auto* rootDetail = new QStandardItem(QString::fromStdString(info.platform));
  rootDetail->setEditable(false);

  const SeriesGroupMeta& tel = run->series(SeriesKind::Gpu);
  if (!run->gpus().empty()) {
    auto* group = makeItem(tr("GPU telemetry"), GroupItem, r);
    std::map<int, QStandardItem*> nodes;
    for (const GpuInfo& g : run->gpus()) {
      QStandardItem*& node = nodes[g.node];
      if (!node) {
        node = makeItem(tr("Node %1").arg(g.node), NodeItem, r, g.node);
        const std::string host = g.hostname;
        if (!host.empty()) node->setToolTip(QString::fromStdString(host));
        group->appendRow(node);
      }
      auto* gpu = makeItem(tr("GPU %1").arg(g.id), GpuItem, r, g.id);
      auto* detail = new QStandardItem(
          tr("local %1%2").arg(g.local_index).arg(g.rank >= 0 ? tr(", rank %1").arg(g.rank) : ""));
      detail->setEditable(false);
      for (const MetricInfo& m : tel.metrics) {
        auto* mi = makeItem(QString::fromStdString(m.label), MetricItem, r, g.id,
                            QString::fromStdString(m.id));
        auto* unit = new QStandardItem(QString::fromStdString(m.unit));
        unit->setEditable(false);
        gpu->appendRow({mi, unit});
      }
      node->appendRow({gpu, detail});
    }
    root->appendRow(group);
  }

  if (!run->tracks().empty()) {
    auto* group = makeItem(tr("Kernels"), GroupItem, r);
    std::map<int, QStandardItem*> ranks;
    for (size_t t = 0; t < run->tracks().size(); ++t) {
      const TrackInfo& tr_ = run->tracks()[t];
      QStandardItem*& rank = ranks[tr_.rank];
      if (!rank) {
        rank = makeItem(tr("Rank %1").arg(tr_.rank), RankItem, r, tr_.rank);
        group->appendRow(rank);
      }
      auto* stream = makeItem(tr("Stream %1").arg(tr_.stream), StreamItem, r, static_cast<int>(t));
      auto* detail = new QStandardItem(tr("%L1 events").arg(tr_.count));
      detail->setEditable(false);
      rank->appendRow({stream, detail});
    }
    root->appendRow(group);
  }
  model_->appendRow({root, rootDetail});
  expand(root->index());
  for (int i = 0; i < root->rowCount(); ++i)
    expand(root->child(i)->index());
}

}  // namespace wl
