// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Charts of a comparison of two runs, shared by the Compare dock (widgets/panels/compare_panel.h)
// and the figures of `wattline export` (widgets/export/export_views.h).

#include <QString>

class QChart;

namespace wl {

struct MetricProfilePair;

// A typical iteration of one metric for one GPU pair (compare/iteration_profile.h): A's and B's
// mean over the step phase (0-100 %) as lines, their min-max bands as translucent areas, named by
// what differs (labelA, labelB). Used by the Compare dock and `export --view iteration-profile`.
QChart* makeIterationProfileChart(const MetricProfilePair& m, int gpuA, int gpuB,
                                  const QString& labelA, const QString& labelB);

}  // namespace wl
