// SPDX-License-Identifier: GPL-3.0-or-later
// The writer repairs unordered, duplicated and out-of-span telemetry and says so in the file.
#include <gtest/gtest.h>

#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

bool hasNote(const RunFile& run, const std::string& code, const std::string& subject) {
  for (const QualityNote& n : run.quality())
    if (n.code == code && n.subject == subject) return true;
  return false;
}

TEST(WriterRepair, SortsDropsDuplicatesAndOutOfSpanWithNotes) {
  test::TempDir dir;
  RunInfo info;
  info.start_ns = 1000;
  info.end_ns = 10000;
  TelemetryTable t;
  t.t_ns = {3000, 2000, 2000, 4000, 50000, 500};
  t.columns = {{"power_w", {3, 2, 22, 4, 5, 0.5}}};
  t.throttle_reasons = {0, 4, 4, 0, 0, 0};
  RunWriter w(dir / "r.h5", info, std::vector<GpuInfo>(1), {});
  w.addGpuTelemetry(0, t);
  w.finish();
  const auto run = RunFile::open(dir / "r.h5");
  const Samples s = run->readAllSamples(SeriesKind::Gpu, 0, "power_w");
  EXPECT_EQ(s.t_ns, (std::vector<int64_t>{2000, 3000, 4000}));
  EXPECT_EQ(s.v, (std::vector<double>{2, 3, 4}));  // the first of the duplicates is kept
  EXPECT_EQ(run->readThrottle(0, 0, 3), (std::vector<uint32_t>{4, 0, 0}));
  EXPECT_TRUE(hasNote(*run, "non_monotonic_timestamps", "gpu 0"));
  EXPECT_TRUE(hasNote(*run, "duplicate_timestamps", "gpu 0"));
  EXPECT_TRUE(hasNote(*run, "outside_run_span", "gpu 0"));
}

TEST(WriterRepair, OutOfRangeValuesAreFlaggedNotChanged) {
  test::TempDir dir;
  RunInfo info;
  info.start_ns = 0;
  info.end_ns = 10;
  TelemetryTable t;
  t.t_ns = {1, 2, 3};
  t.columns = {{"temp_c", {40, 4000, 41}}};
  RunWriter w(dir / "r.h5", info, std::vector<GpuInfo>(1), {});
  w.addGpuTelemetry(0, t);
  w.finish();
  const auto run = RunFile::open(dir / "r.h5");
  EXPECT_TRUE(hasNote(*run, "out_of_range", "gpu 0"));
  EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, 0, "temp_c").v[1], 4000.0);
}

TEST(WriterRepair, MetricsAppearingLaterAreBackfilledWithNaN) {
  test::TempDir dir;
  RunInfo info;
  info.start_ns = 0;
  info.end_ns = 100;
  TelemetryTable a, b, c;
  a.t_ns = {1, 2};
  a.columns = {{"power_w", {10, 11}}};
  b.t_ns = {3, 4, 5};
  b.columns = {{"power_w", {12, 13, 14}}, {"temp_c", {50, 51, 52}}};
  c.t_ns = {6};
  c.columns = {{"temp_c", {53}}};
  RunWriter w(dir / "r.h5", info, std::vector<GpuInfo>(4), {});
  w.addGpuTelemetry(0, a);
  w.addGpuTelemetry(1, b);
  w.addGpuTelemetry(3, c);  // GPU 2 has no telemetry
  w.finish();
  const auto run = RunFile::open(dir / "r.h5");
  EXPECT_TRUE(std::isnan(run->readAllSamples(SeriesKind::Gpu, 0, "temp_c").v[1]));
  EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, 1, "temp_c").v[2], 52.0);
  EXPECT_EQ(run->series().samples(2), 0u);
  EXPECT_TRUE(std::isnan(run->readAllSamples(SeriesKind::Gpu, 3, "power_w").v[0]));
  EXPECT_EQ(run->readAllSamples(SeriesKind::Gpu, 3, "temp_c").v[0], 53.0);
  const auto counts = run->validCounts(SeriesKind::Gpu, "temp_c");
  EXPECT_EQ(counts, (std::vector<uint64_t>{0, 3, 0, 1}));
}

TEST(WriterRepair, NegativeDurationsBecomeZeroWithANote) {
  test::TempDir dir;
  RunInfo info;
  info.start_ns = 0;
  info.end_ns = 1000;
  StringTable names;
  KernelTrack tr{0,  1,
                 0,  {{10, -5, names.intern("k"), KernelClass::Compute, GpuEventKind::Kernel, 1}},
                 {}, {}};
  RunWriter w(dir / "r.h5", info, {}, {});
  w.addKernelTrack(tr, names);
  w.finish();
  const auto run = RunFile::open(dir / "r.h5");
  EXPECT_EQ(run->readAllKernels(0)[0].dur_ns, 0);
  EXPECT_TRUE(hasNote(*run, "negative_durations", "kernels"));
}

}  // namespace
}  // namespace wl
