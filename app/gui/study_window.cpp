// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/study_window.h"

#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>

#include "widgets/export/export_dialog.h"
#include "widgets/study/study_view.h"

namespace wl {

StudyWindow::StudyWindow(QWidget* parent) : QMainWindow(parent), view_(new StudyView(this)) {
  setAttribute(Qt::WA_DeleteOnClose);
  setWindowTitle(tr("Study — Wattline"));
  setCentralWidget(view_);
  connect(view_, &StudyView::runActivated, this, &StudyWindow::openRunRequested);
  connect(view_, &StudyView::loadFailed, this,
          [this](const QString& m) { statusBar()->showMessage(m, 10000); });

  QMenu* file = menuBar()->addMenu(tr("&Study"));
  file->addAction(tr("Add Run &Files…"), QKeySequence::Open, this, &StudyWindow::addFilesDialog);
  file->addAction(tr("Add &Folder of Runs…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                  &StudyWindow::addFolderDialog);
  file->addAction(tr("&Clear"), this, [this] { view_->clear(); });
  file->addSeparator();
  file->addAction(tr("&Export Figure…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    exportChart(this, view_->chart(),
                tr("Study of %n run(s)", nullptr, view_->tableModel()->rowCount()));
  });
  file->addAction(tr("Export &Table as CSV or JSON…"), this, [this] {
    exportTableDialog(this, view_->tableModel(), QStringLiteral("study"));
  });
  file->addSeparator();
  file->addAction(tr("Clos&e Window"), QKeySequence::Close, this, &QWidget::close);

  const QByteArray geometry = QSettings().value("studyWindow/geometry").toByteArray();
  if (!geometry.isEmpty())
    restoreGeometry(geometry);
  else
    resize(1200, 800);
}

void StudyWindow::addRuns(const QStringList& paths) {
  view_->addRuns(paths);
}

void StudyWindow::addFilesDialog() {
  const QString dir = QSettings().value("lastOpenDir").toString();
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Add Runs to the Study"), dir, tr("Wattline runs (*.h5 *.hdf5);;All files (*)"));
  if (files.isEmpty()) return;
  QSettings().setValue("lastOpenDir", QFileInfo(files.front()).absolutePath());
  addRuns(files);
}

void StudyWindow::addFolderDialog() {
  const QString dir = QFileDialog::getExistingDirectory(
      this, tr("Add a Folder of Runs"), QSettings().value("lastOpenDir").toString());
  if (dir.isEmpty()) return;
  QSettings().setValue("lastOpenDir", dir);
  addRuns({dir});
}

void StudyWindow::closeEvent(QCloseEvent* event) {
  view_->cancelLoading();
  QSettings().setValue("studyWindow/geometry", saveGeometry());
  QMainWindow::closeEvent(event);
}

}  // namespace wl
