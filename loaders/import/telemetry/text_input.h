// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reading blocks shared by the text telemetry importers (nvidia-smi, DCGM, amd-smi, Zeus,
// CharLLM-PPT): a streaming line reader, a CSV field splitter, value parsing with units and the
// missing-value spellings of the vendor tools, date-time parsing, and one-line error messages of
// the form "FILE:LINE: what was expected, what was found".
//
// Everything here works on string_views into the reader's buffer, so a 200 MB CSV is read with no
// per-line allocation; a view stays valid until the next call to LineReader::next().

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wl::import::text {

// Reads a text file (plain or gzip) line by line in large blocks.
class LineReader {
 public:
  // Throws wl::Error naming the file if it cannot be opened.
  explicit LineReader(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its "\n" or "\r\n"; false at the end of the file.
  bool next(std::string_view& line);
  // 1-based number of the line returned last.
  int64_t lineNumber() const { return lineNumber_; }
  // False if the line returned last was the end of the file without a final newline (a file cut
  // off while it was being written).
  bool lastLineTerminated() const { return lastTerminated_; }
  // Bytes of text (uncompressed) in the lines returned so far.
  uint64_t textConsumed() const { return consumed_; }
  // True if the file is plain text (not gzip): then fileSize() is the size of the text.
  bool plainText() const;
  // Compressed bytes consumed so far and the file size, for progress.
  uint64_t bytesRead() const;
  uint64_t fileSize() const { return fileSize_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  bool fill();

  std::filesystem::path path_;
  gzFile file_ = nullptr;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t lineNumber_ = 0;
  uint64_t consumed_ = 0;
  bool lastTerminated_ = true;
  uint64_t fileSize_ = 0;
};

// "FILE:LINE: message" (LINE omitted when <= 0).
std::string where(const std::filesystem::path& path, int64_t line);
[[noreturn]] void fail(const std::filesystem::path& path, int64_t line, std::string_view message);

std::string_view trim(std::string_view s);
// Splits a CSV line on commas. Double-quoted fields may hold commas; the quotes are removed (a
// doubled quote inside is left as is). Fields are trimmed of spaces and tabs.
void splitCsv(std::string_view line, std::vector<std::string_view>& fields);
// Splits on runs of spaces and tabs (dmon text).
void splitWhitespace(std::string_view line, std::vector<std::string_view>& fields);
// Lower-case ASCII copy.
std::string lower(std::string_view s);
// A text shortened to `max` characters for an error message, with "..." when cut; text with
// control bytes (a binary file) becomes "binary data (00 01 ...)", so messages stay one line.
std::string excerpt(std::string_view s, size_t max = 60);

// One cell of a telemetry table.
enum class ValueKind : uint8_t {
  Number,     // a finite number, possibly followed by a unit ("69.32 W", "0 %", "132 MiB")
  Missing,    // "", "N/A", "[N/A]", "[Not Supported]", "[Requested functionality ...]", "-"
  NonFinite,  // "nan", "inf", or a number too large for a double
  Text,       // anything else ("P0", "Enabled", "0x0000...")
};

struct Value {
  ValueKind kind = ValueKind::Missing;
  double number = 0.0;
  std::string_view unit;  // text after the number, trimmed ("W", "%", "MiB"), "" if none
};

// Parses one (already trimmed) cell.
Value parseValue(std::string_view cell);
// True for the missing-value spellings above.
bool isMissing(std::string_view cell);
// Parses "0x0000000000000004" (or a plain decimal); nullopt if it is neither.
std::optional<uint64_t> parseHexOrDecimal(std::string_view cell);
// Parses a whole cell as an integer; nullopt if it is not one.
std::optional<int64_t> parseInt(std::string_view cell);

// A calendar date and time as written (no zone applied): ns since 1970-01-01 00:00 of the same
// wall clock, plus the zone offset if the text had one ("Z", "+02:00").
struct DateTime {
  int64_t wall_ns = 0;
  std::optional<int64_t> zone_offset_s;
};

// Parses "YYYY/MM/DD HH:MM:SS[.f]", "YYYY-MM-DD HH:MM:SS[.f]" and ISO-8601
// "YYYY-MM-DDTHH:MM:SS[.f][Z|+HH:MM|-HH:MM]", with up to 9 fractional digits.
std::optional<DateTime> parseDateTime(std::string_view s);
// Parses "HH:MM:SS[.f]" into ns since midnight.
std::optional<int64_t> parseTimeOfDay(std::string_view s);
// Parses "YYYYMMDD" (nvidia-smi dmon -o D) or "YYYY-MM-DD" into days since 1970-01-01.
std::optional<int64_t> parseDate(std::string_view s);
// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d);
// Parses "1727385123.4567891" (epoch seconds, any number of decimals) into ns without the
// rounding of a double.
std::optional<int64_t> parseEpochSeconds(std::string_view s);

inline constexpr int64_t kNsPerSecond = 1'000'000'000;
inline constexpr int64_t kNsPerDay = 86'400 * kNsPerSecond;

}  // namespace wl::import::text
