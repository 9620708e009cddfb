// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/view/viewport.h"

#include <algorithm>
#include <cmath>

namespace wl {

Viewport::Viewport(QObject* parent) : QObject(parent) {}

void Viewport::setBounds(TimeRange bounds) {
  if (bounds.t1 <= bounds.t0) bounds.t1 = bounds.t0 + kMinSpanNs;
  bounds_ = bounds;
  back_.clear();
  forward_.clear();
  selection_.reset();
  range_ = bounds_;
  emit boundsChanged(bounds_);
  emit rangeChanged(range_);
  emit selectionChanged(selection_);
  emit historyChanged();
}

TimeRange Viewport::clamp(TimeRange r) const {
  const int64_t total = bounds_.span();
  int64_t span = std::clamp<int64_t>(r.span(), std::min(kMinSpanNs, total), total);
  int64_t start = r.t0;
  if (r.span() != span) start = r.t0 + (r.span() - span) / 2;
  start = std::clamp(start, bounds_.t0, bounds_.t1 - span);
  return {start, start + span};
}

void Viewport::apply(TimeRange r, bool coalesce) {
  r = clamp(r);
  if (r == range_) return;
  if (!coalesce || !lastPush_.isValid() || lastPush_.elapsed() > kHistoryCoalesceMs) {
    back_.push_back(range_);
    if (back_.size() > kHistoryLimit) back_.erase(back_.begin());
    forward_.clear();
    emit historyChanged();
  }
  if (coalesce)
    lastPush_.start();
  else
    lastPush_.invalidate();
  range_ = r;
  emit rangeChanged(range_);
}

void Viewport::setRange(TimeRange r) {
  apply(r, false);
}

void Viewport::zoom(double factor, int64_t anchor) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  const double left = static_cast<double>(anchor - range_.t0) * factor;
  const double right = static_cast<double>(range_.t1 - anchor) * factor;
  TimeRange r{anchor - static_cast<int64_t>(std::llround(left)),
              anchor + static_cast<int64_t>(std::llround(right))};
  if (r.span() < kMinSpanNs) {
    // Keep the anchor's relative position at the deepest zoom.
    const double frac = range_.span() > 0 ? static_cast<double>(anchor - range_.t0) /
                                                static_cast<double>(range_.span())
                                          : 0.5;
    r.t0 = anchor - static_cast<int64_t>(std::llround(frac * kMinSpanNs));
    r.t1 = r.t0 + kMinSpanNs;
  }
  apply(r, true);
}

void Viewport::pan(int64_t delta) {
  apply({range_.t0 + delta, range_.t1 + delta}, true);
}

void Viewport::fitAll() {
  apply(bounds_, false);
}

void Viewport::setSelection(std::optional<TimeRange> s) {
  if (s && s->t1 < s->t0) std::swap(s->t0, s->t1);
  if (s && s->span() <= 0) s.reset();
  if (s == selection_) return;
  selection_ = s;
  emit selectionChanged(selection_);
}

void Viewport::fitSelection() {
  if (!selection_) return;
  const int64_t margin = selection_->span() / 20;
  apply({selection_->t0 - margin, selection_->t1 + margin}, false);
}

void Viewport::goBack() {
  if (back_.empty()) return;
  forward_.push_back(range_);
  range_ = back_.back();
  back_.pop_back();
  lastPush_.invalidate();
  emit rangeChanged(range_);
  emit historyChanged();
}

void Viewport::goForward() {
  if (forward_.empty()) return;
  back_.push_back(range_);
  range_ = forward_.back();
  forward_.pop_back();
  lastPush_.invalidate();
  emit rangeChanged(range_);
  emit historyChanged();
}

}  // namespace wl
