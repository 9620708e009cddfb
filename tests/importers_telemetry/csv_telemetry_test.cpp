// SPDX-License-Identifier: GPL-3.0-or-later
// The CSV telemetry skeleton (import/telemetry/csv_telemetry.h) on its own: which lines reach a
// format's row function, and the errors and notes it writes for every CSV format.
#include "loaders/import/telemetry/csv_telemetry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "telemetry_test_util.h"

namespace wl::test {
namespace {

using import::tel::CsvFormat;
using import::tel::CsvTelemetryReader;
using import::tel::HeaderLine;

constexpr CsvFormat kFormat{
    .emptyFile = "empty file; expected a test CSV",
    .progressText = "reading test CSV",
};

// Reads `text` as a CSV of `a,b` rows: the header first, then every row as "LINE:a|b"; a line
// whose first field is "A" is a changed header.
struct Read {
  std::vector<std::string> rows;
  std::vector<QualityNote> notes;
  std::string header;
  int64_t headerLine = 0;
};

Read readCsv(const TempDir& dir, const std::string& text, CsvFormat format = kFormat) {
  const auto path = dir / "t.csv";
  writeText(path, text);
  const Progress progress{};  // the reader keeps a reference
  CsvTelemetryReader csv(path, progress, format);
  Read r;
  const auto& header = csv.readHeader();
  r.header = std::string(header.at(0)) + "|" + std::string(header.at(1));
  r.headerLine = csv.headerLine();
  csv.readRows(
      2,
      [](const std::vector<std::string_view>& f) {
        return !f.empty() && f[0] == "A" ? HeaderLine::Changed : HeaderLine::No;
      },
      [&](const std::vector<std::string_view>& f, int64_t line) {
        r.rows.push_back(std::to_string(line) + ":" + std::string(f[0]) + "|" + std::string(f[1]));
      });
  csv.addNotes(r.notes);
  return r;
}

TEST(CsvTelemetrySkeleton, SkipsBlankLinesAndTheHeaderAgain) {
  TempDir dir;
  const Read r = readCsv(dir, "\n a , b \n1,2\n\na , b\n 3 , 4 \n");
  EXPECT_EQ(r.header, "a|b");
  EXPECT_EQ(r.headerLine, 2);
  EXPECT_EQ(r.rows, (std::vector<std::string>{"3:1|2", "6:3|4"}));
  EXPECT_TRUE(r.notes.empty());
}

TEST(CsvTelemetrySkeleton, ErrorsNameFileLineAndWhatWasExpected) {
  TempDir dir;
  const std::string file = (dir / "t.csv").string();
  EXPECT_EQ(errorMessage([&] { readCsv(dir, "\n\n"); }),
            file + ": empty file; expected a test CSV");
  EXPECT_EQ(errorMessage([&] { readCsv(dir, "a,b\n1,2\nA,c\n"); }),
            file +
                ":3: the CSV header changed halfway: expected 'a,b' (as on line 1), found "
                "'A,c'");
  EXPECT_EQ(errorMessage([&] { readCsv(dir, "a,b\n1,2,3\n4,5\n"); }),
            file + ":2: expected 2 fields as in the header, found 3");
  CsvFormat firstLine = kFormat;
  firstLine.headerOnFirstLine = true;
  firstLine.expectedHeader = "'a,b'";
  firstLine.changedHeaderAdvice = "; split the file";
  firstLine.fieldCount = "expected {} fields (a,b), found {}";
  EXPECT_EQ(errorMessage([&] { readCsv(dir, "\na,b\n", firstLine); }),
            file + ": empty file; expected a test CSV");
  EXPECT_EQ(errorMessage([&] { readCsv(dir, "a,b\nA,b\n", firstLine); }),
            file +
                ":2: the CSV header changed halfway: expected 'a,b', found 'A,b'; split the "
                "file");
  EXPECT_EQ(errorMessage([&] { readCsv(dir, "a,b\n1\n2,3\n", firstLine); }),
            file + ":2: expected 2 fields (a,b), found 1");
}

TEST(CsvTelemetrySkeleton, ACutOffLastLineEndsTheFileWithANote) {
  TempDir dir;
  const Read r = readCsv(dir, "a,b\n1,2\n3");  // no newline: cut off while being written
  EXPECT_EQ(r.rows, (std::vector<std::string>{"2:1|2"}));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].code, "truncated_last_line");
  EXPECT_NE(r.notes[0].message.find("t.csv:3"), std::string::npos) << r.notes[0].message;
  // With a newline the same short row is an error, not a cut-off line.
  EXPECT_NE(errorMessage([&] {
              readCsv(dir, "a,b\n1,2\n3\n");
            }).find(":3: expected 2 fields as in the header, found 1"),
            std::string::npos);
}

}  // namespace
}  // namespace wl::test
