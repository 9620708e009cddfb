// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QStyleFactory>
#include <QToolBar>

#include <algorithm>

#include "analysis/compare/config_diff.h"
#include "analysis/projected_run.h"
#include "app/gui/notes_controller.h"
#include "app/gui/recent_files.h"
#include "app/gui/run_session.h"
#include "app/gui/study_window.h"
#include "app/gui/view_controller.h"
#include "loaders/core/metrics.h"
#include "widgets/export/export_dialog.h"
#include "widgets/export/timeline_figure.h"
#include "widgets/import_dialog.h"
#include "widgets/matrix/iteration_matrix_view.h"
#include "widgets/panels/analysis_panel.h"
#include "widgets/panels/compare_panel.h"
#include "widgets/panels/kernel_details_view.h"
#include "widgets/panels/notes_panel.h"
#include "widgets/panels/run_summary_view.h"
#include "widgets/panels/selection_summary_view.h"
#include "widgets/panels/whatif_panel.h"
#include "widgets/prometheus_dialog.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/track_tree.h"
#include "widgets/viewfile/view_scene.h"

// Resources live in a static library: register them explicitly (outside any namespace).
static void initWattlineResources() {
  Q_INIT_RESOURCE(wattline);
}

namespace wl {
namespace {

QDockWidget* makeDock(QMainWindow* w, const QString& title, const char* name, QWidget* content,
                      Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, w);
  dock->setObjectName(QString::fromLatin1(name));
  dock->setWidget(content);
  w->addDockWidget(area, dock);
  return dock;
}

QPalette darkPalette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x20, 0x24), text(0xe6, 0xe8, 0xeb);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x29, 0x2e));
  p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x37, 0x3e));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::PlaceholderText, QColor(0x8a, 0x90, 0x98));
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x70, 0x74, 0x7a));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x70, 0x74, 0x7a));
  return p;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      session_(new RunSession(this)),
      page_(new TimelinePage(this)),
      tree_(new TrackTree(this)),
      summary_(new RunSummaryView(this)),
      details_(new KernelDetailsView(this)),
      selection_(new SelectionSummaryView(this)),
      analysis_(new AnalysisPanel(this)),
      compare_(new ComparePanel(this)),
      matrix_(new IterationMatrixView(this)),
      whatif_(new WhatifPanel(this)) {
  initWattlineResources();
  setWindowTitle(QStringLiteral("Wattline"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/wattline.svg")));
  setAcceptDrops(true);
  setCentralWidget(page_);
  makeDock(this, tr("Tracks"), "tracksDock", tree_, Qt::LeftDockWidgetArea);
  QDockWidget* runDock = makeDock(this, tr("Run"), "runDock", summary_, Qt::LeftDockWidgetArea);
  QDockWidget* detailsDock =
      makeDock(this, tr("Kernel details"), "detailsDock", details_, Qt::LeftDockWidgetArea);
  tabifyDockWidget(runDock, detailsDock);
  runDock->raise();
  QDockWidget* selectionDock =
      makeDock(this, tr("Selection"), "selectionDock", selection_, Qt::RightDockWidgetArea);
  QDockWidget* analysisDock =
      makeDock(this, tr("Analysis"), "analysisDock", analysis_, Qt::RightDockWidgetArea);
  tabifyDockWidget(selectionDock, analysisDock);
  QDockWidget* compareDock =
      makeDock(this, tr("Compare"), "compareDock", compare_, Qt::RightDockWidgetArea);
  tabifyDockWidget(analysisDock, compareDock);
  QDockWidget* matrixDock =
      makeDock(this, tr("Iterations"), "iterationsDock", matrix_, Qt::RightDockWidgetArea);
  tabifyDockWidget(compareDock, matrixDock);
  connectIterationMatrix(matrixDock);
  QDockWidget* whatifDock =
      makeDock(this, tr("What if"), "whatifDock", whatif_, Qt::RightDockWidgetArea);
  tabifyDockWidget(matrixDock, whatifDock);
  connectWhatif(whatifDock);
  selectionDock->raise();
  connect(compare_, &ComparePanel::settingsChanged, this, &MainWindow::applyComparison);
  connect(page_->viewport(), &Viewport::rangeChanged, compare_, &ComparePanel::setVisibleRange);
  connect(compare_, &ComparePanel::zoomRequested, this, [this](qint64 t0, qint64 t1) {
    page_->viewport()->setRange({t0, t1});
  });
  resizeDocks({selectionDock}, {380}, Qt::Horizontal);
  // Clicking a kernel brings its details to the front.
  connect(page_->view(), &TimelineView::kernelSelected, detailsDock,
          [detailsDock](const KernelRef& k) {
            if (k.valid()) detailsDock->raise();
          });

  createActions();
  auto* loading = new QLabel(this);
  statusBar()->addPermanentWidget(loading);
  connect(page_, &TimelinePage::loadingChanged, loading, [loading](int pending) {
    loading->setText(pending > 0 ? tr("Loading data… (%1 tiles)").arg(pending) : QString());
  });
  statusBar()->showMessage(tr("Open a run with File > Open or drop a .h5 file on the window."));

  connect(session_, &RunSession::openStarted, this,
          [this](const QString& path) { statusBar()->showMessage(tr("Opening %1…").arg(path)); });
  connect(session_, &RunSession::runOpened, this,
          [this, compareDock](const std::shared_ptr<const RunFile>& run) {
            const int index = page_->addRun(run);
            // Runs of many GPUs start as a heatmap: one row per GPU.
            if (run->gpus().size() >= 32 && heatmapAction_ && !heatmapAction_->isChecked())
              heatmapAction_->setChecked(true);
            tree_->addRun(run, index);
            details_->setRuns(page_->store()->runs());
            if (index == 0) {
              selection_->setRun(run);
              analysis_->setRun(run);
              whatif_->setRun(run);
            }
            page_->view()->setFocus();  // W/A/S/D work at once
            compare_->setRuns(page_->store()->runs());
            if (compare_->active()) compareDock->raise();
            recordOpened(*run, index);
            const RunInfo& i = run->info();
            // A simulated run is marked once: not again when its name already says so; a
            // projected one (whatif -o) too.
            const bool projected = !i.simulated && isProjectedRun(i);
            const bool mark = (i.simulated && i.name.find("(simulated)") == std::string::npos) ||
                              (projected && i.name.find("(projected)") == std::string::npos);
            const QString kind = projected ? tr("projected") : tr("simulated");
            statusBar()->showMessage(tr("Opened %1: %2 GPUs, %3 ranks%4")
                                         .arg(QString::fromStdString(i.name))
                                         .arg(run->gpus().size())
                                         .arg(run->ranks().size())
                                         .arg(mark ? " (" + kind + ")" : QString()));
            setWindowTitle(
                QStringLiteral("%1%2 — Wattline")
                    .arg(QString::fromStdString(i.name), mark ? " [" + kind + "]" : QString()));
            rebuildRows();
          });
  connect(session_, &RunSession::runsChanged, this, [this] {
    summary_->setRuns(session_->runs());
    summary_->setReadFailures(page_->store()->failures());
  });
  // A failed read: hatched on the timeline, said in the status bar, listed with the run's data
  // quality (issue 16).
  details_->setTileStore(page_->store());
  connect(page_, &TimelinePage::readFailed, this, [this](const QString& message) {
    statusBar()->showMessage(tr("Read error: %1").arg(message), 10000);
    summary_->setReadFailures(page_->store()->failures());
  });
  connect(session_, &RunSession::openFailed, this, [this](const QString& path, const QString& msg) {
    statusBar()->showMessage(tr("Could not open %1").arg(path), 5000);
    QMessageBox::critical(this, tr("Cannot open run"), msg);
  });
  connect(tree_, &TrackTree::visibilityChanged, this, &MainWindow::rebuildRows);
  connect(page_->view(), &TimelineView::kernelSelected, details_, &KernelDetailsView::showKernel);
  connect(page_->view(), &TimelineView::kernelSelected, this, [this](const KernelRef& k) {
    if (k.valid()) lastKernel_[k.run] = {k.data.start_ns, k.data.dur_ns};
  });
  // The selected range scopes the selection summary and the analysis panel.
  connect(page_->viewport(), &Viewport::selectionChanged, this,
          [this, selectionDock](std::optional<TimeRange> sel) {
            selection_->setRange(sel);
            if (sel) {
              analysis_->setRange(sel->t0, sel->t1);
              selectionDock->raise();
            } else {
              analysis_->clearRange();
            }
          });
  auto showGpu = [this](int gpu) { page_->view()->scrollToGpu(0, gpu); };
  connect(selection_, &SelectionSummaryView::gpuActivated, this, showGpu);
  connect(analysis_, &AnalysisPanel::gpuActivated, this, showGpu);
  // N / Shift+N and clicks in the reason heatmap: the throttling table follows (run 0 is the
  // one the panel analyses).
  connect(page_->view(), &TimelineView::notice, this,
          [this](const QString& text) { statusBar()->showMessage(text, 6000); });
  connect(page_->view(), &TimelineView::throttleIntervalActivated, analysis_,
          [this](int run, int gpu, qint64 start, qint64) {
            if (run == 0) analysis_->selectThrottleInterval(gpu, start);
          });
  connect(analysis_, &AnalysisPanel::rangeActivated, this, [this](int64_t t0, int64_t t1) {
    const int64_t pad = std::max<int64_t>((t1 - t0) / 4, 1'000'000);
    page_->viewport()->setRange({t0 - pad, t1 + pad});
  });

  QSettings s;
  restoreGeometry(s.value("mainWindow/geometry").toByteArray());
  restoreState(s.value("mainWindow/state").toByteArray());
  if (!s.contains("mainWindow/geometry")) resize(1400, 880);
}

void MainWindow::rebuildRows() {
  const auto& runs = page_->store()->runs();
  std::string metric;
  if (heatmapMetric_) metric = heatmapMetric_->currentData().toString().toStdString();
  ComparePlan cmp;
  if (compare_->active()) {
    const CompareSettings& cs = compare_->settings();
    CompareLayout layout = CompareLayout::Stacked;
    if (compareLayout_ && compareLayout_->checkedAction())
      layout = static_cast<CompareLayout>(compareLayout_->checkedAction()->data().toInt());
    cmp = comparePlan(runs, cs.runA, cs.runB, cs.pairs, cs.differenceMetrics, layout);
    TimelineRenderer& r = page_->view()->renderer();
    r.setRunDisplay(cs.runA, r.displays().of(cs.runA).withLabel(cmp.labelA));
    r.setRunDisplay(cs.runB, r.displays().of(cs.runB).withLabel(cmp.labelB));
  }
  page_->setRows(planWindowRows(runs, tree_->state(), heatmapAction_ && heatmapAction_->isChecked(),
                                metric, cmp));
  // The heatmap metric list follows the runs' metrics.
  if (heatmapMetric_ && !page_->store()->runs().empty()) {
    const QString current = heatmapMetric_->currentData().toString();
    heatmapMetric_->blockSignals(true);
    heatmapMetric_->clear();
    // A run with MI250 packages colours its power heatmap by package power (every GCD's row).
    const RunFile& run0 = page_->store()->run(0);
    for (const MetricInfo& m : run0.series().metrics)
      heatmapMetric_->addItem(m.id == "power_w" && hasPackages(run0)
                                  ? tr("Package power")
                                  : QString::fromStdString(m.label),
                              QString::fromStdString(m.id));
    if (metricIndex(run0, std::string(metric::kSmClock)) >= 0)
      heatmapMetric_->addItem(tr("Throttling (reason, clock deficit)"),
                              QString::fromLatin1(kThrottleHeatmapMetric));
    const int idx =
        heatmapMetric_->findData(current.isEmpty() ? QStringLiteral("temp_c") : current);
    heatmapMetric_->setCurrentIndex(std::max(0, idx));
    heatmapMetric_->blockSignals(false);
  }
}

void MainWindow::connectIterationMatrix(QDockWidget* dock) {
  connect(analysis_, &AnalysisPanel::analysisStarted, matrix_, [this] { matrix_->setBusy(true); });
  connect(analysis_, &AnalysisPanel::analysisFailed, matrix_, [this] { matrix_->setBusy(false); });
  connect(analysis_, &AnalysisPanel::analysisFinished, matrix_, [this] {
    const RunAnalysis* a = analysis_->analysis();
    if (!a || page_->store()->runs().empty()) return;
    matrix_->setCost(std::make_shared<ThrottleCost>(a->cost), page_->store()->run(0).ranks());
  });
  connect(matrix_, &IterationMatrixView::cellActivated, this, &MainWindow::showMatrixCell);
  dock->toggleViewAction()->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
  dock->toggleViewAction()->setToolTip(
      tr("The rank × iteration matrix: what each GPU's throttling cost each step"));
}

void MainWindow::connectWhatif(QDockWidget* dock) {
  dock->toggleViewAction()->setToolTip(
      tr("What the run would do at another power limit or inlet temperature, projected from its "
         "own calibration"));
  connect(whatif_, &WhatifPanel::openRunRequested, this, [this](const QString& path) {
    projections_ << QFileInfo(path).absoluteFilePath();
    openRun(path);
  });
}

void MainWindow::recordOpened(const RunFile& run, int index) {
  const QString path = QString::fromStdString(run.path().string());
  if (!projections_.contains(QFileInfo(path).absoluteFilePath())) {
    recent_->add(path);
    return;
  }
  // The projection of run 0 (the What if dock's run): B against the measured run as A.
  compare_->setRunPair(0, index);
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("compareDock"))) dock->raise();
}

