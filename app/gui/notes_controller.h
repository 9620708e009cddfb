// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Notes in the window (issue 33, item 2): Add Note (M in the timeline, the timeline's context
// menu, View > Add Note…) pins a note to the selected range, optionally to some GPUs and ranks;
// the Notes dock lists the notes (click or Enter: zoom there; Delete: remove; double-click:
// edit); the timeline draws them. Each run's notes are read from its sidecar when it opens and
// written back to it after every change (analysis/notes.h: RUN.h5.notes.json, never the run's
// file). A sidecar that cannot be read is named in a message and the run opens without notes;
// when a note is then added, the bad file is renamed to RUN.h5.notes.json.bad, not overwritten.
// View files carry the notes (view_controller.h: captured from the page, added here when a view
// opens).

#include <QObject>
#include <QString>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/notes.h"
#include "widgets/viewfile/view_state.h"

class QAction;
class QWidget;

namespace wl {

class NotesPanel;
class RunSession;
class TimelinePage;
struct TrackRow;

class NotesController : public QObject {
  Q_OBJECT
 public:
  NotesController(QWidget* window, RunSession* session, TimelinePage* page, NotesPanel* panel,
                  QObject* parent = nullptr);

  // View > Add Note… (M): a note on the selection.
  QAction* addAction() const { return add_; }
  // The row under the context menu: a note added from it starts with its run and GPU or rank.
  void setContextRow(const TrackRow* row);

  // The notes of run `run` (index in the window).
  const std::vector<Note>& notes(int run) const;
  // Adds, replaces or removes a note of a run and writes its sidecar (false, with the reason
  // in a message, when the sidecar cannot be written: the note stays in the window).
  bool add(int run, const Note& note);
  bool replace(int run, size_t index, const Note& note);
  bool remove(int run, size_t index);
  // Zooms the timeline to a note (its range selected) and scrolls to its first GPU.
  void show(int run, size_t index);
  // The notes of a view that was opened, added to its runs' notes (those not there already).
  void addViewNotes(const std::vector<ViewNote>& notes);

  // Asks for a note's text, GPUs and ranks, starting from `initial`; nullopt when cancelled.
  // A hook for tests (the default is a dialog).
  std::function<std::optional<Note>(const Note& initial, bool editing)> askNote;
  // Shows a problem (a bad sidecar, a failed write); a hook for tests (default: a message box).
  std::function<void(const QString& title, const QString& text)> warn;

  // The note Add Note would start from: the selection on run `run`'s clock, the context row's
  // GPU or rank; nullopt without a selection or a run.
  std::optional<Note> draftFromSelection(int* run) const;

 signals:
  void notesChanged();
  // A run that opened has notes (the window shows the Notes dock).
  void notesFound();

 private:
  struct RunNotes {
    std::string path;
    std::vector<Note> notes;
    bool readable = true;  // false: its sidecar could not be read (moved aside on the next save)
  };
  void runsChanged();
  void addFromSelection();
  void edit(int run, size_t index);
  bool save(int run);
  void refresh();
  std::optional<Note> dialog(const Note& initial, bool editing);

  QWidget* window_;
  RunSession* session_;
  TimelinePage* page_;
  NotesPanel* panel_;
  QAction* add_;
  std::vector<RunNotes> runs_;  // by run index in the window
  int contextRun_ = -1, contextGpu_ = -1, contextRank_ = -1;
};

}  // namespace wl
