// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File > Import: pick telemetry and trace files or folders, see the format detected for each
// (and override it), name the run, give its platform, configuration and clock offsets, choose
// the output file, and import with a progress dialog that can cancel.
//
// The dialog builds a wl::import::ImportRequest and runs the same ImportJob as `wattline import`
// through ImportRunner (import_runner.h: a worker thread, the progress dialog, Cancel); the GUI
// thread only shows progress. On success it emits
// imported(outputPath) and closes; on failure it shows the one-line message in an error box and
// emits failed(message); a cancel emits cancelled(). Either way no partial file is left.
//
// Everything the buttons do is also a public method, so tests (and the main window) can drive
// the dialog without file pickers.

#include <QDialog>
#include <QString>
#include <QStringList>

#include <memory>
#include <string>
#include <vector>

#include "loaders/import/import_job.h"
#include "widgets/import_runner.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace wl {

class ImportDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ImportDialog(QWidget* parent = nullptr);

  // Inputs: files or folders; each is probed at once and its detected format shown.
  void addInputs(const QStringList& paths);
  void removeInput(int row);
  int inputCount() const;
  QString inputPath(int row) const;
  // The importer that will read the input ("kineto"), or "" when none does; for a folder of
  // files, the importers of its files joined by ", " ("kineto").
  QString detectedFormat(int row) const;
  // The preview text of a row: importer names and descriptions, or why it cannot be read.
  QString preview(int row) const;
  // Overrides the format of one input ("" = detect).
  void setFormatOverride(int row, const QString& importerName);

  void setOutputPath(const QString& path);
  QString outputPath() const;
  void setRunName(const QString& name);
  void setPlatform(const QString& platform);
  void setConfigText(const QString& text);   // "tp=4,pp=8,dp=1,mbs=2"
  void setOffsetsText(const QString& text);  // "SOURCE=NS" items, one per line or comma-separated
  // UTC offsets of inputs written in local time: "+02:00" for all, "SOURCE=+02:00" for one;
  // items comma- or space-separated (as --utc-offset).
  void setUtcOffsetsText(const QString& text);
  // Where logs with relative times begin (as --start-time: ISO 8601 with its zone), and the row
  // interval of DCGM dmon text in ms (as --dcgm-interval-ms); empty: not given.
  void setStartTimeText(const QString& text);
  void setDcgmIntervalText(const QString& text);

  // The request the current fields describe; throws wl::Error with a one-line message for a bad
  // field (config, offset, UTC offset, no inputs, no output).
  import::ImportRequest request() const;

  // Starts the import (the worker starts on the next turn of the event loop, after the progress
  // dialog is up). Bad fields are reported like import errors.
  void startImport();
  // Cancels a running import (the progress dialog's Cancel button does the same).
  void cancelImport();
  bool isRunning() const { return runner_->running(); }

 signals:
  void imported(const QString& outputPath);
  void failed(const QString& message);
  void cancelled();

 private:
  struct Row {
    QString path;
    std::vector<import::PlannedInput> plan;
    QString problem;
  };

  void refreshRow(int row);
  void browseFiles();
  void browseFolder();
  void browseOutput();

  QTableWidget* inputs_ = nullptr;
  QLineEdit* name_ = nullptr;
  QLineEdit* platform_ = nullptr;
  QLineEdit* config_ = nullptr;
  QPlainTextEdit* offsets_ = nullptr;
  QLineEdit* utcOffsets_ = nullptr;
  QLineEdit* startTime_ = nullptr;
  QLineEdit* dcgmInterval_ = nullptr;
  QLineEdit* output_ = nullptr;
  QPushButton* importButton_ = nullptr;
  std::vector<Row> rows_;

  ImportRunner* runner_ = new ImportRunner(this, tr("Import"));
};

}  // namespace wl
