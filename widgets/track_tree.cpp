// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/track_tree.h"

#include <QSignalBlocker>

#include <QHeaderView>
#include <QStringList>

#include <algorithm>
#include <map>

#include "widgets/timeline/model/row_plan.h"

namespace wl {
namespace {

QStandardItem* makeItem(const QString& text, TrackTree::Kind kind, int run, const QString& key,
                        int entity = -1, const QString& metric = {}) {
  auto* item = new QStandardItem(text);
  item->setData(key, TrackTree::KeyRole);
  item->setEditable(false);
  item->setCheckable(true);
  item->setCheckState(Qt::Checked);
  item->setData(kind, TrackTree::KindRole);
  // Parents follow their children (and checking a parent checks them all).
  if (kind != TrackTree::MetricItem && kind != TrackTree::StreamItem &&
      kind != TrackTree::StepsItem)
    item->setAutoTristate(true);
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
  // Reorder by dragging within a parent; the timeline follows the tree's order.
  setDragDropMode(QAbstractItemView::InternalMove);
  setDefaultDropAction(Qt::MoveAction);
  setDragEnabled(true);
  setAcceptDrops(true);
  setDropIndicatorShown(true);
  setContextMenuPolicy(Qt::CustomContextMenu);
  setToolTip(tr("Check to show, uncheck to hide; drag to reorder; right-click to pin to the top"));
  connect(this, &QWidget::customContextMenuRequested, this, &TrackTree::showContextMenu);
  auto changed = [this] {
    if (!applying_) emit visibilityChanged();
  };
  connect(model_, &QStandardItemModel::itemChanged, this, changed);
  connect(model_, &QAbstractItemModel::rowsMoved, this, changed);
  connect(model_, &QAbstractItemModel::rowsInserted, this, changed);
}

namespace {

void collectState(const QStandardItem* item, int position, TreeState& state) {
  const QString key = item->data(TrackTree::KeyRole).toString();
  if (!key.isEmpty()) {
    state.shown[key] = item->checkState() != Qt::Unchecked;
    state.order[key] = position;
    if (item->data(TrackTree::PinnedRole).toBool()) state.pinned.insert(key);
  }
  for (int i = 0; i < item->rowCount(); ++i)
    collectState(item->child(i), i, state);
}

}  // namespace

namespace {

// The item with `key` under `item` (depth first), or nullptr.
QStandardItem* findKey(QStandardItem* item, const QString& key) {
  if (item->data(TrackTree::KeyRole).toString() == key) return item;
  for (int i = 0; i < item->rowCount(); ++i)
    if (QStandardItem* found = findKey(item->child(i), key)) return found;
  return nullptr;
}

}  // namespace

int TrackTree::setPinned(const std::vector<QString>& keys, bool pinned) {
  int changed = 0;
  {
    const QSignalBlocker block(model_);
    for (const QString& key : keys) {
      QStandardItem* item = findKey(model_->invisibleRootItem(), key);
      if (!item || item->data(PinnedRole).toBool() == pinned) continue;
      item->setData(pinned, PinnedRole);
      QFont f = item->font();
      f.setBold(pinned);
      item->setFont(f);
      ++changed;
    }
  }
  if (changed > 0) {
    viewport()->update();
    emit visibilityChanged();
  }
  return changed;
}

namespace {

void setPinnedLook(QStandardItem* item, bool pinned) {
  item->setData(pinned, TrackTree::PinnedRole);
  QFont f = item->font();
  f.setBold(pinned);
  item->setFont(f);
}

// Parents before their children: a parent's state sets its children's, which may then differ.
void applyItemState(QStandardItem* item, const TreeState& state) {
  // The children in the order asked for (those not listed keep their place among the others).
  std::vector<std::pair<int, QList<QStandardItem*>>> rows;
  bool moved = false;
  for (int i = 0; i < item->rowCount(); ++i) {
    const QString key = item->child(i)->data(TrackTree::KeyRole).toString();
    auto it = state.order.find(key);
    const int pos = it != state.order.end() ? it->second : i;
    moved = moved || pos != i;
    rows.emplace_back(pos, QList<QStandardItem*>{});
  }
  if (moved) {
    for (int i = item->rowCount() - 1; i >= 0; --i)
      rows[static_cast<size_t>(i)].second = item->takeRow(i);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& [pos, row] : rows)
      item->appendRow(row);
  }
  for (int i = 0; i < item->rowCount(); ++i) {
    QStandardItem* child = item->child(i);
    const QString key = child->data(TrackTree::KeyRole).toString();
    if (auto it = state.shown.find(key); it != state.shown.end())
      child->setCheckState(it->second ? Qt::Checked : Qt::Unchecked);
    if (child->data(TrackTree::PinnedRole).toBool() != state.isPinned(key))
      setPinnedLook(child, state.isPinned(key));
    applyItemState(child, state);
  }
}

}  // namespace

void TrackTree::applyState(const TreeState& state) {
  applying_ = true;  // one visibilityChanged() at the end, not one per item
  applyItemState(model_->invisibleRootItem(), state);
  applying_ = false;
  emit visibilityChanged();
}

TreeState TrackTree::state() const {
  TreeState state;
  for (int i = 0; i < model_->rowCount(); ++i)
    collectState(model_->item(i), i, state);
  return state;
}

void TrackTree::clear() {
  model_->removeRows(0, model_->rowCount());
}

void TrackTree::showContextMenu(const QPoint& pos) {
  const QModelIndex idx = indexAt(pos);
  if (!idx.isValid()) return;
  QStandardItem* item = model_->itemFromIndex(idx.siblingAtColumn(0));
  const int kind = item->data(KindRole).toInt();
  if (kind != MetricItem && kind != StreamItem && kind != StepsItem && kind != GpuItem &&
      kind != RankItem && kind != PackageItem)
    return;
  QMenu menu(this);
  const bool pinned = item->data(PinnedRole).toBool();
  menu.addAction(pinned ? tr("Unpin") : tr("Pin to top"), this, [this, item, pinned] {
    item->setData(!pinned, PinnedRole);
    QFont f = item->font();
    f.setBold(!pinned);
    item->setFont(f);
    emit visibilityChanged();
  });
  menu.addAction(tr("Show only this"), this, [this, item] {
    // Uncheck every sibling group's leaves except this item's branch.
    QStandardItem* parent = item->parent();
    if (!parent) return;
    for (int i = 0; i < parent->rowCount(); ++i)
      parent->child(i)->setCheckState(parent->child(i) == item ? Qt::Checked : Qt::Unchecked);
  });
  menu.exec(viewport()->mapToGlobal(pos));
}

namespace {

QStandardItem* makeMetricItem(const MetricInfo& m, int run, const QString& key, int gpu,
                              const QString& label, const SeriesGroupMeta& tel) {
  auto* mi = makeItem(label, TrackTree::MetricItem, run, key, gpu, QString::fromStdString(m.id));
  // The four metrics the throttling story needs are shown; the rest are a click away.
  if (!isDefaultMetric(m.id, tel)) mi->setCheckState(Qt::Unchecked);
  mi->setDropEnabled(false);
  return mi;
}

QStandardItem* unitItem(const MetricInfo& m) {
  auto* unit = new QStandardItem(QString::fromStdString(m.unit));
  unit->setEditable(false);
  return unit;
}

}  // namespace

QStandardItem* TrackTree::addPackage(const RunFile& run, int r, const PowerDomain& d,
                                     QStandardItem* node) {
  const int number = run.gpus()[static_cast<size_t>(d.gpus.front())].package;
  auto* package = makeItem(tr("Package %1").arg(number >= 0 ? number : d.id), PackageItem, r,
                           rowkey::package(r, d.id), d.id);
  package->setDropEnabled(false);
  QStringList members;
  for (int g : d.gpus)
    members << QString::number(g);
  auto* detail = new QStandardItem(tr("GCD %1").arg(members.join(QStringLiteral(", "))));
  detail->setEditable(false);
  // The package's power and energy, once, above its GCDs (when one GCD reports the package's).
  const SeriesGroupMeta& tel = run.series();
  if (d.power_gpu >= 0)
    for (const MetricInfo& m : orderedMetrics(tel))
      if (isDomainMetric(m.id))
        package->appendRow(
            {makeMetricItem(m, r, rowkey::packageMetric(r, d.id, m.id), d.power_gpu,
                            tr("Package %1").arg(QString::fromStdString(m.label).toLower()), tel),
             unitItem(m)});
  node->appendRow({package, detail});
  return package;
}

void TrackTree::addGpu(const RunFile& run, int r, const GpuInfo& g, QStandardItem* parent) {
  const bool gcd = parent->data(KindRole).toInt() == PackageItem;
  auto* gpu = makeItem((gcd ? tr("GCD %1") : tr("GPU %1")).arg(g.id), GpuItem, r,
                       rowkey::gpu(r, g.id), g.id);
  gpu->setDropEnabled(false);
  auto* detail = new QStandardItem(
      tr("local %1%2").arg(g.local_index).arg(g.rank >= 0 ? tr(", rank %1").arg(g.rank) : ""));
  detail->setEditable(false);
  const SeriesGroupMeta& tel = run.series();
  const bool packagePower = gcd && run.domainOf(g.id).power_gpu >= 0;
  for (const MetricInfo& m : orderedMetrics(tel)) {
    if (packagePower && isDomainMetric(m.id)) continue;  // shown once, on the package
    gpu->appendRow({makeMetricItem(m, r, rowkey::metric(r, g.id, m.id), g.id,
                                   QString::fromStdString(m.label), tel),
                    unitItem(m)});
  }
  parent->appendRow({gpu, detail});
}

void TrackTree::addRun(const std::shared_ptr<const RunFile>& run, int runIndex) {
  const int r = runIndex;
  auto* root = makeItem(runTitle(*run), RunItem, r, rowkey::run(r));
  root->setDropEnabled(false);
  root->setToolTip(QString::fromStdString(run->path().string()));
  auto* rootDetail = new QStandardItem(QString::fromStdString(run->info().platform));
  rootDetail->setEditable(false);

  const SeriesGroupMeta& tel = run->series(SeriesKind::Gpu);
  // GPUs appear under 'GPU telemetry' only when the run has telemetry (a trace-only import lists
  // its GPUs in the run summary, not as empty rows).
  if (!run->gpus().empty() && !tel.metrics.empty()) {
    auto* group = makeItem(tr("GPU telemetry"), GroupItem, r, rowkey::telemetry(r));
    std::map<int, QStandardItem*> nodes, packages;
    for (const GpuInfo& g : run->gpus()) {
      QStandardItem*& node = nodes[g.node];
      if (!node) {
        node = makeItem(tr("Node %1").arg(g.node), NodeItem, r, rowkey::node(r, g.node), g.node);
        const std::string host = g.hostname;
        if (!host.empty()) node->setToolTip(QString::fromStdString(host));
        group->appendRow(node);
      }
      const PowerDomain& domain = run->domainOf(g.id);
      QStandardItem* parent = node;
      if (isPackage(domain)) {
        QStandardItem*& package = packages[domain.id];
        if (!package) package = addPackage(*run, r, domain, node);
        parent = package;
      }
      addGpu(*run, r, g, parent);
    }
    root->appendRow(group);
  }

  if (!run->tracks().empty()) {
    auto* group = makeItem(tr("Kernels"), GroupItem, r, rowkey::kernels(r));
    std::map<int, QStandardItem*> ranks;
    std::map<int, bool> hasSteps;
    for (const Iteration& it : run->iterations())
      hasSteps[it.rank] = true;
    for (const Annotation& a : run->annotations())
      hasSteps[a.rank] = true;
    for (size_t t = 0; t < run->tracks().size(); ++t) {
      const TrackInfo& tr_ = run->tracks()[t];
      QStandardItem*& rank = ranks[tr_.rank];
      if (!rank) {
        rank =
            makeItem(tr("Rank %1").arg(tr_.rank), RankItem, r, rowkey::rank(r, tr_.rank), tr_.rank);
        rank->setDropEnabled(false);
        group->appendRow(rank);
        if (hasSteps[tr_.rank]) {
          auto* steps =
              makeItem(tr("Steps & phases"), StepsItem, r, rowkey::steps(r, tr_.rank), tr_.rank);
          steps->setDropEnabled(false);
          rank->appendRow(steps);
        }
      }
      auto* stream = makeItem(tr("Stream %1").arg(tr_.stream), StreamItem, r,
                              rowkey::stream(r, tr_.rank, tr_.stream), static_cast<int>(t));
      stream->setDropEnabled(false);
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
  // A run with packages opens its first node and that node's packages, so node > package > GCD
  // shows at once (the others stay folded: a run may have hundreds of packages).
  if (hasPackages(*run) && root->rowCount() > 0 && !run->series().metrics.empty() &&
      root->child(0)->rowCount() > 0) {
    QStandardItem* node = root->child(0)->child(0);
    expand(node->index());
    for (int i = 0; i < node->rowCount(); ++i)
      if (node->child(i)->data(KindRole).toInt() == PackageItem) expand(node->child(i)->index());
  }
}

}  // namespace wl
