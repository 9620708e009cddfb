// SPDX-License-Identifier: GPL-3.0-or-later
// Real logs as they come (issue 14): DCGM output naming fields by tag, DCGM_FI_* name or id, the
// energy counter cross-checked against integrated power, physically impossible values, one wild
// timestamp, and local times with --utc-offset. Each import goes through ImportJob (the path of
// `wattline import` and the GUI), so the checks at assembly are included.
//
// Generated inputs (simulated, no real DCGM sample exists in tests/data): a DCGM host with two GPUs
// polled every 100 ms for 20 s; GPU g draws p_g(t) = 300 + 100 g + 50 sin(2 pi t / 10 s) W, DCGM
// stamps the fields of one poll 150 us apart, and the energy counter of GPU 0 advances by the
// trapezoid of its power between polls (so it agrees with the integral), that of GPU 1 by 1.5x
// that (so it does not). Expected numbers are computed from that model here.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <numbers>
#include <regex>
#include <string>
#include <vector>

#include "importers_telemetry/telemetry_test_util.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/lod.h"
#include "loaders/format/run_file.h"
#include "loaders/import/import_job.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

constexpr int64_t kT0Us = 1'727'385'120'000'000;  // 2024-09-26 21:12:00 UTC
constexpr int kPolls = 200;
constexpr int64_t kPollUs = 100'000;

double modelPower(int gpu, int poll) {
  const double t = static_cast<double>(poll) * 0.1;
  return 300.0 + 100.0 * gpu + 50.0 * std::sin(2.0 * std::numbers::pi * t / 10.0);
}

// The DCGM long CSV of the model. Fields are named every way DCGM tools write them.
std::string dcgmLongCsv() {
  std::string s = "GPUId,TimeStampUs,Field,Values\n";
  for (int g = 0; g < 2; ++g) {
    s += fmt::format("{},{},fb_total,81559\n", g, kT0Us);
    s += fmt::format("{},{},DCGM_FI_DEV_ENFORCED_POWER_LIMIT,700.0\n", g, kT0Us);
    s += fmt::format("{},{},name,NVIDIA H100 80GB HBM3\n", g, kT0Us);
    s += fmt::format("{},{},driver_version,550.54.15\n", g, kT0Us);
  }
  double energyMj[2] = {1e9, 2e9};
  for (int k = 0; k < kPolls; ++k)
    for (int g = 0; g < 2; ++g) {
      if (k > 0) {
        const double trap = 0.5 * (modelPower(g, k - 1) + modelPower(g, k)) * 0.1;  // J
        energyMj[g] += 1000.0 * trap * (g == 0 ? 1.0 : 1.5);
      }
      int64_t t = kT0Us + k * kPollUs;
      auto row = [&](std::string_view field, const std::string& value) {
        s += fmt::format("{},{},{},{}\n", g, t, field, value);
        t += 150;
      };
      row(g == 0 ? "power_usage" : "155", fmt::format("{:.3f}", modelPower(g, k)));
      row(g == 0 ? "gpu_temp" : "DCGM_FI_DEV_GPU_TEMP", std::to_string(50 + k % 7));
      row("DCGM_FI_DEV_SM_CLOCK", k % 20 == 0 ? "1755" : "1980");
      row("sm_active", "0.85");
      row("total_energy_consumption", fmt::format("{:.0f}", energyMj[g]));
      row(g == 0 ? "current_clock_throttle_reasons" : "clocks_event_reasons",
          k % 20 == 0 ? "4" : "0");
      row("fb_used", "40000");
      row("power_usage_instant", fmt::format("{:.3f}", modelPower(g, k) + 5.0));
      row("DCGM_FI_DEV_XID_ERRORS", "0");
      row("DCGM_FI_PROF_PCIE_TX_BYTES", "123456789");
    }
  return s;
}

