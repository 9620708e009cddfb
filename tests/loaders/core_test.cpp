// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>

#include <limits>

#include "loaders/core/kernel_class.h"
#include "loaders/core/metrics.h"
#include "loaders/core/series_math.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/core/time_format.h"

namespace wl {
namespace {

TEST(KernelClass, FollowsTheDocumentedOrder) {
  EXPECT_EQ(classifyKernel("ncclDevKernel_Generic", GpuEventKind::Kernel, false),
            KernelClass::Communication);
  EXPECT_EQ(classifyKernel("ncclKernel_AllReduce_RING_LL_Sum_float", GpuEventKind::Kernel, false),
            KernelClass::Communication);
  EXPECT_EQ(classifyKernel("void rcclAllReduceKernel", GpuEventKind::Kernel, false),
            KernelClass::Compute);  // rccl only counts as a prefix
  EXPECT_EQ(classifyKernel("rccl_something", GpuEventKind::Kernel, false),
            KernelClass::Communication);
  EXPECT_EQ(classifyKernel("custom_allreduce", GpuEventKind::Kernel, true),
            KernelClass::Communication);
  EXPECT_EQ(classifyKernel("Memcpy DtoD (Device -> Device)", GpuEventKind::Memcpy, false),
            KernelClass::Memory);
  EXPECT_EQ(classifyKernel("anything", GpuEventKind::Memset, false), KernelClass::Memory);
  EXPECT_EQ(classifyKernel("hipMemcpyWithStream", GpuEventKind::Kernel, false),
            KernelClass::Memory);
  // HTA's "every ^hip name is communication" rule is deliberately not copied.
  EXPECT_EQ(classifyKernel("hipLaunchKernel_helper", GpuEventKind::Kernel, false),
            KernelClass::Compute);
  EXPECT_EQ(classifyKernel("sm90_xmma_gemm", GpuEventKind::Kernel, false), KernelClass::Compute);
  EXPECT_EQ(classifyKernel("cudaDeviceSynchronize", GpuEventKind::Other, false),
            KernelClass::Other);
}

TEST(Metrics, SanitizeIds) {
  EXPECT_EQ(sanitizeMetricId("clocks.sm [MHz]"), "clocks_sm_mhz");
  EXPECT_EQ(sanitizeMetricId(" utilization.gpu [%]"), "utilization_gpu_pct");
  EXPECT_EQ(sanitizeMetricId("123abc"), "m_123abc");
  EXPECT_EQ(sanitizeMetricId("///"), "metric");
  EXPECT_EQ(metricUnit("power_w"), "W");
  EXPECT_EQ(metricLabel("unknown_thing"), "unknown_thing");
  EXPECT_EQ(findMetric("pcie_tx_bytes")->kind, MetricKind::Counter);
}

TEST(SeriesMath, MedianAndGap) {
  const std::vector<int64_t> t = {0, 10, 20, 100, 110};
  EXPECT_EQ(medianInterval(t), 10);  // diffs 10 10 80 10
  const std::vector<int64_t> t2 = {0, 10, 30, 60};
  EXPECT_EQ(medianInterval(t2), 20);  // diffs 10 20 30
  const std::vector<int64_t> t3 = {0, 10, 30};
  EXPECT_EQ(medianInterval(t3), 15);  // diffs 10 20: mean of the middle two
  EXPECT_EQ(medianInterval(std::vector<int64_t>{5}), 0);
  EXPECT_EQ(gapThreshold(50'000'000), 1'000'000'000);
  EXPECT_EQ(gapThreshold(400'000'000), 2'000'000'000);
  // Samples decades apart (the import_job fuzzer's nvidia-smi rows of 1964 and 2025): 5 x the
  // median does not fit int64, so the threshold is int64's maximum, not an overflow.
  EXPECT_EQ(gapThreshold(1'924'992'000'100'000'000), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(gapThreshold(std::numeric_limits<int64_t>::max() / 5),
            std::numeric_limits<int64_t>::max() / 5 * 5);
}

TEST(ThrottleReasons, Describe) {
  EXPECT_EQ(throttle::describe(0), "none");
  EXPECT_EQ(throttle::describe(0x4 | 0x40), "sw_power_cap+hw_thermal");
  EXPECT_EQ(throttle::describe(throttle::kUnknown), "unknown");
}

struct DurationRow {
  int64_t ns;
  const char* text;
};

class FormatDurationRows : public ::testing::TestWithParam<DurationRow> {};

TEST_P(FormatDurationRows, Formats) {
  EXPECT_EQ(formatDuration(GetParam().ns), GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(TimeFormat, FormatDurationRows,
                         ::testing::Values(DurationRow{850, "850 ns"},
                                           DurationRow{12'400, "12.4 us"},
                                           DurationRow{3'200'000, "3.20 ms"},
                                           DurationRow{1'500'000'000, "1.500 s"},
                                           DurationRow{266'000'000'000, "266.0 s"},
                                           DurationRow{3'723'000'000'000, "1 h 02 min"}));

TEST(TimeFormat, UtcAndParse) {
  EXPECT_EQ(formatUtc(1'700'000'000'123'456'789), "2023-11-14 22:13:20.123 UTC");
  EXPECT_EQ(formatUtc(1'700'000'000'123'456'789, 9), "2023-11-14 22:13:20.123456789 UTC");
  EXPECT_EQ(parseDuration("1.5s"), 1'500'000'000);
  EXPECT_EQ(parseDuration("200ms"), 200'000'000);
  EXPECT_EQ(parseDuration("30us"), 30'000);
  EXPECT_EQ(parseDuration("2"), 2'000'000'000);
  EXPECT_EQ(parseDuration("1h"), 3'600'000'000'000);
  EXPECT_FALSE(parseDuration("abc").has_value());
  EXPECT_FALSE(parseDuration("5 parsecs").has_value());
}

// Compound durations, as docs/export.md writes them ("--range 12m:12m10s"): units from the largest
// down, each once; the values below are the sums worked out by hand.
TEST(TimeFormat, ParsesCompoundDurations) {
  EXPECT_EQ(parseDuration("12m10s"), 730'000'000'000);      // 12 x 60 + 10 s
  EXPECT_EQ(parseDuration("1h2m3.5s"), 3'723'500'000'000);  // 3600 + 120 + 3.5 s
  EXPECT_EQ(parseDuration("1h30min"), 5'400'000'000'000);   // 90 min
  EXPECT_EQ(parseDuration("1s500ms"), 1'500'000'000);
  EXPECT_EQ(parseDuration("2ms3us4ns"), 2'003'004);
  EXPECT_EQ(parseDuration("1.5m30s"), 120'000'000'000);  // 90 + 30 s
  EXPECT_EQ(parseDuration("-1m30s"), -90'000'000'000);   // the sign covers every part
  EXPECT_EQ(parseDuration("+2m"), 120'000'000'000);
  EXPECT_EQ(parseDuration(" 1h1s "), 3'601'000'000'000);  // spaces around are trimmed
  EXPECT_EQ(parseDuration("1e3ms"), 1'000'000'000);       // an exponent in a part
  EXPECT_EQ(parseDuration(".5s"), 500'000'000);
  EXPECT_EQ(parseDuration("2555555h"), int64_t{2'555'555} * 3'600'000'000'000);  // < 9.2e18 ns
}

TEST(TimeFormat, RejectsMalformedCompoundDurations) {
  for (const char* bad : {"10s12m",                // units out of order
                          "1m1m",                  // a unit twice
                          "1m30",                  // a bare number after a unit
                          "30 1s",                 // a bare number before one
                          "1m 30s",                // a space inside
                          "1m-30s",                // a sign inside
                          "--1s",                  // two signs
                          "-",                     // a sign alone
                          "m",                     // a unit alone
                          "1x",                    // not a unit
                          "0x10",                  // hexadecimal
                          "inf", "nan", "1e999s",  // not finite
                          "1h.s",                  // a dot without digits
                          "2555556h",              // past the limit, 9.2e18 ns
                          ""})
    EXPECT_FALSE(parseDuration(bad).has_value()) << "'" << bad << "'";
}

}  // namespace
}  // namespace wl
