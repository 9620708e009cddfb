// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/telemetry/csv_telemetry.h"

namespace wl::import::tel {

CsvTelemetryReader::CsvTelemetryReader(const std::filesystem::path& input, const Progress& progress,
                                       CsvFormat format)
    : path_(input), progress_(progress), format_(format), reader_(input) {}

const std::vector<std::string_view>& CsvTelemetryReader::readHeader() {
  std::string_view line;
  bool haveHeader = false;
  while (reader_.next(line)) {
    if (!text::trim(line).empty()) {
      haveHeader = true;
      break;
    }
    if (format_.headerOnFirstLine) break;
  }
  if (!haveHeader) text::fail(path_, 0, format_.emptyFile);
  headerLine_ = reader_.lineNumber();
  headerText_ = std::string(text::trim(line));
  text::splitCsv(line, fields_);
  return fields_;
}

void CsvTelemetryReader::reportProgress(int64_t line) const {
  if ((line & (format_.progressEvery - 1)) == 0 && reader_.fileSize() > 0)
    progress_.report(
        static_cast<double>(reader_.bytesRead()) / static_cast<double>(reader_.fileSize()),
        format_.progressText);
}

void CsvTelemetryReader::failChangedHeader(int64_t line, std::string_view found) const {
  const std::string expected =
      format_.expectedHeader.empty()
          ? fmt::format("'{}' (as on line {})", text::excerpt(headerText_), headerLine_)
          : std::string(format_.expectedHeader);
  text::fail(path_, line,
             fmt::format("the CSV header changed halfway: expected {}, found '{}'{}", expected,
                         text::excerpt(found), format_.changedHeaderAdvice));
}

void CsvTelemetryReader::addNonFiniteNote(std::vector<QualityNote>& notes) const {
  addTallyNote(notes, nonFinite, "non_finite_values", path_, "NaN or infinite values",
               "they were read as missing values");
}

void CsvTelemetryReader::addTruncatedNote(std::vector<QualityNote>& notes) const {
  addTallyNote(notes, truncated_, "truncated_last_line", path_, format_.truncatedLine,
               "it was skipped");
}

void CsvTelemetryReader::addNotes(std::vector<QualityNote>& notes) const {
  addNonFiniteNote(notes);
  addTruncatedNote(notes);
}

void CsvTelemetryReader::done() const {
  progress_.report(1.0, format_.progressText);
}

}  // namespace wl::import::tel
