// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The overview strip: the whole run at a glance (mean and max power over all GPUs, and where any
// GPU throttled) with the current view and selection marked. Click to centre the view there, drag
// the view box to move it, drag elsewhere to show that range. The summary is read off the UI
// thread (BackgroundJob); a read that fails hatches the strip and is reported to the tile store.

#include <QWidget>

#include <optional>

#include "widgets/background_job.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/view/viewport.h"

namespace wl {

class OverviewStrip : public QWidget {
  Q_OBJECT
 public:
  OverviewStrip(Viewport* viewport, TileStore* store, int labelWidth, QWidget* parent = nullptr);
  void setTheme(const Theme& t) {
    theme_ = t;
    update();
  }
  // Recomputes the summary curve after runs were added (in the background).
  void refresh();
  // The read of the summary failed (the strip is hatched); for tests.
  bool readFailed() const { return failed_; }
  BackgroundJob* job() const { return job_; }
  // Where any GPU of the first run was throttled (the analysis's intervals); replaces the
  // reason-bit estimate drawn until they arrive.
  void setThrottled(std::vector<TimeRange> spans);
  QSize sizeHint() const override { return {400, 46}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;

 private:
  double xOf(int64_t t) const;
  int64_t timeAt(double x) const;
  Viewport* vp_;
  TileStore* store_;
  int labelWidth_;
  Theme theme_ = Theme::light();
  QString metricLabel_;
  QString unit_;
  // Summary per top-level bucket of run 0: time, mean over GPUs, max over GPUs, throttled.
  struct Point {
    int64_t t0, t1;
    float mean, max;
    bool throttled;
  };
  // What the background read returns.
  struct Summary {
    std::vector<Point> points;
    float maxValue = 1;
    QString metricLabel, unit;
    int metric = -1;
    std::string error;  // a read that failed, with the file and what
  };
  static Summary summarize(const RunFile& run);
  static void summarizeKernels(const RunFile& run, Summary& out);
  BackgroundJob* job_;
  bool failed_ = false;
  std::vector<Point> points_;
  std::optional<std::vector<TimeRange>> throttled_;
  float maxValue_ = 1;
  enum class Drag { None, Move, Range } drag_ = Drag::None;
  int64_t grabOffset_ = 0;
  int64_t dragStart_ = 0;
};

}  // namespace wl
