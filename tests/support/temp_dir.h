// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A temporary folder removed with its contents when the test ends.

#include <filesystem>

namespace wl::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace wl::test
