// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File > Open Study: a window of its own holding the study view (the comparison table and the
// seed paper's figures for many runs). It wires the view to a menu (add runs, export the table or
// the figure, close) and hands double-clicked runs to the main window to open on the timeline.

#include <QMainWindow>

namespace wl {

class StudyView;

class StudyWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit StudyWindow(QWidget* parent = nullptr);
  StudyView* view() const { return view_; }
  // Adds run files or folders of runs (folders are searched for *.h5).
  void addRuns(const QStringList& paths);

 signals:
  // A run of the table was double-clicked: open it on the timeline.
  void openRunRequested(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void addFilesDialog();
  void addFolderDialog();

  StudyView* view_;
};

}  // namespace wl
