// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/table_export.h"

#include <QFileInfo>
#include <QSaveFile>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <variant>

#include "loaders/core/error.h"

namespace wl {
namespace {

// A cell: a number, a text, or nothing (a missing value).
using Cell = std::variant<std::monostate, double, QString>;

bool isNumeric(const QVariant& v) {
  switch (v.typeId()) {
    case QMetaType::Double:
    case QMetaType::Float:
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::LongLong:
    case QMetaType::ULongLong:
    case QMetaType::Long:
    case QMetaType::ULong:
    case QMetaType::Short:
    case QMetaType::UShort:
      return true;
    default:
      return false;
  }
}

Cell cellOf(const QAbstractItemModel& m, int row, int col, TableValues values) {
  const QModelIndex i = m.index(row, col);
  if (values == TableValues::Exact) {
    const QVariant exact = m.data(i, Qt::UserRole);
    if (isNumeric(exact)) {
      const double v = exact.toDouble();
      if (!std::isfinite(v)) return std::monostate{};
      return v;
    }
  }
  return m.data(i, Qt::DisplayRole).toString();
}

QString headerOf(const QAbstractItemModel& m, int col) {
  const QString h = m.headerData(col, Qt::Horizontal, Qt::DisplayRole).toString();
  return h.isEmpty() ? QStringLiteral("column %1").arg(col + 1) : h;
}

// Shortest text that reads back as the same double.
std::string numberText(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

QByteArray csvField(const QString& text) {
  QByteArray s = text.toUtf8();
  if (s.contains(',') || s.contains('"') || s.contains('\n') || s.contains('\r')) {
    s.replace("\"", "\"\"");
    s = '"' + s + '"';
  }
  return s;
}

}  // namespace

std::optional<TableFormat> tableFormatFromPath(const QString& path) {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("csv")) return TableFormat::Csv;
  if (ext == QLatin1String("json")) return TableFormat::Json;
  return std::nullopt;
}

QByteArray tableToCsv(const QAbstractItemModel& m, TableValues values) {
  QByteArray out;
  const int cols = m.columnCount(), rows = m.rowCount();
  for (int c = 0; c < cols; ++c)
    out += (c ? "," : "") + csvField(headerOf(m, c));
  out += "\r\n";
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (c) out += ',';
      const Cell cell = cellOf(m, r, c, values);
      if (const double* d = std::get_if<double>(&cell))
        out += QByteArray::fromStdString(numberText(*d));
      else if (const QString* s = std::get_if<QString>(&cell))
        out += csvField(*s);
    }
    out += "\r\n";
  }
  return out;
}

QByteArray tableToJson(const QAbstractItemModel& m, TableValues values) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const int cols = m.columnCount();
  std::vector<std::string> headers;
  for (int c = 0; c < cols; ++c)
    headers.push_back(headerOf(m, c).toStdString());
  for (int r = 0; r < m.rowCount(); ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (int c = 0; c < cols; ++c) {
      const Cell cell = cellOf(m, r, c, values);
      auto& slot = row[headers[static_cast<size_t>(c)]];
      if (const double* d = std::get_if<double>(&cell))
        slot = *d;
      else if (const QString* s = std::get_if<QString>(&cell))
        slot = s->toStdString();
      else
        slot = nullptr;
    }
    rows.push_back(std::move(row));
  }
  return QByteArray::fromStdString(rows.dump(2) + "\n");
}

void exportTable(const QAbstractItemModel* model, const QString& path, TableValues values) {
  const auto format = tableFormatFromPath(path);
  if (!format)
    throw Error(fmt::format("{}: expected a .csv or .json file name", path.toStdString()));
  if (!model) throw Error(fmt::format("{}: no table to export", path.toStdString()));
  const QByteArray bytes =
      *format == TableFormat::Csv ? tableToCsv(*model, values) : tableToJson(*model, values);
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
    throw Error(
        fmt::format("{}: cannot write: {}", path.toStdString(), file.errorString().toStdString()));
}

}  // namespace wl
