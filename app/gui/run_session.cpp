// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/run_session.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <variant>

#include "loaders/core/error.h"

namespace wl {
namespace {

using OpenResult = std::variant<std::shared_ptr<const RunFile>, QString>;

OpenResult openOffThread(const QString& path) {
  try {
    return RunFile::open(path.toStdString());
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
}

}  // namespace

RunSession::RunSession(QObject* parent) : QObject(parent) {}

void RunSession::open(const QString& path) {
  ++pending_;
  emit openStarted(path);
  // Runs open in parallel but are delivered in the order they were asked for, so the first run
  // on the command line is run A of a comparison.
  const uint64_t seq = nextSeq_++;
  auto* watcher = new QFutureWatcher<OpenResult>(this);
  connect(watcher, &QFutureWatcher<OpenResult>::finished, this, [this, watcher, path, seq] {
    done_[seq] = {path, watcher->result()};
    watcher->deleteLater();
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
  });
  watcher->setFuture(QtConcurrent::run(openOffThread, path));
}

void RunSession::closeAll() {
  runs_.clear();
  emit runsChanged();
}

}  // namespace wl
