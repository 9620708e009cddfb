// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/prometheus_dialog.h"

#include <QDateTimeEdit>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimeZone>
#include <QTimer>
#include <QVBoxLayout>

#include <fstream>

#include "loaders/core/error.h"
#include "loaders/import/prometheus/prometheus_import.h"

namespace wl {
namespace {

QString qs(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

int64_t toNs(const QDateTime& t) {
  return t.toMSecsSinceEpoch() * 1'000'000;
}

QDateTimeEdit* utcEdit(QWidget* parent) {
  auto* e = new QDateTimeEdit(parent);
  e->setTimeSpec(Qt::UTC);  // Qt 6.4 has no setTimeZone()
  e->setDisplayFormat("yyyy-MM-dd HH:mm:ss 'UTC'");
  e->setCalendarPopup(true);
  return e;
}

// The first line of a token file; the token is never shown.
std::string readToken(const QString& file) {
  std::ifstream in(file.toStdString(), std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line))
    throw Error(QObject::tr("%1: the token file cannot be read").arg(file).toStdString());
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  return line;
}

}  // namespace

PrometheusDialog::PrometheusDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Import from Prometheus"));
  resize(760, 480);
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("GPU telemetry scraped from dcgm-exporter or AMD's device-metrics-exporter, read as raw "
         "samples from Prometheus (or Thanos, Mimir, VictoriaMetrics) for a time range."),
      this);
  intro->setWordWrap(true);
  layout->addWidget(intro);

  auto* form = new QFormLayout;
  url_ = new QLineEdit(QStringLiteral("http://localhost:9090"), this);
  form->addRow(tr("Server URL:"), url_);
  start_ = utcEdit(this);
  end_ = utcEdit(this);
  const QDateTime now = QDateTime::currentDateTimeUtc();
  end_->setDateTime(now);
  start_->setDateTime(now.addSecs(-3600));
  auto* range = new QHBoxLayout;
  range->addWidget(start_);
  range->addWidget(new QLabel(tr("to"), this));
  range->addWidget(end_);
  range->addStretch(1);
  form->addRow(tr("Time range:"), range);
  selector_ = new QLineEdit(this);
  selector_->setPlaceholderText(
      tr("every GPU series, or e.g. {job=\"dcgm\",Hostname=~\"node0[0-7]\"}"));
  form->addRow(tr("Selector:"), selector_);
  matched_ = new QLabel(tr("GPUs matched: not asked yet"), this);
  matched_->setWordWrap(true);
  matched_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  matched_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(QString(), matched_);
  preview_ = new QPlainTextEdit(this);
  preview_->setReadOnly(true);
  preview_->setMaximumHeight(110);
  preview_->setPlaceholderText(tr("The first matching series appears here."));
  form->addRow(tr("First series:"), preview_);
  traces_ = new QLineEdit(this);
  traces_->setPlaceholderText(tr("optional: trace files of the ranks, separated by ';'"));
  auto* tracesRow = new QHBoxLayout;
  tracesRow->addWidget(traces_, 1);
  auto* browseTraces = new QPushButton(tr("Add..."), this);
  tracesRow->addWidget(browseTraces);
  form->addRow(tr("Kernel traces:"), tracesRow);
  token_ = new QLineEdit(this);
  token_->setPlaceholderText(tr("optional: a file holding a bearer token"));
  form->addRow(tr("Bearer token file:"), token_);
  output_ = new QLineEdit(this);
  auto* outputRow = new QHBoxLayout;
  outputRow->addWidget(output_, 1);
  auto* browseOutput = new QPushButton(tr("Browse..."), this);
  outputRow->addWidget(browseOutput);
  form->addRow(tr("Output run:"), outputRow);
  layout->addLayout(form);
  layout->addStretch(1);

  auto* box = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  importButton_ = box->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
  layout->addWidget(box);
  connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(importButton_, &QPushButton::clicked, this, &PrometheusDialog::startImport);
  runner_->setButton(importButton_);
  connect(runner_, &ImportRunner::imported, this, &PrometheusDialog::imported);
  connect(runner_, &ImportRunner::imported, this, &QDialog::accept);
  connect(runner_, &ImportRunner::failed, this, &PrometheusDialog::failed);
  connect(runner_, &ImportRunner::cancelled, this, &PrometheusDialog::cancelled);
  connect(browseTraces, &QPushButton::clicked, this, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Kernel traces"), QString(), tr("Traces (*.json *.json.gz *.gz);;All files (*)"));
    if (!files.isEmpty()) setTraces(files);
  });
  connect(browseOutput, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Output run file"), outputPath(),
                                                   tr("Wattline runs (*.h5)"));
    if (!f.isEmpty()) setOutputPath(f);
  });

  refreshTimer_ = new QTimer(this);
  refreshTimer_->setSingleShot(true);
  refreshTimer_->setInterval(500);
  connect(refreshTimer_, &QTimer::timeout, this, &PrometheusDialog::refreshMatches);
  for (QLineEdit* e : {url_, selector_, token_})
    connect(e, &QLineEdit::textEdited, this, &PrometheusDialog::scheduleRefresh);
  for (QDateTimeEdit* e : {start_, end_})
    connect(e, &QDateTimeEdit::dateTimeChanged, this, &PrometheusDialog::scheduleRefresh);
}

