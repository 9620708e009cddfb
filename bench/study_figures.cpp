// SPDX-License-Identifier: GPL-3.0-or-later
// The study figures of docs/compare.md ("The study of the whole matrix"), drawn from a folder of
// simulated runs (bench/study_sweep.sh) with the same library calls as the GUI's study view:
// loadStudy (summary cache beside the runs), makeStudyChart, writeFigure.
//
// Usage: QT_QPA_PLATFORM=offscreen ./build/bench/study_figures STUDY_DIR OUT_DIR [CACHE_DIR]
// (CACHE_DIR: where the summary cache goes; default beside the runs)
#include <QApplication>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "analysis/study/study.h"
#include "widgets/export/chart_figure.h"
#include "widgets/export/figure.h"
#include "widgets/charts/study_charts.h"

namespace {

// The runs whose file path contains every one of `parts`, in study order.
std::vector<size_t> select(const wl::Study& study, const std::vector<std::string>& parts) {
  std::vector<size_t> out;
  for (size_t i = 0; i < study.runs.size(); ++i) {
    const std::string path = study.runs[i].summary.path;
    bool all = true;
    for (const std::string& p : parts)
      all = all && path.find(p) != std::string::npos;
    if (all) out.push_back(i);
  }
  return out;
}

void draw(const wl::Study& study, const std::vector<size_t>& runs, wl::StudyChart kind,
          const QString& title, const QString& path, double width = 1400, double height = 700,
          const wl::StudyChartOptions& options = {}) {
  wl::ChartFigure fig({wl::makeStudyChart(study, runs, kind, options)}, QStringLiteral("study"));
  fig.captionTitle = title;
  fig.captionDetail = QStringLiteral("%1 simulated runs (bench/study_sweep.sh)").arg(runs.size());
  wl::FigureOptions o;
  o.size.width = width, o.size.height = height;
  wl::writeFigure(fig, o, path);
  std::printf("%s: %zu runs\n", path.toUtf8().constData(), runs.size());
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: study_figures STUDY_DIR OUT_DIR [CACHE_DIR]\n");
    return 2;
  }
  try {
    wl::StudyLoadOptions o;
    o.threads = 2;
    if (argc == 4) o.cache.dir = argv[3];
    const wl::Study study = wl::loadStudy(wl::expandRunPaths({argv[1]}), o);
    const QString out = QString::fromLocal8Bit(argv[2]) + QStringLiteral("/");
    draw(
        study, select(study, {"sweep", "--llama3-70b"}), wl::StudyChart::Pareto,
        QStringLiteral("Llama3-70B pre-training, every sweep: throughput against energy per token"),
        out + "study-pareto-llama3-70b.png", 1200, 800);
    // Pre-training sweeps only: the inference and LoRA sweeps run on the H200s alone.
    draw(study, select(study, {"sweep"}), wl::StudyChart::ScaleUpVsOut,
         QStringLiteral("Pre-training: scale-up (4 x 8 H200) against scale-out (8 x 8 H100), best "
                        "run per model"),
         out + "study-scale.png", 1200, 600);
    const auto mbs = select(study, {"microbatch-sweep-h200--llama3-70b"});
    draw(study, mbs, wl::StudyChart::TemperatureBars,
         QStringLiteral("Llama3-70B microbatch sweep on 32 H200: temperature and efficiency"),
         out + "study-mbs-llama3-70b-temp.png");
    draw(study, mbs, wl::StudyChart::Heatmap,
         QStringLiteral("Llama3-70B microbatch sweep on 32 H200: mean temperature per GPU"),
         out + "study-mbs-llama3-70b-heatmap.png", 1400, 900);
    const auto opt = select(study, {"optimization-sweep-h100--gpt3"});
    draw(study, opt, wl::StudyChart::CategoriesByConfig,
         QStringLiteral("GPT-3 175B optimization sweep on 64 H100: kernel time by category"),
         out + "study-opt-gpt3-categories.png");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "study_figures: %s\n", e.what());
    return 1;
  }
  return 0;
}
