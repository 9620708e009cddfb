// SPDX-License-Identifier: GPL-3.0-or-later
// `wattline export` run as a process with DISPLAY and QT_QPA_PLATFORM unset (as scripts and CI
// run it): every view in every format, sizes in cm at a DPI, the real nanoGPT capture, and the
// exit codes: 2 with the usage hint for bad usage, 1 with one line for a bad file.
#include <gtest/gtest.h>

#include <QImage>

#include <algorithm>
#include <fstream>

#include "export_test_run.h"
#include "support/read_file.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "svg_util.h"

namespace wl {
namespace {

class ExportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = new test::TempDir();
    runPath = (dir->path() / "run.h5").string();
    test::writeExportTestRun(runPath);
  }
  static void TearDownTestSuite() { delete dir; }
  static std::string out(const std::string& name) { return (dir->path() / name).string(); }
  static std::string head(const std::string& path, size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string s(n, '\0');
    in.read(s.data(), static_cast<std::streamsize>(n));
    s.resize(static_cast<size_t>(in.gcount()));
    return s;
  }
  static size_t lines(const std::string& s) {
    return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
  }
  static test::TempDir* dir;
  static std::string runPath;
};

test::TempDir* ExportCli::dir = nullptr;
std::string ExportCli::runPath;

TEST_F(ExportCli, EveryViewInEveryFormatHeadless) {
  for (const char* view : {"timeline", "heatmap", "summary", "breakdown", "throttle", "histogram"})
    for (const char* ext : {"png", "svg", "pdf"}) {
      const std::string file = out(std::string(view) + "." + ext);
      const auto r = test::runWattline({"export", runPath, "--view", view, "-o", file});
      ASSERT_EQ(r.exitCode, 0) << view << "." << ext << ": " << r.err;
      EXPECT_NE(r.out.find("wrote " + file), std::string::npos) << r.out;
      const std::string magic = head(file, 5);
      const std::string expected = std::string(ext) == "png"   ? "\x89PNG\r"
                                   : std::string(ext) == "svg" ? "<?xml"
                                                               : "%PDF-";
      EXPECT_EQ(magic, expected) << view << "." << ext;
    }
}

