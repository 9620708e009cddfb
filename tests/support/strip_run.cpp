// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/strip_run.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string_view>
#include <vector>

#include "loaders/h5/h5.h"

namespace wl::test {

void stripToWhatARealRunHas(const std::filesystem::path& path, StripSensors sensors) {
  std::lock_guard lock(h5::lock());
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << path;
  EXPECT_GE(H5Ldelete(f, "/ground_truth", H5P_DEFAULT), 0);
  std::vector<const char*> optional{"/kernels/truth_clock_mhz"};
  if (sensors == StripSensors::Too) optional.push_back("/sensors");
  for (const char* link : optional)
    if (H5Lexists(f, link, H5P_DEFAULT) > 0) {
      EXPECT_GE(H5Ldelete(f, link, H5P_DEFAULT), 0);
    }
  EXPECT_GE(H5Adelete(f, "parameters_json"), 0);
  h5::setAttr(f, "parameters_json", std::string_view("{}"));
  EXPECT_GE(H5Adelete(f, "simulated"), 0);
  h5::setAttr(f, "simulated", int64_t{0});
  H5Fclose(f);
}

}  // namespace wl::test