QString MainWindow::projectionOfB() const {
  const auto& runs = page_->store()->runs();
  const int b = compare_->settings().runB;
  if (!compare_->active() || b < 0 || b >= static_cast<int>(runs.size())) return {};
  const QString path =
      QFileInfo(QString::fromStdString(runs[static_cast<size_t>(b)]->path().string()))
          .absoluteFilePath();
  return projections_.contains(path) ? path : QString();
}

bool MainWindow::saveProjectionTo(const QString& dest) {
  const QString from = projectionOfB();
  QString error;
  if (from.isEmpty())
    error = tr("B is not a projection of the What if dock");
  else if (QFileInfo(dest).absoluteFilePath() == from)
    error = tr("%1 is the projection's own temporary file").arg(dest);
  else if (QFile::exists(dest) && !QFile::remove(dest))
    error = tr("Cannot replace %1").arg(dest);
  else if (QFile f(from); !f.copy(dest))
    error = tr("Cannot copy the projection to %1: %2").arg(dest, f.errorString());
  if (!error.isEmpty()) {
    statusBar()->showMessage(error, 8000);
    return false;
  }
  recent_->add(QFileInfo(dest).absoluteFilePath());
  statusBar()->showMessage(tr("Projection saved as %1").arg(dest), 6000);
  return true;
}