TEST_F(ExportCli, SizesInCentimetresAtADpiAndAScreenTheme) {
  const std::string file = out("cm.png");
  const auto r = test::runWattline(
      {"export",    runPath,           "--view",  "timeline", "--width",      "17cm",   "--height",
       "8cm",       "--dpi",           "300",     "--theme",  "screen",       "--gpus", "1",
       "--metrics", "power_w,kernels", "--range", "10s:2m",   "--no-caption", "-o",     file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const QImage img(QString::fromStdString(file));
  EXPECT_EQ(img.size(), QSize(2008, 945));  // 17 / 2.54 * 300, 8 / 2.54 * 300
  EXPECT_NE(r.out.find("17.0 x 8.0 cm"), std::string::npos) << r.out;
}

TEST_F(ExportCli, RealNanoGptCaptureExportsHeadless) {
  // The real 8-GPU nvidia-smi capture of a nanoGPT run (tests/data/SOURCES.md), imported.
  const std::string run = out("nanogpt.h5");
  const auto imp = test::runWattline(
      {"import",
       std::string(WATTLINE_TEST_DATA) + "/telemetry/nanogpt-8gpu-h100class-nvidia-smi.csv.gz",
       "-o", run});
  ASSERT_EQ(imp.exitCode, 0) << imp.err;
  const std::string svgPath = out("nanogpt.svg");
  const auto r = test::runWattline({"export", run, "--view", "timeline", "--gpus", "0-7",
                                    "--metrics", "power_w", "-o", svgPath});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const test::SvgDocument svg = test::parseSvg(QByteArray::fromStdString(test::readFile(svgPath)));
  ASSERT_TRUE(svg.ok);
  EXPECT_TRUE(svg.hasText(QStringLiteral("Power (W)")));
  EXPECT_TRUE(svg.hasText(QStringLiteral("GPU 7")));
  // One power series per GPU: 780 samples over ~1400 px are drawn as sample lines (stroked, not
  // filled); denser data would be min-max bands (filled and stroked).
  const QString orange = QStringLiteral("#e08e0b");
  EXPECT_EQ(svg.shapes(QStringLiteral("none"), orange).size() + svg.shapes(orange, orange).size(),
            8u);
  const std::string heat = out("nanogpt-heat.pdf");
  EXPECT_EQ(test::runWattline(
                {"export", run, "--view", "heatmap", "--metrics", "power_w,temp_c", "-o", heat})
                .exitCode,
            0);
}

TEST_F(ExportCli, BadUsageExitsTwoWithTheUsageHint) {
  const std::string png = out("u.png");
  const std::vector<std::vector<std::string>> cases = {
      {"export", runPath, "-o", png},                                         // no --view
      {"export", runPath, "--view", "sideways", "-o", png},                   // unknown view
      {"export", runPath, "--view", "timeline"},                              // no -o
      {"export", runPath, "--view", "timeline", "-o", out("u.jpg")},          // unknown format
      {"export", runPath, "--view", "heatmap", "--gpus", "0", "-o", png},     // not for heatmap
      {"export", runPath, "--view", "summary", "--metrics", "x", "-o", png},  // not for summary
      {"export", runPath, "--view", "timeline", "--dpi", "abc", "-o", png},
      {"export", runPath, "--view", "timeline", "--dpi", "5", "-o", png},
      {"export", runPath, "--view", "timeline", "--width", "-5", "-o", png},
      {"export", runPath, "--view", "timeline", "--width", "10furlongs", "-o", png},
      {"export", runPath, "--view", "timeline", "--theme", "purple", "-o", png},
      {"export", runPath, "--view", "timeline", "--range", "10s", "-o", png},
      {"export", runPath, "--view", "timeline", "--range", "20s:10s", "-o", png},
      {"export", runPath, "--view", "timeline", "--gpus", "0,,1", "-o", png},
      {"export", runPath, "--view", "timeline", "--compare", runPath, "-o", png},
      {"export", runPath, "--view", "compare", "-o", png},            // needs --compare
      {"export", runPath, runPath, "--view", "timeline", "-o", png},  // two runs
      {"export", "--view", "timeline", "-o", png},                    // no run
  };
  for (const auto& args : cases) {
    const auto r = test::runWattline(args);
    std::string line;
    for (const auto& a : args)
      line += a + " ";
    EXPECT_EQ(r.exitCode, 2) << line << "\n" << r.err;
    EXPECT_NE(r.err.find("see 'wattline export --help'"), std::string::npos) << line << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST_F(ExportCli, BadFilesExitOneWithOneLine) {
  const std::string notRun = out("not-a-run.h5");
  std::ofstream(notRun) << "this is not HDF5\n";
  const std::string png = out("b.png");
  const std::vector<std::vector<std::string>> cases = {
      {"export", out("missing.h5"), "--view", "timeline", "-o", png},
      {"export", notRun, "--view", "timeline", "-o", png},
      {"export", runPath, "--view", "timeline", "--gpus", "9", "-o", png},
      {"export", runPath, "--view", "timeline", "--metrics", "no_such_metric", "-o", png},
      {"export", runPath, "--view", "timeline", "--range", "2h:3h", "-o", png},
      {"export", runPath, "--view", "compare", "--compare", out("missing.h5"), "-o", png},
      {"export", runPath, "--view", "compare", "--compare", runPath, "--metrics", "nope", "-o",
       png},
      {"export", runPath, "--view", "timeline", "-o", out("no/such/folder/x.png")},
  };
  for (const auto& args : cases) {
    const auto r = test::runWattline(args);
    std::string line;
    for (const auto& a : args)
      line += a + " ";
    EXPECT_EQ(r.exitCode, 1) << line << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << line << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("wattline export: ", 0), 0u) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST_F(ExportCli, ComparisonViewsHeadless) {
  for (const char* view : {"compare", "pareto"}) {
    const std::string file = out(std::string(view) + ".pdf");
    const auto r =
        test::runWattline({"export", runPath, "--view", view, "--compare", runPath, "-o", file});
    EXPECT_EQ(r.exitCode, 0) << view << ": " << r.err;
    EXPECT_GT(std::filesystem::file_size(file), 1000u) << view;
  }
  // No summary cache is left beside the runs by an export.
  EXPECT_FALSE(std::filesystem::exists(runPath + ".summary.json"));
}

TEST_F(ExportCli, HelpListsTheViews) {
  const auto r = test::runWattline({"export", "--help"});
  EXPECT_EQ(r.exitCode, 0);
  for (const char* v : {"timeline", "heatmap", "summary", "breakdown", "throttle", "compare",
                        "pareto", "--width", "--dpi", "--theme"})
    EXPECT_NE(r.out.find(v), std::string::npos) << v;
  const auto top = test::runWattline({"--help"});
  EXPECT_NE(top.out.find("export"), std::string::npos);
}

}  // namespace
}  // namespace wl
