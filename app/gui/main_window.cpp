// SPDX-License-Identifier: GPL-3.0-or-later
#include "gui/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>

#include "gui/recent_files.h"
#include "gui/run_session.h"
#include "run_summary_view.h"
#include "track_tree.h"

namespace wl {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      session_(new RunSession(this)),
      tree_(new TrackTree(this)),
      summary_(new RunSummaryView(this)) {
  setWindowTitle(QStringLiteral("Wattline"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/wattline.svg")));
  setAcceptDrops(true);
  setCentralWidget(summary_);

  auto* dock = new QDockWidget(tr("Tracks"), this);
  dock->setObjectName(QStringLiteral("tracksDock"));
  dock->setWidget(tree_);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  createMenus();
  statusBar()->showMessage(tr("Open a run with File > Open or drop a .h5 file on the window."));

  connect(session_, &RunSession::openStarted, this,
          [this](const QString& path) { statusBar()->showMessage(tr("Opening %1...").arg(path)); });
  connect(session_, &RunSession::runOpened, this,
          [this](const std::shared_ptr<const RunFile>& run) {
            tree_->addRun(run);
            recent_->add(QString::fromStdString(run->path().string()));
            const RunInfo& i = run->info();
            statusBar()->showMessage(tr("Opened %1: %2 GPUs, %3 ranks%4")
                                         .arg(QString::fromStdString(i.name))
                                         .arg(run->gpus().size())
                                         .arg(run->ranks().size())
                                         .arg(i.simulated ? tr(" (simulated)") : QString()));
            setWindowTitle(QStringLiteral("%1 — Wattline").arg(QString::fromStdString(i.name)));
          });
  connect(session_, &RunSession::runsChanged, this,
          [this] { summary_->setRuns(session_->runs()); });
  connect(session_, &RunSession::openFailed, this, [this](const QString& path, const QString& msg) {
    statusBar()->showMessage(tr("Could not open %1").arg(path), 5000);
    QMessageBox::critical(this, tr("Cannot open run"), msg);
  });

  QSettings s;
  restoreGeometry(s.value("mainWindow/geometry").toByteArray());
  restoreState(s.value("mainWindow/state").toByteArray());
  if (!s.contains("mainWindow/geometry")) resize(1280, 800);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open Run..."), this, &MainWindow::showOpenDialog);
  open->setShortcut(QKeySequence::Open);
  QMenu* recentMenu = file->addMenu(tr("Open &Recent"));
  recent_ = new RecentFiles(recentMenu, this);
  connect(recent_, &RecentFiles::openRequested, this, &MainWindow::openRun);
  QAction* closeAll = file->addAction(tr("&Close All Runs"), this, [this] {
    session_->closeAll();
    tree_->clear();
    setWindowTitle(QStringLiteral("Wattline"));
  });
  closeAll->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>())
    view->addAction(d->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Wattline"), this, &MainWindow::showAbout);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::openRun(const QString& path) {
  session_->open(path);
}

void MainWindow::showOpenDialog() {
  const QString dir = QSettings().value("lastOpenDir").toString();
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Open Run"), dir, tr("Wattline runs (*.h5 *.hdf5);;All files (*)"));
  for (const QString& f : files) {
    QSettings().setValue("lastOpenDir", QFileInfo(f).absolutePath());
    openRun(f);
  }
}

void MainWindow::showAbout() {
  QMessageBox::about(
      this, tr("About Wattline"),
      tr("<h3>Wattline %1</h3>"
         "<p>GPU power, temperature, clocks and kernel traces of distributed training runs on "
         "one synchronized time axis.</p>"
         "<p>Copyright the Wattline authors. Licensed under the GNU General Public License, "
         "version 3 or later.</p>"
         "<p>Built with Qt %2 and HDF5.</p>")
          .arg(QApplication::applicationVersion(), QString::fromLatin1(qVersion())));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) openRun(url.toLocalFile());
  event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings s;
  s.setValue("mainWindow/geometry", saveGeometry());
  s.setValue("mainWindow/state", saveState());
  QMainWindow::closeEvent(event);
}

}  // namespace wl