void MainWindow::saveProjectionAs() {
  const QString from = projectionOfB();
  if (from.isEmpty()) return;
  const QString dir = QSettings().value("lastOpenDir").toString();
  const QString suggested = QDir(dir).filePath(
      QString::fromStdString(page_->store()->run(compare_->settings().runB).info().name)
          .replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-")) +
      QStringLiteral(".h5"));
  const QString dest = QFileDialog::getSaveFileName(this, tr("Save Projection As"), suggested,
                                                    tr("Wattline runs (*.h5)"));
  if (dest.isEmpty()) return;
  QSettings().setValue("lastOpenDir", QFileInfo(dest).absolutePath());
  saveProjectionTo(dest);
}

void MainWindow::showMatrixCell(int gpu, int rank, int64_t t0, int64_t t1) {
  // The cell's GPU (its telemetry) and rank (its kernels) pinned at the top, in place of the
  // previous cell's, and the step with a quarter of it on each side.
  std::vector<QString> pins;
  if (gpu >= 0) pins.push_back(rowkey::gpu(0, gpu));
  if (rank >= 0) pins.push_back(rowkey::rank(0, rank));
  std::vector<QString> unpin;
  for (const QString& k : matrixPins_)
    if (std::find(pins.begin(), pins.end(), k) == pins.end()) unpin.push_back(k);
  tree_->setPinned(unpin, false);
  tree_->setPinned(pins, true);
  matrixPins_ = pins;
  const int64_t pad = std::max<int64_t>((t1 - t0) / 4, 1'000'000);
  page_->viewport()->setRange({t0 - pad, t1 + pad});
  page_->view()->setFocus();
  statusBar()->showMessage(
      tr("Step at %1 s: GPU %2 and rank %3 pinned at the top (right-click them in Tracks to unpin)")
          .arg(static_cast<double>(t0 - page_->store()->run(0).info().start_ns) * 1e-9, 0, 'f', 2)
          .arg(gpu)
          .arg(rank),
      8000);
}

