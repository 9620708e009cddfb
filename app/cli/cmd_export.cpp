// SPDX-License-Identifier: GPL-3.0-or-later
// wattline export RUN.h5 [--compare OTHER.h5] --view NAME [--range START:END] [--gpus LIST]
//   [--metrics LIST] [--align warp|iteration|start|absolute] [--layout paired|overlay|stacked]
//   -o FILE.png|.svg|.pdf [--width N --height N --dpi N --theme T] [--no-caption]
// wattline export RUN.h5 --format perfetto [--range START:END] [--gpus LIST] -o FILE.json[.gz]
// wattline export --view-file VIEW.json [--view NAME] -o FILE.png|.svg|.pdf [--width ...]
#include <QApplication>
#include <QFileInfo>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "analysis/chrome_trace_export.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/range_args.h"
#include "loaders/core/error.h"
#include "loaders/core/temp_files.h"
#include "loaders/format/run_file.h"
#include "widgets/export/export_views.h"
#include "widgets/export/figure.h"
#include "widgets/export/figure_view.h"
#include "widgets/viewfile/view_runs.h"
#include "widgets/viewfile/view_scene.h"
#include "widgets/viewfile/view_state.h"

namespace wl::cli {
namespace {

// Drawing text and Qt Charts needs a QApplication; a headless command must not need a display,
// so it runs on the offscreen platform whatever QT_QPA_PLATFORM says (fonts come from
// fontconfig: DejaVu Sans from fonts-dejavu-core). Qt's warnings are not the command's output.
class HeadlessApp {
 public:
  HeadlessApp() {
    if (QCoreApplication::instance()) return;
    qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
      if (type == QtCriticalMsg || type == QtFatalMsg)
        std::fprintf(stderr, "wattline export: Qt: %s\n", msg.toLocal8Bit().constData());
    });
    app_ = std::make_unique<QApplication>(argc_, argv_);
  }

 private:
  static inline int argc_ = 1;
  static inline char arg0_[] = "wattline";
  static inline char* argv_[] = {arg0_, nullptr};
  std::unique_ptr<QApplication> app_;
};

// "1600", "1600px", "17cm", "6.5in" -> pixels at `dpi`.
double parseLength(const std::string& option, const std::string& text, double dpi) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  const std::string unit = used > 0 ? text.substr(used) : "";
  const auto u = unit.empty() ? std::optional<SizeUnit>(SizeUnit::Pixels)
                              : sizeUnitFromName(QString::fromStdString(unit));
  if (used == 0 || !u || !std::isfinite(v) || v <= 0)
    throw UsageError(
        fmt::format("--{} expects a positive length in px, cm or in (1600, 17cm, 6.5in), got '{}'",
                    option, text));
  switch (*u) {
    case SizeUnit::Pixels:
      return v;
    case SizeUnit::Centimetres:
      return v / 2.54 * dpi;
    case SizeUnit::Inches:
      return v * dpi;
  }
  return v;
}

std::string viewList() {
  std::string s;
  for (const ExportView& v : exportViews())
    s += fmt::format("{}{}", s.empty() ? "" : "|", v.name);
  return s;
}

std::string viewHelp() {
  std::string s = "what to draw:";
  for (const ExportView& v : exportViews())
    s += fmt::format("\n{:<27}{:<10} {}", "", v.name, v.summary);
  return s;
}

