// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The runs open in one window. Opening happens off the UI thread, one BackgroundJob per run
// (RunFile::open validates and reads metadata); the session emits runOpened() on the UI thread when
// a run is ready and openFailed() with the one-line message when it is not, in the order the runs
// were asked for.

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
  using Result = std::variant<std::shared_ptr<const RunFile>, QString>;
  // Keeps the result of open number `seq` and delivers every result whose turn has come.
  void finished(uint64_t seq, const QString& path, Result result);

  std::vector<std::shared_ptr<const RunFile>> runs_;
  int pending_ = 0;
  // Finished opens waiting for earlier ones: sequence -> (path, run or error message).
  std::map<uint64_t, std::pair<QString, Result>> done_;
  uint64_t nextSeq_ = 0, delivered_ = 0;
};

}  // namespace wl