void MainWindow::applyComparison() {
  TimelineRenderer& r = page_->view()->renderer();
  const auto& runs = page_->store()->runs();
  for (size_t i = 0; i < runs.size(); ++i)
    r.setRunDisplay(static_cast<int>(i), r.displays().of(static_cast<int>(i)).withOffset(0));
  if (compare_->active()) {
    const int b = compare_->settings().runB;
    r.setRunDisplay(b, r.displays().of(b).withWarp(compare_->settings().warp));
  }
  page_->updateBounds();
  rebuildRows();
}

void MainWindow::createActions() {
  createFileMenu();
  createNavigateMenu();
  createViewMenu();
  createHelpMenuAndToolbar();
  makeViewController();  // after the menus: it sets their heatmap, layout and theme
  makeNotes();
  applyTheme(QSettings().value("theme", "system").toString());
}

void MainWindow::closeAllRuns() {
  session_->closeAll();
  tree_->clear();
  page_->clearRuns();
  details_->setRuns({});
  selection_->setRun(nullptr);
  analysis_->setRun(nullptr);
  matrix_->setCost(nullptr, {});
  whatif_->setRun(nullptr);
  matrixPins_.clear();
  compare_->setRuns({});
  lastKernel_.clear();
  setWindowTitle(QStringLiteral("Wattline"));
}

void MainWindow::makeViewController() {
  ViewController::Parts parts;
  parts.window = this;
  parts.session = session_;
  parts.page = page_;
  parts.tree = tree_;
  parts.compare = compare_;
  parts.heatmap = heatmapAction_;
  parts.heatmapMetric = heatmapMetric_;
  parts.compareLayout = compareLayout_;
  parts.closeAllRuns = [this] { closeAllRuns(); };
  parts.openRun = [this](const QString& path) { session_->open(path); };
  parts.status = [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); };
  parts.notesOpened = [this](const std::vector<ViewNote>& n) { notes_->addViewNotes(n); };
  views_ = new ViewController(std::move(parts), this);
}

