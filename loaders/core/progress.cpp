// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/core/progress.h"

#include <algorithm>

#include "loaders/core/error.h"

namespace wl {

void Progress::report(double fraction, std::string_view stage) const {
  if (!cb_) return;
  const double f = from_ + (to_ - from_) * std::clamp(fraction, 0.0, 1.0);
  if (!cb_(f, stage)) throw Cancelled();
}

Progress Progress::sub(double from, double to) const {
  Progress p = *this;
  p.from_ = from_ + (to_ - from_) * from;
  p.to_ = from_ + (to_ - from_) * to;
  return p;
}

}  // namespace wl
