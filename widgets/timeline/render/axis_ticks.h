// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Axes of the timeline's frame, as plain values so tests can check them without pixels: the time
// axis of a figure (ticks in run-relative time with one unit for the whole axis, as a paper figure
// needs: "Time since run start (min)" with labels 0, 5, 10...), the screen ruler's ticks ("+12.5
// s" from the run start) and value axes (nice ticks with as many decimals as the step needs).

#include <QString>

#include <cstdint>
#include <vector>

#include "widgets/timeline/model/time_mapping.h"

namespace wl {

struct AxisTick {
  double pos = 0;  // x (time axis, pixels from the content's left edge) or the value
  QString label;   // empty for minor ticks
  bool major = true;
};

struct TimeAxis {
  QString unit;                 // "ns", "us", "ms", "s", "min", "h"
  int64_t step = 0;             // between major ticks, ns
  int64_t minor = 0;            // between minor ticks, ns
  std::vector<AxisTick> ticks;  // major and minor, in x order
};

// Ticks of [map.t0, map.t1] at multiples of the step counted from `origin` (the run start), about
// `minSpacingPx` apart. Steps under 30 s come from niceTimeStep (1, 2, 5 x 10^k ns, labelled in
// ns, us, ms or s); longer ones are whole minutes or hours (1, 2, 5, 10, 15, 20, 30 min, 1, 2, 3,
// 6, 12, 24 h).
TimeAxis timeAxis(const TimeMapping& map, int64_t origin, double minSpacingPx);

// The axis title of a time axis: "Time since run start (s)".
QString timeAxisTitle(const TimeAxis& axis);

// Value ticks of [min, max] with about `approxCount` ticks (niceTicks), labelled with the
// decimals their step needs ("0.5", "1.0", "1.5"; "200", "400").
std::vector<AxisTick> valueTicks(double min, double max, int approxCount);

// A unit as printed on an axis: "°C" for "C", else the unit itself.
QString unitText(const QString& unit);
// A value as tick labels print it: as many decimals as the tick step needs.
QString tickValueText(double v, double step);

}  // namespace wl