void MainWindow::makeNotes() {
  auto* panel = new NotesPanel(this);
  QDockWidget* dock = makeDock(this, tr("Notes"), "notesDock", panel, Qt::RightDockWidgetArea);
  // A tab beside Selection, which stays the one shown: an empty Notes list is no first view of a
  // run (the dock comes up when a run with notes opens: notesFound below).
  if (auto* selectionDock = findChild<QDockWidget*>(QStringLiteral("selectionDock"))) {
    tabifyDockWidget(selectionDock, dock);
    selectionDock->raise();
  }
  notes_ = new NotesController(this, session_, page_, panel, this);
  connect(notes_, &NotesController::notesFound, dock, &QDockWidget::raise);
  // The view menu is the last but Help's: Add Note goes at its end.
  for (QAction* a : menuBar()->actions())
    if (a->menu() && a->text() == tr("&View")) {
      a->menu()->addSeparator();
      a->menu()->addAction(notes_->addAction());
    }
  addAction(notes_->addAction());  // M works wherever the window has focus
}

void MainWindow::addViewActions(QMenu* file) {
  QAction* save = file->addAction(tr("Save &View…"), this, [this] { views_->saveDialog(); });
  save->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  save->setToolTip(
      tr("Save what the timeline shows (runs, range, tracks, comparison, heatmap, theme) as a "
         "view file that File > Open reopens"));
  // Ctrl+Shift+C copies the timeline image: the view takes Ctrl+Alt+C.
  QAction* copy = file->addAction(tr("Cop&y View"), this, [this] { views_->copyToClipboard(); });
  copy->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_C));
  copy->setToolTip(tr("Put the view on the clipboard as one line of JSON"));
  QAction* paste = file->addAction(tr("Open View from C&lipboard"), this,
                                   [this] { views_->openFromClipboard(); });
  paste->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_V));
}

void MainWindow::createFileMenu() {
  Viewport* vp = page_->viewport();
  TimelineView* view = page_->view();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open Run…"), this, &MainWindow::showOpenDialog);
  open->setShortcut(QKeySequence::Open);
  QAction* importAction = file->addAction(tr("&Import Traces and Telemetry…"), this, [this] {
    auto* d = new ImportDialog(this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &ImportDialog::imported, this, &MainWindow::openRun);
    d->open();
  });
  importAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
  importAction->setToolTip(
      tr("Turn PyTorch profiler, rocprof, Nsight Systems, nvidia-smi, DCGM, "
         "amd-smi, Zeus or CharLLM-PPT files into one run"));
  file->addAction(tr("Import from &Prometheus…"), this, [this] {
    auto* d = new PrometheusDialog(this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &PrometheusDialog::imported, this, &MainWindow::openRun);
    d->open();
  });
  QAction* studyAction = file->addAction(tr("Open &Study of Many Runs…"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open a Folder of Runs as a Study"), QSettings().value("lastOpenDir").toString());
    if (dir.isEmpty()) return;
    QSettings().setValue("lastOpenDir", dir);
    openStudy({dir});
  });
  studyAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  studyAction->setToolTip(
      tr("Compare many runs (a sweep) in a table and the seed paper's figures"));
  QMenu* recentMenu = file->addMenu(tr("Open &Recent"));
  recent_ = new RecentFiles(recentMenu, this);
  connect(recent_, &RecentFiles::openRequested, this, &MainWindow::openRun);
  QAction* closeAll = file->addAction(tr("&Close All Runs"), this, &MainWindow::closeAllRuns);
  closeAll->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W));
  saveProjection_ =
      file->addAction(tr("Save &Projection As…"), this, &MainWindow::saveProjectionAs);
  saveProjection_->setToolTip(
      tr("Keep the projected run the Compare dock shows as B (What if > Open as B): it is a "
         "temporary file, removed when Wattline exits"));
  saveProjection_->setEnabled(false);
  connect(compare_, &ComparePanel::settingsChanged, saveProjection_, [this] {
    const bool on = !projectionOfB().isEmpty();
    saveProjection_->setEnabled(on);
    whatif_->setSaveProjectionEnabled(on);
  });
  connect(whatif_, &WhatifPanel::saveProjectionRequested, this, &MainWindow::saveProjectionAs);
  file->addSeparator();
  addViewActions(file);
  file->addSeparator();
  QAction* exportAction = file->addAction(tr("&Export Timeline…"), this, [this] {
    // The file carries the window's view: opening it reopens the view.
    const auto view = [this](const QString& folder) {
      return viewToJson(views_->capture(folder), true);
    };
    if (!exportTimeline(this, *page_, view))
      statusBar()->showMessage(tr("Open a run to export its timeline"), 4000);
  });
  exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  exportAction->setToolTip(tr("Save what the timeline shows as PNG, SVG or PDF"));
  QAction* copyAction =
      file->addAction(tr("&Copy Timeline Image"), this, &MainWindow::copyTimelineImage);
  copyAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  connect(view, &TimelineView::rowsContextMenu, this,
          [this, exportAction, copyAction, vp](const TrackRow& row, QPoint globalPos) {
            QMenu menu(this);
            notes_->setContextRow(&row);  // a note added here starts with the row's GPU or rank
            menu.addAction(notes_->addAction());
            menu.addSeparator();
            menu.addAction(exportAction);
            menu.addAction(copyAction);
            menu.addSeparator();
            menu.addAction(tr("Fit All"), vp, &Viewport::fitAll);
            menu.exec(globalPos);
            notes_->setContextRow(nullptr);
          });
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  actions_.open = open;
  actions_.import = importAction;
}