wl::import::ImportSummary importJob(
    const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out,
    const std::function<void(import::ImportRequest&)>& tune = nullptr) {
  wl::import::ImportRequest req;
  for (const auto& p : inputs)
    req.inputs.push_back({p, {}});
  req.output = out;
  if (tune) tune(req);
  return wl::import::ImportJob(std::move(req)).run();
}  // namespace

std::vector<const QualityNote*> notesWithCode(const std::vector<QualityNote>& notes,
                                              std::string_view code) {
  std::vector<const QualityNote*> out;
  for (const QualityNote& n : notes)
    if (n.code == code) out.push_back(&n);
  return out;
}

TEST(RealLogs, DcgmLongCsvWithTagsNamesAndIds) {
  TempDir tmp;
  writeText(tmp / "dcgm.csv", dcgmLongCsv());
  EXPECT_EQ(detectedFormat(tmp / "dcgm.csv"), "dcgm-csv");
  const import::ImportedData d = importWith("dcgm-csv", tmp / "dcgm.csv");
  ASSERT_EQ(d.gpus.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    const import::ImportedGpu& gpu = *gpuByIndex(d, g);
    ASSERT_EQ(gpu.table.size(), static_cast<size_t>(kPolls)) << "one row per poll";
    for (int k = 0; k < kPolls; ++k) {
      EXPECT_EQ(gpu.table.t_ns[static_cast<size_t>(k)], (kT0Us + k * kPollUs) * 1000);
      EXPECT_NEAR(column(gpu, "power_w").values[static_cast<size_t>(k)], modelPower(g, k), 5e-4);
      EXPECT_NEAR(column(gpu, "dcgm_power_usage_instant").values[static_cast<size_t>(k)],
                  modelPower(g, k) + 5.0, 5e-4);
      EXPECT_EQ(column(gpu, "temp_c").values[static_cast<size_t>(k)], 50 + k % 7);
      EXPECT_EQ(gpu.table.throttle_reasons[static_cast<size_t>(k)],
                k % 20 == 0 ? throttle::kSwPowerCap : 0u);
    }
    EXPECT_DOUBLE_EQ(column(gpu, "sm_active_pct").values[0], 85.0);
    EXPECT_DOUBLE_EQ(column(gpu, "energy_j").values[0], g == 0 ? 1e6 : 2e6);  // mJ -> J
    EXPECT_DOUBLE_EQ(column(gpu, "mem_used_mib").values[5], 40000.0);
    EXPECT_NEAR(column(gpu, "mem_used_pct").values[5], 40000.0 / 81559.0 * 100.0, 1e-9);
    EXPECT_DOUBLE_EQ(column(gpu, "dcgm_xid_errors").values[3], 0.0);
    EXPECT_DOUBLE_EQ(column(gpu, "dcgm_pcie_tx_bytes").values[3], 123456789.0);
    EXPECT_FLOAT_EQ(gpu.info.power_limit_w, 700.0f);
    EXPECT_EQ(gpu.info.device_name, "NVIDIA H100 80GB HBM3");
  }
  EXPECT_EQ(d.platform, "H100");
  const QualityNote* text = findNote(d.notes, "dcgm_text_fields");
  ASSERT_NE(text, nullptr);
  EXPECT_NE(text->message.find("driver_version"), std::string::npos) << text->message;
}

