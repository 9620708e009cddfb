// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The time ruler above the tracks: ticks labelled in run-relative time ("+12.5 s"), the absolute
// UTC time of the view's left edge (and of the cursor when hovering), and the selection. Dragging
// on the ruler selects a time range.

#include <QWidget>

#include <optional>

#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/view/viewport.h"

namespace wl {

class TimeRuler : public QWidget {
  Q_OBJECT
 public:
  TimeRuler(Viewport* viewport, int labelWidth, QWidget* parent = nullptr);
  void setRunStart(int64_t t) {
    runStart_ = t;
    update();
  }
  void setTheme(const Theme& t) {
    theme_ = t;
    update();
  }
  void setHoverTime(std::optional<int64_t> t) {
    hover_ = t;
    update();
  }
  QSize sizeHint() const override { return {400, 40}; }

  // "+1.25 s" for an offset from the run start, with as many digits as the tick step needs.
  static QString tickLabel(int64_t offset, int64_t step);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;

 private:
  int64_t timeAt(double x) const;
  Viewport* vp_;
  int labelWidth_;
  int64_t runStart_ = 0;
  Theme theme_ = Theme::light();
  std::optional<int64_t> hover_;
  std::optional<int64_t> dragStart_;
};

}  // namespace wl
