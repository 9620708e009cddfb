// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/time_format.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <ctime>

namespace wl {

std::string formatUtc(int64_t ns, int digits) {
  int64_t secs = ns / 1'000'000'000;
  int64_t frac = ns % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --secs;
  }
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  digits = digits < 0 ? 0 : (digits > 9 ? 9 : digits);
  std::string out = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (digits > 0) {
    int64_t div = 1;
    for (int i = digits; i < 9; ++i)
      div *= 10;
    out += fmt::format(".{:0{}}", frac / div, digits);
  }
  return out + " UTC";
}

std::string formatDuration(int64_t ns) {
  const double a = std::fabs(static_cast<double>(ns));
  const double v = static_cast<double>(ns);
  if (a < 1e3) return fmt::format("{} ns", ns);
  if (a < 1e6) return fmt::format("{:.{}f} us", v / 1e3, a < 1e4 ? 2 : (a < 1e5 ? 1 : 0));
  if (a < 1e9) return fmt::format("{:.{}f} ms", v / 1e6, a < 1e7 ? 2 : (a < 1e8 ? 1 : 0));
  if (a < 600e9) return fmt::format("{:.{}f} s", v / 1e9, a < 1e10 ? 3 : (a < 1e11 ? 2 : 1));
  const int64_t totalMin = static_cast<int64_t>(a / 60e9);
  const char* sign = ns < 0 ? "-" : "";
  if (totalMin < 60)
    return fmt::format("{}{} min {:02.0f} s", sign, totalMin, std::fmod(a / 1e9, 60.0));
  return fmt::format("{}{} h {:02} min", sign, totalMin / 60, totalMin % 60);
}

namespace {

// The ns of one unit ("s", "ms", ...; "" is seconds), 0 if it is not a unit; `rank` orders
// the units from the largest (h: 0) down, for the order of a compound duration.
double unitScale(std::string_view unit, int& rank) {
  struct Unit {
    std::string_view name;
    double ns;
    int rank;
  };
  static constexpr Unit kUnits[] = {{"h", 3600e9, 0}, {"m", 60e9, 1}, {"min", 60e9, 1},
                                    {"s", 1e9, 2},    {"", 1e9, 2},   {"ms", 1e6, 3},
                                    {"us", 1e3, 4},   {"ns", 1, 5}};
  for (const Unit& u : kUnits)
    if (u.name == unit) {
      rank = u.rank;
      return u.ns;
    }
  return 0;
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// The length of the number at the start of `s` ("12", "1.5", ".5", "2e3", "1.5e-3"), 0 if none.
size_t numberLength(std::string_view s) {
  size_t i = 0, digits = 0;
  for (; i < s.size() && isDigit(s[i]); ++i)
    ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && isDigit(s[i]); ++i)
      ++digits;
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && isDigit(s[j])) {
      while (j < s.size() && isDigit(s[j]))
        ++j;
      i = j;
    }
  }
  return i;
}

}  // namespace

std::optional<int64_t> parseDuration(std::string_view text) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  // Parts "NUMBER UNIT", units from the largest down, each at most once ("1h2m3.5s"); a bare
  // number (seconds) only on its own.
  double total = 0;
  int lastRank = -1;
  int parts = 0;
  while (!text.empty()) {
    const size_t n = numberLength(text);
    if (n == 0) return std::nullopt;
    const double v = std::strtod(std::string(text.substr(0, n)).c_str(), nullptr);
    text.remove_prefix(n);
    size_t u = 0;
    while (u < text.size() && text[u] >= 'a' && text[u] <= 'z')
      ++u;
    const std::string_view unit = text.substr(0, u);
    text.remove_prefix(u);
    int rank = 0;
    const double scale = unitScale(unit, rank);
    if (scale == 0 || !std::isfinite(v) || rank <= lastRank) return std::nullopt;
    if (unit.empty() && (parts > 0 || !text.empty())) return std::nullopt;
    lastRank = rank;
    ++parts;
    total += v * scale;
  }
  if (!(std::fabs(total) <= 9.2e18)) return std::nullopt;
  const int64_t ns = static_cast<int64_t>(std::llround(total));
  return negative ? -ns : ns;
}

}  // namespace wl
