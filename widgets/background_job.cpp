// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/background_job.h"

#include <QCoreApplication>
#include <QMetaObject>

#include <algorithm>
#include <cmath>

namespace wl {

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent) {
  state_->owner = this;
}

BackgroundJob::~BackgroundJob() {
  ++state_->generation;
  state_->owner = nullptr;
}

void BackgroundJob::Context::progress(double fraction, std::string_view stage) const {
  if (cancelled() || !std::isfinite(fraction)) return;
  const int permille = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * 1000));
  if (permille == lastPermille_ && stage == lastStage_) return;
  lastPermille_ = permille;
  lastStage_ = std::string(stage);
  auto state = state_;
  const uint64_t gen = generation_;
  const QString text = QString::fromUtf8(stage.data(), static_cast<qsizetype>(stage.size()));
  post([state, gen, permille, text] {
    if (state->owner && state->generation.load() == gen)
      emit state->owner->progressChanged(permille / 1000.0, text);
  });
}

uint64_t BackgroundJob::begin() {
  const uint64_t gen = ++state_->generation;
  setBusy(true);
  return gen;
}

void BackgroundJob::cancel() {
  ++state_->generation;
  setBusy(false);
}

void BackgroundJob::waitForFinished() {
  future_.waitForFinished();
}

bool BackgroundJob::finish(const std::shared_ptr<State>& state, uint64_t generation) {
  if (!state->owner || state->generation.load() != generation) return false;
  state->owner->setBusy(false);
  return true;
}

void BackgroundJob::post(std::function<void()> f) {
  // The application object lives as long as the event loop that runs the callback; the callback
  // checks that the job still exists before it touches it.
  if (QCoreApplication* app = QCoreApplication::instance())
    QMetaObject::invokeMethod(app, std::move(f), Qt::QueuedConnection);
}

void BackgroundJob::setBusy(bool busy) {
  if (busy_ == busy) return;
  busy_ = busy;
  emit busyChanged(busy);
}

}  // namespace wl
