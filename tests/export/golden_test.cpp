// SPDX-License-Identifier: GPL-3.0-or-later
// Golden outputs of the bundled samples: `wattline analyze --json` and the figures `wattline
// export` draws of them (every timeline-type view, the comparison included, as SVG and PNG) are
// byte-identical to the SHA-256 pinned in tests/golden/samples.txt. A refactor that should change
// nothing keeps them; an intentional change regenerates them with scripts/update-golden.sh. A
// failing case leaves its output in the temp folder and names it.
#include <gtest/gtest.h>

#include <QColor>
#include <QCryptographicHash>
#include <QImage>
#include <QXmlStreamReader>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "loaders/format/run_file.h"
#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "svg_util.h"

namespace wl {
namespace {

struct GoldenCase {
  std::string sha256, name, args;
};

// How gtest names a case in its output (and ctest in its list).
void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.name;
}

const std::string kManifest = WATTLINE_SOURCE_DIR "/tests/golden/samples.txt";

std::vector<GoldenCase> readManifest() {
  std::vector<GoldenCase> out;
  std::ifstream in(kManifest);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    GoldenCase c;
    ss >> c.sha256 >> c.name;
    std::getline(ss >> std::ws, c.args);
    out.push_back(c);
  }
  return out;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream ss(s);
  std::vector<std::string> out;
  for (std::string w; ss >> w;)
    out.push_back(w);
  return out;
}

std::string sha256(const std::string& bytes) {
  return QCryptographicHash::hash(QByteArray::fromStdString(bytes), QCryptographicHash::Sha256)
      .toHex()
      .toStdString();
}

// A test name from a golden's name ("timeline-mbs4.svg" -> "timeline_mbs4_svg").
std::string caseName(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, OutputOfTheBundledSamplesIsUnchanged) {
  const GoldenCase& c = GetParam();
  test::TempDir dir;
  const std::string file = (dir.path() / c.name).string();
  const bool toFile = c.args.find("{OUT}") != std::string::npos;
  std::string args = replaceAll(c.args, "{S}", WATTLINE_SOURCE_DIR "/resources/samples");
  args = replaceAll(args, "{OUT}", file);
  const test::ProcessResult r = test::runWattline(words(args));
  ASSERT_EQ(r.exitCode, 0) << c.args << "\n" << r.err;
  const std::string bytes = toFile ? test::readFile(file) : r.out;
  ASSERT_FALSE(bytes.empty()) << c.args;
  const std::string got = sha256(bytes);
  if (got == c.sha256) return;
  // Keep the output for a look (and a diff against the previous one).
  const auto kept = std::filesystem::temp_directory_path() / ("wattline-golden-" + c.name);
  std::ofstream(kept, std::ios::binary) << bytes;
  ADD_FAILURE() << c.name << ": SHA-256 " << got << ", pinned " << c.sha256 << "\n  wattline "
                << c.args << "\n  output kept in " << kept.string()
                << "\n  if the change is intended: scripts/update-golden.sh, then look at "
                   "build/golden/ and commit tests/golden/samples.txt";
}

INSTANTIATE_TEST_SUITE_P(Samples, Golden, ::testing::ValuesIn(readManifest()), caseName);

// A hash only says the output did not change, not that it is right. Every golden output is also
// checked for its values by a test that computes them independently (by hand, or from the run
// file); a golden without one fails GoldenManifest.EveryGoldenHasAnIndependentValueCheck.
struct IndependentCheck {
  const char* prefix;  // golden names starting with this
  const char* tests;   // where their values are checked
};
constexpr IndependentCheck kIndependentChecks[] = {
    {"analyze-",
     "GoldenAnalyze.* (below: per GPU energy, power and temperature extremes, sample "
     "counts and steps from the run file); AnalyzeCommand.JsonHasTheDocumentedKeysAnd"
     "Values (tests/analysis, by hand)"},
    {"timeline-",
     "TimelineExport.SvgHoldsAxesLabelsAndOneEnvelopePerCounterRow, "
     ".WholeRunSvgStaysSmallAndKeepsTheOneSampleSpike, "
     ".PngHasTheRequestedSizeAndTheKernelColourInsideAKnownKernel (tests/export); "
     "GeometryTest.* (tests/timeline: envelopes, spikes, gaps, busy fractions)"},
    {"heatmap-",
     "TimelineExport.HeatmapSvgHasOneRowPerGpuAndAColourBar (tests/export); "
     "ThrottleStrip.CellsTakeTheDeepestDeficitAndTheDominantReason (tests/timeline)"},
    {"compare-",
     "CompareExport.WarpedAndShiftedBAreDrawnWhereTheirAlignmentPutsThem (on the same "
     "pair of samples), Compare.DifferenceEqualsAMinusBAtASamplePoints, "
     "Compare.IterationAlignmentPutsIterationKOfBothRunsAtTheSameX (tests/timeline)"},
};

