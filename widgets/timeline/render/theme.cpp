// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/theme.h"

#include <algorithm>
#include <cmath>

#include "loaders/core/metrics.h"
#include "loaders/core/throttle_reasons.h"

namespace wl {
namespace {

void commonColours(Theme& t) {
  t.kernelClass = {QColor(0x4c, 0x78, 0xa8),   // compute: blue
                   QColor(0xe4, 0x57, 0x56),   // communication: red
                   QColor(0x54, 0xa2, 0x4b),   // memory: green
                   QColor(0x9d, 0x75, 0x5d)};  // other: brown
}

}  // namespace

Theme Theme::light() {
  Theme t;
  t.background = QColor(0xff, 0xff, 0xff);
  t.trackBackground = QColor(0xff, 0xff, 0xff);
  t.trackAltBackground = QColor(0xf6, 0xf7, 0xf9);
  t.labelBackground = QColor(0xf0, 0xf1, 0xf4);
  t.headerBackground = QColor(0xe3, 0xe6, 0xeb);
  t.text = QColor(0x1d, 0x21, 0x27);
  t.mutedText = QColor(0x6a, 0x70, 0x7a);
  t.gridLine = QColor(0xe4, 0xe6, 0xea);
  t.separator = QColor(0xc9, 0xcd, 0xd4);
  t.selectionFill = QColor(0x3d, 0x7e, 0xd6, 40);
  t.selectionEdge = QColor(0x2a, 0x62, 0xb8);
  t.cursor = QColor(0x30, 0x30, 0x30, 160);
  t.highlight = QColor(0xff, 0xb0, 0x00);
  commonColours(t);
  return t;
}

Theme Theme::dark() {
  Theme t;
  t.isDark = true;
  t.background = QColor(0x1e, 0x20, 0x24);
  t.trackBackground = QColor(0x1e, 0x20, 0x24);
  t.trackAltBackground = QColor(0x24, 0x27, 0x2c);
  t.labelBackground = QColor(0x2a, 0x2d, 0x33);
  t.headerBackground = QColor(0x33, 0x37, 0x3e);
  t.text = QColor(0xe6, 0xe8, 0xeb);
  t.mutedText = QColor(0x9a, 0xa0, 0xa8);
  t.gridLine = QColor(0x33, 0x36, 0x3c);
  t.separator = QColor(0x45, 0x49, 0x51);
  t.selectionFill = QColor(0x6a, 0xa8, 0xff, 45);
  t.selectionEdge = QColor(0x8c, 0xbc, 0xff);
  t.cursor = QColor(0xf0, 0xf0, 0xf0, 160);
  t.highlight = QColor(0xff, 0xc8, 0x40);
  commonColours(t);
  t.kernelClass[0] = QColor(0x6f, 0x9b, 0xd1);
  t.kernelClass[1] = QColor(0xf0, 0x73, 0x72);
  t.kernelClass[2] = QColor(0x72, 0xc0, 0x68);
  t.kernelClass[3] = QColor(0xb8, 0x95, 0x7e);
  return t;
}

Theme Theme::fromPalette(const QPalette& palette) {
  return palette.color(QPalette::Window).lightness() < 128 ? dark() : light();
}

Theme Theme::publication() {
  Theme t = light();
  t.trackAltBackground = QColor(0xff, 0xff, 0xff);
  t.labelBackground = QColor(0xff, 0xff, 0xff);
  t.headerBackground = QColor(0xf2, 0xf2, 0xf2);
  t.text = QColor(0, 0, 0);
  t.mutedText = QColor(0x40, 0x40, 0x40);
  return t;
}

QColor Theme::reasonColor(uint32_t r, bool strong) const {
  const int a = (isDark ? 90 : 70) / (strong ? 1 : 3);
  if (r & throttle::kHwThermal) return QColor(0xb0, 0x00, 0x20, strong ? a + 20 : a);
  if (r & throttle::kSwThermal) return QColor(0xff, 0x40, 0x30, a);
  if (r & throttle::kHwPowerBrake) return QColor(0xc0, 0x30, 0xc0, a);
  if (r & throttle::kHwSlowdown) return QColor(0x80, 0x50, 0xd0, a);
  if (r & throttle::kSwPowerCap) return QColor(0xff, 0xa8, 0x00, a);
  return QColor(0x90, 0x90, 0x90, a);
}

QColor Theme::metricColor(std::string_view m) const {
  if (m == metric::kPower || m == metric::kMemPower) return QColor(0xe0, 0x8e, 0x0b);
  if (m == metric::kTemp || m == metric::kHotspotTemp) return QColor(0xd6, 0x3e, 0x3e);
  if (m == metric::kMemTemp) return QColor(0xc2, 0x5b, 0x8a);
  if (m == metric::kSmClock) return isDark ? QColor(0x6a, 0xa8, 0xff) : QColor(0x2f, 0x6f, 0xc4);
  if (m == metric::kMemClock) return QColor(0x7a, 0x5b, 0xc4);
  if (m == metric::kUtil || m == metric::kSmActive || m == metric::kTensorActive)
    return QColor(0x2e, 0x9e, 0x6a);
  return isDark ? QColor(0xb0, 0xb4, 0xbb) : QColor(0x55, 0x5b, 0x66);
}

QColor Theme::compareColor(bool runB) const {
  if (runB) return isDark ? QColor(0xff, 0xa0, 0x40) : QColor(0xd0, 0x62, 0x00);
  return isDark ? QColor(0x6a, 0xa8, 0xff) : QColor(0x1f, 0x5f, 0xb4);
}

QColor Theme::heat(double t) const {
  if (!std::isfinite(t)) return trackAltBackground;
  t = std::clamp(t, 0.0, 1.0);
  // Piecewise-linear stops approximating the 'inferno' map (dark purple -> red -> yellow).
  static const double stops[][4] = {{0.00, 0.001, 0.000, 0.014},
                                    {0.25, 0.341, 0.062, 0.429},
                                    {0.50, 0.735, 0.216, 0.330},
                                    {0.75, 0.978, 0.557, 0.035},
                                    {1.00, 0.988, 0.998, 0.645}};
  for (int i = 0; i < 4; ++i) {
    if (t <= stops[i + 1][0]) {
      const double f = (t - stops[i][0]) / (stops[i + 1][0] - stops[i][0]);
      return QColor::fromRgbF(
          static_cast<float>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
          static_cast<float>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])),
          static_cast<float>(stops[i][3] + f * (stops[i + 1][3] - stops[i][3])));
    }
  }
  return QColor::fromRgbF(0.988f, 0.998f, 0.645f);
}

}  // namespace wl
