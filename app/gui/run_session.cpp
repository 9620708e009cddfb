// SPDX-License-Identifier: GPL-3.0-or-later
#include "gui/run_session.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <variant>

#include "core/error.h"

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
  auto* watcher = new QFutureWatcher<OpenResult>(this);
  connect(watcher, &QFutureWatcher<OpenResult>::finished, this, [this, watcher, path] {
    const OpenResult r = watcher->result();
    watcher->deleteLater();
    --pending_;
    if (const auto* run = std::get_if<std::shared_ptr<const RunFile>>(&r)) {
      runs_.push_back(*run);
      emit runOpened(*run);
      emit runsChanged();
    } else {
      emit openFailed(path, std::get<QString>(r));
    }
  });
  watcher->setFuture(QtConcurrent::run(openOffThread, path));
}

void RunSession::closeAll() {
  runs_.clear();
  emit runsChanged();
}

}  // namespace wl