void MainWindow::createNavigateMenu() {
  Viewport* vp = page_->viewport();
  QMenu* nav = menuBar()->addMenu(tr("&Navigate"));
  QAction* fit = nav->addAction(tr("Fit &All"), vp, &Viewport::fitAll);
  fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  fit->setToolTip(tr("Show the whole run (0 or Home in the timeline)"));
  QAction* fitSel = nav->addAction(tr("Fit &Selection"), vp, &Viewport::fitSelection);
  fitSel->setToolTip(tr("Zoom to the selected range (F in the timeline)"));
  QAction* back = nav->addAction(tr("&Back"), vp, &Viewport::goBack);
  back->setShortcuts({QKeySequence(Qt::ALT | Qt::Key_Left), QKeySequence::Back});
  QAction* fwd = nav->addAction(tr("&Forward"), vp, &Viewport::goForward);
  fwd->setShortcuts({QKeySequence(Qt::ALT | Qt::Key_Right), QKeySequence::Forward});
  auto syncHistory = [vp, back, fwd] {
    back->setEnabled(vp->canGoBack());
    fwd->setEnabled(vp->canGoForward());
  };
  connect(vp, &Viewport::historyChanged, this, syncHistory);
  syncHistory();
  nav->addSeparator();
  QAction* alignKernels =
      nav->addAction(tr("Align Compared Runs at Selected &Kernels"), this, [this] {
        const CompareSettings& cs = compare_->settings();
        auto a = lastKernel_.find(cs.runA), b = lastKernel_.find(cs.runB);
        if (!compare_->active() || a == lastKernel_.end() || b == lastKernel_.end()) {
          QMessageBox::information(this, tr("Align at kernels"),
                                   tr("Open two runs, click a kernel of run A, then one of run B, "
                                      "and choose this again: their starts will line up."));
          return;
        }
        compare_->alignAtEvents(a->second.first, b->second.first);
      });
  alignKernels->setToolTip(
      tr("Line up the last kernel clicked in run A with the last one in run B"));
  nav->addSeparator();
  QAction* find = nav->addAction(tr("&Find Kernel…"), page_->findBar(), &FindBar::activate);
  find->setShortcut(QKeySequence::Find);
  QAction* findNext = nav->addAction(tr("Find &Next"), page_->findBar(), &FindBar::next);
  findNext->setShortcut(QKeySequence::FindNext);
  QAction* findPrev = nav->addAction(tr("Find &Previous"), page_->findBar(), &FindBar::previous);
  findPrev->setShortcut(QKeySequence::FindPrevious);
  nav->addSeparator();
  auto* keys = nav->addAction(tr("Keyboard and mouse…"));
  connect(keys, &QAction::triggered, this, [this] {
    QMessageBox::information(
        this, tr("Keyboard and mouse"),
        tr("<table cellspacing=4>"
           "<tr><td><b>W / S</b></td><td>zoom in / out at the cursor</td></tr>"
           "<tr><td><b>A / D</b>, ← / →</td><td>pan left / right</td></tr>"
           "<tr><td><b>Ctrl + wheel</b></td><td>zoom at the cursor</td></tr>"
           "<tr><td><b>Wheel</b></td><td>scroll tracks; Shift + wheel pans</td></tr>"
           "<tr><td><b>Drag</b></td><td>select a time range</td></tr>"
           "<tr><td><b>Shift + drag</b>, middle drag</td><td>pan</td></tr>"
           "<tr><td><b>F</b></td><td>fit the selection (or the selected kernel)</td></tr>"
           "<tr><td><b>0</b>, Home</td><td>fit the whole run</td></tr>"
           "<tr><td><b>N / Shift + N</b></td><td>next / previous throttle interval (of the GPU "
           "under the cursor, else of any GPU)</td></tr>"
           "<tr><td><b>Esc</b></td><td>clear the selection</td></tr>"
           "<tr><td><b>Alt + ← / →</b></td><td>zoom history back / forward</td></tr>"
           "<tr><td><b>Ctrl + F</b>, F3</td><td>find kernels by name, next match</td></tr>"
           "<tr><td><b>Click</b> a kernel</td><td>details; double-click zooms to it</td></tr>"
           "<tr><td><b>Click</b> a group label</td><td>fold or unfold it</td></tr>"
           "<tr><td><b>Ctrl + E</b></td><td>export the timeline as PNG, SVG or PDF</td></tr>"
           "<tr><td><b>Ctrl + Shift + C</b></td><td>copy the timeline as an image</td></tr>"
           "<tr><td><b>Ctrl + Shift + S</b></td><td>save the view (File > Open reopens "
           "it)</td></tr>"
           "<tr><td><b>Ctrl + Alt + C / V</b></td><td>copy the view as one line, open a "
           "copied view</td></tr>"
           "<tr><td><b>Right click</b></td><td>export or copy a timeline, chart or table</td></tr>"
           "</table>"));
  });
  actions_.back = back;
  actions_.forward = fwd;
  actions_.fit = fit;
  actions_.fitSelection = fitSel;
  actions_.find = find;
  actions_.keys = keys;
}

