// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/telemetry/dcgm_fields.h"

#include <array>

#include "core/metrics.h"

namespace wl::import::dcgm {
namespace {

// Field ids, names and units from DCGM's dcgm_fields.h; the profiling fields (1002, 1004) are
// ratios 0..1, hence the scale of 100 to percent; total energy is in mJ.
constexpr std::array kFields = {
    Field{100, "SMCLK", "DCGM_FI_DEV_SM_CLOCK", metric::kSmClock, 1.0},
    Field{101, "MMCLK", "DCGM_FI_DEV_MEM_CLOCK", metric::kMemClock, 1.0},
    Field{112, "DVCCTR", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "", 1.0},
    Field{140, "MMTMP", "DCGM_FI_DEV_MEMORY_TEMP", metric::kMemTemp, 1.0},
    Field{150, "TMPTR", "DCGM_FI_DEV_GPU_TEMP", metric::kTemp, 1.0},
    Field{155, "POWER", "DCGM_FI_DEV_POWER_USAGE", metric::kPower, 1.0},
    Field{156, "TOTEC", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", metric::kEnergy, 1e-3},
    Field{203, "GPUTL", "DCGM_FI_DEV_GPU_UTIL", metric::kUtil, 1.0},
    Field{204, "MCUTL", "DCGM_FI_DEV_MEM_COPY_UTIL", metric::kMemUtil, 1.0},
    Field{252, "FBUSD", "DCGM_FI_DEV_FB_USED", "mem_used_mib", 1.0},
    Field{1002, "SMACT", "DCGM_FI_PROF_SM_ACTIVE", metric::kSmActive, 100.0},
    Field{1004, "TENSO", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", metric::kTensorActive, 100.0},
};

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

const Field* findField(int id) {
  for (const Field& f : kFields)
    if (f.id == id) return &f;
  return nullptr;
}

const Field* findFieldByTag(std::string_view tagOrName) {
  for (const Field& f : kFields)
    if (equalsIgnoreCase(f.tag, tagOrName) || equalsIgnoreCase(f.name, tagOrName)) return &f;
  return nullptr;
}

bool isBlank(double v, bool counter) {
  constexpr double kInt32Blank = 2147483632.0;      // 0x7ffffff0
  constexpr double kFp64Blank = 140737488355328.0;  // 2^47
  return counter ? v >= kFp64Blank : v >= kInt32Blank;
}

}  // namespace wl::import::dcgm