TEST(RealLogs, DcgmEnergyCounterIsCrossCheckedAgainstIntegratedPower) {
  TempDir tmp;
  writeText(tmp / "dcgm.csv", dcgmLongCsv());
  const import::ImportSummary s = importJob({tmp / "dcgm.csv"}, tmp / "run.h5");
  const auto checks = notesWithCode(s.notes, "energy_cross_check");
  ASSERT_EQ(checks.size(), 2u);
  // Reference: the trapezoid of the model's power over the 199 poll intervals.
  double ref = 0;
  for (int k = 1; k < kPolls; ++k)
    ref += 0.5 * (modelPower(0, k - 1) + modelPower(0, k)) * 0.1;
  const QualityNote& gpu0 = *checks[0];
  const QualityNote& gpu1 = *checks[1];
  EXPECT_NE(gpu0.subject.find("GPU 0"), std::string::npos);
  EXPECT_EQ(gpu0.severity, Severity::Info) << gpu0.message;
  EXPECT_NE(gpu0.message.find(fmt::format("power integrates to {:.4g} kJ", ref * 1e-3)),
            std::string::npos)
      << gpu0.message;
  EXPECT_NE(gpu0.message.find("+0.0 %"), std::string::npos) << gpu0.message;
  EXPECT_EQ(gpu1.severity, Severity::Warning) << gpu1.message;
  EXPECT_NE(gpu1.message.find("+50.0 %"), std::string::npos) << gpu1.message;
}

TEST(RealLogs, DcgmDmonHeaderWithTagsIdsAndFlags) {
  TempDir tmp;
  writeText(tmp / "dmon.txt",
            "#Entity   power_usage  150   DCGM_FI_DEV_SM_CLOCK  POWINST  TIMMA  "
            "throttle_reason_sw_power_cap  throttle_reason_hw_thermal  ENFORCED_POWER_LIMIT\n"
            "ID        W            C     MHz                   W\n"
            "GPU 0     250.5        55    1980                  251.0    0.1    0  0  700\n"
            "GPU 0     690.0        81    1410                  688.0    0.4    1  1  700\n"
            "GPU 0     N/A          80    1455                  N/A      0.4    N/A N/A 700\n");
  import::ImportOptions opt;
  opt.dcgm_interval_ms = 1000;
  const import::ImportedData d = importWith("dcgm-dmon", tmp / "dmon.txt", opt);
  ASSERT_EQ(d.gpus.size(), 1u);
  const auto& g = d.gpus[0];
  EXPECT_EQ(column(g, "temp_c").values, (std::vector<double>{55, 81, 80}));
  EXPECT_EQ(column(g, "sm_clock_mhz").values, (std::vector<double>{1980, 1410, 1455}));
  EXPECT_DOUBLE_EQ(column(g, "power_w").values[1], 690.0);
  EXPECT_DOUBLE_EQ(column(g, "dcgm_power_usage_instant").values[1], 688.0);
  EXPECT_DOUBLE_EQ(column(g, "dcgm_timma").values[1], 0.4);
  EXPECT_EQ(
      g.table.throttle_reasons,
      (std::vector<uint32_t>{0, throttle::kSwPowerCap | throttle::kHwThermal, throttle::kUnknown}));
  EXPECT_FLOAT_EQ(g.info.power_limit_w, 700.0f);
  EXPECT_EQ(g.table.column("enforced_power_limit"), nullptr) << "a constant, not a series";
}

