// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Progress reporting and cancellation for long work (import, open, analysis, export).
//
// A Progress wraps a callback that receives a fraction in [0, 1] and a short stage text and returns
// false to cancel. report() throws wl::Cancelled when the callback says stop, so long loops only
// call report() every so often and unwind cleanly. sub() maps a part of the work onto a sub-range,
// which lets a multi-stage job hand each stage its own Progress.

#include <functional>
#include <string_view>

namespace wl {

class Progress {
 public:
  using Callback = std::function<bool(double fraction, std::string_view stage)>;

  Progress() = default;
  explicit Progress(Callback cb) : cb_(std::move(cb)) {}

  // Reports progress; throws Cancelled if the callback asks to stop.
  void report(double fraction, std::string_view stage = {}) const;
  // A Progress whose [0, 1] maps onto [from, to] of this one.
  Progress sub(double from, double to) const;
  bool active() const { return static_cast<bool>(cb_); }

 private:
  Callback cb_;
  double from_ = 0.0;
  double to_ = 1.0;
};

}  // namespace wl
