// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// View files in the window: File > Save View, Open View (File > Open and `wattline VIEW.json`),
// Copy View and Open View from Clipboard. It captures the window's view as a ViewState
// (widgets/viewfile/view_state.h) and applies one: it checks the view's runs (asks where a
// missing one went, warns when one changed), opens them in place of the open runs, and once
// they are open and B is aligned, sets the tracks, heatmap, comparison, theme, y axis, range and
// selection. The main window only hands it its parts and menus.

#include <QObject>
#include <QString>

#include <functional>
#include <optional>
#include <vector>

#include "widgets/viewfile/view_runs.h"
#include "widgets/viewfile/view_state.h"

class QAction;
class QActionGroup;
class QComboBox;
class QWidget;

namespace wl {

class ComparePanel;
class RunSession;
class TimelinePage;
class TrackTree;

class ViewController : public QObject {
  Q_OBJECT
 public:
  // What of the window a view reads and sets. Menus' actions are found by object name in
  // `window`: yMode_NAME, theme_NAME, throttleBands (view_controller.cpp).
  struct Parts {
    QWidget* window = nullptr;
    RunSession* session = nullptr;
    TimelinePage* page = nullptr;
    TrackTree* tree = nullptr;
    ComparePanel* compare = nullptr;
    QAction* heatmap = nullptr;
    QComboBox* heatmapMetric = nullptr;
    QActionGroup* compareLayout = nullptr;
    std::function<void()> closeAllRuns;
    std::function<void(const QString&)> openRun;
    std::function<void(const QString&, int)> status;  // a message in the status bar, for ms
    // The notes of a view once it is shown (the notes controller adds them to the runs' notes).
    std::function<void(const std::vector<ViewNote>&)> notesOpened;
  };
  explicit ViewController(Parts parts, QObject* parent = nullptr);

  // The window's view; run paths relative to `baseDir`, or absolute when it is empty. Throws
  // wl::Error when a run cannot be read to hash it; empty runs when none is open.
  ViewState capture(const QString& baseDir) const;
  // Writes the window's view to `path` (false, with the reason in the status bar, on failure).
  bool saveTo(const QString& path);
  // Opens a view file / a view's JSON text (`source` names it in messages; run paths relative
  // to `baseDir`). False when it did not start (a bad file, a run not found, the user cancelled):
  // a message box says why. Else viewApplied() follows once every part is set.
  bool openFile(const QString& path);
  bool openText(const QByteArray& json, const QString& source, const QString& baseDir);

  // The dialogs, hooks for tests: where a missing run is now ("" to cancel), and whether to go
  // on with a run whose content changed.
  std::function<QString(const ResolvedRun&, const QString& problem)> locateRun;
  std::function<bool(const QString& problem)> acceptChangedRun;

  // File menu actions.
  void saveDialog();
  void copyToClipboard();
  void openFromClipboard();

 signals:
  void viewApplied();

 private:
  bool open(const ViewState& view, const QString& baseDir, const QString& source);
  bool findRuns(const ViewState& view, const QString& baseDir, const QString& source,
                QStringList& paths);
  void runsChanged();
  void applyTracksAndComparison();
  void applyRest();

  Parts parts_;
  std::optional<ViewState> pending_;  // the view being applied
  int expectedRuns_ = 0;
  bool waitingForAlignment_ = false;
};

}  // namespace wl
