// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/study/study_table_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <cmath>

#include "loaders/core/error.h"

namespace wl {
namespace {

// The configuration key behind each identity column (sorting and configValue()).
constexpr const char* kIdentityKeys[] = {"label", "platform",  "model",   "gpus",
                                         "tp",    "pp",        "dp",      "ep",
                                         "mbs",   "recompute", "overlap", "valid"};
constexpr const char* kIdentityHeaders[] = {"run", "platform",  "model",   "GPUs",
                                            "TP",  "PP",        "DP",      "EP",
                                            "MBS", "recompute", "overlap", "valid"};

QString qs(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// Enough digits to read, few enough to scan a column.
QString formatNumber(double v) {
  if (!std::isfinite(v)) return QStringLiteral("–");
  const double a = std::fabs(v);
  if (a == 0) return QStringLiteral("0");
  if (a >= 1e6) return QString::number(v, 'g', 6);
  if (a >= 1000) return QString::number(v, 'f', 0);
  if (a >= 100) return QString::number(v, 'f', 1);
  if (a >= 1) return QString::number(v, 'f', 2);
  return QString::number(v, 'g', 4);
}

QString signedNumber(double v) {
  if (!std::isfinite(v)) return QStringLiteral("–");
  return (v > 0 ? QStringLiteral("+") : QString()) + formatNumber(v);
}

QString percent(double f) {
  if (!std::isfinite(f)) return QStringLiteral("–");
  return QStringLiteral("%1%2 %")
      .arg(f > 0 ? QStringLiteral("+") : QString())
      .arg(QString::number(100.0 * f, 'f', 1));
}

QString reasonsOf(const RunSummary& s) {
  QString out;
  for (const std::string& r : s.invalid_reasons)
    out += (out.isEmpty() ? QString() : QStringLiteral("\n")) + QString::fromStdString(r);
  return out;
}

}  // namespace

StudyTableModel::StudyTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void StudyTableModel::setStudy(std::shared_ptr<const Study> study) {
  study_ = std::move(study);
  StudyTableOptions o = options_;
  // A baseline that is not (or no longer) in the study is dropped rather than failing the load.
  if (!o.baseline.empty() && study_) {
    try {
      study_->find(o.baseline);
    } catch (const Error&) {
      o.baseline.clear();
    }
  }
  rebuild(o);
}

void StudyTableModel::setFilter(const QString& filter) {
  StudyTableOptions o = options_;
  o.filter = filter.toStdString();
  parseRunFilter(o.filter);  // throws before anything changes
  rebuild(o);
}

void StudyTableModel::setBaseline(const QString& baseline) {
  StudyTableOptions o = options_;
  o.baseline = baseline.toStdString();
  if (!o.baseline.empty() && study_) study_->find(o.baseline);  // throws before anything changes
  rebuild(o);
}

void StudyTableModel::setNormalization(Normalization n) {
  StudyTableOptions o = options_;
  o.normalization = n;
  rebuild(o);
}

void StudyTableModel::setPer(PerUnit per) {
  StudyTableOptions o = options_;
  o.per = per;
  rebuild(o);
}

void StudyTableModel::setSortKey(const QString& key) {
  StudyTableOptions o = options_;
  o.sort = key.toStdString();
  parseSortKey(o.sort);
  rebuild(o);
}

void StudyTableModel::setDisplayMode(DisplayMode m) {
  mode_ = m;
  if (rowCount() > 0)
    emit dataChanged(index(0, IdentityColumnCount), index(rowCount() - 1, columnCount() - 1));
  emit headerDataChanged(Qt::Horizontal, IdentityColumnCount, columnCount() - 1);
}

int StudyTableModel::columnOf(std::string_view metricId) {
  const auto cols = studyColumns();
  for (size_t c = 0; c < cols.size(); ++c)
    if (cols[c].id == metricId) return IdentityColumnCount + static_cast<int>(c);
  return -1;
}

const StudyColumn* StudyTableModel::metricOf(int column) {
  const auto cols = studyColumns();
  const int c = column - IdentityColumnCount;
  return c >= 0 && c < static_cast<int>(cols.size()) ? &cols[static_cast<size_t>(c)] : nullptr;
}

void StudyTableModel::rebuild(const StudyTableOptions& options) {
  StudyTable t;
  if (study_) t = makeStudyTable(*study_, options);
  beginResetModel();
  options_ = options;
  table_ = std::move(t);
  endResetModel();
  emit tableChanged();
}

int StudyTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int StudyTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : IdentityColumnCount + static_cast<int>(studyColumns().size());
}

QVariant StudyTableModel::data(const QModelIndex& index, int role) const {
  if (!study_ || !index.isValid() || index.row() >= rowCount()) return {};
  const StudyRow& row = table_.rows[static_cast<size_t>(index.row())];
  const StudyRun& run = study_->runs[row.run];
  const RunSummary& s = run.summary;
  const int col = index.column();
  const bool isBaseline = static_cast<int>(row.run) == table_.baseline;

  switch (role) {
    case RunIndexRole:
      return QVariant::fromValue<qulonglong>(row.run);
    case PathRole:
      return QString::fromStdString(s.path);
    case Qt::ForegroundRole:
      return s.valid ? QVariant() : QVariant(QBrush(QColor(150, 150, 150)));
    case Qt::BackgroundRole:
      return isBaseline ? QVariant(QBrush(QColor(255, 244, 204))) : QVariant();
    case Qt::FontRole: {
      if (!isBaseline) return {};
      QFont f;
      f.setBold(true);
      return f;
    }
    default:
      break;
  }

  if (const StudyColumn* m = metricOf(col)) {
    const size_t c = static_cast<size_t>(col - IdentityColumnCount);
    const double value = row.values[c];
    const Delta& d = row.deltas[c];
    const int rank = row.ranks[c];
    const double rankValue = rank > 0 ? static_cast<double>(rank) : kNaN;
    switch (role) {
      case ValueRole:
        return value;
      case DeltaRole:
        return d.absolute;
      case RelativeDeltaRole:
        return d.relative;
      case RankRole:
        return rank;
      case Qt::UserRole:
        switch (mode_) {
          case DisplayMode::Value:
            return value;
          case DisplayMode::Delta:
            return d.absolute;
          case DisplayMode::RelativeDelta:
            return d.relative;
          case DisplayMode::Rank:
            return rankValue;
        }
        return {};
      case Qt::DisplayRole:
        switch (mode_) {
          case DisplayMode::Value:
            return formatNumber(value);
          case DisplayMode::Delta:
            return signedNumber(d.absolute);
          case DisplayMode::RelativeDelta:
            return percent(d.relative);
          case DisplayMode::Rank:
            return rank > 0 ? QString::number(rank) : QStringLiteral("–");
        }
        return {};
      case Qt::TextAlignmentRole:
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      case Qt::ToolTipRole: {
        QString tip =
            QStringLiteral("%1: %2 %3")
                .arg(qs(m->label), formatNumber(value),
                     QString::fromStdString(normalizedUnit(*m, table_.normalization, table_.per)));
        if (table_.baseline >= 0)
          tip += QStringLiteral("\nvs baseline: %1 (%2)")
                     .arg(signedNumber(d.absolute), percent(d.relative));
        if (rank > 0) tip += QStringLiteral("\nrank %1").arg(rank);
        if (!s.valid) tip += QStringLiteral("\n\nInvalid run:\n") + reasonsOf(s);
        return tip;
      }
      default:
        return {};
    }
  }

  const QString text = QString::fromStdString(configValue(run, kIdentityKeys[col]));
  switch (role) {
    case Qt::DisplayRole:
      if (col == ColValid) return s.valid ? QStringLiteral("yes") : QStringLiteral("invalid");
      if (col == ColRecompute || col == ColOverlap)
        return text.isEmpty()
                   ? QStringLiteral("–")
                   : (text == QLatin1String("true") ? QStringLiteral("on") : QStringLiteral("off"));
      return text.isEmpty() ? QStringLiteral("–") : text;
    case Qt::UserRole:
      return text;
    case Qt::ToolTipRole:
      if (!s.valid) return QStringLiteral("Invalid run:\n") + reasonsOf(s);
      return QString::fromStdString(s.path);
    default:
      return {};
  }
}

QVariant StudyTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  if (const StudyColumn* m = metricOf(section)) {
    const QString unit =
        QString::fromStdString(normalizedUnit(*m, table_.normalization, table_.per));
    if (role == Qt::ToolTipRole)
      return QStringLiteral("%1 (%2)%3")
          .arg(qs(m->label), qs(m->id),
               m->better == Better::Lower    ? QStringLiteral("; lower is better")
               : m->better == Better::Higher ? QStringLiteral("; higher is better")
                                             : QString());
    if (role != Qt::DisplayRole) return {};
    QString h = qs(m->label);
    switch (mode_) {
      case DisplayMode::Value:
        return unit.isEmpty() ? h : QStringLiteral("%1 %2").arg(h, unit);
      case DisplayMode::Delta:
        return QStringLiteral("Δ %1%2").arg(
            h, unit.isEmpty() ? QString() : QStringLiteral(" ") + unit);
      case DisplayMode::RelativeDelta:
        return QStringLiteral("Δ %1 %").arg(h);
      case DisplayMode::Rank:
        return QStringLiteral("rank %1").arg(h);
    }
    return h;
  }
  if (role != Qt::DisplayRole || section < 0 || section >= IdentityColumnCount) return {};
  return QString::fromLatin1(kIdentityHeaders[section]);
}

void StudyTableModel::sort(int column, Qt::SortOrder order) {
  QString key;
  if (const StudyColumn* m = metricOf(column))
    key = qs(m->id);
  else if (column >= 0 && column < IdentityColumnCount)
    key = QString::fromLatin1(kIdentityKeys[column]);
  if (key.isEmpty()) return;
  // Ranks sort best first whichever way the column is better.
  bool descending = order == Qt::DescendingOrder;
  if (mode_ == DisplayMode::Rank && metricOf(column)) {
    const Better b = metricOf(column)->better;
    if (b == Better::Higher) descending = !descending;
  }
  setSortKey((descending ? QStringLiteral("-") : QString()) + key);
}

}  // namespace wl
