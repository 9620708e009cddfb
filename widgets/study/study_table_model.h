// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The study's comparison table as a Qt item model: a thin view of the library's StudyTable
// (analysis/study/study_table.h), so the GUI shows the same rows, numbers, deltas and ranks as
// `wattline compare`. Filtering, sorting, the baseline and the normalization are options of the
// table and rebuild it; sort() (a header click) sorts with the library's rule (valid runs first,
// unknown values last).
//
// Columns: the run's label and configuration (identity columns), then one column per
// studyColumns() entry. A metric cell shows the value, its delta, its relative delta or its rank
// (DisplayMode); Qt::UserRole holds that number exactly (NaN when unknown) and ValueRole,
// DeltaRole, RelativeDeltaRole and RankRole hold all four. Rows of invalid runs are grey with the
// reasons in their tooltip; the baseline row is highlighted.

#include <QAbstractTableModel>

#include <memory>

#include "analysis/study/study.h"
#include "analysis/study/study_table.h"

namespace wl {

class StudyTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum IdentityColumn {
    ColRun,
    ColPlatform,
    ColModel,
    ColGpus,
    ColTp,
    ColPp,
    ColDp,
    ColEp,
    ColMbs,
    ColRecompute,
    ColOverlap,
    ColValid,
    IdentityColumnCount
  };
  enum class DisplayMode { Value, Delta, RelativeDelta, Rank };
  enum Role {
    ValueRole = Qt::UserRole + 1,
    DeltaRole,
    RelativeDeltaRole,
    RankRole,
    RunIndexRole,  // index into Study::runs (every cell)
    PathRole,      // the run's file (every cell)
  };

  explicit StudyTableModel(QObject* parent = nullptr);

  void setStudy(std::shared_ptr<const Study> study);
  const Study* study() const { return study_.get(); }
  const StudyTable& table() const { return table_; }
  const StudyTableOptions& options() const { return options_; }

  // Each rebuilds the table. setFilter and setBaseline throw wl::Error (and keep the previous
  // table) for a bad filter or a baseline that names no run; an empty baseline removes it.
  void setFilter(const QString& filter);
  void setBaseline(const QString& baseline);
  void setNormalization(Normalization n);
  // What "per GPU" and mean power are per: a device (GCD on MI250) or a package.
  void setPer(PerUnit per);
  void setSortKey(const QString& key);
  void setDisplayMode(DisplayMode m);
  DisplayMode displayMode() const { return mode_; }

  // The column of a metric id ("energy_j"), or -1.
  static int columnOf(std::string_view metricId);
  // The metric (studyColumns() entry) of a column, or nullptr for identity columns.
  static const StudyColumn* metricOf(int column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

 signals:
  void tableChanged();

 private:
  void rebuild(const StudyTableOptions& options);

  std::shared_ptr<const Study> study_;
  StudyTableOptions options_;
  StudyTable table_;
  DisplayMode mode_ = DisplayMode::Value;
};

}  // namespace wl
