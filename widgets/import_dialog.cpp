// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/import_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "loaders/core/error.h"

namespace wl {
namespace {

enum Column { kInput = 0, kFormat = 1, kDetected = 2 };

QString qs(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

}  // namespace

ImportDialog::ImportDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Import telemetry and traces"));
  resize(900, 560);
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("Inputs: telemetry and kernel-trace files, or folders (a folder of per-rank traces "
         "becomes one multi-rank run). The format is detected from each file's content."),
      this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  inputs_ = new QTableWidget(0, 3, this);
  inputs_->setHorizontalHeaderLabels({tr("Input"), tr("Format"), tr("Detected")});
  inputs_->horizontalHeader()->setSectionResizeMode(kInput, QHeaderView::Interactive);
  inputs_->horizontalHeader()->setSectionResizeMode(kFormat, QHeaderView::ResizeToContents);
  inputs_->horizontalHeader()->setStretchLastSection(true);
  inputs_->setColumnWidth(kInput, 320);
  inputs_->setSelectionBehavior(QAbstractItemView::SelectRows);
  inputs_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  inputs_->verticalHeader()->hide();
  layout->addWidget(inputs_, 1);

  auto* buttons = new QHBoxLayout;
  auto* addFiles = new QPushButton(tr("Add files..."), this);
  auto* addFolder = new QPushButton(tr("Add folder..."), this);
  auto* remove = new QPushButton(tr("Remove"), this);
  buttons->addWidget(addFiles);
  buttons->addWidget(addFolder);
  buttons->addWidget(remove);
  buttons->addStretch(1);
  layout->addLayout(buttons);
  connect(addFiles, &QPushButton::clicked, this, &ImportDialog::browseFiles);
  connect(addFolder, &QPushButton::clicked, this, &ImportDialog::browseFolder);
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = inputs_->currentRow();
    if (row >= 0) removeInput(row);
  });

  auto* form = new QFormLayout;
  name_ = new QLineEdit(this);
  name_->setPlaceholderText(tr("from the inputs, or the output file's name"));
  platform_ = new QLineEdit(this);
  platform_->setPlaceholderText(tr("from the device names, e.g. H100"));
  config_ = new QLineEdit(this);
  config_->setPlaceholderText("tp=4,pp=8,dp=1,mbs=2");
  config_->setToolTip(
      tr("Keys: tp, pp, dp, ep, cp, vpp, mbs, gbs, seq, nodes, gpus_per_node, "
         "recompute, overlap"));
  offsets_ = new QPlainTextEdit(this);
  offsets_->setPlaceholderText(tr("SOURCE=NS per line, e.g. rank0.json=-1500 or kineto=2.5ms"));
  offsets_->setFixedHeight(60);
  utcOffsets_ = new QLineEdit(this);
  utcOffsets_->setPlaceholderText(tr("e.g. +02:00, or gpu.csv=-05:00 for one input"));
  utcOffsets_->setToolTip(
      tr("For logs written in local time without a zone (nvidia-smi timestamps, Zeus, dmon -o DT): "
         "the machine's offset from UTC. Without it such times are read as UTC (noted in the "
         "run's data quality)."));
  startTime_ = new QLineEdit(this);
  startTime_->setPlaceholderText(tr("e.g. 2026-11-27T17:44:13.6Z or 2026-11-27T18:44:13+01:00"));
  startTime_->setToolTip(
      tr("For logs whose times are relative (dcgmi dmon, nvidia-smi dmon without a date, "
         "ZeusMonitor windows): the time their first row was written, with its zone. As "
         "wattline import --start-time."));
  dcgmInterval_ = new QLineEdit(this);
  dcgmInterval_->setPlaceholderText(tr("e.g. 100 (dcgmi dmon -d 100)"));
  dcgmInterval_->setToolTip(
      tr("DCGM dmon text has no timestamps: the interval between its rows in ms, as given to "
         "dcgmi dmon -d. As wattline import --dcgm-interval-ms."));
  output_ = new QLineEdit(this);
  auto* browse = new QPushButton(tr("Browse..."), this);
  connect(browse, &QPushButton::clicked, this, &ImportDialog::browseOutput);
  auto* outRow = new QHBoxLayout;
  outRow->addWidget(output_, 1);
  outRow->addWidget(browse);
  form->addRow(tr("Run name"), name_);
  form->addRow(tr("Platform"), platform_);
  form->addRow(tr("Configuration"), config_);
  form->addRow(tr("Clock offsets"), offsets_);
  form->addRow(tr("Local time zone (UTC offset)"), utcOffsets_);
  form->addRow(tr("Relative logs start at"), startTime_);
  form->addRow(tr("DCGM dmon row interval (ms)"), dcgmInterval_);
  form->addRow(tr("Output file"), outRow);
  layout->addLayout(form);

  auto* box = new QDialogButtonBox(this);
  importButton_ = box->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
  box->addButton(QDialogButtonBox::Close);
  connect(importButton_, &QPushButton::clicked, this, &ImportDialog::startImport);
  runner_->setButton(importButton_);
  connect(runner_, &ImportRunner::imported, this, &ImportDialog::imported);
  connect(runner_, &ImportRunner::imported, this, &QDialog::accept);
  connect(runner_, &ImportRunner::failed, this, &ImportDialog::failed);
  connect(runner_, &ImportRunner::cancelled, this, &ImportDialog::cancelled);
  connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(box);
}

