// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline analyze --json` of a run with a notes sidecar: each note is reported with the numbers
// `wattline analyze --json --range S:E --gpus G` prints for its range (run separately here), and
// a bad sidecar is named on stderr while the analysis goes on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "analysis/notes.h"
#include "analysis/range_summary.h"
#include "analysis_test_util.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace wl {
namespace {

using test::kMs;
using test::kSec;
using test::kT0;

class NotesCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    test::RunSpec s = test::baseRun(2, 100.0);
    for (int g = 0; g < 2; ++g)
      s.telemetry.push_back(
          test::sampled(kT0, kT0 + 100 * kSec, 100 * kMs, {"power_w", "temp_c", "sm_clock_mhz"},
                        [g](size_t m, int64_t t) {
                          const bool hot = t >= kT0 + 20 * kSec && t < kT0 + 30 * kSec;
                          const double v[] = {(g ? 600.0 : 400.0) + (hot ? 50.0 : 0.0), 70, 1980};
                          return v[m];
                        }));
    test::writeAndOpen(s, dir / "run.h5");
    path = (dir / "run.h5").string();
  }
  nlohmann::json analyze(std::vector<std::string> extra) {
    std::vector<std::string> args = {"analyze", path, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  test::TempDir dir;
  std::string path;
};

TEST_F(NotesCommand, EachNoteHasTheNumbersOfAnalyzeRange) {
  writeNotes(path, {Note{20 * kSec, 30 * kSec, {}, {}, "hot"},
                    Note{40 * kSec, 70 * kSec, {1}, {}, "GPU 1 only"}});
  const auto j = analyze({});
  ASSERT_TRUE(j.contains("timeline_notes"));
  const auto& notes = j["timeline_notes"];
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0]["text"], "hot");
  EXPECT_EQ(notes[1]["gpus"], nlohmann::json({1}));
  const auto hot = analyze({"--range", "20:30"});
  const auto one = analyze({"--range", "40:70", "--gpus", "1"});
  EXPECT_EQ(notes[0]["analysis"]["totals"], hot["totals"]);
  EXPECT_EQ(notes[0]["analysis"]["gpus"], hot["gpus"]);
  EXPECT_EQ(notes[1]["analysis"]["totals"], one["totals"]);
  EXPECT_EQ(notes[1]["analysis"]["gpus"], one["gpus"]);
  EXPECT_EQ(notes[0]["analysis"]["start_ns"], kT0 + 20 * kSec);
  EXPECT_EQ(notes[0]["analysis"]["end_ns"], kT0 + 30 * kSec);
  // And the numbers themselves, by hand (trapezoids of 0.1 s samples): 450 W + 650 W from 20 s to
  // 29.9 s, then the step down to 400 W + 600 W at 30 s; 600 W for 30 s on GPU 1.
  EXPECT_NEAR(notes[0]["analysis"]["totals"]["energy_j"].get<double>(),
              1100.0 * 9.9 + (1100.0 + 1000.0) / 2 * 0.1, 1e-6);
  ASSERT_EQ(notes[1]["analysis"]["gpus"].size(), 1u);
  EXPECT_EQ(notes[1]["analysis"]["gpus"][0]["id"], 1);
  EXPECT_NEAR(notes[1]["analysis"]["gpus"][0]["energy_j"].get<double>(), 600.0 * 30, 1e-6);
  // "selection": what the Selection dock shows for the note's range (summarizeRange).
  const auto run = RunFile::open(path);
  const RangeSummary sel = summarizeRange(*run, kT0 + 40 * kSec, kT0 + 70 * kSec, {1}, {0, 1});
  ASSERT_EQ(notes[1]["selection"]["gpus"].size(), 1u);
  EXPECT_EQ(notes[1]["selection"]["gpus"][0]["energy_j"].get<double>(), sel.gpus[0].energy_j);
  EXPECT_NEAR(sel.gpus[0].energy_j, 600.0 * 30, 1e-6);
  EXPECT_EQ(notes[1]["selection"]["ranks"].size(), 2u);
  // The tables end with the notes: range after the start, GPUs, the energy, the text.
  const auto text = test::runWattline({"analyze", path});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("\nnotes (2; analyze --json: timeline_notes)\n"
                          "  20.00 s .. 30.00 s  gpus all  energy 11.00 kJ\n    hot\n"
                          "  40.00 s .. 70.00 s  gpus 1  energy 18.00 kJ\n    GPU 1 only\n"),
            std::string::npos)
      << text.out;
  // The run without the sidecar reports no notes.
  std::filesystem::remove(notesSidecarPath(path));
  EXPECT_FALSE(analyze({}).contains("timeline_notes"));
}

TEST_F(NotesCommand, ANoteOutsideTheRunOrOnAnUnknownGpuSaysWhy) {
  writeNotes(path, {Note{20 * kSec, 30 * kSec, {7}, {}, "no such GPU"},
                    Note{500 * kSec, 600 * kSec, {}, {}, "after the run"}});
  const auto notes = analyze({})["timeline_notes"];
  ASSERT_EQ(notes.size(), 2u);
  for (const auto& n : notes) {
    EXPECT_FALSE(n.contains("analysis"));
    EXPECT_TRUE(n["error"].is_string());
  }
  EXPECT_NE(notes[1]["error"].get<std::string>().find("outside the run"), std::string::npos)
      << notes[1]["error"];
}

TEST_F(NotesCommand, ABadSidecarIsNamedAndTheRunIsStillAnalysed) {
  std::ofstream(notesSidecarPath(path)) << R"({"format": "wattline-notes", "version": 1,
    "notes": [{"range_ns": [5, 2], "text": "x"}]})";
  const auto r = test::runWattline({"analyze", path, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "wattline: warning: notes not read: " + notesSidecarPath(path) +
                       ": $.notes[0].range_ns: expected start < end, got [5,2]\n");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.contains("timeline_notes"));
  EXPECT_TRUE(j.contains("totals"));
}

}  // namespace
}  // namespace wl
