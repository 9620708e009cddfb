// SPDX-License-Identifier: GPL-3.0-or-later
// The DCGM field table (loaders/import/telemetry/dcgm_fields.h): every spelling a DCGM tool writes
// finds the same field, the table is consistent (unique ids, tags, names and dmon columns; metrics
// that Wattline knows, extra ids that never collide with them), and blank sentinels are told apart
// from values by the field's type.

#include "loaders/import/telemetry/dcgm_fields.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"

namespace wl::test {
namespace {

namespace dcgm = import::dcgm;

TEST(DcgmFields, EverySpellingOfAFieldFindsIt) {
  // Ids and names as in DCGM's dcgm_fields.h; tags and dmon names as in its dcgm_fields.cpp.
  struct Case {
    int id;
    std::vector<std::string> spellings;
    std::string_view metric;
  };
  const std::vector<Case> cases = {
      {155,
       {"155", "power_usage", "POWER_USAGE", "DCGM_FI_DEV_POWER_USAGE", "dcgm_fi_dev_power_usage",
        "POWER"},
       "power_w"},
      {150, {"150", "gpu_temp", "DCGM_FI_DEV_GPU_TEMP", "TMPTR"}, "temp_c"},
      {140, {"140", "memory_temp", "DCGM_FI_DEV_MEMORY_TEMP", "MMTMP"}, "mem_temp_c"},
      {100, {"100", "sm_clock", "DCGM_FI_DEV_SM_CLOCK", "SMCLK"}, "sm_clock_mhz"},
      {101, {"101", "memory_clock", "DCGM_FI_DEV_MEM_CLOCK", "MMCLK"}, "mem_clock_mhz"},
      {203, {"203", "gpu_utilization", "DCGM_FI_DEV_GPU_UTIL", "GPU_UTIL", "GPUTL"}, "util_pct"},
      {204, {"mem_copy_utilization", "DCGM_FI_DEV_MEM_COPY_UTIL", "MCUTL"}, "mem_util_pct"},
      {156,
       {"156", "total_energy_consumption", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "TOTEC"},
       "energy_j"},
      {157,
       {"157", "power_usage_instant", "DCGM_FI_DEV_POWER_USAGE_INSTANT", "POWINST"},
       "power_w"},
      {252, {"252", "fb_used", "DCGM_FI_DEV_FB_USED", "FBUSD"}, "mem_used_mib"},
      {1002, {"1002", "sm_active", "DCGM_FI_PROF_SM_ACTIVE", "SMACT"}, "sm_active_pct"},
      {1004,
       {"1004", "tensor_active", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "TENSO"},
       "tensor_active_pct"},
      // Field 112 under its old and new names.
      {112,
       {"112", "current_clocks_event_reasons", "current_clock_throttle_reasons",
        "clocks_event_reasons", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "CLOCK_THROTTLE_REASONS", "DVCCTR"},
       ""},
  };
  for (const Case& c : cases)
    for (const std::string& s : c.spellings) {
      const dcgm::Field* f = dcgm::lookup(s);
      ASSERT_NE(f, nullptr) << s;
      EXPECT_EQ(f->id, c.id) << s;
      EXPECT_EQ(f->metric, c.metric) << s;
    }
  EXPECT_EQ(dcgm::lookup("112")->role, dcgm::Role::Throttle);
  EXPECT_EQ(dcgm::lookup("164")->info, dcgm::Info::EnforcedPowerLimit);
  EXPECT_EQ(dcgm::lookup("sm_max_clock")->info, dcgm::Info::MaxSmClock);
  EXPECT_EQ(dcgm::lookup("uuid")->role, dcgm::Role::Identity);
  // Unit conversions: mJ -> J, ratio -> %.
  EXPECT_DOUBLE_EQ(dcgm::lookup("156")->scale, 1e-3);
  EXPECT_DOUBLE_EQ(dcgm::lookup("SMACT")->scale, 100.0);
  EXPECT_DOUBLE_EQ(dcgm::lookup("POWER")->scale, 1.0);
  // Power instant is the fallback when power_usage is there too.
  EXPECT_LT(dcgm::lookup("155")->priority, dcgm::lookup("157")->priority);
  EXPECT_EQ(dcgm::shadowedMetricId(*dcgm::lookup("157")), "dcgm_power_usage_instant");

  for (std::string_view unknown : {"", "9999", "-1", "watts", "DCGM_FI_DEV_NO_SUCH_FIELD", "GPU"})
    EXPECT_EQ(dcgm::lookup(unknown), nullptr) << unknown;
  EXPECT_EQ(dcgm::extraMetricId("1013"), "dcgm_field_1013");
  EXPECT_EQ(dcgm::extraMetricId("DCGM_FI_DEV_XID_ERRORS"), "dcgm_xid_errors");
  EXPECT_EQ(dcgm::extraMetricId("xid_errors"), "dcgm_xid_errors");
  EXPECT_EQ(dcgm::extraMetricId("TIMMA"), "dcgm_timma");
}

TEST(DcgmFields, TheTableIsConsistent) {
  std::set<int> ids;
  int prev = -1;
  for (const dcgm::Field& f : dcgm::fields()) {
    EXPECT_GT(f.id, prev) << "ordered by id";
    prev = f.id;
    EXPECT_TRUE(ids.insert(f.id).second) << f.id;
    for (std::string_view n : {f.name, f.tag, f.dmon})
      ASSERT_FALSE(n.empty()) << f.id;
    EXPECT_EQ(f.name.substr(0, 8), "DCGM_FI_") << f.id;
    EXPECT_EQ(dcgm::byId(f.id), &f);
    EXPECT_EQ(dcgm::byName(f.tag), &f) << f.tag;
    EXPECT_EQ(dcgm::byName(f.name), &f) << f.name;
    EXPECT_EQ(dcgm::byName(f.dmon), &f) << f.dmon;
    switch (f.role) {
      case dcgm::Role::Metric:
        EXPECT_NE(findMetric(f.metric), nullptr) << f.metric << " is a metric Wattline knows";
        break;
      case dcgm::Role::Extra:
        EXPECT_EQ(f.metric.substr(0, 5), "dcgm_") << f.metric;
        EXPECT_EQ(findMetric(f.metric), nullptr) << f.metric;
        break;
      case dcgm::Role::Throttle:
        EXPECT_TRUE(f.metric.empty());
        break;
      case dcgm::Role::GpuInfo:
      case dcgm::Role::Identity:
        EXPECT_NE(f.info, dcgm::Info::None) << f.id;
        break;
    }
  }
  // Across fields no spelling is shared: each name finds only its own field.
  for (const dcgm::Field& a : dcgm::fields())
    for (const dcgm::Field& b : dcgm::fields())
      if (&a != &b) {
        EXPECT_NE(dcgm::byName(a.tag), &b);
        EXPECT_NE(dcgm::byName(a.dmon), &b);
      }
}

TEST(DcgmFields, BlankSentinelsByType) {
  using T = dcgm::Type;
  // DCGM_INT32_BLANK and the codes above it; DCGM_INT64_BLANK; DCGM_FP64_BLANK (2^47) and above.
  EXPECT_TRUE(dcgm::isBlank(2147483632.0, T::Int64));
  EXPECT_TRUE(dcgm::isBlank(2147483635.0, T::Int64));
  EXPECT_TRUE(dcgm::isBlank(9223372036854775792.0, T::Int64));
  EXPECT_TRUE(dcgm::isBlank(140737488355328.0, T::Double));
  EXPECT_TRUE(dcgm::isBlank(140737488355331.0, T::Double));
  // Real values: a 64-bit counter past 2^31 and a double below 2^47 are not blank.
  EXPECT_FALSE(dcgm::isBlank(5000000000.0, T::Int64));
  EXPECT_FALSE(dcgm::isBlank(2147483632.0, T::Double));
  EXPECT_FALSE(dcgm::isBlank(690.25, T::Double));
  // Unknown fields: only the exact sentinels.
  EXPECT_TRUE(dcgm::isBlank(2147483632.0, std::nullopt));
  EXPECT_TRUE(dcgm::isBlank(140737488355328.0, std::nullopt));
  EXPECT_FALSE(dcgm::isBlank(140737488355400.0, std::nullopt));
  EXPECT_FALSE(dcgm::isBlank(3e9, std::nullopt));
}

TEST(DcgmFields, PerReasonThrottleFlags) {
  EXPECT_EQ(dcgm::throttleFlagBit("throttle_reason_sw_power_cap"), throttle::kSwPowerCap);
  EXPECT_EQ(dcgm::throttleFlagBit("DCGM_CLOCKS_EVENT_REASON_HW_THERMAL"), throttle::kHwThermal);
  EXPECT_EQ(dcgm::throttleFlagBit("clocks_event_reason_sw_thermal_slowdown"), throttle::kSwThermal);
  EXPECT_EQ(dcgm::throttleFlagBit("throttle_reason_gpu_idle"), throttle::kGpuIdle);
  EXPECT_EQ(dcgm::throttleFlagBit("throttle_reason_hw_power_brake"), throttle::kHwPowerBrake);
  EXPECT_EQ(dcgm::throttleFlagBit("DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS"), std::nullopt);
  EXPECT_EQ(dcgm::throttleFlagBit("throttle_reason_sw_power_cap_ns"), std::nullopt);
  EXPECT_EQ(dcgm::throttleFlagBit("sw_power_cap"), std::nullopt);
}

}  // namespace
}  // namespace wl::test
