// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Where a rank's kernel trace has no data (issue 28: real Kineto traces cover a few steps): the
// spans of the run outside the rank's trace windows, drawn over its kernel rows as "not traced"
// so that an empty kernel row in an untraced step is not read as an idle GPU.
//
// A trace window is a run of kernel-pyramid buckets (the level whose buckets are closest to
// kTraceBucketNs wide) in which any of the rank's tracks has an event. Neighbouring windows merge
// unless a whole iteration of the rank lies between them (a training step always launches
// kernels, so a step without any was not recorded; a shorter gap is idle time inside the trace).
// Each window's edges are the exact first start and last end of the rank's events in its edge
// buckets. Before the first window and after the last, the run is not traced.

#include <QRectF>

#include <cstdint>
#include <utility>
#include <vector>

#include "loaders/format/run_file.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/model/time_mapping.h"

class QPainter;

namespace wl {

using TimeSpan = std::pair<int64_t, int64_t>;  // [start, end) ns on the run's clock

inline constexpr int64_t kTraceBucketNs = 500'000'000;

// The rank's trace windows, ascending (empty when it has no kernels).
std::vector<TimeSpan> traceWindows(const RunFile& run, int rank);
// The parts of [run start, run end) outside the windows.
std::vector<TimeSpan> untracedSpans(const RunFile& run, const std::vector<TimeSpan>& windows);
// Whether [t0, t1) lies wholly inside a window.
bool inTracedTime(const std::vector<TimeSpan>& windows, int64_t t0, int64_t t1);

// Hatches the untraced spans over a kernel row and labels those wide enough "not traced".
void paintNotTraced(QPainter& p, const QRectF& area, const TimeMapping& map,
                    const std::vector<TimeSpan>& untraced, const Theme& theme);

}  // namespace wl
