// SPDX-License-Identifier: GPL-3.0-or-later
// A real H200 recording (tests/data/h200, scripts/record_gpu_run.py): nvidia-smi at 10 Hz over
// 181 s of a 1.3 B-parameter GPT training on one H200, with a Kineto trace of two iterations.
// `wattline import` + `wattline analyze --json` are checked against numbers the test computes
// itself from the raw files: energy by the trapezoid rule, throttled kernel time from the
// samples, iteration ends against the training loop's own wall-clock log, and the GEMM time
// against the trace's kernel durations.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

const std::string kDir = std::string(WATTLINE_TEST_DATA) + "/h200";

struct Sample {
  double t_s = 0, power_w = 0, sm_clock_mhz = 0, util_pct = 0;
  unsigned long long reasons = 0;
};

// A UTC time with milliseconds, read with `format` (year, month, day, hour, minute, second,
// milliseconds) -> s since the epoch. nvidia-smi's "2026/11/26 15:58:44.108" (the recording ran
// it with TZ=UTC) and the loop's "2026-11-26T16:00:20.577+00:00".
double parseUtcMs(const std::string& s, const char* format) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(s.c_str(), format, &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &ms) != 7)
    throw std::runtime_error("bad time " + s);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1000.0;
}
constexpr const char* kSmiTime = "%d/%d/%d %d:%d:%d.%d";
constexpr const char* kIsoTime = "%d-%d-%dT%d:%d:%d.%d";

// The CSV's fields by position (recording.json names them): 0 timestamp, 4 power.draw,
// 7 clocks.sm, 9 utilization.gpu, 15 clocks_event_reasons.active; values carry units.
std::vector<Sample> readSamples() {
  std::istringstream in(test::readFile(kDir + "/gpu.csv.gz"));
  std::string line;
  std::getline(in, line);
  std::vector<Sample> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string v; std::getline(ss, v, ',');)
      f.push_back(v.substr(v.find_first_not_of(' ')));
    Sample s;
    s.t_s = parseUtcMs(f.at(0), kSmiTime);
    s.power_w = std::stod(f.at(4));
    s.sm_clock_mhz = std::stod(f.at(7));
    s.util_pct = std::stod(f.at(9));
    s.reasons = std::stoull(f.at(15), nullptr, 16);
    out.push_back(s);
  }
  return out;
}

class H200Recording : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::TempDir>();
    analysis_ = std::make_unique<nlohmann::json>();
    const std::string run = (dir_->path() / "h200.h5").string();
    const auto imp =
        test::runWattline({"import", kDir + "/gpu.csv.gz", kDir + "/trace.json.gz", "--utc-offset",
                           "+00:00", "--config", "mbs=8,gbs=8,seq=2048", "-o", run});
    ASSERT_EQ(imp.exitCode, 0) << imp.err;
    const auto r = test::runWattline({"analyze", run, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    *analysis_ = nlohmann::json::parse(r.out);
  }
  static void TearDownTestSuite() { dir_.reset(); }
  // A failed import or analysis leaves the JSON empty: each test stops with that, rather than
  // reading keys that are not there.
  void SetUp() override { ASSERT_TRUE(analysis_->is_object()) << "import or analyze failed"; }
  static inline std::unique_ptr<test::TempDir> dir_;
  static inline std::unique_ptr<nlohmann::json> analysis_;
  const nlohmann::json& j = *analysis_;
  const std::vector<Sample> samples = readSamples();
};

TEST_F(H200Recording, IsARealH200RunOfOneGpu) {
  EXPECT_EQ(j["run"]["platform"], "H200");
  EXPECT_EQ(j["run"]["simulated"], false);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(samples.size(), 1761u);
  EXPECT_NEAR(j["run"]["duration_s"].get<double>(), samples.back().t_s - samples.front().t_s, 1e-6);
}