void ImportDialog::addInputs(const QStringList& paths) {
  for (const QString& p : paths) {
    if (p.isEmpty()) continue;
    const int row = static_cast<int>(rows_.size());
    rows_.push_back(Row{p, {}, {}});
    inputs_->insertRow(row);
    auto* item = new QTableWidgetItem(p);
    item->setToolTip(p);
    inputs_->setItem(row, kInput, item);
    auto* combo = new QComboBox(inputs_);
    combo->addItem(tr("auto"), QString());
    for (const auto& imp : import::importers()) {
      combo->addItem(qs(imp->name()), qs(imp->name()));
      combo->setItemData(combo->count() - 1, qs(imp->description()), Qt::ToolTipRole);
    }
    connect(combo, &QComboBox::currentIndexChanged, this, [this, combo] {
      for (int r = 0; r < inputs_->rowCount(); ++r)
        if (inputs_->cellWidget(r, kFormat) == combo) refreshRow(r);
    });
    inputs_->setCellWidget(row, kFormat, combo);
    inputs_->setItem(row, kDetected, new QTableWidgetItem);
    refreshRow(row);
    if (output_->text().isEmpty()) {
      const QFileInfo fi(p);
      const QString stem = fi.isDir() ? fi.fileName() : fi.baseName();
      output_->setText(fi.absoluteDir().filePath(stem + ".h5"));
    }
  }
}

void ImportDialog::removeInput(int row) {
  if (row < 0 || row >= inputCount()) return;
  rows_.erase(rows_.begin() + row);
  inputs_->removeRow(row);
}

int ImportDialog::inputCount() const {
  return static_cast<int>(rows_.size());
}

QString ImportDialog::inputPath(int row) const {
  return row >= 0 && row < inputCount() ? rows_[static_cast<size_t>(row)].path : QString();
}

void ImportDialog::setFormatOverride(int row, const QString& importerName) {
  auto* combo = qobject_cast<QComboBox*>(inputs_->cellWidget(row, kFormat));
  if (!combo) return;
  const int i = combo->findData(importerName);
  combo->setCurrentIndex(i < 0 ? 0 : i);
  refreshRow(row);
}

void ImportDialog::refreshRow(int row) {
  if (row < 0 || row >= inputCount()) return;
  Row& r = rows_[static_cast<size_t>(row)];
  auto* combo = qobject_cast<QComboBox*>(inputs_->cellWidget(row, kFormat));
  import::ImportRequest req;
  req.inputs.push_back({r.path.toStdString(),
                        combo ? combo->currentData().toString().toStdString() : std::string()});
  r.plan.clear();
  r.problem.clear();
  try {
    r.plan = import::ImportJob(req).plan();
  } catch (const Error& e) {
    r.problem = QString::fromUtf8(e.what());
  }
  QTableWidgetItem* item = inputs_->item(row, kDetected);
  const QString text = preview(row);
  item->setText(text);
  item->setToolTip(text);
  item->setForeground(detectedFormat(row).isEmpty() ? QBrush(Qt::red) : QBrush());
}

QString ImportDialog::detectedFormat(int row) const {
  if (row < 0 || row >= inputCount()) return {};
  QStringList names;
  for (const import::PlannedInput& p : rows_[static_cast<size_t>(row)].plan)
    if (p.importer && !names.contains(qs(p.importer->name()))) names << qs(p.importer->name());
  return names.join(", ");
}

