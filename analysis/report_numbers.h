// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How reports write numbers (every JSON and CSV writer of analysis results uses these): unknown
// values (NaN, infinities) are JSON null and empty CSV fields, never 0; known values have the
// fewest digits that read back exactly.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>

namespace wl {

inline nlohmann::json jsonNumber(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// An index, id or time where -1 (any negative value) means "none": null.
inline nlohmann::json jsonIndex(int64_t v) {
  return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
}

inline std::string csvNumber(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

// Ids as runs: "0-7", "0,4,8-15", "none".
inline std::string compactList(const std::set<int>& v) {
  if (v.empty()) return "none";
  std::string out;
  auto it = v.begin();
  while (it != v.end()) {
    const int first = *it;
    int last = first;
    for (++it; it != v.end() && *it == last + 1; ++it)
      last = *it;
    if (!out.empty()) out += ",";
    out += last == first ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

}  // namespace wl