// The values of --view, --theme, --align and --layout, from the tables that parse them.
void defineChoices(ArgParser& p) {
  std::vector<std::string> views, themes, layouts;
  for (const ExportView& v : exportViews())
    views.emplace_back(v.name);
  for (FigureTheme t : {FigureTheme::Screen, FigureTheme::Publication})
    themes.push_back(figureThemeName(t).toStdString());
  for (CompareLayout l : {CompareLayout::Paired, CompareLayout::Overlay, CompareLayout::Stacked})
    layouts.push_back(compareLayoutName(l).toStdString());
  p.choices("format", {"figure", "perfetto"})
      .choices("view", std::move(views))
      .choices("theme", std::move(themes))
      .choices("align", alignModeNames())
      .choices("layout", std::move(layouts));
}

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --format perfetto: the run as a Chrome trace event JSON file (analysis/chrome_trace_export.h).
int exportPerfetto(const ArgParser& p) {
  for (const char* option : {"view", "compare", "metrics", "width", "height", "dpi", "theme",
                             "align", "layout", "no-caption"})
    if (p.has(option))
      throw UsageError(fmt::format("--{} does not apply to --format perfetto", option));
  const auto output = p.value("output");
  if (!output) throw UsageError("-o FILE.json|.json.gz is required");
  if (!endsWith(*output, ".json") && !endsWith(*output, ".json.gz"))
    throw UsageError(fmt::format("-o: '{}' does not end in .json or .json.gz", *output));
  if (p.has("range")) checkRangeSyntax(*p.value("range"));
  ChromeTraceOptions options;
  if (auto v = p.value("gpus")) options.gpus = parseIndexList("gpus", *v);

  const auto run = RunFile::open(p.positional().front());
  if (auto r = p.value("range")) options.range = parseRunRange(*r, run->info().start_ns);
  if (options.range.t0 >= run->info().end_ns || options.range.t1 <= run->info().start_ns)
    throw Error(fmt::format("{}: --range {} is outside the run ({:.1f} s long)",
                            run->path().string(), *p.value("range"),
                            static_cast<double>(run->info().end_ns - run->info().start_ns) / 1e9));
  const ChromeTraceSummary s = writeChromeTrace(*run, *output, options);
  std::printf(
      "wrote %s: Chrome trace JSON%s, %zu ranks, %zu GPUs, %llu kernels, %llu iterations, %llu "
      "counter samples, %llu throttle intervals, %lld bytes\n",
      output->c_str(), s.gzip ? " (gzip)" : "", s.ranks, s.gpus,
      static_cast<unsigned long long>(s.kernels), static_cast<unsigned long long>(s.iterations),
      static_cast<unsigned long long>(s.counterEvents),
      static_cast<unsigned long long>(s.throttleIntervals),
      static_cast<long long>(std::filesystem::file_size(*output)));
  return 0;
}

// The figure options of the command line: format (from -o), caption, theme, size and DPI.
struct SizeArgs {
  FigureOptions options;
  double width = 1600, dpi = 96;
  std::optional<double> height;
};

SizeArgs sizeArgs(const ArgParser& p) {
  const auto output = p.value("output");
  if (!output) throw UsageError("-o FILE.png|.svg|.pdf is required");
  const auto format = figureFormatFromPath(QString::fromStdString(*output));
  if (!format)
    throw UsageError(fmt::format("-o: '{}' does not end in .png, .svg or .pdf", *output));
  SizeArgs a;
  a.options.format = *format;
  a.options.caption = !p.has("no-caption");
  if (auto t = p.value("theme")) {
    const auto theme = figureThemeFromName(QString::fromStdString(*t));
    if (!theme)
      throw UsageError(fmt::format("--theme expects screen or publication, got '{}'", *t));
    a.options.theme = *theme;
  }
  double dpi = 96;
  if (auto d = p.doubleValue("dpi")) {
    if (!std::isfinite(*d) || *d < 10 || *d > 2400)
      throw UsageError(fmt::format("--dpi expects 10 to 2400, got '{}'", *p.value("dpi")));
    dpi = *d;
  }
  a.dpi = dpi;
  a.width = p.has("width") ? parseLength("width", *p.value("width"), dpi) : 1600.0 * dpi / 96.0;
  if (p.has("height")) a.height = parseLength("height", *p.value("height"), dpi);
  return a;
}

// Sizes the figure as asked (its preferred height for the width when no --height), writes it
// and says what it wrote.
void writeExport(const ArgParser& p, SizeArgs a, Figure& figure, std::string_view viewName,
                 const QByteArray& viewJson = {}) {
  const std::string output = *p.value("output");
  FigureOptions& options = a.options;
  const double dpi = a.dpi, width = a.width;
  const std::optional<double> height = a.height;
  FigureSize size{width, height.value_or(0), SizeUnit::Pixels, dpi};
  if (!height) {
    const double logicalW = width / dpi * 96.0;
    const double logicalH = figure.preferredSize(logicalW).height();
    size.height =
        std::clamp(std::ceil(logicalH * dpi / 96.0), 16.0, static_cast<double>(kMaxFigurePixels));
  }
  options.size = size;
  validateFigureSize(options.size);
  {
    // QSaveFile's temporary file has no name we could remove on a signal: let it finish first.
    const DeferInterrupts whileWriting;
    writeFigureWithView(figure, options, QString::fromStdString(output), viewJson);
  }
  const QSize px = options.size.pixels();
  const QSizeF in = options.size.inches();
  std::printf("wrote %s: %s %s, %d x %d px at %g dpi (%.1f x %.1f cm), %lld bytes\n",
              output.c_str(), std::string(viewName).c_str(),
              figureFormatName(options.format).toUpper().toStdString().c_str(), px.width(),
              px.height(), dpi, in.width() * 2.54, in.height() * 2.54,
              static_cast<long long>(QFileInfo(QString::fromStdString(output)).size()));
}