TEST(GoldenManifest, EveryGoldenHasAnIndependentValueCheck) {
  for (const GoldenCase& c : readManifest()) {
    bool found = false;
    for (const IndependentCheck& k : kIndependentChecks)
      found = found || c.name.rfind(k.prefix, 0) == 0;
    EXPECT_TRUE(found) << c.name << ": add a test that checks its values, and list it here";
  }
}

// The numbers of the golden `analyze --json` outputs against the run file, read here: per GPU
// the count, extremes, integral (energy) and time-weighted mean of the power samples, the
// temperature extremes, the total energy, and the number of steps.
class GoldenAnalyze : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenAnalyze, NumbersAreTheRunFilesOwn) {
  const GoldenCase& c = GetParam();
  const std::vector<std::string> args =
      words(replaceAll(c.args, "{S}", WATTLINE_SOURCE_DIR "/resources/samples"));
  ASSERT_GE(args.size(), 2u);
  const test::ProcessResult r = test::runWattline(args);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto run = RunFile::open(args[1]);
  ASSERT_EQ(j["gpus"].size(), run->gpus().size());
  double total = 0;
  for (const GpuInfo& g : run->gpus()) {
    const auto& jg = j["gpus"][static_cast<size_t>(g.id)];
    ASSERT_EQ(jg["id"], g.id);
    const Samples p = run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.id), "power_w");
    // docs/analyses.md, A: energy by trapezoids, the mean left-Riemann, neither across a gap
    // (a spacing above max(1 s, 5 x the median spacing)).
    std::vector<int64_t> spacing;
    for (size_t i = 0; i + 1 < p.t_ns.size(); ++i)
      spacing.push_back(p.t_ns[i + 1] - p.t_ns[i]);
    std::nth_element(spacing.begin(), spacing.begin() + spacing.size() / 2, spacing.end());
    const double gap = std::max(1.0, 5e-9 * static_cast<double>(spacing[spacing.size() / 2]));
    double energy = 0, left = 0, covered = 0, lo = 1e300, hi = -1e300;
    size_t n = 0, prev = p.v.size();  // segments join consecutive valid samples
    for (size_t i = 0; i < p.v.size(); ++i) {
      if (!std::isfinite(p.v[i])) continue;
      ++n, lo = std::min(lo, p.v[i]), hi = std::max(hi, p.v[i]);
      if (prev < p.v.size()) {
        const double dt = static_cast<double>(p.t_ns[i] - p.t_ns[prev]) * 1e-9;
        if (dt <= gap)
          energy += (p.v[prev] + p.v[i]) / 2 * dt, left += p.v[prev] * dt, covered += dt;
      }
      prev = i;
    }
    total += energy;
    EXPECT_EQ(jg["power_w"]["samples"].get<size_t>(), n) << c.name << " GPU " << g.id;
    EXPECT_DOUBLE_EQ(jg["power_w"]["max"].get<double>(), hi) << c.name << " GPU " << g.id;
    EXPECT_DOUBLE_EQ(jg["power_w"]["min"].get<double>(), lo) << c.name << " GPU " << g.id;
    EXPECT_NEAR(jg["energy_j"].get<double>(), energy, 1e-6 * energy) << c.name << " GPU " << g.id;
    EXPECT_NEAR(jg["power_w"]["mean"].get<double>(), left / covered, 1e-6 * left / covered)
        << c.name << " GPU " << g.id;
    const Samples t = run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.id), "temp_c");
    double tHi = -1e300;
    for (double v : t.v)
      if (std::isfinite(v)) tHi = std::max(tHi, v);
    EXPECT_DOUBLE_EQ(jg["temp_c"]["max"].get<double>(), tHi) << c.name << " GPU " << g.id;
  }
  EXPECT_NEAR(j["totals"]["energy_j"].get<double>(), total, 1e-6 * total) << c.name;
  std::vector<int64_t> stepIds;
  for (const Iteration& it : run->iterations())
    stepIds.push_back(it.step);
  std::sort(stepIds.begin(), stepIds.end());
  stepIds.erase(std::unique(stepIds.begin(), stepIds.end()), stepIds.end());
  EXPECT_EQ(j["iterations"]["steps"].size(), stepIds.size()) << c.name;
}

