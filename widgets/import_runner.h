// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// ImportRunner: one import (loaders/import/import_job.h) run off the UI thread with a modal
// progress dialog and Cancel; used by every dialog that imports (files and folders, Prometheus),
// so they show progress, cancel and report the outcome the same way.
//
// start() puts the progress dialog up and starts the worker on the next turn of the event loop
// (a cancel before that stops at once). Progress crosses to the UI thread through a BackgroundJob
// only when the shown permille or the stage changes. Exactly one of imported(), failed() or
// cancelled() follows each start(); a failure is also shown in an error box ("Import failed"),
// and the dialog's Import button (setButton) is disabled while an import runs. The destructor
// cancels a running import and waits for it: the import removes its temporary file on the way out,
// and no half-written run is ever left.

#include <QObject>
#include <QPointer>
#include <QPushButton>
#include <QString>

#include <memory>

#include "loaders/import/import_job.h"

class QProgressDialog;

class QWidget;

namespace wl {

class BackgroundJob;

class ImportRunner : public QObject {
  Q_OBJECT
 public:
  // The progress dialog is modal to `dialogParent` and titled `title`.
  ImportRunner(QWidget* dialogParent, QString title);
  ~ImportRunner() override;

  // Starts `request`; false (and nothing happens) while an import is running.
  bool start(import::ImportRequest request);
  // Cancels the running import (the progress dialog's Cancel button does the same).
  void cancel();
  // Reports a request that could not be made (a bad field) like a failed import.
  void fail(const QString& message);
  // The button that starts imports: disabled while one runs.
  void setButton(QPushButton* button) { button_ = button; }
  bool running() const { return job_ != nullptr; }

 signals:
  void imported(const QString& outputPath);
  void failed(const QString& message);
  void cancelled();

 private:
  struct Outcome {
    bool ok = false, cancelled = false;
    QString message, output;
  };
  void launch();
  void finish(const Outcome& o);

  QWidget* dialogParent_;
  QString title_;
  QPointer<QProgressDialog> progress_;
  QPointer<QPushButton> button_;
  std::shared_ptr<import::ImportJob> job_;
  BackgroundJob* worker_;
};

}  // namespace wl