// --view-file: the view's runs, checked against their hashes, drawn as the GUI draws them (or
// as the export view --view NAME draws the view's request).
int exportViewFile(const ArgParser& p) {
  for (const char* option : {"format", "compare", "range", "gpus", "metrics", "align", "layout"})
    if (p.has(option))
      throw UsageError(
          fmt::format("--{} does not apply to --view-file (the view sets it)", option));
  if (!p.positional().empty())
    throw UsageError(fmt::format("--view-file takes no run ('{}'): the view names its runs",
                                 p.positional().front()));
  const ExportView* view = nullptr;
  if (auto name = p.value("view")) {
    view = findExportView(*name);
    if (!view)
      throw UsageError(fmt::format("--view: unknown view '{}' (expected {})", *name, viewList()));
  }
  const SizeArgs size = sizeArgs(p);
  const QString file = QString::fromStdString(*p.value("view-file"));
  const ViewState state = readViewFile(file);
  const std::vector<ResolvedRun> resolved = resolveViewRuns(state, QFileInfo(file).absolutePath());
  bool missing = false;
  for (const ResolvedRun& r : resolved)
    if (const QString problem = resolveProblem(r, file); !problem.isEmpty()) {
      std::fprintf(stderr, "wattline export: %s\n", problem.toLocal8Bit().constData());
      missing = true;
    }
  if (missing) return 2;
  OpenRuns runs;
  for (const ResolvedRun& r : resolved)
    runs.push_back(RunFile::open(r.path.toStdString()));

  HeadlessApp app;
  if (!view) {
    ViewFigure figure(runs, state);
    // The figure carries its view, its runs relative to the figure's folder.
    ViewState carried = state;
    const QString folder = QFileInfo(QString::fromStdString(*p.value("output"))).absolutePath();
    for (size_t i = 0; i < resolved.size(); ++i)
      carried.runs[i].path = viewRunPath(resolved[i].path, folder);
    writeExport(p, size, figure.figure(), "view", viewToJson(carried, true));
    return 0;
  }
  const ExportRequest rq = viewExportRequest(runs, state, view->name);
  if (!rq.compare && (view->uses & ExportView::kNeedsCompare))
    throw UsageError(fmt::format("--view {} needs a view of two runs", view->name));
  if (rq.compare && !(view->uses & ExportView::kNeedsCompare))
    throw UsageError(fmt::format("--view {} draws one run: the view compares two", view->name));
  std::unique_ptr<Figure> figure = view->make(rq);
  writeExport(p, size, *figure, view->name);
  return 0;
}

}  // namespace