std::vector<GoldenCase> analyzeCases() {
  std::vector<GoldenCase> out;
  for (const GoldenCase& c : readManifest())
    if (c.args.rfind("analyze ", 0) == 0) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Samples, GoldenAnalyze, ::testing::ValuesIn(analyzeCases()), caseName);

// The colour bar of a heatmap: the stops of its gradient, and the values at its two ends.
struct ColourBar {
  std::vector<std::pair<double, QColor>> stops;
  double lo = 0, hi = 0;

  QColor at(double f) const {
    for (size_t i = 1; i < stops.size(); ++i)
      if (f <= stops[i].first) {
        const double w = (f - stops[i - 1].first) / (stops[i].first - stops[i - 1].first);
        const QColor &a = stops[i - 1].second, &b = stops[i].second;
        return QColor::fromRgbF(static_cast<float>(a.redF() + w * (b.redF() - a.redF())),
                                static_cast<float>(a.greenF() + w * (b.greenF() - a.greenF())),
                                static_cast<float>(a.blueF() + w * (b.blueF() - a.blueF())));
      }
    return stops.back().second;
  }
  // The value whose colour on the bar is nearest to c.
  double value(QColor c) const {
    double best = 0, bestD = 1e300;
    for (int k = 0; k <= 1000; ++k) {
      const QColor q = at(k / 1000.0);
      const double d = std::pow(q.red() - c.red(), 2) + std::pow(q.green() - c.green(), 2) +
                       std::pow(q.blue() - c.blue(), 2);
      if (d < bestD) bestD = d, best = k / 1000.0;
    }
    return lo + best * (hi - lo);
  }
};

std::map<QString, std::vector<std::pair<double, QColor>>> gradients(const QByteArray& svg) {
  std::map<QString, std::vector<std::pair<double, QColor>>> out;
  QXmlStreamReader xml(svg);
  QString id;
  while (!xml.atEnd())
    if (xml.readNext() == QXmlStreamReader::StartElement) {
      const auto a = xml.attributes();
      if (xml.name() == QLatin1String("linearGradient"))
        id = a.value(QStringLiteral("id")).toString();
      else if (xml.name() == QLatin1String("stop"))
        out[id].emplace_back(a.value(QStringLiteral("offset")).toDouble(),
                             QColor(a.value(QStringLiteral("stop-color")).toString()));
    }
  return out;
}

// The golden heatmaps (SVG), read back: each heatmap's colour bar (its gradient
// and the two values at its ends), and its image (one pixel per GPU row and time column over the
// whole run). Every 7th column's colour, turned back into a value through the bar, is a mean of
// its GPU's samples in the finest pyramid buckets at the column (docs/format.md), so it must lie
// within their min and max (+- 5 % of the bar for the bar's five-stop approximation of the
// colour map). A cell without data (a telemetry gap) is left white.
class GoldenHeatmap : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenHeatmap, ColoursAreTheRunFilesValues) {
  const GoldenCase& c = GetParam();
  test::TempDir dir;
  const std::string file = (dir.path() / c.name).string();
  std::string args = replaceAll(c.args, "{S}", WATTLINE_SOURCE_DIR "/resources/samples");
  const std::vector<std::string> argv = words(replaceAll(args, "{OUT}", file));
  std::vector<std::string> metrics{"temp_c"};  // the heatmap's default
  const auto metricsAt = std::find(argv.begin(), argv.end(), "--metrics");
  if (metricsAt != argv.end() && metricsAt + 1 != argv.end()) {
    metrics.clear();
    std::istringstream list(*(metricsAt + 1));
    for (std::string m; std::getline(list, m, ',');)
      metrics.push_back(m);
  }
  ASSERT_EQ(test::runWattline(argv).exitCode, 0);
  const QByteArray bytes = QByteArray::fromStdString(test::readFile(file));
  const test::SvgDocument svg = test::parseSvg(bytes);
  ASSERT_TRUE(svg.ok);
  const auto grads = gradients(bytes);
  const auto run = RunFile::open(argv[1]);
  const LodGrid& grid = run->series(SeriesKind::Gpu).grid;
  const double span = static_cast<double>(run->info().end_ns - run->info().start_ns) * 1e-9;

