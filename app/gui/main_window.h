// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window wires the parts together: menus and toolbar, the run session, the timeline page
// in the centre, and docks for the track tree, run information and kernel details. It does little
// itself.

#include <QMainWindow>

class QComboBox;

namespace wl {

class AnalysisPanel;
class KernelDetailsView;
class SelectionSummaryView;
class RecentFiles;
class RunSession;
class RunSummaryView;
class TimelinePage;
class TrackTree;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  void openRun(const QString& path);
  TimelinePage* timeline() const { return page_; }

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void createActions();
  void showOpenDialog();
  void showAbout();
  void rebuildRows();
  void applyTheme(const QString& name);

  RunSession* session_;
  RecentFiles* recent_ = nullptr;
  TimelinePage* page_;
  TrackTree* tree_;
  RunSummaryView* summary_;
  KernelDetailsView* details_;
  SelectionSummaryView* selection_;
  AnalysisPanel* analysis_;
  QComboBox* heatmapMetric_ = nullptr;
  QAction* heatmapAction_ = nullptr;
};

}  // namespace wl
