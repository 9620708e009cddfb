// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File > Import from Prometheus: a server URL, a time range (UTC) and a series selector; a live
// count of the GPUs the selector matches and a preview of the first series (asked of the server
// half a second after the last edit); optional trace files and a bearer-token file; the output
// file; and the import with a progress dialog that can cancel.
//
// The dialog builds the same ImportRequest as `wattline import prometheus:URL` and runs it through
// ImportRunner (the import dialog's progress, cancel and outcome); the series discovery runs in a
// BackgroundJob. The GUI thread only shows progress. Signals and the public methods are as
// in ImportDialog, so tests can drive it without pickers.

#include <QDialog>
#include <QString>
#include <QStringList>

#include <atomic>
#include <cstdint>
#include <memory>

#include "loaders/import/import_job.h"
#include "widgets/background_job.h"
#include "widgets/import_runner.h"

class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace wl {

class PrometheusDialog : public QDialog {
  Q_OBJECT
 public:
  explicit PrometheusDialog(QWidget* parent = nullptr);
  ~PrometheusDialog() override;

  void setUrl(const QString& url);
  void setRange(int64_t startNs, int64_t endNs);  // ns since the epoch (shown in UTC)
  void setSelector(const QString& selector);
  void setTraces(const QStringList& paths);
  void setOutputPath(const QString& path);
  QString outputPath() const;

  // Asks the server now (instead of after the edit delay). matchesUpdated() follows.
  void refreshMatches();
  // GPUs the selector matched at the last answer; -1 before one or after an error.
  int matchedGpus() const { return matchedGpus_; }
  QString matchText() const;
  QString previewText() const;

  // The request the fields describe; throws wl::Error (one line) for a bad field.
  import::ImportRequest request() const;
  void startImport();
  void cancelImport();
  bool isRunning() const { return runner_->running(); }

 signals:
  void matchesUpdated();
  void imported(const QString& outputPath);
  void failed(const QString& message);
  void cancelled();

 private:
  struct Matches {
    int gpus = -1;
    size_t series = 0;
    QString text, preview;
  };

  void scheduleRefresh();
  void showMatches();

  QLineEdit* url_ = nullptr;
  QDateTimeEdit* start_ = nullptr;
  QDateTimeEdit* end_ = nullptr;
  QLineEdit* selector_ = nullptr;
  QLabel* matched_ = nullptr;
  QPlainTextEdit* preview_ = nullptr;
  QLineEdit* traces_ = nullptr;
  QLineEdit* token_ = nullptr;
  QLineEdit* output_ = nullptr;
  QPushButton* importButton_ = nullptr;
  QTimer* refreshTimer_ = nullptr;
  int matchedGpus_ = -1;

  std::shared_ptr<std::atomic<bool>> discoveryCancel_;
  BackgroundJob* discovery_ = new BackgroundJob(this);
  ImportRunner* runner_ = new ImportRunner(this, tr("Import from Prometheus"));
};

}  // namespace wl
