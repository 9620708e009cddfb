// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/import/telemetry/text_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "loaders/core/error.h"

namespace wl::import::text {
namespace {

constexpr size_t kBlock = 1 << 20;
// Dates inside the range every import keeps its times in (import::kMaxAbsTimeNs, 1824..2116).
constexpr int64_t kMinYear = 1900;
constexpr int64_t kMaxYear = 2100;
constexpr int64_t kMaxEpochSeconds = 4'400'000'000;  // year 2109

bool isSpace(char c) {
  return c == ' ' || c == '\t';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Reads `n` digits at s[pos] into `out`.
bool digits(std::string_view s, size_t pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!isDigit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// Parses ".fffffffff" at s[pos]; advances pos. Returns ns.
int64_t fraction(std::string_view s, size_t& pos) {
  if (pos >= s.size() || (s[pos] != '.' && s[pos] != ',')) return 0;
  ++pos;
  int64_t ns = 0;
  int n = 0;
  while (pos < s.size() && isDigit(s[pos])) {
    if (n < 9) {
      ns = ns * 10 + (s[pos] - '0');
      ++n;
    }
    ++pos;
  }
  for (; n < 9; ++n)
    ns *= 10;
  return ns;
}

}  // namespace

LineReader::LineReader(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a folder; expected a file", path.string()));
  fileSize_ = std::filesystem::file_size(path, ec);
  if (ec) fileSize_ = 0;
  file_ = gzopen(path.c_str(), "rb");
  if (!file_) throw Error(fmt::format("{}: cannot be opened for reading", path.string()));
  gzbuffer(file_, 256 * 1024);
  buffer_.resize(kBlock);
}

LineReader::~LineReader() {
  if (file_) gzclose(file_);
}

uint64_t LineReader::bytesRead() const {
  const z_off_t off = file_ ? gzoffset(file_) : 0;
  return off > 0 ? static_cast<uint64_t>(off) : 0;
}

bool LineReader::plainText() const {
  return file_ && gzdirect(file_) == 1;
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const unsigned want = static_cast<unsigned>(std::min<size_t>(buffer_.size() - end_, 1u << 30));
  const int n = gzread(file_, buffer_.data() + end_, want);
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(file_, &err);
    throw Error(fmt::format("{}: read error after {} lines ({})", path_.string(), lineNumber_,
                            msg ? msg : "unknown"));
  }
  if (n == 0) {
    int err = Z_OK;
    const char* msg = gzerror(file_, &err);
    if (err != Z_OK && err != Z_STREAM_END) {  // a gzip file cut short
      std::string_view m = msg ? msg : "unknown";
      const std::string prefix = path_.string() + ": ";
      if (m.substr(0, prefix.size()) == prefix) m.remove_prefix(prefix.size());
      throw Error(
          fmt::format("{}: read error after {} lines ({}; the file is truncated or "
                      "corrupt)",
                      path_.string(), lineNumber_, m));
    }
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(n);
  return true;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl) {
      const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
      line = std::string_view(start, len);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      begin_ += len + 1;
      consumed_ += len + 1;
      ++lineNumber_;
      lastTerminated_ = true;
      return true;
    }
    if (!fill()) {
      if (begin_ == end_) return false;
      line = std::string_view(buffer_.data() + begin_, end_ - begin_);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      consumed_ += end_ - begin_;
      begin_ = end_;
      ++lineNumber_;
      lastTerminated_ = false;
      return true;
    }
  }
}

std::string where(const std::filesystem::path& path, int64_t line) {
  return line > 0 ? fmt::format("{}:{}", path.string(), line) : path.string();
}

void fail(const std::filesystem::path& path, int64_t line, std::string_view message) {
  throw Error(fmt::format("{}: {}", where(path, line), message));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && (isSpace(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

void splitCsv(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  if (line.find('"') == std::string_view::npos) {
    size_t pos = 0;
    for (;;) {
      const size_t comma = line.find(',', pos);
      if (comma == std::string_view::npos) {
        fields.push_back(trim(line.substr(pos)));
        return;
      }
      fields.push_back(trim(line.substr(pos, comma - pos)));
      pos = comma + 1;
    }
  }
  size_t pos = 0;
  while (pos <= line.size()) {
    size_t p = pos;
    while (p < line.size() && isSpace(line[p]))
      ++p;
    if (p < line.size() && line[p] == '"') {
      size_t q = p + 1;
      for (;;) {
        q = line.find('"', q);
        if (q == std::string_view::npos) {  // unterminated: take the rest
          fields.push_back(line.substr(p + 1));
          return;
        }
        if (q + 1 < line.size() && line[q + 1] == '"') {
          q += 2;
          continue;
        }
        break;
      }
      fields.push_back(line.substr(p + 1, q - p - 1));
      const size_t comma = line.find(',', q + 1);
      if (comma == std::string_view::npos) return;
      pos = comma + 1;
      continue;
    }
    const size_t comma = line.find(',', pos);
    if (comma == std::string_view::npos) {
      fields.push_back(trim(line.substr(pos)));
      return;
    }
    fields.push_back(trim(line.substr(pos, comma - pos)));
    pos = comma + 1;
  }
}

void splitWhitespace(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (isSpace(line[i]) || line[i] == '\r'))
      ++i;
    if (i >= line.size()) break;
    const size_t start = i;
    while (i < line.size() && !isSpace(line[i]) && line[i] != '\r')
      ++i;
    fields.push_back(line.substr(start, i - start));
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string excerpt(std::string_view s, size_t max) {
  // Binary bytes would break the one-line message (and the terminal): describe them instead.
  for (char c : s.substr(0, max))
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
      std::string hex = "binary data (";
      for (size_t i = 0; i < s.size() && i < 8; ++i)
        hex += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned char>(s[i]));
      return hex + (s.size() > 8 ? " ...)" : ")");
    }
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "...";
}

bool isMissing(std::string_view cell) {
  if (cell.empty()) return true;
  if (cell.front() == '[' && cell.back() == ']') return true;  // [N/A], [Not Supported], ...
  return cell == "N/A" || cell == "n/a" || cell == "NA" || cell == "-" || cell == "None";
}

Value parseValue(std::string_view cell) {
  Value v;
  if (isMissing(cell)) return v;
  const char* first = cell.data();
  const char* last = cell.data() + cell.size();
  if (*first == '+') ++first;
  double d = 0.0;
  const auto [ptr, ec] = std::from_chars(first, last, d);
  if (ec == std::errc::result_out_of_range) {
    v.kind = ValueKind::NonFinite;
    return v;
  }
  if (ec != std::errc()) {
    v.kind = ValueKind::Text;
    return v;
  }
  std::string_view rest = trim(std::string_view(ptr, static_cast<size_t>(last - ptr)));
  for (char c : rest) {
    const bool unitChar =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '%' || c == '/' || c == ' ';
    if (!unitChar) {
      v.kind = ValueKind::Text;
      return v;
    }
  }
  if (!std::isfinite(d)) {
    v.kind = ValueKind::NonFinite;
    return v;
  }
  // "0x1F": from_chars reads "0" and leaves "x1F"; digits make it Text above, but "0xff" has none.
  if (!rest.empty() && (rest.front() == 'x' || rest.front() == 'X') && ptr == first + 1) {
    v.kind = ValueKind::Text;
    return v;
  }
  v.kind = ValueKind::Number;
  v.number = d;
  v.unit = rest;
  return v;
}

std::optional<uint64_t> parseHexOrDecimal(std::string_view cell) {
  cell = trim(cell);
  int base = 10;
  if (cell.size() > 2 && cell[0] == '0' && (cell[1] == 'x' || cell[1] == 'X')) {
    cell.remove_prefix(2);
    base = 16;
  }
  if (cell.empty()) return std::nullopt;
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v, base);
  if (ec != std::errc() || ptr != cell.data() + cell.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> parseInt(std::string_view cell) {
  cell = trim(cell);
  if (cell.empty()) return std::nullopt;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || ptr != cell.data() + cell.size()) return std::nullopt;
  return v;
}

int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's days_from_civil.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<int64_t> parseTimeOfDay(std::string_view s) {
  s = trim(s);
  int64_t h = 0, mi = 0, se = 0;
  if (!digits(s, 0, 2, h) || s.size() < 8 || s[2] != ':' || !digits(s, 3, 2, mi) || s[5] != ':' ||
      !digits(s, 6, 2, se))
    return std::nullopt;
  if (h > 23 || mi > 59 || se > 60) return std::nullopt;
  size_t pos = 8;
  const int64_t frac = fraction(s, pos);
  if (pos != s.size()) return std::nullopt;
  return ((h * 60 + mi) * 60 + se) * kNsPerSecond + frac;
}

std::optional<int64_t> parseDate(std::string_view s) {
  s = trim(s);
  int64_t y = 0, m = 0, d = 0;
  if (s.size() == 8) {
    if (!digits(s, 0, 4, y) || !digits(s, 4, 2, m) || !digits(s, 6, 2, d)) return std::nullopt;
  } else if (s.size() == 10 && (s[4] == '-' || s[4] == '/') && s[7] == s[4]) {
    if (!digits(s, 0, 4, y) || !digits(s, 5, 2, m) || !digits(s, 8, 2, d)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (m < 1 || m > 12 || d < 1 || d > 31 || y < kMinYear || y > kMaxYear) return std::nullopt;
  return daysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}

std::optional<DateTime> parseDateTime(std::string_view s) {
  s = trim(s);
  if (s.size() < 19) return std::nullopt;
  const char ds = s[4];
  if ((ds != '/' && ds != '-') || s[7] != ds) return std::nullopt;
  if (s[10] != ' ' && s[10] != 'T') return std::nullopt;
  int64_t y = 0, mo = 0, d = 0;
  if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d)) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < kMinYear || y > kMaxYear) return std::nullopt;
  int64_t h = 0, mi = 0, se = 0;
  if (!digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' ||
      !digits(s, 17, 2, se))
    return std::nullopt;
  if (h > 23 || mi > 59 || se > 60) return std::nullopt;
  size_t pos = 19;
  const int64_t frac = fraction(s, pos);
  DateTime out;
  out.wall_ns = (daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86'400 +
                 (h * 60 + mi) * 60 + se) *
                    kNsPerSecond +
                frac;
  if (pos == s.size()) return out;
  if (s[pos] == 'Z' && pos + 1 == s.size()) {
    out.zone_offset_s = 0;
    return out;
  }
  if (s[pos] == '+' || s[pos] == '-') {
    const int sign = s[pos] == '-' ? -1 : 1;
    int64_t zh = 0, zm = 0;
    if (!digits(s, pos + 1, 2, zh)) return std::nullopt;
    size_t p = pos + 3;
    if (p < s.size() && s[p] == ':') ++p;
    if (p < s.size()) {
      if (!digits(s, p, 2, zm)) return std::nullopt;
      p += 2;
    }
    if (p != s.size()) return std::nullopt;
    out.zone_offset_s = sign * (zh * 3600 + zm * 60);
    return out;
  }
  return std::nullopt;
}

std::optional<int64_t> parseEpochSeconds(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  const size_t dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  bool plain = !whole.empty() && whole.size() <= 11;
  for (size_t i = 0; plain && i < s.size(); ++i)
    plain = isDigit(s[i]) || i == dot;
  if (!plain) {
    // Scientific notation or absurd magnitudes: go through a double.
    double d = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(d) ||
        std::fabs(d) > static_cast<double>(kMaxEpochSeconds))
      return std::nullopt;
    const auto ns = static_cast<int64_t>(std::llround(d * 1e9));
    return negative ? -ns : ns;
  }
  int64_t sec = 0;
  for (char c : whole)
    sec = sec * 10 + (c - '0');
  if (sec > kMaxEpochSeconds) return std::nullopt;
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    size_t pos = dot;
    frac = fraction(s, pos);
  }
  const int64_t ns = sec * kNsPerSecond + frac;
  return negative ? -ns : ns;
}

}  // namespace wl::import::text
