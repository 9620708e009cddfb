// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The track tree: what the open runs contain, as run > GPU telemetry > node > GPU > metric and
// run > kernels > rank > stream. The GCDs of an MI250 package sit under their package (node >
// package > GCD > metric), the package's power first, once, above them. Items are checkable (show /
// hide), can be pinned and moved; the timeline follows through visibilityChanged() and state(), a
// plain value planRows() takes.

#include <QMenu>
#include <QStandardItemModel>
#include <QTreeView>

#include <memory>
#include <vector>

#include "loaders/format/run_file.h"
#include "widgets/timeline/model/row_plan.h"

namespace wl {

class TrackTree : public QTreeView {
  Q_OBJECT
 public:
  // Item data roles describing what an item stands for.
  enum Role { KindRole = Qt::UserRole + 1, RunRole, EntityRole, MetricRole, PinnedRole, KeyRole };
  enum Kind {
    RunItem,
    GroupItem,
    NodeItem,
    GpuItem,
    MetricItem,
    RankItem,
    StreamItem,
    StepsItem,
    PackageItem
  };

  explicit TrackTree(QWidget* parent = nullptr);

  // Adds a run's tracks; `runIndex` is its index in the timeline's TileStore.
  void addRun(const std::shared_ptr<const RunFile>& run, int runIndex);
  void clear();
  QStandardItemModel* trackModel() const { return model_; }
  // Check states, pins and order of every item, by key (rowkey): the input of planRows().
  TreeState state() const;
  // Pins (or unpins) the items with these keys, as "Pin to top" does, with one
  // visibilityChanged(); keys that name no item are ignored. Returns how many items changed.
  int setPinned(const std::vector<QString>& keys, bool pinned);
  // Applies a tree state as state() returns it, or part of one (a view file's changes to the
  // default): the check state and position of every item it lists, and exactly its pins. Keys
  // that name no item are ignored; one visibilityChanged() follows.
  void applyState(const TreeState& state);

 signals:
  void visibilityChanged();

 private:
  void showContextMenu(const QPoint& pos);
  QStandardItem* addPackage(const RunFile& run, int runIndex, const PowerDomain& domain,
                            QStandardItem* node);
  void addGpu(const RunFile& run, int runIndex, const GpuInfo& gpu, QStandardItem* parent);
  QStandardItemModel* model_;
  bool applying_ = false;  // applyState() is at work: no visibilityChanged() per item
};

}  // namespace wl
