// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/notes_controller.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>

#include <algorithm>
#include <filesystem>

#include "app/gui/run_session.h"
#include "loaders/core/error.h"
#include "widgets/panels/notes_panel.h"
#include "widgets/timeline/render/note_bands.h"
#include "widgets/timeline/view/timeline_page.h"

namespace wl {

NotesController::NotesController(QWidget* window, RunSession* session, TimelinePage* page,
                                 NotesPanel* panel, QObject* parent)
    : QObject(parent), window_(window), session_(session), page_(page), panel_(panel) {
  add_ = new QAction(tr("Add &Note…"), this);
  add_->setObjectName(QStringLiteral("addNote"));
  add_->setShortcut(QKeySequence(Qt::Key_M));
  add_->setToolTip(tr("Pin a note to the selected range (M; like a bookmark in Perfetto)"));
  connect(add_, &QAction::triggered, this, &NotesController::addFromSelection);
  askNote = [this](const Note& n, bool editing) { return dialog(n, editing); };
  warn = [this](const QString& title, const QString& text) {
    QMessageBox::warning(window_, title, text);
  };
  connect(session_, &RunSession::runsChanged, this, &NotesController::runsChanged);
  connect(panel_, &NotesPanel::activated, this,
          [this](int run, int i) { show(run, static_cast<size_t>(i)); });
  connect(panel_, &NotesPanel::removeRequested, this,
          [this](int run, int i) { remove(run, static_cast<size_t>(i)); });
  connect(panel_, &NotesPanel::editRequested, this,
          [this](int run, int i) { edit(run, static_cast<size_t>(i)); });
}

void NotesController::runsChanged() {
  std::vector<RunNotes> now;
  bool found = false;
  for (const auto& run : session_->runs()) {
    RunNotes r;
    r.path = run->path().string();
    const auto known = std::find_if(runs_.begin(), runs_.end(),
                                    [&](const RunNotes& k) { return k.path == r.path; });
    if (known != runs_.end()) {
      now.push_back(*known);
      continue;
    }
    try {
      r.notes = readNotes(r.path);
      found = found || !r.notes.empty();
    } catch (const Error& e) {
      // The run opens regardless; its sidecar is kept as it is until a note is added.
      r.readable = false;
      warn(tr("Notes not read"),
           tr("The notes of %1 could not be read; the run opens without them.\n\n%2")
               .arg(QFileInfo(QString::fromStdString(r.path)).fileName(), e.what()));
    }
    now.push_back(std::move(r));
  }
  runs_ = std::move(now);
  refresh();
  if (found) emit notesFound();
}

const std::vector<Note>& NotesController::notes(int run) const {
  static const std::vector<Note> none;
  return run >= 0 && static_cast<size_t>(run) < runs_.size() ? runs_[static_cast<size_t>(run)].notes
                                                             : none;
}

void NotesController::setContextRow(const TrackRow* row) {
  contextRun_ = row ? row->run() : -1;
  contextGpu_ = contextRank_ = -1;
  if (!row) return;
  if (const auto* c = row->as<CounterRow>()) contextGpu_ = c->gpu;
  if (const auto* t = row->as<ThrottleStripRow>()) contextGpu_ = t->gpu;
  if (const auto* h = row->as<GroupHeaderRow>()) contextGpu_ = h->gpu, contextRank_ = h->rank;
  if (const auto* k = row->as<KernelsRow>()) contextRank_ = k->rank;
  if (const auto* s = row->as<StepsRow>()) contextRank_ = s->rank;
}

std::optional<Note> NotesController::draftFromSelection(int* run) const {
  const auto sel = page_->viewport()->selection();
  const int r = contextRun_ >= 0 ? contextRun_ : 0;
  if (!sel || static_cast<size_t>(r) >= runs_.size()) return std::nullopt;
  // The selection is on the display clock; a compared run B sits there at its offset.
  const int64_t start =
      page_->store()->run(r).info().start_ns + page_->view()->renderer().displays().runOffset(r);
  Note n{sel->t0 - start, sel->t1 - start, {}, {}, {}};
  if (contextGpu_ >= 0) n.gpus = {contextGpu_};
  if (contextRank_ >= 0) n.ranks = {contextRank_};
  *run = r;
  return n;
}

void NotesController::addFromSelection() {
  int run = 0;
  const std::optional<Note> draft = draftFromSelection(&run);
  setContextRow(nullptr);
  if (!draft) {
    warn(tr("Add Note"), tr("Select a range in the timeline first (drag over it), then add a "
                            "note to it."));
    return;
  }
  if (const std::optional<Note> n = askNote(*draft, false)) add(run, *n);
}

void NotesController::edit(int run, size_t index) {
  if (index >= notes(run).size()) return;
  if (const std::optional<Note> n = askNote(notes(run)[index], true)) replace(run, index, *n);
}

bool NotesController::add(int run, const Note& note) {
  if (run < 0 || static_cast<size_t>(run) >= runs_.size()) return false;
  runs_[static_cast<size_t>(run)].notes.push_back(note);
  return save(run);
}

bool NotesController::replace(int run, size_t index, const Note& note) {
  if (index >= notes(run).size()) return false;
  runs_[static_cast<size_t>(run)].notes[index] = note;
  return save(run);
}

bool NotesController::remove(int run, size_t index) {
  if (index >= notes(run).size()) return false;
  auto& list = runs_[static_cast<size_t>(run)].notes;
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(index));
  return save(run);
}

