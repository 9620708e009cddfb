// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline export --view-file` (issue 33, item 1): with --view NAME it writes the bytes of the
// equivalent direct command line; a run that is missing or changed fails with exit code 2 and a
// message naming the view file, the JSON path and the run; a bad view file fails with exit code
// 1 and its JSON path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "widgets/viewfile/view_runs.h"
#include "widgets/viewfile/view_state.h"

namespace wl {
namespace {

const std::filesystem::path kSamples = WATTLINE_SOURCE_DIR "/resources/samples";
constexpr const char* kRun = "llama3-8b-h100x8-mbs4.h5";

class ViewFileExport : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy_file(kSamples / kRun, dir.path() / kRun);
    // 130 s to 131 s of GPUs 0 and 1 (2 to 7 hidden), the heatmap of temperature.
    view.runs = {{QString::fromLatin1(kRun), runContentHash(path(kRun))}};
    view.range = {130'000'000'000, 131'000'000'000};
    for (int g = 2; g < 8; ++g)
      view.tracks.shown[QStringLiteral("r0/g%1").arg(g)] = false;
    view.heatmapMetric = "temp_c";
    writeViewFile(view, path("view.json"));
  }
  QString path(const std::string& name) const {
    return QString::fromStdString((dir.path() / name).string());
  }
  std::string out(const std::string& name) const { return (dir.path() / name).string(); }
  test::TempDir dir;
  ViewState view;
};

TEST_F(ViewFileExport, NamedViewWritesTheBytesOfTheDirectCommandLine) {
  const std::string run = out(kRun), viewFile = out("view.json");
  for (const char* ext : {"png", "svg"}) {
    const std::string a = out(std::string("from-view.") + ext);
    const std::string b = out(std::string("direct.") + ext);
    const auto fromView =
        test::runWattline({"export", "--view-file", viewFile, "--view", "timeline", "-o", a});
    ASSERT_EQ(fromView.exitCode, 0) << fromView.err;
    // The view's GPUs, the window's default metrics, kernels and steps, its range.
    const auto direct = test::runWattline(
        {"export", run, "--view", "timeline", "--range", "130s:131s", "--gpus", "0,1", "--metrics",
         "power_w,temp_c,sm_clock_mhz,util_pct,kernels,steps", "-o", b});
    ASSERT_EQ(direct.exitCode, 0) << direct.err;
    EXPECT_EQ(test::readFile(a), test::readFile(b)) << ext;
  }
  const auto heatView = test::runWattline(
      {"export", "--view-file", viewFile, "--view", "heatmap", "-o", out("hv.png")});
  ASSERT_EQ(heatView.exitCode, 0) << heatView.err;
  const auto heatDirect =
      test::runWattline({"export", run, "--view", "heatmap", "--range", "130s:131s", "--metrics",
                         "temp_c", "-o", out("hd.png")});
  ASSERT_EQ(heatDirect.exitCode, 0) << heatDirect.err;
  EXPECT_EQ(test::readFile(out("hv.png")), test::readFile(out("hd.png")));
}

// Issue 33, item 3: a figure drawn from a view carries it (runs relative to the figure's folder)
// and `export --view-file FIG` draws the same view again.
TEST_F(ViewFileExport, FigureCarriesItsViewAndRedrawsIt) {
  std::filesystem::create_directories(dir.path() / "figs");
  const auto direct =
      test::runWattline({"export", "--view-file", out("view.json"), "-o", out("direct.png")});
  ASSERT_EQ(direct.exitCode, 0) << direct.err;
  for (const char* ext : {"svg", "png", "pdf"}) {
    const std::string fig = out(std::string("figs/fig.") + ext);
    const auto first = test::runWattline({"export", "--view-file", out("view.json"), "-o", fig});
    ASSERT_EQ(first.exitCode, 0) << first.err;
    const ViewState carried = readViewFile(QString::fromStdString(fig));
    EXPECT_EQ(carried.runs.at(0).path, QStringLiteral("../") + kRun);
    ViewState expected = view;
    expected.runs[0].path = carried.runs[0].path;
    EXPECT_EQ(carried, expected) << ext;
    const std::string again = out(std::string("again-") + ext + ".png");
    const auto redraw = test::runWattline({"export", "--view-file", fig, "-o", again});
    ASSERT_EQ(redraw.exitCode, 0) << redraw.err;
    EXPECT_EQ(test::readFile(again), test::readFile(out("direct.png"))) << ext;
  }
  // A figure without a view says so.
  const auto plain =
      test::runWattline({"export", out(kRun), "--view", "summary", "-o", out("plain.svg")});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  const auto none =
      test::runWattline({"export", "--view-file", out("plain.svg"), "-o", out("none.png")});
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_NE(none.err.find(out("plain.svg") + ": the figure carries no Wattline view"),
            std::string::npos)
      << none.err;
}

TEST_F(ViewFileExport, MissingOrChangedRunExitsTwoNamingIt) {
  const std::string viewFile = out("view.json");
  std::filesystem::rename(dir.path() / kRun, dir.path() / "elsewhere.h5");
  const auto missing = test::runWattline({"export", "--view-file", viewFile, "-o", out("m.png")});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find(viewFile + ": $.runs[0].path: run \"" + kRun +
                             "\" not found "
                             "(looked for " +
                             out(kRun) + ")"),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(std::filesystem::exists(out("m.png")));

  // Another run under the same name: its content hash differs.
  std::filesystem::copy_file(kSamples / "llama3-8b-h100x8-mbs1.h5", dir.path() / kRun);
  const auto changed = test::runWattline({"export", "--view-file", viewFile, "-o", out("c.png")});
  EXPECT_EQ(changed.exitCode, 2);
  EXPECT_NE(changed.err.find(viewFile + ": $.runs[0].path: run " + out(kRun) +
                             " is not the run the view was saved with"),
            std::string::npos)
      << changed.err;
}

TEST_F(ViewFileExport, BadViewFileExitsOneWithItsJsonPath) {
  const std::string bad = out("bad.json");
  std::ofstream(bad) << R"({"format": "wattline-view", "version": 1, "runs": [], )"
                        R"("range_ns": [0, 1]})";
  const auto r = test::runWattline({"export", "--view-file", bad, "-o", out("b.png")});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find(bad + ": $.runs: expected at least one run, got none"), std::string::npos)
      << r.err;
  // The view names its runs and their range: a run or --range beside it is bad usage.
  const auto twice =
      test::runWattline({"export", out(kRun), "--view-file", out("view.json"), "-o", out("t.png")});
  EXPECT_EQ(twice.exitCode, 2);
  EXPECT_NE(twice.err.find("--view-file takes no run"), std::string::npos) << twice.err;
  const auto range = test::runWattline(
      {"export", "--view-file", out("view.json"), "--range", "1s:2s", "-o", out("t.png")});
  EXPECT_EQ(range.exitCode, 2);
  EXPECT_NE(range.err.find("--range does not apply to --view-file"), std::string::npos)
      << range.err;
}

}  // namespace
}  // namespace wl