int cmdExport(const Args& rawArgs) {
  Args args;
  for (const std::string& a : rawArgs)
    args.push_back(a == "-o" ? "--output" : a);
  ArgParser p("export",
              "Write a figure of a run (a timeline, a heatmap or an analysis chart) as PNG, SVG or "
              "PDF, with no display needed (docs/export.md). The format follows the output's "
              "extension. With --format perfetto, write the run's kernels, iterations, counters "
              "and throttle intervals as a Chrome trace JSON file for Perfetto instead.");
  p.option("format", "figure|perfetto",
           "figure (the default: PNG, SVG or PDF by the extension) or perfetto: a Chrome trace "
           "event JSON file (-o RUN.json or RUN.json.gz) that Perfetto's UI opens; takes --range "
           "and --gpus only")
      .option("view", viewList(), viewHelp())
      .option("output", "FILE",
              "the file to write: .png, .svg or .pdf; .json or .json.gz with --format perfetto "
              "(also -o)")
      .option("compare", "OTHER.h5", "a second run (compare and pareto views)")
      .option("range", "START:END",
              "only [START, END): durations after the run start (10s:25.5s, 1m:2m, bare "
              "seconds) or absolute times in ns; either side may be empty")
      .option("gpus", "LIST", "these GPUs (0,2,4-7); timeline default: the first node, up to 8")
      .option("metrics", "LIST",
              "metric ids (power_w,temp_c,...); timeline also 'kernels' and 'steps'; default: "
              "power_w,temp_c,sm_clock_mhz,kernels (timeline), temp_c (heatmap)")
      .option("width", "N", "width in px, cm or in (1600, 17cm, 6.5in); default 1600 px at 96 dpi")
      .option("height", "N", "height in px, cm or in; default: what the view needs at that width")
      .option("dpi", "N", "pixels per inch: turns cm and in into pixels, sets fonts' size (96)")
      .option("theme", "screen|publication", "colours and fonts (default publication)")
      .option("align", "warp|iteration|start|absolute",
              "compare: how B is placed on A's clock (default warp when both runs have "
              "iterations, else start)")
      .option("layout", "paired|overlay|stacked",
              "compare: GPU k of A, of B and A - B per metric (paired, the default); A and B in "
              "one track (overlay); all of A, all of B, then A - B (stacked)")
      .flag("no-caption", "leave out the caption (run name, configuration, range)")
      .option("view-file", "VIEW.json",
              "draw a view saved by the GUI (File > Save View, a copied view in a file, or a PNG, "
              "SVG or PDF figure drawn from a view, which carries it; "
              "docs/format.md#view-files) instead of RUN.h5: the timeline as File > Export "
              "Timeline draws it, or with --view the view's runs, range, GPUs, metrics and "
              "comparison in that view; exit code 2 when one of its runs is missing or changed")
      .positionals("RUN.h5", "a Wattline run (not with --view-file)", 0, 1);
  defineChoices(p);
  if (!p.parse(args)) return 0;
  if (p.has("view-file")) return exportViewFile(p);
  if (p.positional().empty()) throw UsageError("RUN.h5 is required (or --view-file VIEW.json)");

  if (auto f = p.value("format")) {
    if (*f == "perfetto") return exportPerfetto(p);
    if (*f != "figure")
      throw UsageError(
          fmt::format("--format: unknown format '{}' (expected figure or perfetto)", *f));
  }
  const auto viewName = p.value("view");
  if (!viewName) throw UsageError(fmt::format("--view is required ({})", viewList()));
  const ExportView* view = findExportView(*viewName);
  if (!view)
    throw UsageError(fmt::format("--view: unknown view '{}' (expected {})", *viewName, viewList()));
  const SizeArgs size = sizeArgs(p);
  auto rejectUnused = [&](const char* option, unsigned use) {
    if (p.has(option) && !(view->uses & use))
      throw UsageError(fmt::format("--{} does not apply to --view {}", option, view->name));
  };
  rejectUnused("range", ExportView::kUsesRange);
  rejectUnused("gpus", ExportView::kUsesGpus);
  rejectUnused("metrics", ExportView::kUsesMetrics);
  rejectUnused("align", ExportView::kUsesAlign);
  rejectUnused("layout", ExportView::kUsesAlign);
  if (p.has("compare") && !(view->uses & ExportView::kNeedsCompare))
    throw UsageError(fmt::format("--compare does not apply to --view {}", view->name));
  if (!p.has("compare") && (view->uses & ExportView::kNeedsCompare))
    throw UsageError(fmt::format("--view {} needs --compare OTHER.h5", view->name));
  if (p.has("range")) checkRangeSyntax(*p.value("range"));
  std::vector<int> gpus;
  if (auto v = p.value("gpus")) gpus = parseIndexList("gpus", *v);
  std::vector<std::string> metrics;
  if (auto v = p.value("metrics")) metrics = parseNameList("metrics", *v);

  ExportRequest rq;
  rq.run = RunFile::open(p.positional().front());
  if (auto c = p.value("compare")) rq.compare = RunFile::open(*c);
  if (auto r = p.value("range")) rq.range = parseRunRange(*r, rq.run->info().start_ns);
  rq.gpus = gpus;
  rq.metrics = metrics;
  if (auto v = p.value("align")) {
    rq.align = alignModeFromName(*v);
    if (!rq.align)
      throw UsageError(
          fmt::format("--align expects warp, iteration, start or absolute, got '{}'", *v));
  }
  if (auto v = p.value("layout")) {
    rq.layout = compareLayoutFromName(QString::fromStdString(*v));
    if (!rq.layout)
      throw UsageError(fmt::format("--layout expects paired, overlay or stacked, got '{}'", *v));
  }

  HeadlessApp app;
  std::unique_ptr<Figure> figure = view->make(rq);
  writeExport(p, size, *figure, view->name);
  return 0;
}

}  // namespace wl::cli
