// SPDX-License-Identifier: GPL-3.0-or-later
// What differs between a measured run and its what-if projection (`wattline whatif -o`): the
// projected side is called projected, not measured (nor simulated), in the data rows and the
// warning, whichever side it is on (analysis/compare/config_diff.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/compare/config_diff.h"
#include "analysis/projected_run.h"
#include "loaders/format/run_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

const RunDifference* row(const RunDifferences& d, const std::string& key) {
  for (const RunDifference& r : d.data)
    if (r.key == key) return &r;
  return nullptr;
}

std::vector<std::string> warningsWith(const RunDifferences& d, const std::string& part) {
  std::vector<std::string> out;
  for (const std::string& w : d.warnings)
    if (w.find(part) != std::string::npos) out.push_back(w);
  return out;
}

// Projects `sample` at 550 W into `dir` with `wattline whatif -o`.
std::string project(const test::TempDir& dir, const std::string& sample) {
  const std::string out = (dir / "projected.h5").string();
  const test::ProcessResult r =
      test::runWattline({"whatif", sample, "--power-limit", "550", "-o", out});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return out;
}

TEST(ProjectedLabel, MeasuredAgainstProjectedSaysProjected) {
  test::TempDir dir;
  const std::string sample = WATTLINE_SOURCE_DIR "/resources/samples/h200-gpt-1.3b-real.h5";
  const auto measured = RunFile::open(sample);
  const auto projected = RunFile::open(project(dir, sample));
  ASSERT_FALSE(measured->info().simulated);
  ASSERT_FALSE(isProjectedRun(measured->info()));
  ASSERT_FALSE(projected->info().simulated);
  ASSERT_TRUE(isProjectedRun(projected->info()));

  // A measured, B projected.
  const RunDifferences d = runDifferences(*measured, *projected);
  const RunDifference* origin = row(d, "origin");
  ASSERT_NE(origin, nullptr);
  EXPECT_EQ(origin->a, "measured");
  EXPECT_EQ(origin->b, "projected");
  EXPECT_EQ(row(d, "simulated"), nullptr);
  const auto w = warningsWith(d, " is projected");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "B is projected and A measured: the what-if model calibrated on a run, not the "
            "hardware, sets B's numbers.");
  EXPECT_TRUE(warningsWith(d, "simulated").empty());

  // Swapped: A projected, B measured.
  const RunDifferences s = runDifferences(*projected, *measured);
  ASSERT_NE(row(s, "origin"), nullptr);
  EXPECT_EQ(row(s, "origin")->a, "projected");
  EXPECT_EQ(row(s, "origin")->b, "measured");
  const auto ws = warningsWith(s, " is projected");
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].rfind("A is projected and B measured:", 0), 0u) << ws[0];

  // Two measured runs: no origin row and no such warning.
  const RunDifferences m = runDifferences(*measured, *measured);
  EXPECT_EQ(row(m, "origin"), nullptr);
  EXPECT_TRUE(warningsWith(m, " measured").empty());
}

// The bundled Llama sample is simulated: its projection is neither simulated nor measured (the
// defect: "A is simulated and B measured").
TEST(ProjectedLabel, SimulatedAgainstItsProjectionSaysProjected) {
  test::TempDir dir;
  const std::string sample = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5";
  const auto simulated = RunFile::open(sample);
  const auto projected = RunFile::open(project(dir, sample));
  ASSERT_TRUE(simulated->info().simulated);
  ASSERT_TRUE(isProjectedRun(projected->info()));
  const RunDifferences d = runDifferences(*simulated, *projected);
  ASSERT_NE(row(d, "origin"), nullptr);
  EXPECT_EQ(row(d, "origin")->a, "simulated");
  EXPECT_EQ(row(d, "origin")->b, "projected");
  EXPECT_TRUE(warningsWith(d, "measured:").empty());
  const auto w = warningsWith(d, " is projected");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "B is projected and A simulated: the what-if model calibrated on a run sets B's "
            "numbers and the simulator A's; neither side is a measurement.");
}

}  // namespace
}  // namespace wl