  size_t heatmap = 0, checked = 0, blank = 0;
  for (size_t i = 0; i < svg.elements.size(); ++i) {
    const test::SvgElement& e = svg.elements[i];
    if (e.name != QStringLiteral("image")) continue;
    ASSERT_LT(heatmap, metrics.size());
    // The bar follows the image: a rect filled with its gradient, then the two end values.
    ColourBar bar;
    size_t j = i + 1;
    while (j < svg.elements.size() && !svg.elements[j].fill.startsWith(QStringLiteral("url(#")))
      ++j;
    ASSERT_LT(j + 2, svg.elements.size());
    const QString id = svg.elements[j].fill.mid(5).chopped(1);
    bar.stops = grads.at(id);
    bar.lo = svg.elements[j + 1].text.toDouble();
    bar.hi = svg.elements[j + 2].text.toDouble();
    ASSERT_GT(bar.hi, bar.lo);
    const QByteArray png = QByteArray::fromBase64(e.href.section(QLatin1Char(','), 1).toLatin1());
    const QImage img = QImage::fromData(png);
    ASSERT_EQ(static_cast<size_t>(img.height()), run->gpus().size());
    const double tol = 0.05 * (bar.hi - bar.lo);
    int bad = 0;
    for (const GpuInfo& g : run->gpus()) {
      const Samples smp =
          run->readAllSamples(SeriesKind::Gpu, static_cast<size_t>(g.id), metrics[heatmap]);
      for (int col = 0; col < img.width(); col += 7) {
        // The finest pyramid buckets (docs/format.md) under the column, and one either side (a
        // bucket that ends on a column's edge colours that column too).
        const auto edge = [&](int c) {
          return run->info().start_ns +
                 static_cast<int64_t>(std::llround(1e9 * span * c / img.width()));
        };
        const int64_t w0 = grid.widths_ns[0];
        const int64_t a = grid.bucketStart(0, grid.bucketOf(0, edge(col))) - w0;
        const int64_t b = grid.bucketStart(0, grid.bucketOf(0, edge(col + 1) - 1)) + 2 * w0;
        double lo = 1e300, hi = -1e300;
        for (size_t k = 0; k < smp.t_ns.size(); ++k)
          if (smp.t_ns[k] >= a && smp.t_ns[k] < b && std::isfinite(smp.v[k]))
            lo = std::min(lo, smp.v[k]), hi = std::max(hi, smp.v[k]);
        if (lo > hi) continue;  // no sample in the column
        // Values beyond the bar's ends take the end's colour.
        lo = std::clamp(lo, bar.lo, bar.hi), hi = std::clamp(hi, bar.lo, bar.hi);
        const QColor px = img.pixelColor(col, g.id);
        if (px == QColor(Qt::white)) {  // no data (a gap): the background shows through
          ++blank;
          continue;
        }
        const double v = bar.value(px);
        ++checked;
        if ((v < lo - tol || v > hi + tol) && bad++ < 5)
          ADD_FAILURE() << metrics[heatmap] << " GPU " << g.id << " column " << col << ": colour "
                        << v << ", samples " << lo << " to " << hi;
      }
    }
    ++heatmap;
  }
  EXPECT_EQ(heatmap, metrics.size());
  EXPECT_GT(checked, 500u);
  EXPECT_LT(blank, checked / 10) << "cells without data";
}

// The SVG goldens whose names start with prefix.
std::vector<GoldenCase> svgCasesStarting(const std::string& prefix) {
  std::vector<GoldenCase> out;
  for (const GoldenCase& c : readManifest())
    if (c.name.rfind(prefix, 0) == 0 && c.name.ends_with(".svg")) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Samples, GoldenHeatmap, ::testing::ValuesIn(svgCasesStarting("heatmap-")),
                         caseName);

