// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A one-line legend under the timeline: the kernel class colours, the throttle band colours by
// reason, and what a faint band means (the frame's screen legend, frame.h).

#include <QWidget>

#include "widgets/timeline/render/frame.h"

namespace wl {

class LegendBar : public QWidget {
  Q_OBJECT
 public:
  explicit LegendBar(QWidget* parent = nullptr);
  void setTheme(const Theme& t) {
    theme_ = t;
    update();
  }
  // Throttle bands behind the tracks are shown (their colours and the faint band's entry).
  void setThrottleBands(bool on) {
    bands_ = on;
    update();
  }
  QSize sizeHint() const override { return {800, 22}; }

  // The entries in order (exposed for tests).
  std::vector<LegendEntry> entries() const;

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  QFont legendFont() const;
  Theme theme_ = Theme::light();
  bool bands_ = false;
};

}  // namespace wl
