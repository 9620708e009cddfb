// SPDX-License-Identifier: GPL-3.0-or-later
#include "background_job.h"

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

void BackgroundJob::Context::progress(double fraction) const {
  if (cancelled() || !std::isfinite(fraction)) return;
  const int permille = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * 1000));
  if (state_->lastProgress.exchange(permille) / 10 == permille / 10) return;
  auto state = state_;
  const uint64_t gen = generation_;
  post([state, gen, permille] {
    if (state->owner && state->generation.load() == gen)
      emit state->owner->progressChanged(permille / 1000.0);
  });
}

uint64_t BackgroundJob::begin() {
  const uint64_t gen = ++state_->generation;
  state_->lastProgress = -1;
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