TEST(RealLogs, ImpossibleValuesBecomeMissingSamplesWithANotePerMetric) {
  TempDir tmp;
  std::string text =
      "timestamp, index, power.draw [W], temperature.gpu, utilization.gpu [%], clocks.sm [MHz], "
      "clocks.max.sm [MHz]\n";
  // 20 samples per GPU at 1 Hz; GPU 0 has a 1e308 W sample, a negative power, a 200 C and a
  // 150 % sample, and a clock above its 1980 MHz maximum.
  for (int k = 0; k < 20; ++k)
    for (int g = 0; g < 2; ++g) {
      std::string power = "400.00 W", temp = "60", util = "90 %", clock = "1980 MHz";
      if (g == 0 && k == 5) power = "1e308 W";
      if (g == 0 && k == 6) power = "-12.50 W";
      if (g == 0 && k == 7) temp = "200";
      if (g == 0 && k == 8) util = "150 %";
      if (g == 0 && k == 9) clock = "2500 MHz";
      text += fmt::format("2024-01-02T03:04:{:02}.000Z, {}, {}, {}, {}, {}, 1980 MHz\n", k, g,
                          power, temp, util, clock);
    }
  writeText(tmp / "q.csv", text);
  const import::ImportSummary s = importJob({tmp / "q.csv"}, tmp / "run.h5");
  const auto notes = notesWithCode(s.notes, "impossible_values");
  ASSERT_EQ(notes.size(), 4u);  // power (2 values), temperature, utilization, SM clock
  std::string all;
  for (const QualityNote* n : notes) {
    EXPECT_NE(n->subject.find("GPU 0"), std::string::npos) << n->subject;
    all += n->message + "\n";
  }
  EXPECT_NE(
      all.find("2 values of power_w outside what a GPU can report (0 .. 3000 W), e.g. 1e+308 W"),
      std::string::npos)
      << all;
  EXPECT_NE(all.find("1 value of temp_c"), std::string::npos) << all;
  EXPECT_NE(all.find("1 value of util_pct"), std::string::npos) << all;
  EXPECT_NE(all.find("1 value of sm_clock_mhz outside what a GPU can report (0 .. 1980 MHz (the "
                     "GPU's maximum clock)), e.g. 2500 MHz"),
            std::string::npos)
      << all;
  EXPECT_FALSE(hasNote(s.notes, "out_of_range")) << "nothing impossible reaches the writer";
  const auto run = RunFile::open(tmp / "run.h5");
  const Samples p = run->readAllSamples(SeriesKind::Gpu, 0, "power_w");
  ASSERT_EQ(p.v.size(), 20u);
  for (size_t k = 0; k < 20; ++k)
    EXPECT_EQ(std::isnan(p.v[k]), k == 5 || k == 6) << k;
  EXPECT_TRUE(std::isnan(run->readAllSamples(SeriesKind::Gpu, 0, "temp_c").v[7]));
  EXPECT_TRUE(std::isnan(run->readAllSamples(SeriesKind::Gpu, 0, "util_pct").v[8]));
  EXPECT_TRUE(std::isnan(run->readAllSamples(SeriesKind::Gpu, 0, "sm_clock_mhz").v[9]));
  // The pyramid never saw them: the largest power in the run is the model's 400 W.
  EXPECT_EQ(run->validCounts(SeriesKind::Gpu, "power_w")[0], 18u);
}

TEST(RealLogs, OneWildTimestampIsDroppedAndTheRunKeepsItsSpan) {
  TempDir tmp;
  std::string csv = dcgmLongCsv();
  // One power value stamped at the epoch (a clock reset), one 60 years ahead.
  csv += fmt::format("1,0,155,300.0\n");
  csv += fmt::format("0,{},155,300.0\n", kT0Us + int64_t{60} * 365 * 86400 * 1'000'000);
  writeText(tmp / "wild.csv", csv);
  const auto start = std::chrono::steady_clock::now();
  const import::ImportSummary s = importJob({tmp / "wild.csv"}, tmp / "run.h5");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("import_seconds", fmt::format("{:.3f}", seconds));
  const auto wild = notesWithCode(s.notes, "wild_timestamps");
  ASSERT_EQ(wild.size(), 2u);
  const QualityNote& ahead = *wild[0];  // GPU 0 is checked first
  const QualityNote& epoch = *wild[1];
  EXPECT_NE(ahead.subject.find("GPU 0"), std::string::npos) << ahead.subject;
  EXPECT_NE(ahead.message.find("1 sample stamped far from the rest"), std::string::npos)
      << ahead.message;
  EXPECT_NE(ahead.message.find("60.0 years after"), std::string::npos) << ahead.message;
  EXPECT_NE(epoch.subject.find("GPU 1"), std::string::npos) << epoch.subject;
  EXPECT_NE(epoch.message.find("1970-01-01 00:00:00.000 UTC"), std::string::npos) << epoch.message;
  EXPECT_NE(epoch.message.find("years before"), std::string::npos) << epoch.message;
  EXPECT_EQ(s.info.start_ns, kT0Us * 1000);
  EXPECT_EQ(s.info.end_ns, (kT0Us + (kPolls - 1) * kPollUs) * 1000);
  const auto run = RunFile::open(tmp / "run.h5");
  for (int g = 0; g < 2; ++g)
    EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g), "power_w").v.size(),
              static_cast<size_t>(kPolls));
}

