// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A one-line legend under the timeline: the kernel class colours, the throttle band colours by
// reason, and what a faint band means.

#include <QWidget>

#include "timeline/theme.h"

namespace wl {

class LegendBar : public QWidget {
  Q_OBJECT
 public:
  explicit LegendBar(QWidget* parent = nullptr);
  void setTheme(const Theme& t) {
    theme_ = t;
    update();
  }
  QSize sizeHint() const override { return {800, 22}; }

  struct Entry {
    QString label;
    QColor colour;
    QString tooltip;
  };
  // The entries in order (exposed for tests and exports).
  std::vector<Entry> entries() const;

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  Theme theme_ = Theme::light();
};

}  // namespace wl
