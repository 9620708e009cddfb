// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Notes dock: one row per note pinned to the timeline (analysis/notes.h) with its range
// (after its run's start), its GPUs and ranks, and its text. A click or Enter on a row asks to
// show the note (the window zooms the timeline there), Delete to remove it, a double-click to
// edit it. The panel only lists and asks; app/gui/notes_controller.h owns the notes.

#include <QWidget>

#include <vector>

#include "analysis/notes.h"

class QTreeWidget;
class QLabel;

namespace wl {

// A note as the dock lists it: which run (index in the window) and which of its notes.
struct NoteEntry {
  int run = 0;
  size_t index = 0;
  QString runName;  // shown when several runs are open ("" otherwise)
  Note note;
};

// The texts of a note's columns: "12.5 s – 14 s", "all" or "0,2-3" (with "; ranks 1"), its text.
QString noteRangeText(const Note& note);
QString noteScopeText(const Note& note);

class NotesPanel : public QWidget {
  Q_OBJECT
 public:
  explicit NotesPanel(QWidget* parent = nullptr);

  void setNotes(std::vector<NoteEntry> notes);
  const std::vector<NoteEntry>& notes() const { return notes_; }
  QTreeWidget* tree() const { return tree_; }

 signals:
  void activated(int run, int index);        // click, Enter
  void removeRequested(int run, int index);  // Delete
  void editRequested(int run, int index);    // double-click, F2

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  const NoteEntry* current() const;
  std::vector<NoteEntry> notes_;
  QTreeWidget* tree_;
  QLabel* hint_;
};

}  // namespace wl
