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

void checkPyramid(const std::filesystem::path& file, std::string_view where,
                  const std::vector<uint64_t>& buckets) {
  for (size_t k = 0; k < buckets.size(); ++k) {
    const bool top = k + 1 == buckets.size();
    const size_t limit = top ? kMaxTopBuckets : kMaxLodBuckets;
    if (buckets[k] > limit)
      throw Error(
          fmt::format("{}: /{}/lod level {} has {} buckets, more than the {} Wattline reads "
                      "for {} level (the file is damaged)",
                      file.string(), where, k, buckets[k], limit, top ? "the top" : "a"));
  }
}

}  // namespace wl::limits
