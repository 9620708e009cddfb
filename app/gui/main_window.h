// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window wires the parts together: menus and toolbar, the run session, the timeline page
// in the centre, and docks for the track tree, run information and kernel details. It does little
// itself.

#include <QMainWindow>
#include <QStringList>

#include <cstdint>
#include <map>
#include <utility>

class QActionGroup;
class QComboBox;
class QDockWidget;
class QMenu;

namespace wl {

class AnalysisPanel;
class RunFile;
class ComparePanel;
class IterationMatrixView;
class KernelDetailsView;
class SelectionSummaryView;
class RecentFiles;
class RunSession;
class RunSummaryView;
class TimelinePage;
class TrackTree;
class NotesController;
class ViewController;
class WhatifPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  // Opens a run; a .json file is a view file (File > Save View), opened with its runs.
  void openRun(const QString& path);
  // Opens a view given as JSON text (`wattline --view '…'`, the clipboard); its relative run
  // paths are relative to the current folder.
  bool openViewText(const QByteArray& json, const QString& source);
  ViewController* views() const { return views_; }
  NotesController* notes() const { return notes_; }
  // Opens a study window on run files and folders of runs.
  void openStudy(const QStringList& paths);
  TimelinePage* timeline() const { return page_; }
  // The temporary file of the projection the Compare dock shows as B (What if > Open as B);
  // empty when B is not one.
  QString projectionOfB() const;
  // Copies projectionOfB() to `dest` (replacing it) and adds the copy to File > Open Recent;
  // false, with the reason in the status bar, when there is none or the copy fails.
  bool saveProjectionTo(const QString& dest);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void createActions();
  void createFileMenu();
  void createNavigateMenu();
  void createViewMenu();
  void createHelpMenuAndToolbar();
  void showOpenDialog();
  void showAbout();
  void copyTimelineImage();
  void rebuildRows();
  void applyTheme(const QString& name);
  // Applies the comparison settings: B's alignment offset, the bounds, the rows.
  void applyComparison();
  // The Iterations dock: fed by the Analysis dock's cost of throttling; a click zooms the
  // timeline to the step with the cell's GPU and rank pinned at the top.
  void connectIterationMatrix(QDockWidget* dock);
  void showMatrixCell(int gpu, int rank, int64_t t0, int64_t t1);
  // The What if dock: View > What If… shows it; its Open as B opens the projected run beside
  // the measured one (the Compare dock takes over).
  void connectWhatif(QDockWidget* dock);
  // A run just opened at `index`: when it is a temporary projection (Open as B) it becomes B
  // against run 0 and stays out of Open Recent (its file goes with the window); else it is
  // added to Open Recent.
  void recordOpened(const RunFile& run, int index);
  void saveProjectionAs();
  void closeAllRuns();
  void makeViewController();
  void makeNotes();  // the Notes dock, View > Add Note and its controller
  void addViewActions(QMenu* file);

  RunSession* session_;
  RecentFiles* recent_ = nullptr;
  ViewController* views_ = nullptr;   // File > Save View, Open View, Copy View
  NotesController* notes_ = nullptr;  // notes pinned to the timeline, the Notes dock
  TimelinePage* page_;
  TrackTree* tree_;
  RunSummaryView* summary_;
  KernelDetailsView* details_;
  SelectionSummaryView* selection_;
  AnalysisPanel* analysis_;
  ComparePanel* compare_;
  IterationMatrixView* matrix_;
  WhatifPanel* whatif_;
  QStringList projections_;  // the temporary files of Open as B (absolute paths)
  QAction* saveProjection_ = nullptr;
  std::vector<QString> matrixPins_;  // the tree keys the last matrix click pinned
  std::map<int, std::pair<int64_t, int64_t>> lastKernel_;  // run -> (start, duration) clicked
  // Actions the toolbar and the help menu share with the menus.
  struct Actions {
    QAction *open = nullptr, *import = nullptr, *back = nullptr, *forward = nullptr;
    QAction *fit = nullptr, *fitSelection = nullptr, *find = nullptr, *keys = nullptr;
  } actions_;
  QComboBox* heatmapMetric_ = nullptr;
  QAction* heatmapAction_ = nullptr;
  // View > Compare Layout (remembered in QSettings "compare/layout"; paired by default).
  QActionGroup* compareLayout_ = nullptr;
};

}  // namespace wl