TEST(RealLogs, PyramidsFollowTheSamplesWhateverTheSpan) {
  // Straight to the writer, without the import's checks: two samples 50 years apart.
  const int64_t t0 = 1'000'000'000;
  const int64_t t1 = t0 + int64_t{50} * 365 * 86400 * 1'000'000'000;
  const LodGrid g = LodGrid::forTelemetry(t0, t1, 100'000'000, 2);
  EXPECT_LE(g.buckets[0], 4096u);
  const LodGrid normal = LodGrid::forTelemetry(0, 3600'000'000'000, 100'000'000, 36000);
  EXPECT_EQ(normal.widths_ns[0], 1 << 30) << "unchanged for a normal run: 2^30 ns >= 8 x 100 ms";

  TempDir tmp;
  import::ImportedData d;
  d.sample_interval_s = 0.1;
  import::ImportedGpu gpu;
  gpu.table.t_ns = {t0, t0 + 100'000'000, t1};
  gpu.table.columns.push_back({"power_w", {100, 110, 120}});
  d.gpus.push_back(gpu);
  const auto run = writeRun(d, tmp / "span.h5");
  EXPECT_LE(run->series(SeriesKind::Gpu).grid.buckets[0], 4096u);
  EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, 0, "power_w").v.size(), 3u);
}

TEST(RealLogs, UtcOffsetsGlobalAndPerSource) {
  using import::parseUtcOffset;
  EXPECT_EQ(parseUtcOffset("+02:00").seconds, 7200);
  EXPECT_EQ(parseUtcOffset("-05:30").seconds, -19800);
  EXPECT_EQ(parseUtcOffset("+0530").seconds, 19800);
  EXPECT_EQ(parseUtcOffset("+2").seconds, 7200);
  EXPECT_EQ(parseUtcOffset("Z").seconds, 0);
  EXPECT_EQ(parseUtcOffset("UTC+01:00").seconds, 3600);
  EXPECT_EQ(parseUtcOffset("gpu.csv=-08:00"), (import::UtcOffset{"gpu.csv", -28800}));
  for (std::string_view bad : {"", "02:00", "+25:00", "+02:60", "+2:0", "abc", "=+01:00", "x="})
    EXPECT_NE(errorMessage([&] { parseUtcOffset(bad); }).find("--utc-offset"), std::string::npos)
        << bad;
  // A well-formed offset outside +-14:00, or with 60 minutes, is blamed for its value, not its
  // form.
  for (std::string_view far : {"+15:00", "-14:30", "+1500"}) {
    const std::string m = errorMessage([&] { parseUtcOffset(far); });
    EXPECT_NE(m.find("must lie between -14:00 and +14:00"), std::string::npos) << far << ": " << m;
    EXPECT_EQ(m.find("expected an offset"), std::string::npos) << m;
  }
  EXPECT_NE(errorMessage([&] { parseUtcOffset("+02:60"); }).find("00 to 59"), std::string::npos);
  EXPECT_EQ(parseUtcOffset("-14:00").seconds, -14 * 3600);

  TempDir tmp;
  const std::string header = "timestamp, index, power.draw [W]\n";
  writeText(tmp / "a.csv", header +
                               "2024/01/02 03:04:05.100, 0, 100.00 W\n"
                               "2024/01/02 03:04:06.100, 0, 101.00 W\n");
  writeText(tmp / "b.csv", header +
                               "2024/01/02 03:04:05.100, 1, 200.00 W\n"
                               "2024/01/02 03:04:06.100, 1, 201.00 W\n");
  const int64_t wall = utcNs(2024, 1, 2, 3, 4, 5) + 100'000'000;
  const import::ImportSummary s =
      importJob({tmp / "a.csv", tmp / "b.csv"}, tmp / "run.h5", [](import::ImportRequest& r) {
        r.utcOffsets = {{"", -5 * 3600}, {"a.csv", 7200}};
      });
  EXPECT_FALSE(hasNote(s.notes, "local_time_assumed_utc"));
  const auto run = RunFile::open(tmp / "run.h5");
  ASSERT_EQ(run->gpus().size(), 2u);
  EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, 0, "power_w").t_ns[0], wall - 7200'000'000'000);
  EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, 1, "power_w").t_ns[0],
            wall + 5 * 3600'000'000'000);
  // A source that names no input is an error naming the inputs.
  const std::string e = errorMessage([&] {
    importJob({tmp / "a.csv"}, tmp / "x.h5", [](import::ImportRequest& r) {
      r.utcOffsets = {{"c.csv", 3600}};
    });
  });
  EXPECT_NE(e.find("--utc-offset c.csv=+01:00: no input is named c.csv (inputs: a.csv "
                   "(nvidia-smi-csv))"),
            std::string::npos)
      << e;
  EXPECT_FALSE(std::filesystem::exists(tmp / "x.h5"));
}

