// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/trace_coverage.h"

#include <QBrush>
#include <QCoreApplication>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace wl {

namespace {

// The exact first start or last end of the rank's events in [t0, t1).
TimeSpan exactEdges(const RunFile& run, const std::vector<size_t>& tracks, int64_t t0, int64_t t1) {
  TimeSpan out{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (size_t t : tracks) {
    const KernelSlice ks = run.readKernels(t, t0, t1, 0);
    for (const KernelEvent& e : ks.events) {
      out.first = std::min(out.first, e.start_ns);
      out.second = std::max(out.second, e.start_ns + e.dur_ns);
    }
  }
  return out;
}

}  // namespace

std::vector<TimeSpan> traceWindows(const RunFile& run, int rank) {
  std::vector<size_t> tracks;
  for (size_t t = 0; t < run.tracks().size(); ++t)
    if (run.tracks()[t].rank == rank && run.tracks()[t].count > 0) tracks.push_back(t);
  const LodGrid& grid = run.kernelGrid();
  if (tracks.empty() || grid.levels() == 0) return {};
  size_t level = 0;
  for (size_t l = 0; l < grid.levels(); ++l)
    if (std::llabs(grid.widths_ns[l] - kTraceBucketNs) <
        std::llabs(grid.widths_ns[level] - kTraceBucketNs))
      level = l;
  const size_t n = grid.buckets[level];
  std::vector<uint8_t> any(n, 0);
  for (size_t t : tracks) {
    const KernelLodBlock b = run.readKernelLod(t, level, 0, n);
    for (size_t i = 0; i < n && i < b.count.size(); ++i)
      any[i] = any[i] || b.count[i] > 0;
  }
  const int64_t w = grid.widths_ns[level];
  std::vector<TimeSpan> windows;
  for (size_t i = 0; i < n;) {
    if (!any[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < n && any[j + 1])
      ++j;
    windows.emplace_back(grid.bucketStart(level, i), grid.bucketStart(level, j) + w);
    i = j + 1;
  }
  // A gap without kernels is untraced only when a whole iteration of the rank lies in it (a
  // training step always launches kernels); other gaps are idle time inside the trace.
  std::vector<TimeSpan> steps;
  for (const Iteration& it : run.iterations())
    if (it.rank == rank) steps.emplace_back(it.start_ns, it.end_ns);
  std::vector<TimeSpan> merged;
  for (const TimeSpan& win : windows) {
    const bool untracedGap =
        !merged.empty() && std::any_of(steps.begin(), steps.end(), [&](const TimeSpan& st) {
          return st.first >= merged.back().second && st.second <= win.first;
        });
    if (!merged.empty() && !untracedGap)
      merged.back().second = win.second;
    else
      merged.push_back(win);
  }
  windows = std::move(merged);
  // Exact edges: the events of the windows' first and last buckets.
  for (TimeSpan& win : windows) {
    const TimeSpan first = exactEdges(run, tracks, win.first, win.first + w);
    const TimeSpan last = exactEdges(run, tracks, win.second - w, win.second);
    if (first.first <= first.second) win.first = std::max(win.first, first.first);
    if (last.first <= last.second) win.second = std::min(win.second, last.second);
  }
  return windows;
}

std::vector<TimeSpan> untracedSpans(const RunFile& run, const std::vector<TimeSpan>& windows) {
  std::vector<TimeSpan> out;
  int64_t at = run.info().start_ns;
  for (const TimeSpan& w : windows) {
    if (w.first > at) out.emplace_back(at, w.first);
    at = std::max(at, w.second);
  }
  if (run.info().end_ns > at) out.emplace_back(at, run.info().end_ns);
  return out;
}

bool inTracedTime(const std::vector<TimeSpan>& windows, int64_t t0, int64_t t1) {
  return std::any_of(windows.begin(), windows.end(),
                     [&](const TimeSpan& w) { return w.first <= t0 && t1 <= w.second; });
}

void paintNotTraced(QPainter& p, const QRectF& area, const TimeMapping& map,
                    const std::vector<TimeSpan>& untraced, const Theme& theme) {
  if (untraced.empty()) return;
  p.save();
  p.setClipRect(area);
  QColor hatch = theme.mutedText;
  hatch.setAlphaF(0.35);
  const QString label = QCoreApplication::translate("TraceCoverage", "not traced");
  const QFontMetricsF fm(p.font());
  for (const TimeSpan& s : untraced) {
    const double x0 = std::max(area.left(), area.left() + map.x(s.first));
    const double x1 = std::min(area.right(), area.left() + map.x(s.second));
    if (x1 - x0 < 1.0) continue;
    const QRectF r(x0, area.top(), x1 - x0, area.height());
    p.fillRect(r, QBrush(hatch, Qt::BDiagPattern));
    if (r.width() > fm.horizontalAdvance(label) + 12 && r.height() >= fm.height()) {
      p.setPen(theme.mutedText);
      p.drawText(r, Qt::AlignCenter, label);
    }
  }
  p.restore();
}

}  // namespace wl
