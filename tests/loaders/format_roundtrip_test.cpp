// SPDX-License-Identifier: GPL-3.0-or-later
// Every field written by RunWriter comes back from RunFile unchanged.
#include <gtest/gtest.h>

#include <cmath>

#include "loaders/core/throttle_reasons.h"
#include "loaders/format/format_version.h"
#include "loaders/format/run_file.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

class FormatRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    src = test::makeSyntheticRun();
    path = dir / "run.h5";
    test::writeSyntheticRun(src, path);
    run = RunFile::open(path);
  }
  test::TempDir dir;
  std::filesystem::path path;
  test::SyntheticRun src;
  std::shared_ptr<const RunFile> run;
};

TEST_F(FormatRoundTrip, RunInfoAndConfigSurvive) {
  EXPECT_EQ(run->info(), src.info);
  EXPECT_EQ(run->formatVersion(), format::kVersion);
  EXPECT_EQ(format::kVersion, 3);
  EXPECT_EQ(run->info().config.tp, 2);
  EXPECT_EQ(run->info().config.overlap, true);
  EXPECT_FALSE(run->info().config.ep.has_value());
}

TEST_F(FormatRoundTrip, GpusAndRanksSurvive) {
  ASSERT_EQ(run->gpus().size(), src.gpus.size());
  for (size_t i = 0; i < src.gpus.size(); ++i)
    EXPECT_EQ(run->gpus()[i], src.gpus[i]) << i;
  EXPECT_EQ(run->ranks(), src.ranks);
}

TEST_F(FormatRoundTrip, TelemetrySamplesSurviveExactly) {
  const SeriesGroupMeta& m = run->series(SeriesKind::Gpu);
  ASSERT_EQ(m.entities, 4u);
  ASSERT_EQ(m.metrics.size(), 4u);
  EXPECT_EQ(m.metrics[0].id, "power_w");
  EXPECT_EQ(m.metrics[0].unit, "W");
  EXPECT_TRUE(m.hasThrottle);
  for (size_t g = 0; g < src.telemetry.size(); ++g) {
    const TelemetryTable& t = src.telemetry[g];
    EXPECT_EQ(m.samples(g), t.size());
    for (const TelemetryColumn& col : t.columns) {
      const Samples s = run->readAllSamples(SeriesKind::Gpu, g, col.metric);
      ASSERT_EQ(s.t_ns, t.t_ns);
      ASSERT_EQ(s.v.size(), col.values.size());
      for (size_t i = 0; i < s.v.size(); ++i) {
        if (std::isnan(col.values[i])) {
          EXPECT_TRUE(std::isnan(s.v[i])) << col.metric << " " << i;
        } else {
          // Gauges are stored as float32.
          EXPECT_EQ(s.v[i], static_cast<double>(static_cast<float>(col.values[i])));
        }
      }
    }
    EXPECT_EQ(run->readThrottle(g, 0, t.size()), t.throttle_reasons);
  }
  EXPECT_EQ(m.medianIntervalNs[0], 50'000'000);
  EXPECT_EQ(m.gapThresholdNs[0], 1'000'000'000);
}

TEST_F(FormatRoundTrip, NodeTelemetrySurvives) {
  ASSERT_TRUE(run->hasNodeTelemetry());
  const SeriesGroupMeta& m = run->series(SeriesKind::Node);
  EXPECT_EQ(m.entity, "node");
  ASSERT_EQ(m.entities, 2u);
  const Samples s = run->readAllSamples(SeriesKind::Node, 1, "cpu_usage_pct");
  EXPECT_EQ(s.t_ns, src.nodeTelemetry[1].t_ns);
  EXPECT_EQ(s.v[3], src.nodeTelemetry[1].columns[0].values[3]);
}

TEST_F(FormatRoundTrip, KernelTracksComeBackSortedWithNames) {
  ASSERT_EQ(run->tracks().size(), src.tracks.size());
  EXPECT_EQ(run->kernelCount(), 4u * 200u);
  for (size_t t = 0; t < src.tracks.size(); ++t) {
    const TrackInfo& ti = run->tracks()[t];
    const KernelTrack& st = src.tracks[t];
    EXPECT_EQ(ti.rank, st.rank);
    EXPECT_EQ(ti.stream, st.stream);
    EXPECT_EQ(ti.device, st.device);
    ASSERT_EQ(ti.count, st.events.size());
    std::vector<KernelEvent> expect = st.events;
    std::stable_sort(expect.begin(), expect.end(),
                     [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    const auto got = run->readAllKernels(t);
    ASSERT_EQ(got.size(), expect.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].start_ns, expect[i].start_ns);
      EXPECT_EQ(got[i].dur_ns, expect[i].dur_ns);
      EXPECT_EQ(got[i].cls, expect[i].cls);
      EXPECT_EQ(got[i].kind, expect[i].kind);
      EXPECT_EQ(got[i].correlation, expect[i].correlation);
      EXPECT_EQ(run->str(got[i].name), src.names.at(expect[i].name));
    }
    // Per-class counts of the track table.
    uint64_t comm = 0;
    for (const auto& e : st.events)
      comm += e.cls == KernelClass::Communication;
    EXPECT_EQ(ti.classCount[static_cast<size_t>(KernelClass::Communication)], comm);
  }
  // The ground-truth clock follows its kernel through the sort (events 3 and 4 were swapped).
  const auto clk = run->readTruthClock(0);
  ASSERT_EQ(clk.size(), 200u);
  EXPECT_FLOAT_EQ(clk[3], 1980.0f - 3);
  EXPECT_FLOAT_EQ(clk[4], 1980.0f - 4);
}

TEST_F(FormatRoundTrip, CollectivesKeepTheirMetadataAndEvent) {
  const auto cs = run->collectives();
  ASSERT_EQ(cs.size(), 400u);
  const CollectiveRecord& c = cs[5];
  EXPECT_EQ(c.track, 1u);  // rank 0's communication stream
  EXPECT_EQ(c.event, 5u);
  EXPECT_EQ(run->str(c.info.collective), "allreduce");
  EXPECT_EQ(c.info.in_nelems, 1 << 20);
  EXPECT_EQ(c.info.group_size, 2);
  EXPECT_EQ(run->str(c.info.dtype), "BFloat16");
  EXPECT_EQ(run->str(c.info.pg_desc), "default_pg");
  EXPECT_EQ(run->str(c.info.pg_ranks), "[0, 1]");
  EXPECT_EQ(c.info.seq, 5);
  const auto events = run->readAllKernels(c.track);
  EXPECT_EQ(run->str(events[c.event].name), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
}

TEST_F(FormatRoundTrip, IterationsAnnotationsNotesAndTruthSurvive) {
  EXPECT_EQ(run->iterations(), src.iterations);
  ASSERT_EQ(run->annotations().size(), 2u);
  EXPECT_EQ(run->str(run->annotations()[0].name), "forward");
  EXPECT_TRUE(run->annotations()[0].on_gpu);
  ASSERT_FALSE(run->quality().empty());
  EXPECT_EQ(run->quality()[0], src.notes[0]);
  ASSERT_TRUE(run->hasGroundTruth());
  EXPECT_EQ(run->truthThrottle(), src.truthThrottle);
  EXPECT_EQ(run->truthEnergy(), src.truthEnergy);
}

TEST_F(FormatRoundTrip, WritesNoTemporaryFilesBeside) {
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace wl