TEST_F(H200Recording, EnergyAndPeakPowerFromTheSamples) {
  double energy = 0, peak = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    peak = std::max(peak, samples[i].power_w);
    if (i + 1 < samples.size())
      energy +=
          (samples[i + 1].t_s - samples[i].t_s) * (samples[i].power_w + samples[i + 1].power_w) / 2;
  }
  EXPECT_NEAR(j["totals"]["energy_j"].get<double>(), energy, energy * 1e-9);
  EXPECT_NEAR(energy, 106725.5, 0.1);                                  // 107 kJ over 181 s
  EXPECT_NEAR(j["totals"]["peak_power_w"].get<double>(), peak, 1e-4);  // stored as float
}

// docs/analyses.md, throttle detection: a segment counts utilization/100 of its length as kernel
// time; a sample at >= 20 % utilization with its SM clock under 0.95 x the highest clock recorded
// is throttled. The H200 ran into its 700 W cap (reason bit 0x4) for most of the training.
TEST_F(H200Recording, ThrottledKernelTimeFromTheSamples) {
  double maxClock = 0;
  for (const Sample& s : samples)
    maxClock = std::max(maxClock, s.sm_clock_mhz);
  double busy = 0, throttled = 0, powerCap = 0;
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    const Sample& s = samples[i];
    const double kernelTime = s.util_pct / 100 * (samples[i + 1].t_s - s.t_s);
    busy += kernelTime;
    if (s.util_pct >= 20 && s.sm_clock_mhz < 0.95 * maxClock) {
      throttled += kernelTime;
      if (s.reasons & 0x4) powerCap += kernelTime;
    }
  }
  const auto& t = j["gpus"][0]["throttle"];
  EXPECT_NEAR(t["busy_s"].get<double>(), busy, 1e-6);
  EXPECT_NEAR(t["throttled_s"].get<double>(), throttled, 1e-6);
  EXPECT_NEAR(t["by_reason_s"]["sw_power_cap"].get<double>(), powerCap, 1e-6);
  EXPECT_GT(throttled / busy, 0.99);
  EXPECT_NEAR(j["totals"]["throttled_fraction"].get<double>(), throttled / busy, 1e-9);
}

// The trace's clock (Kineto's baseTimeNanoseconds + ts) and the training loop's wall clock agree:
// each traced iteration ends (last kernel of its ProfilerStep) within 5 ms of the moment the loop
// logged it (after loss.item() waited for the GPU), and the iteration time is the loop's median.
TEST_F(H200Recording, IterationsLineUpWithTheTrainingLoopsWallClock) {
  const auto rec = nlohmann::json::parse(test::readFile(kDir + "/recording.json"));
  std::vector<double> tracedEnds, intervals;
  double previous = NAN;
  for (const auto& it : rec["iteration_log"]) {
    const double end = parseUtcMs(it["end_utc"].get<std::string>(), kIsoTime);
    if (it.value("traced", false)) tracedEnds.push_back(end);
    if (!std::isnan(previous)) intervals.push_back(end - previous);
    previous = end;
  }
  const auto& steps = j["iterations"]["steps"];
  ASSERT_EQ(steps.size(), 2u);
  ASSERT_EQ(tracedEnds.size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(steps[i]["end_ns"].get<double>() / 1e9, tracedEnds[i], 0.005) << "step " << i;
  std::nth_element(intervals.begin(), intervals.begin() + intervals.size() / 2, intervals.end());
  const double median = intervals[intervals.size() / 2];
  EXPECT_NEAR(j["totals"]["iteration_time_s"].get<double>(), median, median * 0.01);
  // 8 x 2048 tokens an iteration: within 1 % of what the loop measured over all 540 iterations.
  const double loopTokensPerS = rec["tokens_per_second"].get<double>();
  EXPECT_NEAR(j["totals"]["tokens_per_s"].get<double>(), loopTokensPerS, loopTokensPerS * 0.01);
}

// cuBLAS on Hopper names its GEMMs nvjet_*: the corrected categories count them as MatMul.
TEST_F(H200Recording, GemmTimeIsTheNvjetKernelsTime) {
  const auto trace = nlohmann::json::parse(test::readFile(kDir + "/trace.json.gz"));
  double nvjetUs = 0, kernelUs = 0, gpuUs = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (cat == "gpu_memcpy" || cat == "gpu_memset") gpuUs += e["dur"].get<double>();
    if (cat != "kernel") continue;
    kernelUs += e["dur"].get<double>();
    if (e["name"].get<std::string>().rfind("nvjet", 0) == 0) nvjetUs += e["dur"].get<double>();
  }
  const auto& cats = j["kernels"]["categories_corrected"];
  EXPECT_NEAR(cats["matmul"].get<double>() / 1e3, nvjetUs, 2.0);  // ns vs us, ~1 ns rounding each
  double all = 0;
  for (const auto& [name, ns] : cats.items())
    all += ns.get<double>();
  EXPECT_NEAR(all / 1e3, kernelUs + gpuUs, 5.0);  // every kernel, memcpy and memset once
  EXPECT_GT(nvjetUs / kernelUs, 0.6);             // a GEMM-bound training step
}

