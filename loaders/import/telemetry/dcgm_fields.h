// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The DCGM fields Wattline maps onto its metrics, by numeric field id (DCGM long CSV) and by the
// short column name dcgmi dmon prints (its header line), with the scale to the metric's unit.

#include <cstdint>
#include <string_view>

namespace wl::import::dcgm {

struct Field {
  int id;                   // DCGM field id (DCGM_FI_*)
  std::string_view tag;     // dcgmi dmon column name ("POWER")
  std::string_view name;    // DCGM_FI_* name
  std::string_view metric;  // Wattline metric id; "" for the throttle mask
  double scale;             // multiply the DCGM value by this to get the metric's unit
};

// A mapped field by id, by dmon column name, or by DCGM_FI_* name; nullptr if unknown.
const Field* findField(int id);
const Field* findFieldByTag(std::string_view tagOrName);

// DCGM marks blank values with large sentinels (DCGM_INT32_BLANK = 0x7ffffff0, DCGM_INT64_BLANK,
// DCGM_FP64_BLANK = 2^47); true if `v` is one of them for a field of this kind.
bool isBlank(double v, bool counter);

}  // namespace wl::import::dcgm
