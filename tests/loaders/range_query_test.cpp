// SPDX-License-Identifier: GPL-3.0-or-later
// Reading by time range returns exactly the samples and events in the range.
#include <gtest/gtest.h>

#include <random>

#include "loaders/format/run_file.h"
#include "loaders/format/run_writer.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

class RangeQuery : public ::testing::Test {
 protected:
  void SetUp() override {
    info.name = "range";
    info.start_ns = 0;
    info.end_ns = 100'000'000'000;  // 100 s
    std::vector<GpuInfo> gpus(2);
    // GPU 0: 5000 samples at irregular times (several index blocks of 1024).
    std::mt19937_64 rng(3);
    int64_t now = 0;
    TelemetryTable t;
    for (int i = 0; i < 5000; ++i) {
      now += 1'000'000 + static_cast<int64_t>(rng() % 30'000'000);
      t.t_ns.push_back(now);
    }
    t.columns.push_back({"power_w", {}});
    for (size_t i = 0; i < t.t_ns.size(); ++i)
      t.columns[0].values.push_back(static_cast<double>(i));
    times = t.t_ns;
    // Kernels: 10000 back-to-back events plus one long event spanning most of the run.
    StringTable names;
    KernelTrack tr{0, 7, 0, {}, {}, {}};
    for (int i = 0; i < 10000; ++i)
      tr.events.push_back({int64_t{i} * 5'000'000, 4'000'000, names.intern("k"),
                           KernelClass::Compute, GpuEventKind::Kernel, i});
    tr.events.push_back({1'000'000, 90'000'000'000, names.intern("long"), KernelClass::Other,
                         GpuEventKind::Other, -1});
    RunWriter w(dir / "r.h5", info, gpus, {});
    w.addGpuTelemetry(0, t);
    w.addKernelTrack(tr, names);
    w.finish();
    run = RunFile::open(dir / "r.h5");
  }
  test::TempDir dir;
  RunInfo info;
  std::vector<int64_t> times;
  std::shared_ptr<const RunFile> run;
};

TEST_F(RangeQuery, SamplesInRangeMatchALinearScan) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    int64_t a = static_cast<int64_t>(rng() % 90'000'000'000);
    int64_t b = a + static_cast<int64_t>(rng() % 10'000'000'000);
    if (trial == 0) a = times[1024], b = times[2048];  // exactly on index entries
    const Samples s = run->readSamples(SeriesKind::Gpu, 0, "power_w", a, b, false);
    std::vector<int64_t> expect;
    size_t first = 0;
    for (size_t i = 0; i < times.size(); ++i)
      if (times[i] >= a && times[i] <= b) {
        if (expect.empty()) first = i;
        expect.push_back(times[i]);
      }
    ASSERT_EQ(s.t_ns, expect) << "range " << a << ".." << b;
    if (!expect.empty()) {
      EXPECT_EQ(s.first, first);
      EXPECT_EQ(s.v.front(), static_cast<double>(first));
    }
  }
}

TEST_F(RangeQuery, NeighboursExtendTheRangeByOneSampleEachSide) {
  const int64_t a = times[3000] + 1, b = times[3010] - 1;
  const Samples s = run->readSamples(SeriesKind::Gpu, 0, "power_w", a, b, true);
  ASSERT_EQ(s.t_ns.size(), 11u);  // samples 3001..3009 plus 3000 and 3010
  EXPECT_EQ(s.t_ns.front(), times[3000]);
  EXPECT_EQ(s.t_ns.back(), times[3010]);
}

TEST_F(RangeQuery, EmptyAndOutsideRanges) {
  EXPECT_TRUE(run->readSamples(SeriesKind::Gpu, 0, "power_w", -100, -1, false).t_ns.empty());
  EXPECT_TRUE(run->readSamples(SeriesKind::Gpu, 1, "power_w", 0, info.end_ns, true).t_ns.empty());
  const Samples all = run->readSamples(SeriesKind::Gpu, 0, "power_w", INT64_MIN, INT64_MAX, false);
  EXPECT_EQ(all.t_ns.size(), times.size());
  // A metric the run does not have reads as NaN.
  const Samples none = run->readSamples(SeriesKind::Gpu, 0, "temp_c", 0, times[5], false);
  ASSERT_EQ(none.v.size(), 6u);
  EXPECT_TRUE(std::isnan(none.v[0]));
}

TEST_F(RangeQuery, KernelsOverlappingARangeIncludingTheLongOne) {
  const KernelSlice s = run->readKernels(0, 50'002'000'000, 50'012'000'000);
  // Events i with start i*5ms < b and end i*5ms+4ms > a: i = 10000 (start 50.000 s, ends 50.004)
  // is beyond the 10000 events, so i in [10000-?]; compute directly.
  std::vector<int64_t> expect;
  for (int i = 0; i < 10000; ++i) {
    const int64_t st = int64_t{i} * 5'000'000, en = st + 4'000'000;
    if (st < 50'012'000'000 && en > 50'002'000'000) expect.push_back(st);
  }
  std::vector<int64_t> got;
  bool sawLong = false;
  for (const KernelEvent& e : s.events) {
    if (run->str(e.name) == "long")
      sawLong = true;
    else
      got.push_back(e.start_ns);
  }
  EXPECT_TRUE(sawLong);
  EXPECT_EQ(got, expect);
}

TEST_F(RangeQuery, KernelsOfAnEmptyRange) {
  EXPECT_TRUE(run->readKernels(0, 95'000'000'000, 96'000'000'000).events.empty());
}

}  // namespace
}  // namespace wl
