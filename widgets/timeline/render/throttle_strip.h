// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Throttling at a glance: the analysis's throttle segments of every GPU of a run (busy, SM clock
// below its threshold; analysis/throttle_detection.h) as the timeline draws them in the throttle
// strip under a GPU's header and in the reason heatmap (GPU x time).
//
// Both colour a cell by reason and by depth: the hue is the reason (Theme::reasonColor, the most
// severe wins), the strength is the clock deficit, (reference clock - clock) / reference clock, so
// a GPU held 20 % below its clock reads darker than one held 3 % below, not just "throttled".
// A cell (a pixel column, of one GPU) takes the deepest deficit of the segments under it, so a
// short deep dip survives any zoom, like a counter's min-max envelope; its reason is that of the
// segment with the most time in the cell (the dominant reason).
//
// Geometry (plain per-cell arrays) is separate from painting so tests assert on it without pixels.

#include <QPainter>
#include <QRectF>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/throttle_detection.h"
#include "widgets/timeline/render/theme.h"
#include "widgets/timeline/model/time_mapping.h"

namespace wl {

// One throttled clock segment as drawn: its time, depth and reasons.
struct ThrottlePiece {
  int64_t t0 = 0, t1 = 0;
  float clockMhz = 0.0f;
  float deficit = 0.0f;  // (reference - clock) / reference, 0..1
  uint32_t reasons = 0;  // NVML slowdown bits; inferred causes mapped onto them
};

struct GpuThrottleView {
  double referenceMhz = kNaN;
  std::vector<ThrottlePiece> pieces;        // by start
  std::vector<ThrottleInterval> intervals;  // by start
};

// Per GPU of a run (indexed by GPU id).
struct RunThrottleView {
  std::vector<GpuThrottleView> gpus;
  bool empty() const;
};

// The NVML bits of a segment: its recorded slowdown bits, else its inferred causes mapped onto
// the bits of the same colour (thermal -> SW thermal, power cap -> SW power cap).
uint32_t segmentReasonBits(const ThrottleSegment& s);
// The bits of an interval (recorded, else its cause's).
uint32_t intervalReasonBits(const ThrottleInterval& iv);

RunThrottleView makeThrottleView(const std::vector<GpuThrottle>& found, size_t gpuCount);
// Runs the detector over every GPU of the whole run (seconds for 1,024 GPUs: call off the UI
// thread where it matters).
RunThrottleView computeThrottleView(const RunFile& run);

// Per pixel column: the deepest deficit (0: not throttled) and the dominant reason bits.
struct ThrottleStripGeometry {
  std::vector<float> deficit;
  std::vector<uint32_t> reasons;
};
ThrottleStripGeometry buildThrottleStrip(const GpuThrottleView& gpu, const TimeMapping& map);

// GPU x column cells, [row][column], as in a strip.
struct ThrottleHeatmapGeometry {
  size_t rows = 0, columns = 0;
  std::vector<float> deficit;
  std::vector<uint32_t> reasons;
};
ThrottleHeatmapGeometry buildThrottleHeatmap(const RunThrottleView& view, const TimeMapping& map);

// The strength (alpha, 0..1) of a cell with this deficit: 0 for none, else from 0.25 (a clock a
// hair below its reference) to 1 at kFullDeficit and beyond, along a square root: a clock held
// 5 % below its reference (a common power cap) is already clearly coloured, yet 5 % and 20 %
// read differently.
inline constexpr double kFullDeficit = 0.20;
double throttleIntensity(double deficit);
// The colour of a cell over `background` (opaque): the reason's hue at the deficit's strength.
QColor throttleCellColor(const Theme& theme, uint32_t reasons, double deficit,
                         const QColor& background);

// Paints a strip's cells into `area` (one cell per column; the raster and vector paths alike:
// runs of equal colour become one rectangle).
void paintThrottleStrip(QPainter& p, const QRectF& area, const ThrottleStripGeometry& g,
                        const Theme& theme);
// Paints the reason heatmap, one row per GPU, node separators before `separators`' rows.
void paintThrottleHeatmap(QPainter& p, const QRectF& area, const ThrottleHeatmapGeometry& g,
                          const Theme& theme, const std::vector<size_t>& separators);

// The interval at time t of a GPU, or nullptr.
const ThrottleInterval* throttleIntervalAt(const GpuThrottleView& gpu, int64_t t);
// The piece at time t of a GPU, or nullptr.
const ThrottlePiece* throttlePieceAt(const GpuThrottleView& gpu, int64_t t);

// Navigation: the next interval starting after `after` (forward) or the previous one starting
// before it (backward), of GPU `gpu` or, with gpu < 0, of any GPU (ties: the lower GPU first).
struct ThrottleJump {
  int gpu = -1;
  const ThrottleInterval* interval = nullptr;
};
ThrottleJump findThrottleInterval(const RunThrottleView& view, int gpu, int64_t after,
                                  bool forward);

// "SW power cap, SW thermal": each reason once, in the order of the NVML bits.
QString throttleReasonsText(uint32_t reasons);
// The tooltip lines of an interval: its reasons (once), its duration, its clock deficit.
QString throttleIntervalText(const ThrottleInterval& iv, double referenceMhz);

}  // namespace wl