bool NotesController::save(int run) {
  RunNotes& r = runs_[static_cast<size_t>(run)];
  bool ok = true;
  try {
    if (!r.readable) {
      // Its unreadable sidecar is kept beside it, not overwritten.
      const std::string side = notesSidecarPath(r.path);
      std::error_code ec;
      std::filesystem::rename(side, side + ".bad", ec);
      if (ec) throw Error(side + ": cannot be moved aside to .bad (" + ec.message() + ")");
    }
    writeNotes(r.path, r.notes);
    r.readable = true;
  } catch (const Error& e) {
    ok = false;
    warn(tr("Notes not saved"), e.what());
  }
  refresh();
  return ok;
}

void NotesController::addViewNotes(const std::vector<ViewNote>& notes) {
  // The view's runs may have opened before the session said so (runsChanged comes after).
  if (runs_.size() != session_->runs().size()) runsChanged();
  for (const ViewNote& v : notes) {
    if (v.run < 0 || static_cast<size_t>(v.run) >= runs_.size()) continue;
    auto& list = runs_[static_cast<size_t>(v.run)].notes;
    if (std::find(list.begin(), list.end(), v.note) == list.end()) list.push_back(v.note);
  }
  refresh();
}

void NotesController::show(int run, size_t index) {
  if (index >= notes(run).size()) return;
  const Note& n = notes(run)[index];
  const int64_t start = page_->store()->run(run).info().start_ns +
                        page_->view()->renderer().displays().runOffset(run);
  page_->viewport()->setSelection(TimeRange{start + n.start_ns, start + n.end_ns});
  page_->viewport()->fitSelection();
  if (!n.gpus.empty()) page_->view()->scrollToGpu(run, n.gpus.front());
}

void NotesController::refresh() {
  std::vector<NoteMark> marks;
  std::vector<NoteEntry> entries;
  const bool several = runs_.size() > 1;
  for (size_t r = 0; r < runs_.size(); ++r) {
    const int run = static_cast<int>(r);
    if (r >= page_->store()->runs().size()) break;
    const RunFile& file = page_->store()->run(run);
    for (NoteMark& m : noteMarks(run, runs_[r].notes, file.info().start_ns))
      marks.push_back(std::move(m));
    for (size_t i = 0; i < runs_[r].notes.size(); ++i)
      entries.push_back(
          {run, i,
           several ? QFileInfo(QString::fromStdString(runs_[r].path)).fileName() : QString(),
           runs_[r].notes[i]});
  }
  page_->view()->setNotes(std::move(marks));
  panel_->setNotes(std::move(entries));
  emit notesChanged();
}

std::optional<Note> NotesController::dialog(const Note& initial, bool editing) {
  QDialog d(window_);
  d.setWindowTitle(editing ? tr("Edit Note") : tr("Add Note"));
  auto* text = new QLineEdit(QString::fromStdString(initial.text), &d);
  text->setPlaceholderText(tr("What happened here"));
  auto* gpus = new QLineEdit(QString::fromStdString(formatIdList(initial.gpus)), &d);
  gpus->setPlaceholderText(tr("all (or 0,2-3)"));
  auto* ranks = new QLineEdit(QString::fromStdString(formatIdList(initial.ranks)), &d);
  ranks->setPlaceholderText(tr("all (or 0,2-3)"));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &d);
  auto* form = new QFormLayout(&d);
  form->addRow(tr("Range:"), new QLabel(noteRangeText(initial) + tr(" after the run's start"), &d));
  form->addRow(tr("&Note:"), text);
  form->addRow(tr("&GPUs:"), gpus);
  form->addRow(tr("&Ranks:"), ranks);
  form->addRow(buttons);
  auto check = [&] {
    buttons->button(QDialogButtonBox::Ok)
        ->setEnabled(!text->text().trimmed().isEmpty() && parseIdList(gpus->text().toStdString()) &&
                     parseIdList(ranks->text().toStdString()));
  };
  for (QLineEdit* e : {text, gpus, ranks})
    connect(e, &QLineEdit::textChanged, &d, check);
  check();
  connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  d.resize(460, d.sizeHint().height());
  if (d.exec() != QDialog::Accepted) return std::nullopt;
  Note n = initial;
  n.text = text->text().trimmed().toStdString();
  n.gpus = parseIdList(gpus->text().toStdString()).value_or(std::vector<int>{});
  n.ranks = parseIdList(ranks->text().toStdString()).value_or(std::vector<int>{});
  return n;
}

}  // namespace wl
