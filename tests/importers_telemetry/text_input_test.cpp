// SPDX-License-Identifier: GPL-3.0-or-later
// The shared reading blocks of the telemetry importers: value and time parsing, CSV splitting,
// series merging and counter wraps, against values worked out by hand.

#include <gtest/gtest.h>

#include <cmath>

#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import {
namespace {

using text::ValueKind;

TEST(TextInput, ValuesWithUnitsMissingSpellingsAndText) {
  EXPECT_EQ(text::parseValue("69.32 W").kind, ValueKind::Number);
  EXPECT_DOUBLE_EQ(text::parseValue("69.32 W").number, 69.32);
  EXPECT_EQ(text::parseValue("69.32 W").unit, "W");
  EXPECT_DOUBLE_EQ(text::parseValue("132 MiB").number, 132);
  EXPECT_EQ(text::parseValue("0 %").unit, "%");
  EXPECT_DOUBLE_EQ(text::parseValue("+5").number, 5);
  EXPECT_DOUBLE_EQ(text::parseValue("-1").number, -1);
  EXPECT_DOUBLE_EQ(text::parseValue("1e+12").number, 1e12);
  for (const char* missing : {"", "[N/A]", "N/A", "[Not Supported]",
                              "[Requested functionality has been deprecated]", "-"})
    EXPECT_EQ(text::parseValue(missing).kind, ValueKind::Missing) << missing;
  for (const char* nonFinite : {"nan", "NaN", "inf", "-inf", "1e400"})
    EXPECT_EQ(text::parseValue(nonFinite).kind, ValueKind::NonFinite) << nonFinite;
  for (const char* txt : {"P0", "Enabled", "0x0000000000000004", "0xff", "12abc3", "abc"})
    EXPECT_EQ(text::parseValue(txt).kind, ValueKind::Text) << txt;
  EXPECT_EQ(text::parseHexOrDecimal("0x00000000000001FF"), 0x1FFu);
  EXPECT_EQ(text::parseHexOrDecimal("68"), 68u);
  EXPECT_FALSE(text::parseHexOrDecimal("Active"));
}

TEST(TextInput, DateTimesInEveryStyle) {
  // 2025-09-24 03:41:43 UTC = 1758685303 s (date -u -d '2025-09-24 03:41:43' +%s).
  constexpr int64_t base = 1758685303LL * 1'000'000'000;
  const auto slash = text::parseDateTime("2025/09/24 03:41:43.487");
  ASSERT_TRUE(slash);
  EXPECT_EQ(slash->wall_ns, base + 487'000'000);
  EXPECT_FALSE(slash->zone_offset_s);
  const auto iso = text::parseDateTime("2025-09-24T03:41:43.487Z");
  ASSERT_TRUE(iso);
  EXPECT_EQ(iso->wall_ns, base + 487'000'000);
  EXPECT_EQ(iso->zone_offset_s, 0);
  const auto zeus = text::parseDateTime("2025-09-24 03:41:43.708783111");
  ASSERT_TRUE(zeus);
  EXPECT_EQ(zeus->wall_ns, base + 708'783'111);
  const auto offset = text::parseDateTime("2025-09-24T05:41:43+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(offset->zone_offset_s, 7200);
  tel::ZonePolicy zone(std::nullopt);
  EXPECT_EQ(zone.toUtc(*offset), base);
  for (const char* bad : {"2025/13/24 03:41:43", "2025-09-24", "24/09/2025 03:41:43",
                          "9999-01-01 00:00:00", "2025-09-24T03:41:43+2x"})
    EXPECT_FALSE(text::parseDateTime(bad)) << bad;
  EXPECT_EQ(text::parseTimeOfDay("23:59:58"), (23 * 3600 + 59 * 60 + 58) * 1'000'000'000LL);
  EXPECT_EQ(text::parseDate("20250924"), text::daysFromCivil(2025, 9, 24));
  EXPECT_EQ(text::daysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(text::daysFromCivil(2000, 3, 1), 11017);
}

TEST(TextInput, EpochSecondsKeepEveryDigit) {
  EXPECT_EQ(text::parseEpochSeconds("1727385123.4567891"), 1727385123456789100LL);
  EXPECT_EQ(text::parseEpochSeconds("1786553852"), 1786553852000000000LL);
  EXPECT_EQ(text::parseEpochSeconds("13586624.12895549"), 13586624128955490LL);
  EXPECT_EQ(text::parseEpochSeconds("1.7e9"), 1700000000000000000LL);
  EXPECT_FALSE(text::parseEpochSeconds("nan"));
  EXPECT_FALSE(text::parseEpochSeconds("99999999999"));  // past int64 nanoseconds
  EXPECT_FALSE(text::parseEpochSeconds("12:00"));
}

TEST(TextInput, CsvSplitHonoursQuotesAndTrims) {
  std::vector<std::string_view> f;
  text::splitCsv("a, b ,c", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"a", "b", "c"}));
  text::splitCsv(R"(1,"['N/A', 'N/A']",2,"[0, 1]",)", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"1", "['N/A', 'N/A']", "2", "[0, 1]", ""}));
  text::splitWhitespace("  GPU 0   120.5\t N/A ", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"GPU", "0", "120.5", "N/A"}));
}

TEST(TableBuilder, MergeSeriesWithinToleranceAndNaNFilledOtherwise) {
  std::vector<tel::Series> s(2);
  s[0] = {"a", {0, 50'000'000, 100'000'000}, {1, 2, 3}};
  s[1] = {"b", {1'000'000, 50'000'000, 130'000'000}, {10, 20, 30}};  // last one 30 ms off
  EXPECT_EQ(tel::mergeTolerance(s), 5'000'000);                      // min(5 ms, 50 ms / 4)
  const tel::MergedTable m = tel::mergeSeries(s, 5'000'000);
  EXPECT_EQ(m.table.t_ns, (std::vector<int64_t>{0, 50'000'000, 100'000'000, 130'000'000}));
  EXPECT_EQ(m.table.columns[0].values[2], 3);
  EXPECT_TRUE(std::isnan(m.table.columns[1].values[2]));
  EXPECT_TRUE(std::isnan(m.table.columns[0].values[3]));
  EXPECT_EQ(m.table.columns[1].values[0], 10);  // 1 ms after row 0: same row
  // Out of order: sorted and counted.
  std::vector<tel::Series> u(1);
  u[0] = {"a", {20, 10}, {2, 1}};
  const tel::MergedTable mu = tel::mergeSeries(u, 0);
  EXPECT_EQ(mu.unsortedSeries, 1u);
  EXPECT_EQ(mu.table.columns[0].values, (std::vector<double>{1, 2}));
}

TEST(TableBuilder, CounterDecreasesIgnoreMissingValues) {
  EXPECT_EQ(tel::countDecreases({1, 5, NAN, 2, 3, 4294967295.0, 7}), 2u);
  EXPECT_EQ(tel::countDecreases({}), 0u);
}

TEST(TableBuilder, PlatformFromDeviceNames) {
  EXPECT_EQ(tel::platformFromDeviceName("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(tel::platformFromDeviceName("NVIDIA H200"), "H200");
  EXPECT_EQ(tel::platformFromDeviceName("AMD Instinct MI250X"), "MI250X");
  EXPECT_EQ(tel::platformFromDeviceName("Tesla V100-SXM2-16GB"), "V100");
  EXPECT_EQ(tel::platformFromDeviceName(""), "");
}

}  // namespace
}  // namespace wl::import
