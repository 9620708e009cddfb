// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Tables (the analysis panel's GPU, throttle, rank and kernel tables, or any item model) as CSV
// or JSON files.
//
// Columns are the model's horizontal header titles; rows come in the model's order (export a
// view's sort proxy to keep the order on screen). Values: with TableValues::Exact a cell whose
// Qt::UserRole holds a number is written as that number with full precision (the analysis panel
// keeps each cell's exact value there and its rounded text in Qt::DisplayRole; a missing value,
// which it stores as -inf or NaN, is written empty in CSV and null in JSON); every other cell as
// its display text. TableValues::Displayed writes the text as shown.
//
// CSV follows RFC 4180 (comma-separated, CRLF line ends, fields with a comma, quote or line
// break quoted, quotes doubled), UTF-8. JSON is an array of objects, one per row, keyed by column
// title in column order. Files are written through a temporary file; failures throw wl::Error.

#include <QAbstractItemModel>
#include <QByteArray>
#include <QString>

#include <optional>

namespace wl {

enum class TableFormat { Csv, Json };
enum class TableValues { Exact, Displayed };

// From the extension (.csv, .json); nullopt otherwise.
std::optional<TableFormat> tableFormatFromPath(const QString& path);

QByteArray tableToCsv(const QAbstractItemModel& model, TableValues values = TableValues::Exact);
QByteArray tableToJson(const QAbstractItemModel& model, TableValues values = TableValues::Exact);

// Writes the table to `path` as CSV or JSON (after the extension).
void exportTable(const QAbstractItemModel* model, const QString& path,
                 TableValues values = TableValues::Exact);

}  // namespace wl
