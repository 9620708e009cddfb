// SPDX-License-Identifier: GPL-3.0-or-later
// nvidia-smi --query-gpu logs without an index column (loaders/import/telemetry/gpu_cycles.h).
//
// The real nanoGPT 8-GPU log (tests/data/telemetry) read with its gpu_index column removed must
// give every GPU exactly the samples the indexed file gives it, whatever the timestamps look like:
// - as recorded (the rows of one cycle share a timestamp);
// - spread as nvidia-smi stamps rows on a loaded host (model: row k of a cycle is stamped k x 0.7
//   ms after the cycle's time; the first cycle and every 10th cycle k x 4 ms, a slow query), where
//   grouping rows by equal timestamps fails;
// - evenly spaced (model: row i at t0 + i x 40 ms, no cycles visible in time), where only value
//   continuity tells the GPUs apart;
// and --gpus overrides the inference. Per-GPU constants decide when they differ between GPUs, and
// a missing row is reported.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "importers_telemetry/telemetry_test_util.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/import/telemetry/gpu_cycles.h"
#include "support/temp_dir.h"

namespace wl::test {
namespace {

const std::filesystem::path kNanoGpt = kTelemetryData / "nanogpt-8gpu-h100class-nvidia-smi.csv.gz";

struct Row {
  int64_t msOfDay;   // 03:41:43.487 -> ms since midnight
  std::string rest;  // the fields after the index, as written
};

// The nanoGPT rows without their gpu_index field, timestamps as ms of the (single) day.
std::vector<Row> nanoRows() {
  std::vector<Row> rows;
  const auto lines = readLines(kNanoGpt);
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto f = split(lines[i], ',');
    int h = 0, m = 0, s = 0, ms = 0;
    EXPECT_EQ(std::sscanf(f[0].c_str(), "2025-09-24T%d:%d:%d.%dZ", &h, &m, &s, &ms), 4) << f[0];
    std::string rest;
    for (size_t k = 2; k < f.size(); ++k)
      rest += "," + f[k];
    rows.push_back({((h * 60 + m) * 60 + s) * 1000 + ms, rest});
  }
  return rows;
}

std::string stamp(int64_t msOfDay) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2025-09-24T%02d:%02d:%02d.%03dZ",
                static_cast<int>(msOfDay / 3'600'000), static_cast<int>(msOfDay / 60'000 % 60),
                static_cast<int>(msOfDay / 1000 % 60), static_cast<int>(msOfDay % 1000));
  return buf;
}

// Writes the rows with timestamps from `timeOf(row index, row)`.
template <typename F>
std::filesystem::path writeNoIndex(const TempDir& tmp, const std::string& name,
                                   const std::vector<Row>& rows, F timeOf) {
  std::string text = "timestamp,temperature_C,utilization_gpu_percent,power_W\n";
  for (size_t i = 0; i < rows.size(); ++i)
    text += stamp(timeOf(i, rows[i])) + rows[i].rest + "\n";
  writeText(tmp / name, text);
  return tmp / name;
}

// Every GPU of `d` has the power and temperature series of the same GPU of the indexed file.
void expectSameAsIndexed(const import::ImportedData& d) {
  const import::ImportedData ref = importWith("nvidia-smi-csv", kNanoGpt);
  ASSERT_EQ(d.gpus.size(), ref.gpus.size());
  for (const import::ImportedGpu& r : ref.gpus) {
    const import::ImportedGpu* g = gpuByIndex(d, r.info.local_index);
    ASSERT_NE(g, nullptr) << r.info.local_index;
    EXPECT_EQ(column(*g, "power_w").values, column(r, "power_w").values) << r.info.local_index;
    EXPECT_EQ(column(*g, "temp_c").values, column(r, "temp_c").values) << r.info.local_index;
  }
}

const QualityNote& positionNote(const import::ImportedData& d) {
  const QualityNote* n = findNote(d.notes, "gpu_by_position");
  EXPECT_NE(n, nullptr);
  static const QualityNote none;
  return n ? *n : none;
}