// resources/samples/h200-gpt-1.3b-real.h5 is this recording imported with the command in
// resources/samples/README.md: its analysis is the fresh import's.
TEST_F(H200Recording, BundledSampleIsThisRecording) {
  const auto r = test::runWattline(
      {"analyze", WATTLINE_SOURCE_DIR "/resources/samples/h200-gpt-1.3b-real.h5", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto bundled = nlohmann::json::parse(r.out);
  EXPECT_EQ(bundled["run"]["name"], "h200-gpt-1.3b-real");
  EXPECT_EQ(bundled["run"]["simulated"], false);
  EXPECT_EQ(bundled["totals"], j["totals"]);
  EXPECT_EQ(bundled["kernels"], j["kernels"]);
  EXPECT_EQ(bundled["iterations"], j["iterations"]);
}

// The H200 trace (2026-11-26) with telemetry of another day (the nanoGPT log, 2025-09-24): the
// import says at once that the trace and the telemetry do not overlap, with the gap; with its own
// telemetry there is no such note.
TEST(H200RecordingImport, ATraceWithAnotherDaysTelemetryIsWarnedAbout) {
  test::TempDir dir;
  const std::string other =
      std::string(WATTLINE_TEST_DATA) + "/telemetry/nanogpt-8gpu-h100class-nvidia-smi.csv.gz";
  auto imp = test::runWattline({"import", other, kDir + "/trace.json.gz", "--utc-offset", "+00:00",
                                "--json", "-o", (dir / "far.h5").string()});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  const auto far = nlohmann::json::parse(imp.out);
  const nlohmann::json* note = nullptr;
  for (const auto& n : far["data_quality"])
    if (n["code"] == "trace_outside_telemetry") note = &n;
  ASSERT_NE(note, nullptr) << far["data_quality"].dump(1);
  EXPECT_EQ((*note)["severity"], "warning");
  EXPECT_EQ((*note)["subject"], "rank 0");
  // The telemetry ends 2025-09-24, the trace starts 2026-11-26: over a year after it.
  const std::string msg = (*note)["message"];
  EXPECT_NE(msg.find("after GPU 0's telemetry"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2025-09-24"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2026-11-26"), std::string::npos) << msg;
  EXPECT_NE(imp.err.find("warning: rank 0: kernels"), std::string::npos) << imp.err;
  // With the telemetry recorded together with it, no such note.
  imp = test::runWattline({"import", kDir + "/gpu.csv.gz", kDir + "/trace.json.gz", "--utc-offset",
                           "+00:00", "--json", "-o", (dir / "near.h5").string()});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  // (The parsed document is kept: a range-for over a member of a temporary reads freed memory.)
  const auto near = nlohmann::json::parse(imp.out);
  for (const auto& n : near["data_quality"])
    EXPECT_NE(n["code"], "trace_outside_telemetry") << n.dump();
}

}  // namespace
}  // namespace wl
