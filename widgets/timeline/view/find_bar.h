// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The find bar (Ctrl+F): type part of a kernel name, Enter / F3 for the next match, Shift+Enter /
// Shift+F3 for the previous one; each match is revealed and selected on the timeline. The search
// runs off the UI thread.

#include <QWidget>

#include <atomic>
#include <memory>

#include "widgets/background_job.h"
#include "widgets/timeline/model/kernel_search.h"

class QLabel;
class QLineEdit;

namespace wl {

class FindBar : public QWidget {
  Q_OBJECT
 public:
  explicit FindBar(QWidget* parent = nullptr);
  ~FindBar() override;
  void setRuns(std::vector<std::shared_ptr<const RunFile>> runs);
  void activate();  // show and focus
  void next();
  void previous();
  size_t matchCount() const { return matches_.size(); }
  int current() const { return current_; }
  // Runs the search synchronously (tests).
  void searchNow(const QString& text);

 signals:
  void matchActivated(const wl::KernelMatch& match);

 protected:
  void keyPressEvent(QKeyEvent* e) override;

 private:
  void startSearch();
  void showCurrent();
  void updateLabel();

  QLineEdit* edit_;
  QLabel* label_;
  std::vector<std::shared_ptr<const RunFile>> runs_;
  std::vector<KernelMatch> matches_;
  int current_ = -1;
  QString searched_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  BackgroundJob* job_ = new BackgroundJob(this);
};

}  // namespace wl
