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

std::optional<int64_t> parseDuration(std::string_view text) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v)) return std::nullopt;
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60e9;
  else if (unit == "h")
    scale = 3600e9;
  else
    return std::nullopt;
  const double ns = v * scale;
  if (std::fabs(ns) > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(std::llround(ns));
}

}  // namespace wl
