// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/view_controller.h"

#include <QAction>
#include <QActionGroup>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMessageBox>
#include <QSettings>

#include "app/gui/run_session.h"
#include "loaders/core/error.h"
#include "widgets/panels/compare_panel.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/track_tree.h"
#include "widgets/viewfile/view_scene.h"

namespace wl {

ViewController::ViewController(Parts parts, QObject* parent)
    : QObject(parent), parts_(std::move(parts)) {
  locateRun = [this](const ResolvedRun& run, const QString& problem) {
    const auto answer = QMessageBox::warning(
        parts_.window, tr("Run not found"), problem + tr("\n\nWhere is it now?"),
        QMessageBox::Open | QMessageBox::Cancel, QMessageBox::Open);
    if (answer != QMessageBox::Open) return QString();
    return QFileDialog::getOpenFileName(
        parts_.window, tr("Locate %1").arg(QFileInfo(run.stored).fileName()),
        QFileInfo(run.path).absolutePath(),
        tr("%1;;Wattline runs (*.h5 *.hdf5)").arg(QFileInfo(run.stored).fileName()));
  };
  acceptChangedRun = [this](const QString& problem) {
    return QMessageBox::warning(parts_.window, tr("Run changed"),
                                problem + tr("\n\nOpen the view with this run anyway?"),
                                QMessageBox::Open | QMessageBox::Cancel,
                                QMessageBox::Cancel) == QMessageBox::Open;
  };
  connect(parts_.session, &RunSession::runsChanged, this, &ViewController::runsChanged);
  connect(parts_.session, &RunSession::openFailed, this, [this] { pending_.reset(); });
  connect(parts_.compare, &ComparePanel::settingsChanged, this, [this] {
    if (pending_ && waitingForAlignment_ && !parts_.compare->alignmentPending()) applyRest();
  });
}

ViewState ViewController::capture(const QString& baseDir) const {
  ViewState v;
  const auto& runs = parts_.page->store()->runs();
  if (runs.empty()) return v;
  for (const auto& run : runs) {
    const QString path = QString::fromStdString(run->path().string());
    v.runs.push_back({viewRunPath(path, baseDir), runContentHash(path)});
  }
  capturePage(*parts_.page, v);
  v.tracks = treeChanges(parts_.tree->state(), defaultTreeState(runs));
  v.heatmap = parts_.heatmap->isChecked();
  if (const QString m = parts_.heatmapMetric->currentData().toString(); !m.isEmpty())
    v.heatmapMetric = m.toStdString();
  if (parts_.compare->active()) {
    const CompareSettings& s = parts_.compare->settings();
    ViewCompare c;
    c.runA = s.runA;
    c.runB = s.runB;
    c.align = s.align;
    c.step = s.step;
    c.offsetB = s.align == AlignMode::Event ? s.offsetB : 0;
    c.pairBy = s.pairBy;
    c.differenceMetrics = s.differenceMetrics;
    if (QAction* a = parts_.compareLayout->checkedAction())
      c.layout = static_cast<CompareLayout>(a->data().toInt());
    v.compare = c;
  }
  v.theme = QSettings().value("theme", "system").toString();
  return v;
}

bool ViewController::saveTo(const QString& path) {
  try {
    writeViewFile(capture(QFileInfo(path).absolutePath()), path);
  } catch (const Error& e) {
    parts_.status(QString::fromStdString(e.what()), 10000);
    return false;
  }
  parts_.status(tr("View saved as %1").arg(path), 6000);
  return true;
}

void ViewController::saveDialog() {
  if (parts_.page->store()->runs().empty()) {
    parts_.status(tr("Open a run to save a view of it"), 4000);
    return;
  }
  const QString run = QString::fromStdString(parts_.page->store()->run(0).path().string());
  const QString suggested = QFileInfo(run).absoluteDir().filePath(
      QFileInfo(run).completeBaseName() + QStringLiteral("-view.json"));
  const QString path = QFileDialog::getSaveFileName(parts_.window, tr("Save View"), suggested,
                                                    tr("Wattline views (*.json)"));
  if (!path.isEmpty()) saveTo(path);
}

void ViewController::copyToClipboard() {
  if (parts_.page->store()->runs().empty()) {
    parts_.status(tr("Open a run to copy a view of it"), 4000);
    return;
  }
  try {
    QGuiApplication::clipboard()->setText(QString::fromUtf8(viewToJson(capture({}), true)));
  } catch (const Error& e) {
    parts_.status(QString::fromStdString(e.what()), 10000);
    return;
  }
  parts_.status(tr("View copied to the clipboard (open it with File > Open View from Clipboard, "
                   "or wattline --view '…')"),
                6000);
}

void ViewController::openFromClipboard() {
  openText(QGuiApplication::clipboard()->text().toUtf8(), tr("the clipboard"), QDir::currentPath());
}

bool ViewController::openFile(const QString& path) {
  try {
    return open(readViewFile(path), QFileInfo(path).absolutePath(), path);
  } catch (const Error& e) {
    QMessageBox::critical(parts_.window, tr("Cannot open view"), QString::fromStdString(e.what()));
    return false;
  }
}

bool ViewController::openText(const QByteArray& json, const QString& source,
                              const QString& baseDir) {
  try {
    return open(viewFromJson(json, source), baseDir, source);
  } catch (const Error& e) {
    QMessageBox::critical(parts_.window, tr("Cannot open view"), QString::fromStdString(e.what()));
    return false;
  }
}

bool ViewController::findRuns(const ViewState& view, const QString& baseDir, const QString& source,
                              QStringList& paths) {
  for (ResolvedRun r : resolveViewRuns(view, baseDir)) {
    if (r.status == ResolvedRun::Status::Missing) {
      // Moved: the user points at it, and it must still be the run the view was saved with.
      const QString found = locateRun(r, resolveProblem(r, source));
      if (found.isEmpty()) return false;
      r.path = QFileInfo(found).absoluteFilePath();
      r.status = runContentHash(r.path) == view.runs[static_cast<size_t>(r.index)].hash
                     ? ResolvedRun::Status::Found
                     : ResolvedRun::Status::HashDiffers;
    }
    if (r.status == ResolvedRun::Status::HashDiffers &&
        !acceptChangedRun(resolveProblem(r, source)))
      return false;
    paths << r.path;
  }
  return true;
}

bool ViewController::open(const ViewState& view, const QString& baseDir, const QString& source) {
  QStringList paths;
  try {
    if (!findRuns(view, baseDir, source, paths)) return false;
  } catch (const Error& e) {
    QMessageBox::critical(parts_.window, tr("Cannot open view"), QString::fromStdString(e.what()));
    return false;
  }
  pending_.reset();
  parts_.closeAllRuns();
  pending_ = view;
  expectedRuns_ = static_cast<int>(paths.size());
  waitingForAlignment_ = false;
  for (const QString& p : paths)
    parts_.openRun(p);
  parts_.status(tr("Opening the view %1…").arg(source), 4000);
  return true;
}

void ViewController::runsChanged() {
  if (!pending_ || parts_.session->pending() > 0 ||
      static_cast<int>(parts_.session->runs().size()) != expectedRuns_)
    return;
  applyTracksAndComparison();
}

void ViewController::applyTracksAndComparison() {
  const ViewState& v = *pending_;
  parts_.tree->applyState(v.tracks);
  const int metric = parts_.heatmapMetric->findData(QString::fromStdString(v.heatmapMetric));
  if (metric >= 0) parts_.heatmapMetric->setCurrentIndex(metric);
  parts_.heatmap->setChecked(v.heatmap);
  if (v.compare && parts_.compare->active()) {
    const ViewCompare& c = *v.compare;
    for (QAction* a : parts_.compareLayout->actions())
      if (a->data().toInt() == static_cast<int>(c.layout)) a->setChecked(true);
    parts_.compare->setRunPair(c.runA, c.runB);
    parts_.compare->setPairBy(c.pairBy);
    parts_.compare->setDifferenceMetrics(c.differenceMetrics);
    if (c.align == AlignMode::Event)
      parts_.compare->alignAtEvents(c.offsetB, 0);
    else
      parts_.compare->setAlignment(c.align, c.step);
  }
  // B's warp is computed off the UI thread; the range waits for it (a new alignment resets it).
  waitingForAlignment_ = parts_.compare->alignmentPending();
  if (!waitingForAlignment_) applyRest();
}

namespace {

void triggerNamed(QObject* window, const QString& name) {
  if (auto* a = window->findChild<QAction*>(name)) a->trigger();
}

}  // namespace

void ViewController::applyRest() {
  waitingForAlignment_ = false;
  const ViewState v = *pending_;
  pending_.reset();
  triggerNamed(parts_.window, QStringLiteral("theme_") + v.theme);
  triggerNamed(parts_.window, QStringLiteral("yMode_") + yModeName(v.yMode));
  if (auto* bands = parts_.window->findChild<QAction*>(QStringLiteral("throttleBands")))
    bands->setChecked(v.throttleBands);
  showOnPage(*parts_.page, v);
  if (parts_.notesOpened) parts_.notesOpened(v.notes);
  parts_.status(tr("View opened"), 4000);
  emit viewApplied();
}

}  // namespace wl