void MainWindow::createViewMenu() {
  TimelineView* view = page_->view();
  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  heatmapAction_ = viewMenu->addAction(tr("&Heatmap of GPUs"));
  heatmapAction_->setCheckable(true);
  heatmapAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
  heatmapAction_->setToolTip(tr("One thin row per GPU coloured by a metric (for many GPUs)"));
  connect(heatmapAction_, &QAction::toggled, this, &MainWindow::rebuildRows);
  QMenu* yMenu = viewMenu->addMenu(tr("Counter &Y Range"));
  auto* yGroup = new QActionGroup(this);
  const std::pair<QString, YMode> yModes[] = {
      {tr("Shared per metric, clocks and temperatures fitted to their values"),
       YMode::SharedFitted},
      {tr("Shared per metric, from zero (hotter GPUs stand out)"), YMode::SharedPerMetric},
      {tr("Per track (whole run)"), YMode::PerTrack},
      {tr("Fit visible data"), YMode::FitVisible}};
  for (const auto& [label, mode] : yModes) {
    QAction* a = yMenu->addAction(label);
    a->setObjectName(QStringLiteral("yMode_") + yModeName(mode));  // view files set it
    a->setCheckable(true);
    a->setChecked(mode == YMode::SharedFitted);
    yGroup->addAction(a);
    const YMode m = mode;
    connect(a, &QAction::triggered, view, [view, m] { view->setYMode(m); });
  }
  QAction* throttleHeatmap = viewMenu->addAction(tr("Heatmap of GPUs: Thro&ttling"));
  throttleHeatmap->setToolTip(
      tr("Every GPU as one row coloured by its throttle reason, stronger the deeper the clock "
         "deficit"));
  connect(throttleHeatmap, &QAction::triggered, this, [this] {
    const int i = heatmapMetric_->findData(QString::fromLatin1(kThrottleHeatmapMetric));
    if (i < 0) {
      statusBar()->showMessage(tr("The run has no SM clock: nothing to say about throttling."),
                               5000);
      return;
    }
    heatmapMetric_->setCurrentIndex(i);
    if (heatmapAction_->isChecked())
      rebuildRows();
    else
      heatmapAction_->setChecked(true);
  });
  QAction* tint = viewMenu->addAction(tr("Throttle &Bands Behind Tracks"));
  tint->setObjectName(QStringLiteral("throttleBands"));
  tint->setCheckable(true);
  tint->setChecked(false);
  tint->setToolTip(
      tr("Tint every track of a GPU where it throttled (the throttle strip under "
         "each GPU's header shows it once)"));
  connect(tint, &QAction::toggled, page_, &TimelinePage::setThrottleTint);
  QMenu* layoutMenu = viewMenu->addMenu(tr("&Compare Layout"));
  layoutMenu->setToolTip(tr("How two compared runs share the timeline"));
  compareLayout_ = new QActionGroup(this);
  const QString savedLayout = QSettings().value("compare/layout", "paired").toString();
  for (const auto& [label, layout] :
       {std::pair{tr("&Paired (GPU k of A, of B, A − B)"), CompareLayout::Paired},
        std::pair{tr("&Overlay (A and B in one track)"), CompareLayout::Overlay},
        std::pair{tr("&Stacked (all of A, all of B, then A − B)"), CompareLayout::Stacked}}) {
    QAction* a = layoutMenu->addAction(label);
    a->setCheckable(true);
    a->setData(static_cast<int>(layout));
    a->setObjectName(QStringLiteral("compareLayout_") + compareLayoutName(layout));
    a->setChecked(compareLayoutName(layout) == savedLayout);
    compareLayout_->addAction(a);
    const CompareLayout l = layout;
    connect(a, &QAction::triggered, this, [this, l] {
      QSettings().setValue("compare/layout", compareLayoutName(l));
      rebuildRows();
    });
  }
  if (!compareLayout_->checkedAction()) compareLayout_->actions().front()->setChecked(true);
  QMenu* themeMenu = viewMenu->addMenu(tr("&Theme"));
  auto* themeGroup = new QActionGroup(this);
  const QString savedTheme = QSettings().value("theme", "system").toString();
  for (const auto& [label, id] : {std::pair{tr("System"), QStringLiteral("system")},
                                  std::pair{tr("Light"), QStringLiteral("light")},
                                  std::pair{tr("Dark"), QStringLiteral("dark")}}) {
    QAction* a = themeMenu->addAction(label);
    a->setObjectName(QStringLiteral("theme_") + id);
    a->setCheckable(true);
    a->setChecked(id == savedTheme);
    themeGroup->addAction(a);
    const QString themeId = id;
    connect(a, &QAction::triggered, this, [this, themeId] { applyTheme(themeId); });
  }
  viewMenu->addSeparator();
  if (auto* whatifDock = findChild<QDockWidget*>(QStringLiteral("whatifDock"))) {
    QAction* whatIf = viewMenu->addAction(tr("&What If… (Power Limit, Inlet)"), this, [whatifDock] {
      whatifDock->show();
      whatifDock->raise();
    });
    whatIf->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    whatIf->setToolTip(whatifDock->toggleViewAction()->toolTip());
  }
  for (QDockWidget* d : findChildren<QDockWidget*>())
    viewMenu->addAction(d->toggleViewAction());
}

