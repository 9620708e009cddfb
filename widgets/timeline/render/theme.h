// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Colours of the timeline: backgrounds and text for light and dark palettes (and a publication
// theme for exports), one colour per kernel class, per throttle reason and per metric. The class
// and reason colours are chosen to stay distinguishable on both backgrounds.

#include <QColor>
#include <QPalette>

#include <array>
#include <string_view>

#include "loaders/core/kernel_class.h"

namespace wl {

struct Theme {
  QColor background, trackBackground, trackAltBackground, labelBackground, headerBackground;
  QColor text, mutedText, gridLine, separator, selectionFill, selectionEdge, cursor, highlight;
  std::array<QColor, kKernelClassCount> kernelClass;
  bool isDark = false;

  QColor classColor(KernelClass c) const { return kernelClass[static_cast<size_t>(c)]; }
  // The colour of a throttle band: the most severe reason present wins (HW thermal > SW thermal >
  // HW power brake > HW slowdown > SW power cap).
  // Weak bands (a reason bit without a clock drop) are drawn at a third of the strength.
  QColor reasonColor(uint32_t reasons, bool strong = true) const;
  QColor metricColor(std::string_view metric) const;
  // The two runs of an overlaid comparison (A blue, B orange: apart on both palettes and for the
  // common colour-vision deficiencies).
  QColor compareColor(bool runB) const;
  // Maps t in [0, 1] onto a perceptual colour map (inferno-like) for heatmaps; NaN -> background.
  QColor heat(double t) const;

  static Theme light();
  static Theme dark();
  // Light or dark after the application palette's window colour.
  static Theme fromPalette(const QPalette& palette);
  // White background, black text: for figures in papers.
  static Theme publication();
};

}  // namespace wl