QString ImportDialog::preview(int row) const {
  if (row < 0 || row >= inputCount()) return {};
  const Row& r = rows_[static_cast<size_t>(row)];
  if (!r.problem.isEmpty()) return r.problem;
  if (r.plan.size() == 1 && r.plan[0].path == r.plan[0].given) {
    const import::PlannedInput& p = r.plan[0];
    if (!p.importer) return qs(p.problem);
    return QString("%1%2 \u2014 %3")
        .arg(qs(p.importer->name()), p.overridden ? tr(" (chosen)") : QString(),
             qs(p.importer->description()));
  }
  // A folder: how many files each importer reads, and how many are skipped.
  std::map<std::string, int> count;
  int skipped = 0;
  const import::Importer* first = nullptr;
  for (const import::PlannedInput& p : r.plan) {
    if (p.importer) {
      ++count[std::string(p.importer->name())];
      if (!first) first = p.importer;
    } else {
      ++skipped;
    }
  }
  QStringList parts;
  for (const auto& [name, n] : count)
    parts << QString("%1 \u00d7%2").arg(qs(name)).arg(n);
  QString text = tr("folder, %1 files: %2").arg(r.plan.size()).arg(parts.join(", "));
  if (skipped > 0) text += tr("; %1 not readable, skipped").arg(skipped);
  if (count.empty()) text = tr("no file in the folder is a format Wattline reads");
  if (first && count.size() == 1) text += QString(" \u2014 %1").arg(qs(first->description()));
  return text;
}

void ImportDialog::setOutputPath(const QString& path) {
  output_->setText(path);
}

QString ImportDialog::outputPath() const {
  return output_->text().trimmed();
}

void ImportDialog::setRunName(const QString& name) {
  name_->setText(name);
}

void ImportDialog::setPlatform(const QString& platform) {
  platform_->setText(platform);
}

void ImportDialog::setConfigText(const QString& text) {
  config_->setText(text);
}

void ImportDialog::setOffsetsText(const QString& text) {
  offsets_->setPlainText(text);
}

void ImportDialog::setUtcOffsetsText(const QString& text) {
  utcOffsets_->setText(text);
}

void ImportDialog::setStartTimeText(const QString& text) {
  startTime_->setText(text);
}

void ImportDialog::setDcgmIntervalText(const QString& text) {
  dcgmInterval_->setText(text);
}

wl::import::ImportRequest ImportDialog::request() const {
  // (wl:: in front: clang-format reads a line that starts with "import" as a C++20 import.)
  wl::import::ImportRequest req;
  if (rows_.empty()) throw Error("add at least one file or folder to import");
  for (int row = 0; row < inputCount(); ++row) {
    auto* combo = qobject_cast<QComboBox*>(inputs_->cellWidget(row, kFormat));
    req.inputs.push_back({rows_[static_cast<size_t>(row)].path.toStdString(),
                          combo ? combo->currentData().toString().toStdString() : std::string()});
  }
  if (outputPath().isEmpty()) throw Error("choose an output file");
  req.output = outputPath().toStdString();
  req.assemble.name = name_->text().trimmed().toStdString();
  req.assemble.platform = platform_->text().trimmed().toStdString();
  if (!config_->text().trimmed().isEmpty())
    req.assemble.config = import::parseConfig(config_->text().trimmed().toStdString());
  const QStringList items =
      offsets_->toPlainText().split(QRegularExpression("[,\\n]"), Qt::SkipEmptyParts);
  for (const QString& item : items)
    if (!item.trimmed().isEmpty())
      req.assemble.offsets.push_back(import::parseOffset(item.trimmed().toStdString()));
  for (const QString& item :
       utcOffsets_->text().split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts))
    req.utcOffsets.push_back(import::parseUtcOffset(item.toStdString()));
  if (const QString t = startTime_->text().trimmed(); !t.isEmpty())
    req.options.start_ns = import::parseStartTime(t.toStdString());
  if (const QString t = dcgmInterval_->text().trimmed(); !t.isEmpty()) {
    bool ok = false;
    const double ms = t.toDouble(&ok);
    if (!ok || !(ms > 0) || !std::isfinite(ms))
      throw Error(fmt::format("DCGM dmon row interval \"{}\": expected a positive number of ms",
                              t.toStdString()));
    req.options.dcgm_interval_ms = ms;
  }
  req.assemble.createdBy = "wattline import (GUI)";
  return req;
}

void ImportDialog::startImport() {
  if (runner_->running()) return;
  try {
    runner_->start(request());
  } catch (const Error& e) {  // a bad field, reported like an import error
    runner_->fail(QString::fromUtf8(e.what()));
  }
}

void ImportDialog::cancelImport() {
  runner_->cancel();
}

void ImportDialog::browseFiles() {
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Add telemetry or trace files"), QString(),
      tr("Traces and telemetry (*.json *.json.gz *.gz *.csv *.txt *.sqlite *.log);;All files (*)"));
  addInputs(files);
}

void ImportDialog::browseFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a folder"));
  if (!dir.isEmpty()) addInputs({dir});
}

void ImportDialog::browseOutput() {
  const QString file = QFileDialog::getSaveFileName(this, tr("Output run file"), outputPath(),
                                                    tr("Wattline runs (*.h5)"));
  if (!file.isEmpty()) setOutputPath(file);
}

}  // namespace wl
