// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/format/run_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "loaders/core/error.h"

namespace wl::limits {
namespace {

struct Walk {
  std::string problem;  // the first damaged dataset, "" if none
};

herr_t checkOne(hid_t root, const char* name, const H5O_info_t* info, void* data) {
  if (info->type != H5O_TYPE_DATASET) return 0;
  auto* walk = static_cast<Walk*>(data);
  const hid_t d = H5Dopen2(root, name, H5P_DEFAULT);
  if (d < 0) return 0;  // the reader says what is wrong with it when it needs it
  const hid_t space = H5Dget_space(d), type = H5Dget_type(d);
  hsize_t dims[1] = {0};
  if (space >= 0 && type >= 0 && H5Sget_simple_extent_ndims(space) == 1) {
    H5Sget_simple_extent_dims(space, dims, nullptr);
    const size_t elem = std::max<size_t>(H5Tget_size(type), 1);
    const auto stored = static_cast<size_t>(H5Dget_storage_size(d));
    const size_t limit = kSlackBytes + kMaxExpansion * stored;
    if (dims[0] > limit / elem)
      walk->problem = fmt::format(
          "dataset /{} declares {} elements of {} bytes but stores only {} "
          "bytes (the file is damaged)",
          name, dims[0], elem, stored);
  }
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  H5Dclose(d);
  return walk->problem.empty() ? 0 : 1;
}

}  // namespace

void checkStoredSizes(const std::filesystem::path& file, hid_t root) {
  Walk walk;
  H5Ovisit2(root, H5_INDEX_NAME, H5_ITER_NATIVE, checkOne, &walk, H5O_INFO_BASIC);
  if (!walk.problem.empty()) throw Error(fmt::format("{}: {}", file.string(), walk.problem));
}

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