PrometheusDialog::~PrometheusDialog() {
  if (discoveryCancel_) *discoveryCancel_ = true;
  discovery_->waitForFinished();
}

void PrometheusDialog::setUrl(const QString& url) {
  url_->setText(url);
  scheduleRefresh();
}

void PrometheusDialog::setRange(int64_t startNs, int64_t endNs) {
  start_->setDateTime(QDateTime::fromMSecsSinceEpoch(startNs / 1'000'000, QTimeZone::utc()));
  end_->setDateTime(QDateTime::fromMSecsSinceEpoch(endNs / 1'000'000, QTimeZone::utc()));
}

void PrometheusDialog::setSelector(const QString& selector) {
  selector_->setText(selector);
  scheduleRefresh();
}

void PrometheusDialog::setTraces(const QStringList& paths) {
  traces_->setText(paths.join(';'));
}

void PrometheusDialog::setOutputPath(const QString& path) {
  output_->setText(path);
}

QString PrometheusDialog::outputPath() const {
  return output_->text().trimmed();
}

QString PrometheusDialog::matchText() const {
  return matched_->text();
}

QString PrometheusDialog::previewText() const {
  return preview_->toPlainText();
}

void PrometheusDialog::scheduleRefresh() {
  refreshTimer_->start();
}

import::ImportRequest PrometheusDialog::request() const {import::prom::Source src;
src.url = url_->text().trimmed().toStdString();
src.start_ns = toNs(start_->dateTime());
src.end_ns = toNs(end_->dateTime());
if (src.end_ns <= src.start_ns) throw Error("the end of the time range must be after its start");
if (!selector_->text().trimmed().isEmpty())
  src.selectors.push_back(selector_->text().trimmed().toStdString());
if (!token_->text().trimmed().isEmpty())
  src.access.bearerToken = readToken(token_->text().trimmed());
import::ImportRequest req;
req.remote.push_back(import::prom::remoteInput(src));
for (const QString& t : traces_->text().split(';', Qt::SkipEmptyParts))
  if (!t.trimmed().isEmpty()) req.inputs.push_back({t.trimmed().toStdString(), {}});
if (outputPath().isEmpty()) throw Error("no output file given");
req.output = outputPath().toStdString();
req.assemble.createdBy = "wattline import (GUI)";
return req;
}  // namespace wl

void PrometheusDialog::refreshMatches() {
  refreshTimer_->stop();
  if (discoveryCancel_) *discoveryCancel_ = true;  // a newer question replaces the running one
  import::prom::Source src;
  src.url = url_->text().trimmed().toStdString();
  src.start_ns = toNs(start_->dateTime());
  src.end_ns = toNs(end_->dateTime());
  src.access.timeoutS = 15;
  if (!selector_->text().trimmed().isEmpty())
    src.selectors.push_back(selector_->text().trimmed().toStdString());
  try {
    if (!token_->text().trimmed().isEmpty())
      src.access.bearerToken = readToken(token_->text().trimmed());
  } catch (const Error& e) {
    matched_->setText(qs(e.what()));
    return;
  }
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  discoveryCancel_ = cancel;
  matched_->setText(tr("GPUs matched: asking the server..."));
  discovery_->start(
      [src, cancel](const BackgroundJob::Context&) -> Matches {
        Matches m;
        try {
          const import::prom::Discovery d = import::prom::discover(src, cancel.get());
          m.gpus = static_cast<int>(d.gpus);
          m.series = d.series.size();
          m.text = QObject::tr("GPUs matched: %1 (%2 series)").arg(m.gpus).arg(m.series);
          if (!d.unmatched.empty())
            m.text += QObject::tr("; matched nothing: %1").arg(qs(d.unmatched.front()));
          for (const auto& [k, v] : d.series.front())
            m.preview += qs(k) + " = " + qs(v) + "\n";
        } catch (const Cancelled&) {
        } catch (const std::exception& e) {
          m.text = QObject::tr("GPUs matched: none (%1)").arg(qs(e.what()));
        }
        return m;
      },
      [this](const Matches& m) {
        matchedGpus_ = m.gpus;
        matched_->setText(m.text);
        preview_->setPlainText(m.preview);
        emit matchesUpdated();
      });
}

void PrometheusDialog::startImport() {
  if (runner_->running()) return;
  try {
    runner_->start(request());
  } catch (const Error& e) {  // a bad field, reported like an import error
    runner_->fail(QString::fromUtf8(e.what()));
  }
}

void PrometheusDialog::cancelImport() {
  runner_->cancel();
}

}  // namespace wl