TEST(GpuCycles, NanoGptWithoutIndexAsRecorded) {
  TempDir tmp;
  const auto rows = nanoRows();
  ASSERT_EQ(rows.size() % 8, 0u);
  const auto path =
      writeNoIndex(tmp, "q.csv", rows, [](size_t, const Row& r) { return r.msOfDay; });
  const import::ImportedData d = importWith("nvidia-smi-csv", path);
  expectSameAsIndexed(d);
  const QualityNote& n = positionNote(d);
  EXPECT_EQ(n.severity, Severity::Info) << n.message;
  EXPECT_NE(n.message.find("GPU i mod 8"), std::string::npos) << n.message;
  EXPECT_NE(n.message.find(fmt::format(
                "{} of {} query cycles hold 8 rows (the rows of a cycle share one timestamp",
                rows.size() / 8, rows.size() / 8)),
            std::string::npos)
      << n.message;
  EXPECT_NE(n.message.find("Confidence: high"), std::string::npos) << n.message;
}

TEST(GpuCycles, NanoGptWithRowsStampedAsRead) {
  TempDir tmp;
  const auto rows = nanoRows();
  const auto path = writeNoIndex(tmp, "spread.csv", rows, [](size_t i, const Row& r) {
    const size_t cycle = i / 8, k = i % 8;
    const int64_t perRow = cycle % 10 == 0 ? 4 : 1;  // 4 ms on slow cycles, else ~0.7 ms -> 1
    return r.msOfDay + static_cast<int64_t>(k) * perRow;
  });
  const import::ImportedData d = importWith("nvidia-smi-csv", path);
  expectSameAsIndexed(d);
  const QualityNote& n = positionNote(d);
  EXPECT_NE(n.message.find("GPU i mod 8"), std::string::npos) << n.message;
  EXPECT_NE(n.message.find("Confidence: high"), std::string::npos) << n.message;
  // Every GPU has the same number of samples.
  for (const auto& g : d.gpus)
    EXPECT_EQ(g.table.size(), rows.size() / 8);
}

TEST(GpuCycles, NanoGptEvenlySpacedFoundByValueContinuity) {
  TempDir tmp;
  const auto rows = nanoRows();
  const int64_t t0 = rows.front().msOfDay;
  const auto path = writeNoIndex(tmp, "even.csv", rows, [t0](size_t i, const Row&) {
    return t0 + static_cast<int64_t>(i) * 40;
  });
  const import::ImportedData d = importWith("nvidia-smi-csv", path);
  expectSameAsIndexed(d);
  const QualityNote& n = positionNote(d);
  EXPECT_NE(n.message.find("value continuity"), std::string::npos) << n.message;
  EXPECT_EQ(n.message.find("Confidence: high"), std::string::npos) << n.message;
  EXPECT_NE(n.message.find("--gpus"), std::string::npos) << n.message;
}

TEST(GpuCycles, GivenGpuCountWins) {
  TempDir tmp;
  const auto rows = nanoRows();
  const auto path =
      writeNoIndex(tmp, "q.csv", rows, [](size_t, const Row& r) { return r.msOfDay; });
  import::ImportOptions opt;
  opt.gpus = 4;
  const import::ImportedData d = importWith("nvidia-smi-csv", path, opt);
  ASSERT_EQ(d.gpus.size(), 4u);
  // GPU 1 of 4 takes rows 1, 5, 9, ...: the second power value of every nanoGPT cycle, then the
  // sixth.
  const auto& p1 = column(*gpuByIndex(d, 1), "power_w").values;
  const import::ImportedData ref = importWith("nvidia-smi-csv", kNanoGpt);
  EXPECT_EQ(p1[0], column(*gpuByIndex(ref, 1), "power_w").values[0]);
  EXPECT_EQ(p1[1], column(*gpuByIndex(ref, 5), "power_w").values[0]);
  const QualityNote& n = positionNote(d);
  EXPECT_NE(n.message.find("given with --gpus"), std::string::npos) << n.message;
  EXPECT_NE(n.message.find("timing suggests"), std::string::npos) << n.message;
  EXPECT_NE(n.message.find("Confidence: given"), std::string::npos) << n.message;
}

