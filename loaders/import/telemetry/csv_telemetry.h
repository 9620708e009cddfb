// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The skeleton every CSV telemetry importer shares (nvidia-smi --query-gpu, amd-smi metric,
// DCGM long CSV, Zeus power monitor and windows): the header line, the loop over the data lines
// with progress, the header written again (files appended to) or changed halfway, a last line cut
// off while the file was being written, and the notes about them. A format declares what is
// particular to it in a CsvFormat, reads its columns from the header fields and turns each data
// row into samples; the skeleton does the rest, with the same one-line errors for every format.
//
// One streaming pass: O(lines) time, and the fields of a row are views into the reader's buffer
// (no allocation per row).

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loaders/core/progress.h"
#include "loaders/core/run_model.h"
#include "loaders/import/telemetry/table_builder.h"
#include "loaders/import/telemetry/text_input.h"

namespace wl::import::tel {

// What a CSV telemetry format says about its lines.
struct CsvFormat {
  // The error for a file without a header ("empty file; expected ...").
  std::string_view emptyFile = {};
  // The header must be the first line (a blank first line is an empty file); else the header is
  // the first non-blank line.
  bool headerOnFirstLine = false;
  // Progress: the text, and every how many lines (a power of two) it is reported.
  std::string_view progressText = {};
  int64_t progressEvery = 0x10000;
  // How the error for a changed header names the expected one: empty for "'HEADER' (as on line
  // N)"; else this text.
  std::string_view expectedHeader = {};
  // Appended to the error for a changed header.
  std::string_view changedHeaderAdvice = {};
  // The error for a row with the wrong number of fields: a format string of (expected, found).
  std::string_view fieldCount = "expected {} fields as in the header, found {}";
  // What the note about a cut-off last line calls it.
  std::string_view truncatedLine = "last line cut off (no newline, too few fields)";
};

// What a format says of a line that is not the header text as written.
enum class HeaderLine { No, Same, Changed };

class CsvTelemetryReader {
 public:
  CsvTelemetryReader(const std::filesystem::path& input, const Progress& progress,
                     CsvFormat format);

  // The header line split into fields (valid until readRows()); throws format.emptyFile.
  const std::vector<std::string_view>& readHeader();
  int64_t headerLine() const { return headerLine_; }
  const std::string& headerText() const { return headerText_; }
  const std::filesystem::path& path() const { return path_; }
  text::LineReader& lines() { return reader_; }

  // The line loop. A blank line and the header text again are skipped; every other line is
  // split into fields, then: headerLine(fields) says Same (skipped) or Changed (an error);
  // a row of other than `columns` fields is an error, except a last line cut off while the file
  // was written, which ends the file (noted); else row(fields, lineNumber). Returns the rows.
  template <class IsHeader, class Row>
  size_t readRows(size_t columns, IsHeader&& headerLine, Row&& row) {
    std::string_view line;
    size_t rows = 0;
    while (reader_.next(line)) {
      const int64_t lineNo = reader_.lineNumber();
      reportProgress(lineNo);
      const std::string_view trimmed = text::trim(line);
      if (trimmed.empty() || trimmed == headerText_) continue;
      line_ = trimmed;
      text::splitCsv(trimmed, fields_);
      const HeaderLine h = headerLine(std::as_const(fields_));
      if (h == HeaderLine::Same) continue;
      if (h == HeaderLine::Changed) failChangedHeader(lineNo, trimmed);
      if (fields_.size() != columns) {
        if (!reader_.lastLineTerminated() && fields_.size() < columns) {
          truncated_.add(lineNo, trimmed);
          break;
        }
        text::fail(path_, lineNo,
                   fmt::format(fmt::runtime(format_.fieldCount), columns, fields_.size()));
      }
      row(std::as_const(fields_), lineNo);
      ++rows;
    }
    return rows;
  }

  // The row being read (trimmed), for notes that quote it.
  std::string_view line() const { return line_; }

  // NaN and infinite cells; the formats count them.
  Tally nonFinite;
  // A last line cut off.
  const Tally& truncated() const { return truncated_; }

  // The notes "non_finite_values" and "truncated_last_line", in that order.
  void addNotes(std::vector<QualityNote>& notes) const;
  void addNonFiniteNote(std::vector<QualityNote>& notes) const;
  void addTruncatedNote(std::vector<QualityNote>& notes) const;
  // Progress 1.0.
  void done() const;

 private:
  void reportProgress(int64_t line) const;
  [[noreturn]] void failChangedHeader(int64_t line, std::string_view found) const;

  std::filesystem::path path_;
  const Progress& progress_;
  CsvFormat format_;
  text::LineReader reader_;
  std::vector<std::string_view> fields_;
  std::string_view line_;
  std::string headerText_;
  int64_t headerLine_ = 0;
  Tally truncated_;
};

}  // namespace wl::import::tel