void MainWindow::createHelpMenuAndToolbar() {
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(actions_.keys);
  help->addAction(tr("&About Wattline"), this, &MainWindow::showAbout);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);

  QToolBar* tb = addToolBar(tr("Main"));
  tb->setObjectName(QStringLiteral("mainToolbar"));
  tb->addAction(actions_.open);
  tb->addAction(actions_.import);
  tb->addSeparator();
  tb->addAction(actions_.back);
  tb->addAction(actions_.forward);
  tb->addAction(actions_.fit);
  tb->addAction(actions_.fitSelection);
  tb->addSeparator();
  tb->addAction(heatmapAction_);
  heatmapMetric_ = new QComboBox(this);
  heatmapMetric_->setToolTip(tr("Metric of the heatmap"));
  heatmapMetric_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tb->addWidget(heatmapMetric_);
  connect(heatmapMetric_, &QComboBox::currentIndexChanged, this, [this] {
    if (heatmapAction_->isChecked()) rebuildRows();
  });
  tb->addSeparator();
  tb->addAction(actions_.find);
}

void MainWindow::applyTheme(const QString& name) {
  QSettings().setValue("theme", name);
  static const QPalette systemPalette = QApplication::palette();
  if (name == QLatin1String("dark")) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(darkPalette());
    page_->setTheme(Theme::dark());
  } else if (name == QLatin1String("light")) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(QApplication::style()->standardPalette());
    page_->setTheme(Theme::light());
  } else {
    QApplication::setPalette(systemPalette);
    page_->setTheme(Theme::fromPalette(systemPalette));
  }
  matrix_->setTheme(page_->view()->renderer().style().theme);
}

void MainWindow::copyTimelineImage() {
  if (page_->store()->runs().empty()) return;
  const auto fig = timelineFigure(*page_, true);
  FigureOptions o;
  o.size = FigureSize{static_cast<double>(page_->view()->width()),
                      static_cast<double>(page_->view()->height()), SizeUnit::Pixels, 96};
  copyToClipboard(*fig, o);
  statusBar()->showMessage(tr("Timeline copied to the clipboard (image and SVG)"), 4000);
}

void MainWindow::openStudy(const QStringList& paths) {
  auto* w = new StudyWindow(this);
  w->setWindowFlag(Qt::Window);
  connect(w, &StudyWindow::openRunRequested, this, [this](const QString& path) {
    openRun(path);
    raise();
    activateWindow();
  });
  w->show();
  w->addRuns(paths);
}

void MainWindow::openRun(const QString& path) {
  if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) ||
      path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive) ||
      path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive) ||
      path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) {
    if (views_->openFile(path)) recent_->add(QFileInfo(path).absoluteFilePath());
    return;
  }
  session_->open(path);
}

bool MainWindow::openViewText(const QByteArray& json, const QString& source) {
  return views_->openText(json, source, QDir::currentPath());
}

void MainWindow::showOpenDialog() {
  const QString dir = QSettings().value("lastOpenDir").toString();
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Open Run"), dir,
      tr("Wattline runs and views (*.h5 *.hdf5 *.json *.svg *.png *.pdf);;All files (*)"));
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
