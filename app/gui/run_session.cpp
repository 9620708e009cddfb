// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/run_session.h"

#include <string>

#include "widgets/background_job.h"

namespace wl {

RunSession::RunSession(QObject* parent) : QObject(parent) {}

void RunSession::open(const QString& path) {
  ++pending_;
  emit openStarted(path);
  // Runs open in parallel but are delivered in the order they were asked for, so the first run
  // on the command line is run A of a comparison.
  const uint64_t seq = nextSeq_++;
  auto* job = new BackgroundJob(this);
  connect(job, &BackgroundJob::failed, this, [this, job, path, seq](const QString& message) {
    job->deleteLater();
    finished(seq, path, message);
  });
  job->start(
      [file = path.toStdString()](const BackgroundJob::Context&) { return RunFile::open(file); },
      [this, job, path, seq](std::shared_ptr<const RunFile> run) {
        job->deleteLater();
        finished(seq, path, std::move(run));
      });
}

void RunSession::finished(uint64_t seq, const QString& path, Result result) {
  done_[seq] = {path, std::move(result)};
  while (!done_.empty() && done_.begin()->first == delivered_) {
    const auto [p, r] = done_.begin()->second;
    done_.erase(done_.begin());
    ++delivered_;
    --pending_;
    if (const auto* run = std::get_if<std::shared_ptr<const RunFile>>(&r)) {
      runs_.push_back(*run);
      emit runOpened(*run);
      emit runsChanged();
    } else {
      emit openFailed(p, std::get<QString>(r));
    }
  }
}

void RunSession::closeAll() {
  runs_.clear();
  emit runsChanged();
}

}  // namespace wl
