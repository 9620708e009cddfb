// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/panels/notes_panel.h"

#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "loaders/core/time_format.h"

namespace wl {

QString noteRangeText(const Note& n) {
  return QStringLiteral("%1 – %2").arg(QString::fromStdString(formatDuration(n.start_ns)),
                                       QString::fromStdString(formatDuration(n.end_ns)));
}

QString noteScopeText(const Note& n) {
  QString s = n.gpus.empty() ? (n.ranks.empty() ? QObject::tr("all") : QObject::tr("none"))
                             : QString::fromStdString(formatIdList(n.gpus));
  if (!n.ranks.empty())
    s += QObject::tr("; ranks %1").arg(QString::fromStdString(formatIdList(n.ranks)));
  return s;
}

NotesPanel::NotesPanel(QWidget* parent) : QWidget(parent) {
  tree_ = new QTreeWidget(this);
  tree_->setObjectName(QStringLiteral("notesTree"));
  tree_->setColumnCount(3);
  tree_->setHeaderLabels({tr("Range"), tr("GPUs"), tr("Text")});
  tree_->setRootIsDecorated(false);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->header()->setStretchLastSection(true);
  tree_->installEventFilter(this);
  hint_ = new QLabel(tr("Select a range in the timeline and press M (or right-click > Add "
                        "Note…) to pin a note to it."),
                     this);
  hint_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(tree_);
  layout->addWidget(hint_);
  connect(tree_, &QTreeWidget::itemClicked, this, [this] {
    if (const NoteEntry* e = current()) emit activated(e->run, static_cast<int>(e->index));
  });
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this] {
    if (const NoteEntry* e = current()) emit editRequested(e->run, static_cast<int>(e->index));
  });
}

void NotesPanel::setNotes(std::vector<NoteEntry> notes) {
  notes_ = std::move(notes);
  tree_->clear();
  for (size_t i = 0; i < notes_.size(); ++i) {
    const NoteEntry& e = notes_[i];
    QString range = noteRangeText(e.note);
    if (!e.runName.isEmpty()) range = e.runName + QStringLiteral(": ") + range;
    auto* item = new QTreeWidgetItem(
        tree_, {range, noteScopeText(e.note), QString::fromStdString(e.note.text)});
    item->setData(0, Qt::UserRole, static_cast<int>(i));
    item->setToolTip(2, QString::fromStdString(e.note.text));
  }
  for (int c = 0; c < 2; ++c)
    tree_->resizeColumnToContents(c);
  hint_->setVisible(notes_.empty());
}

const NoteEntry* NotesPanel::current() const {
  const QTreeWidgetItem* item = tree_->currentItem();
  if (!item) return nullptr;
  const int i = item->data(0, Qt::UserRole).toInt();
  return i >= 0 && static_cast<size_t>(i) < notes_.size() ? &notes_[static_cast<size_t>(i)]
                                                          : nullptr;
}

bool NotesPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == tree_ && event->type() == QEvent::KeyPress) {
    const NoteEntry* e = current();
    const int key = static_cast<QKeyEvent*>(event)->key();
    if (e && (key == Qt::Key_Return || key == Qt::Key_Enter)) {
      emit activated(e->run, static_cast<int>(e->index));
      return true;
    }
    if (e && (key == Qt::Key_Delete || key == Qt::Key_Backspace)) {
      emit removeRequested(e->run, static_cast<int>(e->index));
      return true;
    }
    if (e && key == Qt::Key_F2) {
      emit editRequested(e->run, static_cast<int>(e->index));
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace wl