// The zoomed timeline golden (one second of the README's sample, GPUs 0 and 1), read back: the
// top of each power row's envelope, through the row's value axis (its ticks and their labels), is
// the GPU's highest power sample of that second (or of the samples just outside it, which the
// line reaches at the edges), within a pixel.
TEST(GoldenTimeline, ZoomedPowerRowsPeakAtTheSamplesMaximum) {
  GoldenCase c;
  for (const GoldenCase& k : readManifest())
    if (k.name == "timeline-mbs4-zoom.svg") c = k;
  ASSERT_FALSE(c.name.empty()) << "timeline-mbs4-zoom.svg is not in " << kManifest;
  test::TempDir dir;
  const std::string file = (dir.path() / c.name).string();
  const std::vector<std::string> argv = words(replaceAll(
      replaceAll(c.args, "{S}", WATTLINE_SOURCE_DIR "/resources/samples"), "{OUT}", file));
  ASSERT_EQ(test::runWattline(argv).exitCode, 0);
  auto option = [&](const std::string& name) {
    const auto it = std::find(argv.begin(), argv.end(), name);
    return it != argv.end() && it + 1 != argv.end() ? *(it + 1) : std::string();
  };
  ASSERT_EQ(option("--range"), "130s:131s");
  ASSERT_EQ(option("--gpus"), "0,1");
  const test::SvgDocument svg = test::parseSvg(QByteArray::fromStdString(test::readFile(file)));
  ASSERT_TRUE(svg.ok);
  const auto run = RunFile::open(argv[1]);
  const int64_t t0 = run->info().start_ns + 130 * 1000000000LL, t1 = t0 + 1000000000LL;

  size_t row = 0, last = 0;  // element index after the previous row's label
  for (size_t i = 0; i < svg.elements.size(); ++i) {
    const test::SvgElement& label = svg.elements[i];
    if (label.name != QStringLiteral("text") || label.text != QStringLiteral("Power (W)")) continue;
    // The row's elements come before its label: its envelope (the translucent band), then its
    // value axis (4 px ticks, each with its label).
    size_t bandAt = i;
    for (size_t k = last; k < i; ++k) {
      const test::SvgElement& e = svg.elements[k];
      if (e.name == QStringLiteral("path") && e.fill != QStringLiteral("none") && e.fillOpacity < 1)
        bandAt = k;
    }
    const test::SvgElement* band = bandAt < i ? &svg.elements[bandAt] : nullptr;
    std::vector<double> ticks;
    std::vector<std::pair<double, double>> values;  // (y, value)
    for (size_t k = bandAt + 1; k < i; ++k) {
      const test::SvgElement& e = svg.elements[k];
      if (e.name == QStringLiteral("polyline")) {
        const auto pts = test::pathPoints(e.d);
        if (pts.size() == 1 && pts[0].size() == 2 && pts[0][0].y() == pts[0][1].y() &&
            std::fabs(std::fabs(pts[0][1].x() - pts[0][0].x()) - 4) < 0.01)
          ticks.push_back(pts[0][0].y());
      }
      bool ok = false;
      const double v = e.text.toDouble(&ok);
      if (e.name == QStringLiteral("text") && ok) values.emplace_back(e.y, v);
    }
    last = i + 1;
    ASSERT_NE(band, nullptr) << "power row " << row;
    ASSERT_GE(ticks.size(), 2u);
    ASSERT_EQ(ticks.size(), values.size());
    std::sort(ticks.begin(), ticks.end());
    std::sort(values.begin(), values.end());
    const double perPx = (values.front().second - values.back().second) /
                         (ticks.back() - ticks.front());  // W per pixel (y grows down)
    auto valueAt = [&](double y) { return values.back().second + (ticks.back() - y) * perPx; };
    double top = 1e300;
    for (const auto& sub : test::pathPoints(band->d))
      for (const QPointF& p : sub)
        top = std::min(top, p.y());

    const Samples p = run->readAllSamples(SeriesKind::Gpu, row, "power_w");
    double inside = -1e300, reach = -1e300;
    for (size_t k = 0; k < p.t_ns.size(); ++k) {
      const bool in = p.t_ns[k] >= t0 && p.t_ns[k] < t1;
      const bool edge = (k + 1 < p.t_ns.size() && p.t_ns[k + 1] >= t0 && p.t_ns[k] < t0) ||
                        (k > 0 && p.t_ns[k - 1] < t1 && p.t_ns[k] >= t1);
      if (in) inside = std::max(inside, p.v[k]);
      if (in || edge) reach = std::max(reach, p.v[k]);
    }
    EXPECT_GE(valueAt(top), inside - perPx) << "GPU " << row;
    EXPECT_LE(valueAt(top), reach + perPx) << "GPU " << row;
    ++row;
  }
  EXPECT_EQ(row, 2u);
}

TEST(GoldenManifest, ListsTheSamplesAndEveryTimelineView) {
  const std::vector<GoldenCase> cases = readManifest();
  ASSERT_GE(cases.size(), 10u) << kManifest;
  bool timeline = false, heatmap = false, compare = false;
  for (const GoldenCase& c : cases) {
    EXPECT_EQ(c.sha256.size(), 64u) << c.name << ": run scripts/update-golden.sh";
    timeline = timeline || c.args.find("--view timeline") != std::string::npos;
    heatmap = heatmap || c.args.find("--view heatmap") != std::string::npos;
    compare = compare || c.args.find("--view compare") != std::string::npos;
  }
  EXPECT_TRUE(timeline && heatmap && compare);
}

}  // namespace
}  // namespace wl
