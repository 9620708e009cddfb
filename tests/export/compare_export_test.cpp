// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline export A.h5 --compare B.h5 --view compare --align ... --layout ...` draws exactly the
// alignment and layout asked for (read back from the SVG: row titles, legends, caption), and
// `--view iteration-profile` draws a typical iteration of both runs over the steps `analyze`
// lists (without the first). Run on the bundled pair (microbatch 4 and microbatch 1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "svg_util.h"

namespace wl {
namespace {

const std::string kA = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5";
const std::string kB = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs1.h5";

class CompareExport : public ::testing::Test {
 protected:
  test::SvgDocument exportSvg(std::vector<std::string> extra, const std::string& name) {
    const std::string file = (dir.path() / name).string();
    std::vector<std::string> args{"export", kA, "--compare", kB, "-o", file};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return test::parseSvg(QByteArray::fromStdString(test::readFile(file)));
  }
  static size_t countStarting(const test::SvgDocument& d, const QString& prefix) {
    size_t n = 0;
    for (const QString& t : d.texts())
      n += t.startsWith(prefix);
    return n;
  }
  test::TempDir dir;
};

TEST_F(CompareExport, LayoutsDrawTheirRows) {
  const auto base = std::vector<std::string>{"--view",    "compare",        "--gpus",  "0,1",
                                             "--metrics", "power_w,temp_c", "--range", "12s:16s"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> v = base;
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  const test::SvgDocument paired = exportSvg(with({"--layout", "paired"}), "paired.svg");
  const test::SvgDocument overlay = exportSvg(with({"--layout", "overlay"}), "overlay.svg");
  const test::SvgDocument stacked = exportSvg(with({"--layout", "stacked"}), "stacked.svg");
  ASSERT_TRUE(paired.ok && overlay.ok && stacked.ok);
  // Paired: per pair (2) and metric (2), an A row and a B row, under a header per pair.
  EXPECT_EQ(countStarting(paired, QStringLiteral("A · ")), 4u);
  EXPECT_EQ(countStarting(paired, QStringLiteral("B · ")), 4u);
  EXPECT_TRUE(paired.hasText(QStringLiteral("GPU 0 (A) · GPU 0 (B)")));
  EXPECT_TRUE(paired.hasText(QStringLiteral("GPU 1 (A) · GPU 1 (B)")));
  // Overlay: one row per pair and metric, named by what differs (the microbatch), with a legend
  // of both runs in every overlay row; no separate A or B rows.
  EXPECT_EQ(countStarting(overlay, QStringLiteral("A · ")), 0u);
  EXPECT_EQ(countStarting(overlay, QStringLiteral("Power · mbs4 vs mbs1")), 2u);
  EXPECT_EQ(countStarting(overlay, QStringLiteral("GPU temperature · mbs4 vs mbs1")), 2u);
  size_t legendA = 0, legendB = 0;
  for (const QString& t : overlay.texts()) {
    legendA += t == QStringLiteral("mbs4");
    legendB += t == QStringLiteral("mbs1");
  }
  EXPECT_EQ(legendA, 4u);
  EXPECT_EQ(legendB, 4u);
  // Stacked: no pair headers; A's run, then B's, then the A − B section.
  EXPECT_FALSE(stacked.hasText(QStringLiteral("GPU 0 (A) · GPU 0 (B)")));
  EXPECT_TRUE(stacked.hasText(QStringLiteral("A − B")));
  EXPECT_TRUE(stacked.hasText(QStringLiteral("Power · GPU 0−0")));  // after a "Δ " of its own
  EXPECT_TRUE(stacked.hasText(QStringLiteral("Power · GPU 1−1")));
  EXPECT_EQ(countStarting(stacked, QStringLiteral("GPU 0")), 2u);  // A's and B's GPU headers
  // Under a header per run (the caption names both runs on one line).
  EXPECT_TRUE(stacked.hasText(QStringLiteral("A: Llama3-8B H100 tp2 pp2 dp2 mbs4 (simulated)")));
  EXPECT_TRUE(stacked.hasText(QStringLiteral("B: Llama3-8B H100 tp2 pp2 dp2 mbs1 (simulated)")));
}

TEST_F(CompareExport, TheAlignmentAskedForIsTheOneDrawnAndNamed) {
  const std::vector<std::string> base{"--view", "compare", "--gpus", "0", "--metrics", "power_w"};
  auto caption = [&](const std::string& align) {
    std::vector<std::string> v = base;
    if (!align.empty()) v.insert(v.end(), {"--align", align});
    const test::SvgDocument d = exportSvg(v, "align-" + align + ".svg");
    for (const QString& t : d.texts())
      if (t.contains(QStringLiteral("B ")) && t.contains(QStringLiteral("clock"))) return t;
    for (const QString& t : d.texts())
      if (t.startsWith(QStringLiteral("B ")) || t.startsWith(QStringLiteral("both"))) return t;
    return QString();
  };
  EXPECT_TRUE(caption("").contains(QStringLiteral("warped")));  // the default: the warp
  EXPECT_TRUE(caption("warp").contains(QStringLiteral("warped")));
  EXPECT_TRUE(caption("iteration").contains(QStringLiteral("iteration 1 of both runs")));
  EXPECT_TRUE(caption("start").contains(QStringLiteral("starts")));
  EXPECT_TRUE(caption("absolute").contains(QStringLiteral("wall-clock")));
  // Different alignments draw B differently: the files differ.
  const std::string warp = test::readFile(dir.path() / "align-warp.svg");
  const std::string shift = test::readFile(dir.path() / "align-iteration.svg");
  EXPECT_NE(warp, shift);
  EXPECT_EQ(warp, test::readFile(dir.path() / "align-.svg"));
}

TEST_F(CompareExport, IterationProfileShowsBothRunsOverAnalyzesSteps) {
  const test::SvgDocument d =
      exportSvg({"--view", "iteration-profile", "--metrics", "power_w,temp_c"}, "profile.svg");
  ASSERT_TRUE(d.ok) << d.error.toStdString();
  // One chart per metric of the first pair, each with both runs' mean and band in the legend.
  EXPECT_TRUE(d.hasText(QStringLiteral("Power · GPU 0 (A) · GPU 0 (B)")));
  EXPECT_TRUE(d.hasText(QStringLiteral("GPU temperature · GPU 0 (A) · GPU 0 (B)")));
  EXPECT_FALSE(d.hasText(QStringLiteral("SM clock · GPU 0 (A) · GPU 0 (B)")));
  EXPECT_EQ(countStarting(d, QStringLiteral("mbs4 mean")), 2u);
  EXPECT_EQ(countStarting(d, QStringLiteral("mbs1 min–max")), 2u);
  // The steps named are analyze's completed steps of each run without the first (warm-up).
  auto typical = [](const std::string& run) {
    const auto r = test::runWattline({"analyze", run, "--json"});
    const auto j = nlohmann::json::parse(r.out);
    std::vector<int64_t> steps;
    for (const auto& s : j["iterations"]["steps"])
      steps.push_back(s["step"].get<int64_t>());
    steps.erase(steps.begin());
    return QStringLiteral("%1–%2").arg(steps.front()).arg(steps.back());
  };
  const QString want = QStringLiteral("mean and min–max over steps %1 of A and %2 of B")
                           .arg(typical(kA), typical(kB));
  EXPECT_TRUE(d.hasText(want)) << want.toStdString() << "\n"
                               << d.texts().join(QStringLiteral(" | ")).toStdString();
}

TEST_F(CompareExport, BadAlignOrLayoutIsBadUsage) {
  const std::string png = (dir.path() / "x.png").string();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"export", kA, "--compare", kB, "--view", "compare", "--align", "sideways", "-o", png},
           {"export", kA, "--compare", kB, "--view", "compare", "--layout", "grid", "-o", png},
           {"export", kA, "--view", "timeline", "--layout", "paired", "-o", png},
           {"export", kA, "--compare", kB, "--view", "pareto", "--align", "warp", "-o", png}}) {
    const auto r = test::runWattline(args);
    EXPECT_EQ(r.exitCode, 2) << args[5] << " " << r.err;
    EXPECT_NE(r.err.find("see 'wattline export --help'"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace wl
