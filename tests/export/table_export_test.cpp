// SPDX-License-Identifier: GPL-3.0-or-later
// Tables as CSV and JSON: exact values from Qt::UserRole where the model keeps them (the
// analysis panel's convention), display text otherwise, RFC 4180 quoting, and the files.
#include <gtest/gtest.h>

#include <QSortFilterProxyModel>
#include <QStandardItemModel>

#include <cmath>
#include <nlohmann/json.hpp>

#include "export_test_run.h"
#include "loaders/core/error.h"
#include "support/read_file.h"
#include "support/temp_dir.h"
#include "widgets/export/table_export.h"

namespace wl {
namespace {

// Like the analysis panel's tables: rounded text to show, the exact value in Qt::UserRole (-inf
// for a missing value), and plain text cells.
QStandardItem* number(double v, int decimals) {
  auto* item =
      new QStandardItem(std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("–"));
  item->setData(std::isfinite(v) ? QVariant(v) : QVariant(-INFINITY), Qt::UserRole);
  return item;
}

QStandardItem* text(const QString& t) {
  auto* item = new QStandardItem(t);
  item->setData(t, Qt::UserRole);
  return item;
}

std::unique_ptr<QStandardItemModel> sample() {
  auto m = std::make_unique<QStandardItemModel>(0, 3);
  m->setHorizontalHeaderLabels({"GPU", "Energy (kJ)", "Note"});
  m->appendRow({number(0, 0), number(1234.56789, 1), text("hot, throttled")});
  m->appendRow({number(1, 0), number(NAN, 1), text("said \"idle\"\nthen busy")});
  m->appendRow({number(2, 0), number(0.1, 1), text("")});
  return m;
}

TEST(TableExport, CsvHasExactValuesAndQuotesWhatNeedsIt) {
  const auto m = sample();
  EXPECT_EQ(tableToCsv(*m).toStdString(),
            "GPU,Energy (kJ),Note\r\n"
            "0,1234.56789,\"hot, throttled\"\r\n"
            "1,,\"said \"\"idle\"\"\nthen busy\"\r\n"
            "2,0.1,\r\n");
  EXPECT_EQ(tableToCsv(*m, TableValues::Displayed).toStdString(),
            "GPU,Energy (kJ),Note\r\n"
            "0,1234.6,\"hot, throttled\"\r\n"
            "1,–,\"said \"\"idle\"\"\nthen busy\"\r\n"
            "2,0.1,\r\n");
}

TEST(TableExport, JsonIsOneObjectPerRowInColumnOrder) {
  const auto m = sample();
  const auto j = nlohmann::json::parse(tableToJson(*m).toStdString());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["GPU"], 0);
  EXPECT_DOUBLE_EQ(j[0]["Energy (kJ)"].get<double>(), 1234.56789);
  EXPECT_EQ(j[0]["Note"], "hot, throttled");
  EXPECT_TRUE(j[1]["Energy (kJ)"].is_null());
  EXPECT_EQ(j[1]["Note"], "said \"idle\"\nthen busy");
  // Column order kept.
  const auto ordered = nlohmann::ordered_json::parse(tableToJson(*m).toStdString());
  std::vector<std::string> keys;
  for (const auto& [k, v] : ordered[0].items())
    keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"GPU", "Energy (kJ)", "Note"}));
}

TEST(TableExport, SortProxyKeepsTheOrderOnScreen) {
  test::ensureApp();
  const auto m = sample();
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(m.get());
  proxy.setSortRole(Qt::UserRole);
  proxy.sort(0, Qt::DescendingOrder);
  const std::string csv = tableToCsv(proxy).toStdString();
  EXPECT_EQ(csv.substr(0, csv.find("\r\n", csv.find("\r\n") + 2)),
            "GPU,Energy (kJ),Note\r\n2,0.1,");
}

TEST(TableExport, FilesByExtensionAndOneLineErrors) {
  test::TempDir dir;
  const auto m = sample();
  const QString csv = QString::fromStdString((dir / "t.csv").string());
  const QString json = QString::fromStdString((dir / "t.json").string());
  exportTable(m.get(), csv);
  exportTable(m.get(), json);
  EXPECT_EQ(test::readFile(dir / "t.csv"), tableToCsv(*m).toStdString());
  EXPECT_EQ(test::readFile(dir / "t.json"), tableToJson(*m).toStdString());
  EXPECT_THROW(exportTable(m.get(), QString::fromStdString((dir / "t.xlsx").string())), Error);
  EXPECT_THROW(exportTable(m.get(), QString::fromStdString((dir / "no/such/t.csv").string())),
               Error);
  EXPECT_THROW(exportTable(nullptr, csv), Error);
  try {
    exportTable(m.get(), QString::fromStdString((dir / "no/such/t.csv").string()));
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("t.csv"), std::string::npos);
  }
}

}  // namespace
}  // namespace wl
