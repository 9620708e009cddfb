// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline's selection summary: per-GPU statistics and throttling against the raw reference,
// kernel time by class per stream against a brute-force union over raw events, on random ranges.
#include <gtest/gtest.h>

#include <random>

#include "analysis/interval_set.h"
#include "analysis/range_summary.h"
#include "analysis/telemetry_stats.h"
#include "analysis_test_util.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

test::RunSpec mixedRun(std::mt19937_64& rng) {
  test::RunSpec s = test::baseRun(3, 120.0);
  s.info.sample_interval_s = 0.05;
  for (int g = 0; g < 3; ++g) {
    double clock = 1980;
    s.telemetry.push_back(
        test::sampled(kT0, s.info.end_ns, 50 * kMs,
                      {"power_w", "temp_c", "sm_clock_mhz", "util_pct"}, [&](size_t m, int64_t) {
                        if (m == 2 && rng() % 300 == 0) clock = rng() % 2 ? 1700 : 1980;
                        const double v[] = {0.25 * static_cast<double>(rng() % 2800),
                                            60.0 + rng() % 30, clock, 100};
                        return v[m];
                      }));
  }
  const uint32_t names[] = {s.names.intern("gemm"), s.names.intern("ncclKernel_AllGather"),
                            s.names.intern("Memcpy DtoH")};
  for (int r = 0; r < 2; ++r)
    for (int stream = 0; stream < 3; ++stream) {
      KernelTrack t{r, 7 + stream, r, {}, {}, {}};
      int64_t at = kT0 + static_cast<int64_t>(rng() % 1000);
      while (at < s.info.end_ns - kSec) {
        const int64_t dur = 1000 + static_cast<int64_t>(rng() % 3'000'000);
        const auto cls = static_cast<KernelClass>(stream);
        t.events.push_back({at, dur, names[stream], cls,
                            stream == 2 ? GpuEventKind::Memcpy : GpuEventKind::Kernel, -1});
        // Overlaps within a stream now and then.
        at += rng() % 5 == 0 ? dur / 2 : dur + static_cast<int64_t>(rng() % 20'000'000);
      }
      s.tracks.push_back(t);
    }
  return s;
}

TEST(RangeSummary, MatchesRawReferencesOnRandomRanges) {
  std::mt19937_64 rng(21);
  test::TempDir dir;
  const test::RunSpec spec = mixedRun(rng);
  const auto run = test::writeAndOpen(spec, dir / "run.h5");
  const SeriesGroupMeta& meta = run->series(SeriesKind::Gpu);
  std::vector<std::vector<KernelEvent>> events;
  for (size_t t = 0; t < run->tracks().size(); ++t)
    events.push_back(run->readAllKernels(t));
  for (int i = 0; i < 20; ++i) {
    int64_t a = kT0 + static_cast<int64_t>(rng() % (120 * kSec));
    int64_t b = kT0 + static_cast<int64_t>(rng() % (120 * kSec));
    if (a > b) std::swap(a, b);
    if (i == 0) a = kT0, b = spec.info.end_ns + 1;
    const RangeSummary s = summarizeRange(*run, a, b, {0, 2}, {0, 1});
    ASSERT_EQ(s.gpus.size(), 2u);
    for (const GpuRangeSummary& g : s.gpus) {
      const Samples raw =
          run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.gpu), "power_w");
      const MetricStats ref =
          statsOfSamples(raw.t_ns, raw.v, meta.gapThresholdNs[static_cast<size_t>(g.gpu)], {a, b});
      const MetricStats* p = g.metric("power_w");
      ASSERT_NE(p, nullptr);
      EXPECT_NEAR(p->mean, ref.mean, 1e-9 * ref.mean);
      EXPECT_NEAR(g.energy_j, ref.integral, 1e-9 * ref.integral);
      EXPECT_EQ(p->max, ref.max);
      EXPECT_EQ(p->samples, ref.samples);
      EXPECT_TRUE(g.metric("sm_clock_mhz"));
      EXPECT_GE(g.throttled_fraction, 0.0);
    }
    ASSERT_EQ(s.ranks.size(), 2u);
    for (const RankRangeSummary& r : s.ranks) {
      std::array<int64_t, kKernelClassCount> want{};
      uint64_t starts = 0;
      for (size_t t = 0; t < run->tracks().size(); ++t) {
        if (run->tracks()[t].rank != r.rank) continue;
        std::array<std::vector<Interval>, kKernelClassCount> per;
        for (const KernelEvent& e : events[t]) {
          if (e.start_ns >= a && e.start_ns < b) ++starts;
          per[static_cast<size_t>(e.cls)].push_back(
              {std::max(e.start_ns, a), std::min(e.start_ns + e.dur_ns, b)});
        }
        for (size_t c = 0; c < kKernelClassCount; ++c)
          want[c] += totalLength(unionOf(per[c]));
      }
      EXPECT_EQ(r.events, starts);
      for (size_t c = 0; c < kKernelClassCount; ++c)  // float32 fractions in the pyramid
        EXPECT_NEAR(static_cast<double>(r.stream_busy_ns[c]), static_cast<double>(want[c]),
                    1e-6 * static_cast<double>(b - a) + 2)
            << "class " << c;
    }
  }
}

}  // namespace
}  // namespace wl
