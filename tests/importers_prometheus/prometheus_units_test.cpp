// SPDX-License-Identifier: GPL-3.0-or-later
// The parts of the Prometheus importer that need no server: times, names, labels, URLs.
#include <gtest/gtest.h>

#include <cmath>

#include "loaders/core/error.h"
#include "loaders/core/metrics.h"
#include "loaders/import/prometheus/prometheus_import.h"

namespace wl::import::prom {
namespace {

TEST(PrometheusUnits, TimesAsRfc3339OrUnixSeconds) {
  // 2026-11-26T00:00:00Z = 20,783 days after 1970-01-01.
  const int64_t midnight = int64_t{20783} * 86400 * 1'000'000'000;
  EXPECT_EQ(parseTime("2026-11-26T00:00:00Z", "--start"), midnight);
  EXPECT_EQ(parseTime("2026-11-26T02:00:00.5+02:00", "--start"), midnight + 500'000'000);
  EXPECT_EQ(parseTime("1795651200", "--start"), midnight);
  EXPECT_EQ(parseTime("1795651200.25", "--end"), midnight + 250'000'000);
  EXPECT_THROW(parseTime("2026-11-26T00:00:00", "--start"), Error);  // no zone
  EXPECT_THROW(parseTime("yesterday", "--start"), Error);
  try {
    parseTime("26/11/2026", "--end");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--end '26/11/2026': expected an RFC 3339 time such as 2026-11-26T08:00:00Z or "
                 "Unix seconds");
  }
}

TEST(PrometheusUnits, ApiTimesAndSampleValues) {
  EXPECT_EQ(apiTime(1'700'000'000'250'000'000), "1700000000.250");
  EXPECT_EQ(apiTime(1'700'000'000'000'999'999), "1700000000.000");  // floored to ms
  double v = 0;
  EXPECT_TRUE(parseSampleValue("250.5", v));
  EXPECT_EQ(v, 250.5);
  EXPECT_TRUE(parseSampleValue("1e+06", v));
  EXPECT_EQ(v, 1e6);
  EXPECT_TRUE(parseSampleValue("+Inf", v));
  EXPECT_TRUE(std::isinf(v) && v > 0);
  EXPECT_TRUE(parseSampleValue("NaN", v));
  EXPECT_TRUE(std::isnan(v));
  EXPECT_FALSE(parseSampleValue("12W", v));
}

TEST(PrometheusUnits, DcgmAndAmdNamesMapToMetrics) {
  auto m = [](Labels l) { return mapSeries(l); };
  EXPECT_EQ(m({{"__name__", "DCGM_FI_DEV_POWER_USAGE"}}).metric, metric::kPower);
  const Mapping energy = m({{"__name__", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"}});
  EXPECT_EQ(energy.metric, metric::kEnergy);
  EXPECT_DOUBLE_EQ(energy.scale, 1e-3);  // mJ -> J
  // OpenMetrics counters carry _total.
  EXPECT_EQ(m({{"__name__", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total"}}).metric,
            metric::kEnergy);
  EXPECT_TRUE(m({{"__name__", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"}}).throttleMask);
  EXPECT_TRUE(m({{"__name__", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}}).throttleMask);
  const Mapping sm = m({{"__name__", "DCGM_FI_PROF_SM_ACTIVE"}});
  EXPECT_EQ(sm.metric, metric::kSmActive);
  EXPECT_DOUBLE_EQ(sm.scale, 100.0);  // ratio -> %
  // The instant power shadows nothing: it gets its own id.
  EXPECT_EQ(m({{"__name__", "DCGM_FI_DEV_POWER_USAGE_INSTANT"}}).metric,
            "dcgm_power_usage_instant");
  const Mapping unknown = m({{"__name__", "DCGM_FI_DEV_XID_ERRORS"}});
  EXPECT_EQ(unknown.metric, "dcgm_xid_errors");
  EXPECT_FALSE(unknown.known);
  EXPECT_EQ(m({{"__name__", "gpu_power_usage"}}).metric, metric::kPower);
  const Mapping amdEnergy = m({{"__name__", "gpu_energy_consumed"}});
  EXPECT_EQ(amdEnergy.metric, metric::kEnergy);
  EXPECT_DOUBLE_EQ(amdEnergy.scale, 1e-6);  // uJ -> J
  EXPECT_EQ(m({{"__name__", "gpu_junction_temperature"}}).metric, metric::kHotspotTemp);
  EXPECT_EQ(m({{"__name__", "gpu_clock"}, {"clock_type", "GPU_CLOCK_TYPE_SYSTEM"}}).metric,
            metric::kSmClock);
  EXPECT_EQ(m({{"__name__", "gpu_clock"}, {"clock_type", "GPU_CLOCK_TYPE_MEMORY"}}).metric,
            metric::kMemClock);
  EXPECT_EQ(m({{"__name__", "node_load1"}}).metric, "");
}

TEST(PrometheusUnits, LabelsGiveTheGpuIdentity) {
  const auto dcgm = identityOf({{"gpu", "3"},
                                {"UUID", "GPU-abc"},
                                {"Hostname", "node07"},
                                {"instance", "10.0.0.7:9400"},
                                {"modelName", "NVIDIA H100 80GB HBM3"},
                                {"pci_bus_id", "00000000:19:00.0"}});
  ASSERT_TRUE(dcgm);
  EXPECT_EQ(dcgm->host, "node07");  // Hostname wins over instance
  EXPECT_EQ(dcgm->index, 3);
  EXPECT_EQ(dcgm->uuid, "GPU-abc");
  EXPECT_EQ(dcgm->busId, "00000000:19:00.0");
  EXPECT_EQ(dcgm->deviceName, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(dcgm->key(), "node07/3");
  const auto byInstance = identityOf({{"gpu", "0"}, {"instance", "node01:9400"}});
  ASSERT_TRUE(byInstance);
  EXPECT_EQ(byInstance->host, "node01");
  const auto amd =
      identityOf({{"gpu_id", "5"}, {"hostname", "mi300-2"}, {"card_model", "AMD Instinct MI300X"}});
  ASSERT_TRUE(amd);
  EXPECT_EQ(amd->key(), "mi300-2/5");
  EXPECT_EQ(amd->deviceName, "AMD Instinct MI300X");
  EXPECT_FALSE(identityOf({{"instance", "node01:9100"}}));
}

TEST(PrometheusUnits, UrlsWithoutCredentials) {
  EXPECT_EQ(urlOfInput("prometheus:http://h:9090"), "http://h:9090");
  EXPECT_FALSE(urlOfInput("run.json"));
  EXPECT_EQ(http::displayUrl("https://bob:secret@thanos.example:443/prom"),
            "https://thanos.example:443/prom");
  EXPECT_EQ(http::displayUrl("http://h:9090/a@b"), "http://h:9090/a@b");
  EXPECT_EQ(http::formEncode(R"({a="b c"})"), "%7Ba%3D%22b%20c%22%7D");
}

TEST(PrometheusUnits, BadSelectorsAndRangesBeforeAnyRequest) {
  Source s;
  s.url = "http://127.0.0.1:1";
  s.start_ns = 2'000'000'000;
  s.end_ns = 1'000'000'000;
  EXPECT_THROW(discover(s), Error);  // empty range
  s.end_ns = 3'000'000'000;
  s.url = "ftp://h";
  EXPECT_THROW(discover(s), Error);
}

}  // namespace
}  // namespace wl::import::prom
