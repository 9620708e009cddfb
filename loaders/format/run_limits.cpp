// SPDX-License-Identifier: GPL-3.0-or-later
#include "format/run_limits.h"

#include <fmt/format.h>

#include "core/error.h"

namespace wl::limits {

void checkCount(const std::filesystem::path& file, std::string_view what, size_t n, size_t limit) {
  if (n <= limit) return;
  throw Error(
      fmt::format("{}: /{} has {} rows, more than the {} Wattline reads (the file is damaged)",
                  file.string(), what, n, limit));
}

}  // namespace wl::limits
