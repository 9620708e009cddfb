// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window wires the parts together: menus, the run session, the track tree dock and the
// central view. It does little itself.

#include <QMainWindow>

namespace wl {

class RunSession;
class RecentFiles;
class TrackTree;
class RunSummaryView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  void openRun(const QString& path);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void createMenus();
  void showOpenDialog();
  void showAbout();

  RunSession* session_;
  RecentFiles* recent_ = nullptr;
  TrackTree* tree_;
  RunSummaryView* summary_;
};

}  // namespace wl
