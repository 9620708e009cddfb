// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline export A.h5 --compare B.h5 --view compare --align ... --layout ...` draws exactly the
// alignment and layout asked for (read back from the SVG: row titles, legends, caption), and
// `--view iteration-profile` draws a typical iteration of both runs over the steps `analyze`
// lists (without the first). Run on the bundled pair (microbatch 4 and microbatch 1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "loaders/format/run_file.h"
#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "svg_util.h"

namespace wl {
namespace {

const std::string kA = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs4.h5";
const std::string kB = WATTLINE_SOURCE_DIR "/resources/samples/llama3-8b-h100x8-mbs1.h5";

// What the figure draws in the row labelled `label`: the pixel columns where its clip spans
// meet (a run drawn through a warp is cut into one span per piece), and how far right its
// series reaches.
struct DrawnRow {
  std::vector<double> joins;  // between spans, left to right (none: one linear mapping)
  double seriesRight = 0;
};

DrawnRow drawnRow(const test::SvgDocument& d, const QString& label) {
  double labelY = -1;
  for (const test::SvgElement& e : d.elements)
    if (e.name == QStringLiteral("text") && e.text == label) labelY = e.y;
  EXPECT_GE(labelY, 0) << label.toStdString();
  std::vector<const test::SvgElement*> spans;  // the row's white plot backgrounds
  for (const test::SvgElement& e : d.elements)
    if (e.name == QStringLiteral("rect") && e.fill == QStringLiteral("#ffffff") && e.x > 1 &&
        e.y <= labelY && labelY <= e.y + e.height)
      spans.push_back(&e);
  DrawnRow row;
  if (spans.empty()) return row;
  std::sort(spans.begin(), spans.end(), [](auto* a, auto* b) { return a->x < b->x; });
  for (size_t i = 1; i < spans.size(); ++i)  // neighbours overlap by a pixel column
    row.joins.push_back((spans[i - 1]->x + spans[i - 1]->width + spans[i]->x) / 2);
  const double top = spans[0]->y, bottom = spans[0]->y + spans[0]->height;
  for (const test::SvgElement& e : d.elements) {
    if (e.name != QStringLiteral("path") || e.stroke == QStringLiteral("none")) continue;
    const auto pts = test::pathPoints(e.d);
    bool inside = !pts.empty();
    double right = 0;
    for (const auto& sub : pts)
      for (const QPointF& p : sub) {
        inside = inside && p.y() >= top - 0.5 && p.y() <= bottom + 0.5;
        right = std::max(right, p.x());
      }
    if (inside) row.seriesRight = std::max(row.seriesRight, right);
  }
  return row;
}

// Per step, the earliest start and the latest end over the ranks, in seconds since the run's start.
std::map<int64_t, std::pair<double, double>> steps(const RunFile& run) {
  std::map<int64_t, std::pair<double, double>> out;
  for (const Iteration& it : run.iterations()) {
    const double t0 = static_cast<double>(it.start_ns - run.info().start_ns) * 1e-9;
    const double t1 = static_cast<double>(it.end_ns - run.info().start_ns) * 1e-9;
    auto [i, fresh] = out.try_emplace(it.step, t0, t1);
    if (!fresh) i->second = {std::min(i->second.first, t0), std::max(i->second.second, t1)};
  }
  return out;
}

double lastPowerSampleS(const RunFile& run, size_t gpu) {
  const Samples s = run.readAllSamples(SeriesKind::Gpu, gpu, "power_w");
  return static_cast<double>(s.t_ns.back() - run.info().start_ns) * 1e-9;
}

class CompareExport : public ::testing::Test {
 protected:
  test::SvgDocument exportSvg(std::vector<std::string> extra, const std::string& name,
                              const std::string& b = kB) {
    const std::string file = (dir.path() / name).string();
    std::vector<std::string> args{"export", kA, "--compare", b, "-o", file};
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
  // After a "Δ " of its own; with the unit of its y axis.
  EXPECT_TRUE(stacked.hasText(QStringLiteral("Power · GPU 0−0 (W)")));
  EXPECT_TRUE(stacked.hasText(QStringLiteral("Power · GPU 1−1 (W)")));
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
  EXPECT_EQ(test::readFile(dir.path() / "align-warp.svg"),
            test::readFile(dir.path() / "align-.svg"));
}

// Where B is drawn, read from the SVG and computed here from both runs' iterations and the
// figure's own time axis. Warped, B's row is cut at A's start of every step both runs have (and
// the end of the last), so B's step k lies over A's step k; past its last common step B goes on
// at its own pace, so its series ends that much after A's end of that step. Shifted to align
// iteration 1, B's row is one piece, and its series ends at B's last sample moved by the offset of
// the two iteration 1 starts.
TEST_F(CompareExport, WarpedAndShiftedBAreDrawnWhereTheirAlignmentPutsThem) {
  const auto a = RunFile::open(kA);
  const auto b = RunFile::open(kB);
  const auto stepsA = steps(*a), stepsB = steps(*b);
  std::vector<double> knots;  // seconds since A's start
  int64_t lastCommon = -1;
  for (const auto& [step, span] : stepsA)
    if (stepsB.count(step)) knots.push_back(span.first), lastCommon = step;
  ASSERT_GE(knots.size(), 3u);
  knots.push_back(stepsA.at(lastCommon).second);
  const double endB = lastPowerSampleS(*b, 0);

  const std::vector<std::string> base{"--view", "compare", "--gpus", "0", "--metrics", "power_w"};
  auto with = [&](const std::string& align) {
    std::vector<std::string> v = base;
    v.insert(v.end(), {"--align", align});
    return v;
  };
  const test::SvgDocument warp = exportSvg(with("warp"), "where-warp.svg");
  const test::SvgDocument shift = exportSvg(with("iteration"), "where-shift.svg");
  ASSERT_TRUE(warp.ok && shift.ok);
  const QString rowB = QStringLiteral("B · Power (W)");

  const test::TimeAxis ax = test::readTimeAxis(warp);
  ASSERT_GT(ax.pxPerS, 0);
  const DrawnRow w = drawnRow(warp, rowB);
  std::vector<double> expected;
  for (double t : knots)
    if (ax.x(t) > ax.x(0) + 1.5 &&
        ax.x(t) < ax.x(static_cast<double>(a->info().end_ns - a->info().start_ns) * 1e-9) - 1.5)
      expected.push_back(ax.x(t));
  // Every step start is a join; the only other joins are the phase boundaries of step 19, which
  // both samples trace (a common traced step is warped phase by phase).
  for (size_t i = 0; i < expected.size(); ++i) {
    double nearest = 1e9;
    for (double j : w.joins)
      nearest = std::min(nearest, std::fabs(j - expected[i]));
    EXPECT_LE(nearest, 1.5) << "knot " << i;
  }
  size_t phaseJoins = 0;
  for (double j : w.joins) {
    double nearest = 1e9;
    for (double x : expected)
      nearest = std::min(nearest, std::fabs(j - x));
    if (nearest <= 1.5) continue;
    ++phaseJoins;
    EXPECT_GT(j, ax.x(stepsA.at(19).first)) << "join at " << j;
    EXPECT_LT(j, ax.x(stepsA.at(19).second)) << "join at " << j;
  }
  EXPECT_GE(phaseJoins, 1u);
  const double warpEnd = knots.back() + (endB - stepsB.at(lastCommon).second);
  EXPECT_NEAR(w.seriesRight, ax.x(warpEnd), 1.5);

  const test::TimeAxis axS = test::readTimeAxis(shift);
  EXPECT_NEAR(axS.x0, ax.x0, 0.5);
  EXPECT_NEAR(axS.pxPerS, ax.pxPerS, 1e-3);
  const DrawnRow s = drawnRow(shift, rowB);
  EXPECT_TRUE(s.joins.empty()) << s.joins.size() << " pieces";
  const double offset = stepsA.at(1).first - stepsB.at(1).first;
  // The figure spans A's run: a B that goes on past A's end is cut there.
  const double endA = static_cast<double>(a->info().end_ns - a->info().start_ns) * 1e-9;
  const double shiftEnd = std::min(endB + offset, endA);
  EXPECT_NEAR(s.seriesRight, axS.x(shiftEnd), 1.5);
  // The two alignments put B's end far apart (so the checks above tell them apart).
  EXPECT_GT(std::fabs(ax.x(warpEnd) - axS.x(shiftEnd)), 10);
}

// Issue 30, item 5: the figure of the issue (GPUs 4 and 7, 124 s to 132 s, B's data ending at
// 126 s) as a paper prints it. Every row title is whole (the label column is as wide as the
// longest: nothing is cut with "…"); every A − B row has a y axis with zero and a tick on either
// side, labelled; and A − B is drawn only where B has data, so it ends where B's row ends.
// B is the microbatch-1 sample as it was then: 150 s of training, which ends before A's on A's
// clock (the bundled one now runs 30 s longer), simulated here without traces.
TEST_F(CompareExport, DifferenceRowsHaveWholeTitlesAScaleAndEndWithB) {
  const std::string shortB = (dir.path() / "mbs1-150s.h5").string();
  const auto sim = test::runWattline({"simulate",  "-o",
                                      shortB,      "--platform",
                                      "h100",      "--model",
                                      "Llama3-8B", "--nodes",
                                      "1",         "--gpus-per-node",
                                      "8",         "--tp",
                                      "2",         "--pp",
                                      "2",         "--dp",
                                      "2",         "--mbs",
                                      "1",         "--gbs",
                                      "256",       "--seq-len",
                                      "2048",      "--duration",
                                      "150",       "--thermal-scenario",
                                      "hot-aisle", "--inlet-temp",
                                      "39",        "--seed",
                                      "1",         "--trace-ranks",
                                      "none"});
  ASSERT_EQ(sim.exitCode, 0) << sim.err;
  const test::SvgDocument d = exportSvg(
      {"--view", "compare", "--range", "124:132", "--gpus", "4,7"}, "issue30.svg", shortB);
  ASSERT_TRUE(d.ok);
  for (const QString& t : d.texts())
    EXPECT_FALSE(t.contains(QStringLiteral("…"))) << t.toStdString();
  // B's rows end where B's data ends (the same x for both of B's GPUs).
  const double endB = drawnRow(d, QStringLiteral("B · Power (W)")).seriesRight;
  ASSERT_GT(endB, 0);
  for (const char* metric : {"Power (W)", "GPU temperature (°C)", "SM clock (MHz)"}) {
    const QString title = QStringLiteral("A − B · ") + QString::fromUtf8(metric);
    std::vector<double> titles;
    for (const test::SvgElement& e : d.elements)
      if (e.name == QStringLiteral("text") && e.text == title) titles.push_back(e.y);
    ASSERT_EQ(titles.size(), 2u) << title.toStdString();  // one per pair of GPUs
    for (double y : titles) {
      // The row's y axis: the vertical line right of the title that spans it.
      double axisX = -1, top = 0, bottom = 0;
      for (const test::SvgElement& e : d.elements) {
        if (e.name != QStringLiteral("polyline")) continue;
        const auto pts = test::pathPoints(e.d);
        if (pts.size() != 1 || pts[0].size() != 2) continue;
        const QPointF p0 = pts[0][0], p1 = pts[0][1];
        if (p0.x() != p1.x() || p0.x() < 100) continue;
        const double y0 = std::min(p0.y(), p1.y()), y1 = std::max(p0.y(), p1.y());
        if (y0 < y && y < y1 && (axisX < 0 || y1 - y0 < bottom - top))
          axisX = p0.x(), top = y0, bottom = y1;
      }
      ASSERT_GT(axisX, 0) << title.toStdString() << " at y " << y;
      // Its tick labels: numbers left of the axis inside the row, -s, 0 and s.
      std::vector<double> values;
      for (const test::SvgElement& e : d.elements) {
        bool number = false;
        const double v = e.text.toDouble(&number);
        if (e.name == QStringLiteral("text") && number && e.x < axisX && e.x > axisX - 80 &&
            e.y > top && e.y < bottom + 4)
          values.push_back(v);
      }
      std::sort(values.begin(), values.end());
      ASSERT_EQ(values.size(), 3u) << title.toStdString() << " at y " << y;
      EXPECT_EQ(values[1], 0.0);
      EXPECT_GT(values[2], 0.0);
      EXPECT_EQ(values[0], -values[2]);
      // The difference's line (more than the two points of the zero line) ends where B's data
      // does, within a pixel and a half.
      double right = 0;
      for (const test::SvgElement& e : d.elements) {
        if ((e.name != QStringLiteral("path") && e.name != QStringLiteral("polyline")) ||
            e.stroke == QStringLiteral("none"))
          continue;
        const auto pts = test::pathPoints(e.d);
        bool inside = !pts.empty();
        size_t n = 0;
        double r = 0;
        for (const auto& sub : pts)
          for (const QPointF& p : sub) {
            inside = inside && p.y() >= top - 0.5 && p.y() <= bottom + 0.5 && p.x() >= axisX - 1;
            r = std::max(r, p.x());
            ++n;
          }
        if (inside && n > 2) right = std::max(right, r);
      }
      ASSERT_GT(right, 0) << title.toStdString();
      EXPECT_LE(right, endB + 1.5) << title.toStdString() << " at y " << y;
    }
  }
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
