// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The runs open in one window. Opening happens on a worker thread (RunFile::open validates and
// reads metadata); the session emits runOpened() on the UI thread when a run is ready and
// openFailed() with the one-line message when it is not.

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <variant>
#include <vector>

#include "loaders/format/run_file.h"

namespace wl {

class RunSession : public QObject {
  Q_OBJECT
 public:
  explicit RunSession(QObject* parent = nullptr);

  void open(const QString& path);
  void closeAll();
  const std::vector<std::shared_ptr<const RunFile>>& runs() const { return runs_; }
  int pending() const { return pending_; }

 signals:
  void openStarted(const QString& path);
  void runOpened(const std::shared_ptr<const RunFile>& run);
  void openFailed(const QString& path, const QString& message);
  void runsChanged();

 private:
  std::vector<std::shared_ptr<const RunFile>> runs_;
  int pending_ = 0;
  // Finished opens waiting for earlier ones: sequence -> (path, run or error message).
  using Result = std::variant<std::shared_ptr<const RunFile>, QString>;
  std::map<uint64_t, std::pair<QString, Result>> done_;
  uint64_t nextSeq_ = 0, delivered_ = 0;
};

}  // namespace wl
