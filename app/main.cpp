// SPDX-License-Identifier: GPL-3.0-or-later
// wattline: `wattline [RUN.h5 ...]` opens the GUI (a folder opens as a study of its runs, a
// VIEW.json as the view it holds, `--view JSON` the view of Copy View); `wattline COMMAND ...`
// works headless.

#include <QApplication>
#include <QFileInfo>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/manual.h"
#include "app/gui/main_window.h"
#include "loaders/core/temp_files.h"

namespace {

int runGui(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Wattline"));
  QApplication::setApplicationName(QStringLiteral("Wattline"));
  QApplication::setApplicationVersion(QStringLiteral(WATTLINE_VERSION));
  QGuiApplication::setDesktopFileName(QStringLiteral("wattline"));  // matched to wattline.desktop
  wl::MainWindow window;
  window.show();
  const QStringList args = QApplication::arguments();
  QStringList folders;
  for (int i = 1; i < args.size(); ++i) {
    if (args[i] == QLatin1String("--view") && i + 1 < args.size())
      window.openViewText(args[++i].toUtf8(), QStringLiteral("--view"));
    else if (QFileInfo(args[i]).isDir())
      folders << args[i];
    else
      window.openRun(args[i]);
  }
  if (!folders.isEmpty()) window.openStudy(folders);
  return QApplication::exec();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    const std::string first = argv[1];
    if (first == "--help" || first == "-h" || first == "help") {
      std::fputs(wl::cli::topLevelUsage().c_str(), stdout);
      return 0;
    }
    if (first == "--version") {
      std::printf("wattline %s\n", WATTLINE_VERSION);
      return 0;
    }
    if (wl::cli::isManualOption(first))  // hidden: man pages and shell completion
      return wl::cli::runManualOption(std::vector<std::string>(argv + 1, argv + argc),
                                      WATTLINE_VERSION);
    if (const wl::cli::Command* cmd = wl::cli::findCommand(first)) {
      // Ctrl+C or a SIGTERM removes the command's unfinished output and says so.
      wl::installInterruptCleanup(cmd->name);
      return wl::cli::runCommand(*cmd, std::vector<std::string>(argv + 2, argv + argc));
    }
    if (first == "--view") {
      if (argc >= 3) return runGui(argc, argv);
      std::fprintf(stderr, "wattline: --view needs a view's JSON (File > Copy View)\n");
      return 2;
    }
    if (first.size() > 1 && first[0] == '-') {
      std::fprintf(stderr, "wattline: unknown option %s\n\n%s", first.c_str(),
                   wl::cli::topLevelUsage().c_str());
      return 2;
    }
    if (first.find('.') == std::string::npos && first.find('/') == std::string::npos) {
      std::fprintf(stderr, "wattline: unknown command '%s'\n\n%s", first.c_str(),
                   wl::cli::topLevelUsage().c_str());
      return 2;
    }
    // The window takes runs, folders, view files and --view JSON. Any other option after a run
    // (`wattline A.h5 --compare B.h5`) is refused here, before a window opens: it used to be
    // opened as a file and the window said there was no such file.
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--view") {
        ++i;
        continue;
      }
      if (a.size() > 1 && a[0] == '-') {
        std::fprintf(stderr,
                     "wattline: unknown option %s: the window opens runs, folders and view files "
                     "(options belong to a command, such as 'wattline export A.h5 --compare "
                     "B.h5')\n\n%s",
                     a.c_str(), wl::cli::topLevelUsage().c_str());
        return 2;
      }
    }
  }
  return runGui(argc, argv);
}