TEST(RealLogs, CommandLineUtcOffsetAndGpus) {
  TempDir tmp;
  writeText(tmp / "q.csv",
            "timestamp, power.draw [W]\n"
            "2024/01/02 03:04:05.000, 100.00 W\n"
            "2024/01/02 03:04:05.000, 200.00 W\n"
            "2024/01/02 03:04:06.000, 101.00 W\n"
            "2024/01/02 03:04:06.000, 201.00 W\n");
  const auto r = runWattline({"import", (tmp / "q.csv").string(), "-o", (tmp / "r.h5").string(),
                              "--utc-offset", "q.csv=+02:00", "--gpus", "2", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_EQ(j["start_ns"].get<int64_t>(), utcNs(2024, 1, 2, 1, 4, 5));
  const auto run = RunFile::open(tmp / "r.h5");
  const auto params = nlohmann::json::parse(run->info().parameters_json);
  EXPECT_EQ(params["import"]["utc_offsets"]["q.csv"], "+02:00");
  EXPECT_EQ(params["import"]["gpus"], 2);
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--utc-offset", "+25:00"}, {"--gpus", "0"}, {"--gpus", "two"}}) {
    std::vector<std::string> args = {"import", (tmp / "q.csv").string(), "-o",
                                     (tmp / "bad.h5").string()};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto b = runWattline(args);
    EXPECT_EQ(b.exitCode, 2) << bad[0] << " " << bad[1] << ": " << b.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "bad.h5"));
  }
}

TEST(RealLogs, AnalyzePrintsNoHundredDigitNumbers) {
  // A run written without the import's checks (an older run, a simulator bug): one 1e308 W sample.
  TempDir tmp;
  import::ImportedData d;
  d.sample_interval_s = 1;
  import::ImportedGpu gpu;
  for (int k = 0; k < 20; ++k)
    gpu.table.t_ns.push_back(int64_t{1'700'000'000'000'000'000} + k * int64_t{1'000'000'000});
  std::vector<double> p(20, 300.0);
  p[10] = 1e308;
  gpu.table.columns.push_back({"power_w", p});
  d.gpus.push_back(gpu);
  writeRun(d, tmp / "bad.h5");
  const auto r = runWattline({"analyze", (tmp / "bad.h5").string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::regex longNumber("[0-9]{16,}");
  std::smatch m;
  EXPECT_FALSE(std::regex_search(r.out, m, longNumber)) << m.str() << "\n" << r.out;
}

}  // namespace
}  // namespace wl::test
