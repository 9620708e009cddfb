// SPDX-License-Identifier: GPL-3.0-or-later
// Where a rank's kernel trace has data (widgets/timeline/render/trace_coverage.h), against the events
// themselves: the bundled microbatch-4 sample traces steps 19-20 of every rank (one window from
// the rank's first kernel start to its last kernel end), and a simulated run traced every 4th
// step has one window per traced step.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "../sim/sim_test_support.h"
#include "loaders/format/run_file.h"
#include "support/temp_dir.h"
#include "widgets/timeline/render/trace_coverage.h"

namespace wl {
namespace {

// The rank's first event start and last event end, read event by event.
TimeSpan extentOf(const RunFile& run, int rank) {
  TimeSpan out{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (size_t t = 0; t < run.tracks().size(); ++t) {
    if (run.tracks()[t].rank != rank) continue;
    for (const KernelEvent& e : run.readAllKernels(t)) {
      out.first = std::min(out.first, e.start_ns);
      out.second = std::max(out.second, e.start_ns + e.dur_ns);
    }
  }
  return out;
}

TEST(TraceCoverage, TheSampleTracesOneWindowPerRank) {
  const auto run = RunFile::open(WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5");
  for (int rank = 0; rank < 8; ++rank) {
    const std::vector<TimeSpan> w = traceWindows(*run, rank);
    ASSERT_EQ(w.size(), 1u) << "rank " << rank;
    EXPECT_EQ(w[0], extentOf(*run, rank)) << "rank " << rank;
    const std::vector<TimeSpan> u = untracedSpans(*run, w);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_EQ(u[0], TimeSpan(run->info().start_ns, w[0].first));
    EXPECT_EQ(u[1], TimeSpan(w[0].second, run->info().end_ns));
    EXPECT_TRUE(inTracedTime(w, w[0].first, w[0].second));
    EXPECT_FALSE(inTracedTime(w, w[0].first - 1, w[0].first + 1));
  }
  // Steps 19 and 20 of rank 0 lie inside; step 11 (a throttled step) outside.
  const std::vector<TimeSpan> w = traceWindows(*run, 0);
  for (const Iteration& it : run->iterations()) {
    if (it.rank != 0) continue;
    const bool traced = it.step == 19 || it.step == 20;
    const bool overlaps = it.start_ns < w[0].second && w[0].first < it.end_ns;
    EXPECT_EQ(overlaps, traced) << "step " << it.step;
  }
}

TEST(TraceCoverage, EveryFourthStepTracedGivesOneWindowPerTracedStep) {
  test::TempDir dir;
  sim::SimConfig c = test::tinyConfig();
  c.gpusPerNode = 2;
  c.dp = 2;
  c.mbs = 4;
  c.gbs = 128;
  c.durationS = 0;
  c.iterations = 9;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  c.trace.steps = sim::TraceSelection::Steps::Every;
  c.trace.everyStep = 4;  // steps 0, 4 and 8
  const auto run = test::simulateAndOpen(c, dir / "every4.h5");
  std::vector<Iteration> steps;
  for (const Iteration& it : run->iterations())
    if (it.rank == 0) steps.push_back(it);
  ASSERT_EQ(steps.size(), 9u);
  // Traced steps with whole untraced steps between them stay separate windows.
  const std::vector<TimeSpan> w = traceWindows(*run, 0);
  ASSERT_EQ(w.size(), 3u);
  for (int k : {0, 4, 8}) {
    const Iteration& it = steps[static_cast<size_t>(k)];
    EXPECT_TRUE(inTracedTime(w, it.start_ns + (it.end_ns - it.start_ns) / 4,
                             it.end_ns - (it.end_ns - it.start_ns) / 4))
        << "step " << k;
  }
  for (int k : {2, 6}) {
    const Iteration& it = steps[static_cast<size_t>(k)];
    EXPECT_FALSE(inTracedTime(w, it.start_ns, it.end_ns)) << "step " << k;
  }
  EXPECT_EQ(untracedSpans(*run, w).size(), 4u);
}

}  // namespace
}  // namespace wl
