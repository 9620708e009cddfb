// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/find_bar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QTimer>
#include <QToolButton>

namespace wl {
namespace {
constexpr size_t kMaxMatches = 1'000'000;
}

FindBar::FindBar(QWidget* parent)
    : QWidget(parent), edit_(new QLineEdit(this)), label_(new QLabel(this)) {
  auto* lay = new QHBoxLayout(this);
  lay->setContentsMargins(6, 3, 6, 3);
  lay->addWidget(new QLabel(tr("Find kernel:"), this));
  edit_->setPlaceholderText(tr("part of a kernel name, e.g. nccl or gemm"));
  edit_->setClearButtonEnabled(true);
  lay->addWidget(edit_, 1);
  auto* prev = new QToolButton(this);
  prev->setText(QStringLiteral("▲"));
  prev->setToolTip(tr("Previous match (Shift+Enter, Shift+F3)"));
  auto* nxt = new QToolButton(this);
  nxt->setText(QStringLiteral("▼"));
  nxt->setToolTip(tr("Next match (Enter, F3)"));
  auto* close = new QToolButton(this);
  close->setText(QStringLiteral("✕"));
  close->setToolTip(tr("Close (Esc)"));
  lay->addWidget(prev);
  lay->addWidget(nxt);
  lay->addWidget(label_);
  lay->addWidget(close);
  label_->setMinimumWidth(110);
  connect(prev, &QToolButton::clicked, this, &FindBar::previous);
  connect(nxt, &QToolButton::clicked, this, &FindBar::next);
  connect(close, &QToolButton::clicked, this, &QWidget::hide);
  connect(edit_, &QLineEdit::returnPressed, this, &FindBar::next);
  // Search as the user types, after a short pause.
  auto* debounce = new QTimer(this);
  debounce->setSingleShot(true);
  debounce->setInterval(250);
  connect(edit_, &QLineEdit::textChanged, debounce, qOverload<>(&QTimer::start));
  connect(debounce, &QTimer::timeout, this, &FindBar::startSearch);
  // A kernel table that cannot be read ends the search with the reader's message.
  connect(job_, &BackgroundJob::failed, this, [this](const QString& message) {
    label_->setText(tr("search failed: %1").arg(message));
  });
  updateLabel();
}

FindBar::~FindBar() {
  // The search holds its own references to the runs; it stops at the flag and its result is
  // dropped with the job.
  if (cancel_) cancel_->store(true);
}

void FindBar::setRuns(std::vector<std::shared_ptr<const RunFile>> runs) {
  runs_ = std::move(runs);
  matches_.clear();
  current_ = -1;
  searched_.clear();
  updateLabel();
}

void FindBar::activate() {
  show();
  edit_->setFocus();
  edit_->selectAll();
}

void FindBar::searchNow(const QString& text) {
  edit_->blockSignals(true);
  edit_->setText(text);
  edit_->blockSignals(false);
  matches_ = findKernels(runs_, text.toStdString(), kMaxMatches);
  searched_ = text;
  current_ = -1;
  updateLabel();
}

void FindBar::startSearch() {
  const QString text = edit_->text().trimmed();
  if (text == searched_) return;
  if (cancel_) cancel_->store(true);
  matches_.clear();
  current_ = -1;
  searched_ = text;
  if (text.isEmpty()) {
    updateLabel();
    return;
  }
  label_->setText(tr("searching…"));
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto runs = runs_;
  auto cancel = cancel_;
  const std::string needle = text.toStdString();
  job_->start(
      [runs, cancel, needle](const BackgroundJob::Context&) {
        return findKernels(runs, needle, kMaxMatches, cancel.get());
      },
      [this](std::vector<KernelMatch> found) {
        matches_ = std::move(found);
        current_ = -1;
        updateLabel();
        if (!matches_.empty()) next();
      });
}

void FindBar::next() {
  if (edit_->text().trimmed() != searched_) {
    startSearch();
    return;
  }
  if (matches_.empty()) return;
  current_ = (current_ + 1) % static_cast<int>(matches_.size());
  showCurrent();
}

void FindBar::previous() {
  if (matches_.empty()) return;
  current_ = current_ <= 0 ? static_cast<int>(matches_.size()) - 1 : current_ - 1;
  showCurrent();
}

void FindBar::showCurrent() {
  updateLabel();
  emit matchActivated(matches_[static_cast<size_t>(current_)]);
}

void FindBar::updateLabel() {
  if (searched_.isEmpty())
    label_->setText(QString());
  else if (matches_.empty())
    label_->setText(tr("no matches"));
  else if (current_ < 0)
    label_->setText(tr("%L1 matches").arg(matches_.size()));
  else
    label_->setText(tr("%L1 of %L2").arg(current_ + 1).arg(matches_.size()));
}

void FindBar::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_Escape) {
    hide();
    return;
  }
  if (e->key() == Qt::Key_F3 || ((e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) &&
                                 (e->modifiers() & Qt::ShiftModifier))) {
    if (e->modifiers() & Qt::ShiftModifier)
      previous();
    else
      next();
    return;
  }
  QWidget::keyPressEvent(e);
}

}  // namespace wl
