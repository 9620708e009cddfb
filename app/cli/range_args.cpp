// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/range_args.h"

#include <fmt/format.h>

#include <stdexcept>

#include "app/cli/arg_parser.h"
#include "loaders/core/time_format.h"

namespace wl::cli {
namespace {

int64_t parseRangeEnd(const std::string& text, int64_t runStart, int64_t dflt) {
  if (text.empty()) return dflt;
  const bool digitsOnly =
      text.find_first_not_of("0123456789") == std::string::npos && text.size() >= 16;
  if (digitsOnly) {
    try {
      return std::stoll(text);
    } catch (const std::logic_error&) {
      throw UsageError(fmt::format("--range: '{}' is not a time in ns", text));
    }
  }
  const auto d = parseDuration(text);
  if (!d)
    throw UsageError(fmt::format(
        "--range: '{}' is neither a duration (10s, 1.5m, 12m10s, 250ms, 12) nor a time in ns",
        text));
  if (*d < 0)
    throw UsageError(fmt::format(
        "--range: '{}' is before the run's start (START and END are durations after it)", text));
  if (*d > 0 && runStart > INT64_MAX - *d)
    throw UsageError(fmt::format("--range: '{}' is out of range", text));
  return runStart + *d;
}

}  // namespace

std::vector<int> parseIndexList(const std::string& option, const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  auto bad = [&] {
    return UsageError(fmt::format("--{} expects a list like 0,2,4-7, got '{}'", option, text));
  };
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty()) throw bad();
    const size_t dash = item.find('-', 1);
    try {
      size_t used = 0;
      const int a = std::stoi(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash) || a < 0) throw bad();
      int b = a;
      if (dash != std::string::npos) {
        const std::string rest = item.substr(dash + 1);
        b = std::stoi(rest, &used);
        if (used != rest.size() || b < a) throw bad();
      }
      if (b - a > 1'000'000) throw bad();
      for (int v = a;; ++v) {  // (not v <= b: b may be INT_MAX)
        out.push_back(v);
        if (v == b) break;
      }
    } catch (const std::logic_error&) {
      throw bad();
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<std::string> parseNameList(const std::string& option, const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!item.empty() && item.front() == ' ')
      item.erase(item.begin());
    while (!item.empty() && item.back() == ' ')
      item.pop_back();
    if (item.empty())
      throw UsageError(
          fmt::format("--{} expects names separated by commas, got '{}'", option, text));
    out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

void checkRangeSyntax(const std::string& text) {
  if (text.find(':') == std::string::npos)
    throw UsageError(fmt::format("--range expects START:END, got '{}'", text));
}

TimeRange parseRunRange(const std::string& text, int64_t runStart) {
  checkRangeSyntax(text);
  const size_t colon = text.find(':');
  TimeRange r;
  r.t0 = parseRangeEnd(text.substr(0, colon), runStart, r.t0);
  r.t1 = parseRangeEnd(text.substr(colon + 1), runStart, r.t1);
  if (r.t1 <= r.t0) throw UsageError(fmt::format("--range: END must be after START in '{}'", text));
  return r;
}

}  // namespace wl::cli