TEST(GpuCycles, PerGpuConstantsTellGpusApartWhenTimeAndValuesCannot) {
  // Simulated: three idle GPUs with one reading each every 100 ms, rows evenly spaced, every
  // value the same; only serial and name differ.
  TempDir tmp;
  std::string text = "timestamp, name, serial, power.draw [W], memory.total [MiB]\n";
  for (int i = 0; i < 30; ++i) {
    const int k = i % 3;
    text +=
        fmt::format("2024/01/02 03:04:{:02}.{:03}, {}, 13240000{}, 70.00 W, 81559 MiB\n",
                    5 + i * 33 / 1000, i * 33 % 1000, k == 2 ? "NVIDIA A100" : "NVIDIA H100", k);
  }
  writeText(tmp / "c.csv", text);
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "c.csv");
  ASSERT_EQ(d.gpus.size(), 3u);
  EXPECT_EQ(gpuByIndex(d, 2)->info.device_name, "NVIDIA A100");
  EXPECT_EQ(gpuByIndex(d, 1)->info.device_name, "NVIDIA H100");
  for (const auto& g : d.gpus)
    EXPECT_EQ(g.table.size(), 10u);
  const QualityNote& n = positionNote(d);
  EXPECT_NE(n.message.find("constants (name, serial, memory.total) repeat every 3 rows"),
            std::string::npos)
      << n.message;
}

TEST(GpuCycles, AMissingRowLowersTheConfidence) {
  TempDir tmp;
  auto rows = nanoRows();
  rows.erase(rows.begin() + 8 * 100 + 3);  // GPU 3 of cycle 100 is missing
  const auto path =
      writeNoIndex(tmp, "gap.csv", rows, [](size_t, const Row& r) { return r.msOfDay; });
  const import::ImportedData d = importWith("nvidia-smi-csv", path);
  const QualityNote& n = positionNote(d);
  EXPECT_EQ(n.severity, Severity::Warning) << n.message;
  EXPECT_NE(n.message.find("the first at data row 808, do not start at a multiple of 8 rows"),
            std::string::npos)
      << n.message;
  EXPECT_NE(n.message.find("Confidence: low"), std::string::npos) << n.message;
}

TEST(GpuCycles, OneGpuWithoutIndexIsOneGpuWithoutWarning) {
  TempDir tmp;
  std::string text = "timestamp, power.draw [W]\n";
  for (int i = 0; i < 50; ++i)
    text += fmt::format("2024/01/02 03:04:{:02}.{:03}, {:.2f} W\n", 5 + i / 10, i % 10 * 100,
                        100.0 + 20.0 * std::sin(i * 0.3));
  writeText(tmp / "one.csv", text);
  import::ImportOptions opt;
  opt.utc_offset_s = 0;
  const import::ImportedData d = importWith("nvidia-smi-csv", tmp / "one.csv", opt);
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].table.size(), 50u);
  const QualityNote& n = positionNote(d);
  EXPECT_EQ(n.severity, Severity::Info) << n.message;
  EXPECT_NE(n.message.find("(1 GPU)"), std::string::npos) << n.message;
}

TEST(GpuCycles, InferenceOnSyntheticEvidence) {
  // Two GPUs, bursts of two rows 1 ms apart every second; GPU 1 reads 10 W more.
  std::vector<int64_t> t;
  std::vector<double> p;
  for (int c = 0; c < 20; ++c)
    for (int k = 0; k < 2; ++k) {
      t.push_back(c * 1'000'000'000LL + k * 1'000'000);
      p.push_back(100.0 + 10.0 * k + 0.1 * c);
    }
  import::tel::CycleEvidence e;
  e.t_ns = t;
  e.metrics.emplace_back(p);
  const auto r = import::tel::inferGpuCount(e);
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.timingGpus, 2);
  EXPECT_DOUBLE_EQ(r.timingShare, 1.0);
  EXPECT_EQ(r.bursts, 20u);
  EXPECT_EQ(r.misalignedBursts, 0u);
  EXPECT_EQ(r.continuityGpus, 2);
  EXPECT_EQ(r.confidence, import::tel::Confidence::High);
}

}  // namespace
}  // namespace wl::test
