// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/import_runner.h"

#include <QMessageBox>
#include <QMetaObject>
#include <QProgressDialog>
#include <QPushButton>

#include <cmath>
#include <new>
#include <string_view>
#include <utility>

#include "loaders/core/error.h"
#include "loaders/core/progress.h"
#include "widgets/background_job.h"

namespace wl {

ImportRunner::ImportRunner(QWidget* dialogParent, QString title)
    : QObject(dialogParent),
      dialogParent_(dialogParent),
      title_(std::move(title)),
      worker_(new BackgroundJob(this)) {
  connect(worker_, &BackgroundJob::progressChanged, this,
          [this](double fraction, const QString& stage) {
            // setValue() of a modal progress dialog processes events, in which the import can
            // finish and drop the dialog: set the label first and hold a guarded pointer.
            QPointer<QProgressDialog> dialog = progress_;
            if (!dialog) return;
            dialog->setLabelText(stage);
            dialog->setValue(static_cast<int>(std::lround(fraction * 1000)));
          });
}

ImportRunner::~ImportRunner() {
  if (job_) job_->cancel();
  worker_->waitForFinished();
}

bool ImportRunner::start(import::ImportRequest request) {
  if (job_) return false;
  job_ = std::make_shared<import::ImportJob>(std::move(request));
  progress_ = new QProgressDialog(tr("Importing..."), tr("Cancel"), 0, 1000, dialogParent_);
  progress_->setWindowTitle(title_);
  progress_->setWindowModality(Qt::WindowModal);
  progress_->setMinimumDuration(0);
  progress_->setAutoClose(false);
  progress_->setAutoReset(false);
  progress_->setValue(0);
  connect(progress_, &QProgressDialog::canceled, this, &ImportRunner::cancel);
  progress_->show();
  if (button_) button_->setEnabled(false);
  // The worker starts on the next turn of the event loop, with the progress dialog up.
  QMetaObject::invokeMethod(this, &ImportRunner::launch, Qt::QueuedConnection);
  return true;
}

void ImportRunner::launch() {
  if (!job_ || worker_->busy()) return;
  std::shared_ptr<import::ImportJob> job = job_;
  worker_->start(
      [job](const BackgroundJob::Context& ctx) -> Outcome {
        const Progress progress([&ctx, job](double f, std::string_view s) {
          ctx.progress(f, s);
          return !job->cancelRequested();
        });
        Outcome o;
        try {
          const import::ImportSummary s = job->run(progress);
          o.ok = true;
          o.output = QString::fromStdString(s.output.string());
        } catch (const Cancelled&) {
          o.cancelled = true;
        } catch (const Error& e) {
          o.message = QString::fromUtf8(e.what());
        } catch (const std::bad_alloc&) {
          o.message = tr("out of memory");
        } catch (const std::exception& e) {
          o.message = tr("internal error: %1").arg(QString::fromUtf8(e.what()));
        }
        return o;
      },
      [this](const Outcome& o) { finish(o); });
}

void ImportRunner::cancel() {
  if (job_) job_->cancel();
  if (progress_) progress_->setLabelText(tr("Cancelling..."));
}

void ImportRunner::finish(const Outcome& o) {
  job_.reset();
  if (progress_) {
    progress_->hide();
    progress_->deleteLater();
    progress_ = nullptr;
  }
  if (button_) button_->setEnabled(true);
  if (o.ok)
    emit imported(o.output);
  else if (o.cancelled)
    emit cancelled();
  else
    fail(o.message);
}

void ImportRunner::fail(const QString& message) {
  auto* box = new QMessageBox(QMessageBox::Critical, tr("Import failed"), message, QMessageBox::Ok,
                              dialogParent_);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit failed(message);
}

}  // namespace wl
