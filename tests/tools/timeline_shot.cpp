// SPDX-License-Identifier: GPL-3.0-or-later
// Screenshots of the main window for the user guide (docs/img), without a display or a mouse:
//   timeline_shot RUN.h5 OUT.png [--range FROM TO] [--throttle-heatmap] [--dark] [--size W H]
//                 [--scroll GPU]
// FROM / TO are seconds from the run's start. The window opens the run as a user would, waits
// until its tiles and its throttle analysis are in, applies the choices through the menus' own
// actions, and grabs itself.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QSettings>
#include <QThread>

#include <cstdio>
#include <string>

#include "app/gui/main_window.h"
#include "widgets/timeline/view/timeline_page.h"

namespace {

void settle(wl::MainWindow& w, int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(10);
  }
  for (int i = 0; i < 500 && w.timeline()->store()->pending() > 0; ++i) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(10);
  }
  QCoreApplication::processEvents();
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("WattlineShots");
  QApplication::setApplicationName("WattlineShots");
  if (argc < 3) {
    std::fprintf(stderr, "usage: timeline_shot RUN.h5 OUT.png [options]\n");
    return 2;
  }
  const QString run = QString::fromLocal8Bit(argv[1]), out = QString::fromLocal8Bit(argv[2]);
  double from = -1, to = -1;
  bool heatmap = false, dark = false;
  int width = 1400, height = 900, scrollGpu = -1;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--range" && i + 2 < argc) {
      from = std::stod(argv[++i]);
      to = std::stod(argv[++i]);
    } else if (a == "--throttle-heatmap") {
      heatmap = true;
    } else if (a == "--dark") {
      dark = true;
    } else if (a == "--size" && i + 2 < argc) {
      width = std::stoi(argv[++i]);
      height = std::stoi(argv[++i]);
    } else if (a == "--scroll" && i + 1 < argc) {
      scrollGpu = std::stoi(argv[++i]);
    } else {
      std::fprintf(stderr, "timeline_shot: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  QSettings().clear();
  QSettings().setValue("theme", dark ? "dark" : "light");
  wl::MainWindow w;
  w.resize(width, height);
  w.show();
  w.openRun(run);
  settle(w, 4000);
  wl::TimelinePage* page = w.timeline();
  if (page->store()->runs().empty()) {
    std::fprintf(stderr, "timeline_shot: %s did not open\n", argv[1]);
    return 1;
  }
  for (int i = 0; i < 600 && !page->view()->renderer().displays().throttleView(0); ++i)
    settle(w, 50);
  if (heatmap)
    for (QAction* a : w.findChildren<QAction*>())
      if (QString(a->text()).remove('&') == QStringLiteral("Heatmap of GPUs: Throttling"))
        a->trigger();
  if (from >= 0 && to > from) {
    const int64_t t0 = page->store()->run(0).info().start_ns;
    page->viewport()->setRange(
        {t0 + static_cast<int64_t>(from * 1e9), t0 + static_cast<int64_t>(to * 1e9)});
  }
  if (scrollGpu >= 0) page->view()->scrollToGpu(0, scrollGpu);
  settle(w, 1500);
  if (!w.grab().save(out)) {
    std::fprintf(stderr, "timeline_shot: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
