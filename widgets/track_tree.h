// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The track tree: what the open runs contain, as run > GPU telemetry > node > GPU > metric and
// run > kernels > rank > stream. Items are checkable (show / hide); the timeline follows the
// check states through visibilityChanged().

#include <QStandardItemModel>
#include <QTreeView>

#include <memory>
#include <vector>

#include "format/run_file.h"

namespace wl {

class TrackTree : public QTreeView {
  Q_OBJECT
 public:
  // Item data roles describing what an item stands for.
  enum Role { KindRole = Qt::UserRole + 1, RunRole, EntityRole, MetricRole };
  enum Kind { RunItem, GroupItem, NodeItem, GpuItem, MetricItem, RankItem, StreamItem };

  explicit TrackTree(QWidget* parent = nullptr);

  void addRun(const std::shared_ptr<const RunFile>& run);
  void clear();
  QStandardItemModel* trackModel() const { return model_; }

 signals:
  void visibilityChanged();

 private:
  QStandardItemModel* model_;
  int runs_ = 0;
};

}  // namespace wl
