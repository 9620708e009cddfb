// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Interned strings: kernel names, collective names, process-group descriptions. Events store a
// uint32 id into the table; id 0 is always the empty string.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace wl {

class StringTable {
 public:
  StringTable() { intern(""); }

  uint32_t intern(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<uint32_t>(strings_.size());
    strings_.emplace_back(s);
    index_.emplace(strings_.back(), id);
    return id;
  }
  const std::string& at(uint32_t id) const { return strings_.at(id); }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Keys are views into strings_' elements; std::string keeps its heap buffer when the vector
  // grows only if the string is long, so the map owns copies instead of views.
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> index_;
};

}  // namespace wl
