// SPDX-License-Identifier: GPL-3.0-or-later
// Axes and sizes of exported figures, against values worked out by hand.
#include <gtest/gtest.h>

#include "loaders/core/error.h"
#include "widgets/export/figure.h"
#include "widgets/timeline/render/axis_ticks.h"

namespace wl {
namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000'000'000'000;

QStringList majorLabels(const TimeAxis& a) {
  QStringList out;
  for (const AxisTick& t : a.ticks)
    if (t.major) out << t.label;
  return out;
}

TEST(TimeAxis, OneMinuteOver600PixelsTicksEveryTenSeconds) {
  // 60 s over 600 px is 0.1 s per px; 90 px apart is 9 s, so the step is 10 s (1-2-5 steps).
  const TimeAxis a = timeAxis(TimeMapping{kT0, kT0 + 60 * kS, 600}, kT0, 90);
  EXPECT_EQ(a.unit, QStringLiteral("s"));
  EXPECT_EQ(a.step, 10 * kS);
  EXPECT_EQ(a.minor, 2 * kS);
  EXPECT_EQ(majorLabels(a), (QStringList{"0", "10", "20", "30", "40", "50", "60"}));
  // Tick at 30 s sits at x = 300.
  for (const AxisTick& t : a.ticks) {
    if (t.label == QLatin1String("30")) {
      EXPECT_DOUBLE_EQ(t.pos, 300.0);
    }
  }
  EXPECT_EQ(timeAxisTitle(a), QStringLiteral("Time since run start (s)"));
}

TEST(TimeAxis, OneHourTicksEveryFiveMinutes) {
  // 3600 s over 1400 px: 90 px is 231 s, the next whole-minute step is 5 min.
  const TimeAxis a = timeAxis(TimeMapping{kT0, kT0 + 3600 * kS, 1400}, kT0, 90);
  EXPECT_EQ(a.unit, QStringLiteral("min"));
  EXPECT_EQ(a.step, 300 * kS);
  EXPECT_EQ(a.minor, 60 * kS);
  QStringList expected;
  for (int m = 0; m <= 60; m += 5)
    expected << QString::number(m);
  EXPECT_EQ(majorLabels(a), expected);
}

TEST(TimeAxis, ZoomedRangeCountsFromTheRunStart) {
  // [12.3 s, 12.31 s) of a run: 10 ms over 500 px, 100 px apart = 2 ms steps, labelled in ms
  // since the run start, not since the view's left edge.
  const TimeAxis a =
      timeAxis(TimeMapping{kT0 + 12'300'000'000, kT0 + 12'310'000'000, 500}, kT0, 100);
  EXPECT_EQ(a.unit, QStringLiteral("ms"));
  EXPECT_EQ(a.step, 2'000'000);
  EXPECT_EQ(majorLabels(a), (QStringList{"12300", "12302", "12304", "12306", "12308", "12310"}));
  EXPECT_DOUBLE_EQ(a.ticks.front().pos, 0.0);
}

TEST(TimeAxis, FractionalStepsGetTheirDecimals) {
  // 2 s over 800 px, 100 px apart = 0.25 s -> 0.5 s steps: "0.0", "0.5", ...
  const TimeAxis a = timeAxis(TimeMapping{kT0, kT0 + 2 * kS, 800}, kT0, 100);
  EXPECT_EQ(a.step, 500'000'000);
  EXPECT_EQ(majorLabels(a), (QStringList{"0.0", "0.5", "1.0", "1.5", "2.0"}));
}

TEST(ValueTicks, RoundNumbersWithTheDecimalsTheirStepNeeds) {
  auto labels = [](double lo, double hi, int n) {
    QStringList out;
    for (const AxisTick& t : valueTicks(lo, hi, n))
      out << t.label;
    return out;
  };
  EXPECT_EQ(labels(0, 997.5, 4), (QStringList{"0", "500"}));  // 249 -> 500
  EXPECT_EQ(labels(0, 997.5, 5), (QStringList{"0", "200", "400", "600", "800"}));
  EXPECT_EQ(labels(0, 1, 4), (QStringList{"0.0", "0.5", "1.0"}));
  EXPECT_EQ(labels(-1, 1, 4), (QStringList{"-1.0", "-0.5", "0.0", "0.5", "1.0"}));
  EXPECT_TRUE(valueTicks(5, 5, 3).empty());
}

TEST(FigureSize, CentimetresAndInchesBecomePixelsAtTheDpi) {
  // 17 cm at 300 dpi: 17 / 2.54 * 300 = 2007.87 -> 2008 px; 10 cm -> 1181.1 -> 1181 px.
  const FigureSize cm{17, 10, SizeUnit::Centimetres, 300};
  EXPECT_EQ(cm.pixels(), QSize(2008, 1181));
  EXPECT_NEAR(cm.inches().width(), 2008.0 / 300, 1e-12);
  // The layout is in 96-per-inch pixels: 2008 / 300 * 96 = 642.56.
  EXPECT_NEAR(cm.logical().width(), 642.56, 1e-9);
  const FigureSize in{3.5, 2, SizeUnit::Inches, 600};
  EXPECT_EQ(in.pixels(), QSize(2100, 1200));
  // Changing the unit keeps the physical size.
  const FigureSize px = cm.in(SizeUnit::Pixels);
  EXPECT_NEAR(px.width, 17 / 2.54 * 300, 1e-9);
  EXPECT_NEAR(px.in(SizeUnit::Centimetres).width, 17, 1e-9);
}

TEST(FigureSize, NonsenseSizesAreRefusedWithOneLine) {
  EXPECT_THROW(validateFigureSize({0, 100, SizeUnit::Pixels, 96}), Error);
  EXPECT_THROW(validateFigureSize({100, -5, SizeUnit::Pixels, 96}), Error);
  EXPECT_THROW(validateFigureSize({NAN, 100, SizeUnit::Pixels, 96}), Error);
  EXPECT_THROW(validateFigureSize({1e9, 100, SizeUnit::Pixels, 96}), Error);
  EXPECT_THROW(validateFigureSize({100, 100, SizeUnit::Pixels, 0}), Error);
  EXPECT_THROW(validateFigureSize({10, 10, SizeUnit::Pixels, 96}), Error);
  EXPECT_NO_THROW(validateFigureSize({17, 10, SizeUnit::Centimetres, 300}));
  try {
    validateFigureSize({1e9, 100, SizeUnit::Pixels, 96});
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(FigureFormat, FromTheExtension) {
  EXPECT_EQ(figureFormatFromPath("a/b.PNG"), FigureFormat::Png);
  EXPECT_EQ(figureFormatFromPath("x.svg"), FigureFormat::Svg);
  EXPECT_EQ(figureFormatFromPath("x.pdf"), FigureFormat::Pdf);
  EXPECT_FALSE(figureFormatFromPath("x.jpg"));
  EXPECT_FALSE(figureFormatFromPath("x"));
}

TEST(Caption, NamesTheConfigurationAndSaysSimulated) {
  RunInfo info;
  info.name = "llama";
  info.platform = "H100";
  info.model = "Llama3-8B";
  info.config.tp = 2;
  info.config.pp = 4;
  info.config.dp = 1;
  info.config.ep = 1;
  info.config.mbs = 4;
  info.config.nodes = 2;
  info.config.gpus_per_node = 4;
  info.simulated = true;
  EXPECT_EQ(runCaptionTitle(info), QStringLiteral("llama"));
  EXPECT_EQ(runCaptionDetail(info, 8),
            QStringLiteral("H100 · Llama3-8B · TP 2 · PP 4 · DP 1 · MBS 4 · 2 nodes × 4 GPUs · "
                           "simulated"));
  info.simulated = false;
  info.config = {};
  EXPECT_EQ(runCaptionDetail(info, 8), QStringLiteral("H100 · Llama3-8B · 8 GPUs"));
}

}  // namespace
}  // namespace wl
