// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/timeline/render/axis_ticks.h"

#include <QObject>

#include <array>
#include <cmath>

#include "widgets/timeline/render/track_painter.h"

namespace wl {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;

// Decimals a multiple of `step` needs when printed in `unit` ns (0.25 -> 2, 0.5 -> 1, 5 -> 0).
int decimalsFor(double step) {
  int digits = 0;
  while (digits < 6 &&
         std::fabs(step * std::pow(10.0, digits) - std::round(step * std::pow(10.0, digits))) >
             1e-6 * std::pow(10.0, digits))
    ++digits;
  return digits;
}

// The first multiple of `step` counted from `origin` at or after t.
int64_t firstMultiple(int64_t t, int64_t origin, int64_t step) {
  const int64_t rel = t - origin;
  const int64_t k = rel >= 0 ? (rel + step - 1) / step : -((-rel) / step);
  return origin + k * step;
}

}  // namespace

TimeAxis timeAxis(const TimeMapping& map, int64_t origin, double minSpacingPx) {
  TimeAxis axis;
  if (map.span() <= 0 || map.width <= 0) return axis;
  const double raw = map.nsPerPx() * std::max(1.0, minSpacingPx);
  double unit = 1;
  if (raw <= 30.0 * kSecond) {
    axis.step = niceTimeStep(map.nsPerPx(), std::max(1.0, minSpacingPx));
    const int64_t mantissa = [&] {
      int64_t m = axis.step;
      while (m % 10 == 0)
        m /= 10;
      return m;
    }();
    axis.minor = std::max<int64_t>(1, axis.step / (mantissa == 2 ? 4 : 5));
    if (axis.step >= 100'000'000)
      unit = 1e9, axis.unit = QStringLiteral("s");
    else if (axis.step >= 100'000)
      unit = 1e6, axis.unit = QStringLiteral("ms");
    else if (axis.step >= 100)
      unit = 1e3, axis.unit = QStringLiteral("us");
    else
      axis.unit = QStringLiteral("ns");
  } else {
    // Whole minutes or hours, with minor ticks that divide them evenly.
    struct Step {
      int64_t major, minor;
    };
    static constexpr std::array kSteps = {
        Step{kMinute, 15 * kSecond},      Step{2 * kMinute, 30 * kSecond},
        Step{5 * kMinute, kMinute},       Step{10 * kMinute, 2 * kMinute},
        Step{15 * kMinute, 5 * kMinute},  Step{20 * kMinute, 5 * kMinute},
        Step{30 * kMinute, 10 * kMinute}, Step{kHour, 15 * kMinute},
        Step{2 * kHour, 30 * kMinute},    Step{3 * kHour, kHour},
        Step{6 * kHour, kHour},           Step{12 * kHour, 3 * kHour},
        Step{24 * kHour, 6 * kHour}};
    axis.step = 0;
    for (const Step& s : kSteps)
      if (static_cast<double>(s.major) >= raw) {
        axis.step = s.major;
        axis.minor = s.minor;
        break;
      }
    if (axis.step == 0) {  // more than a day per tick: whole days
      const auto days = static_cast<int64_t>(std::ceil(raw / static_cast<double>(24 * kHour)));
      axis.step = days * 24 * kHour;
      axis.minor = axis.step;
    }
    if (axis.step >= kHour && axis.step % kHour == 0)
      unit = static_cast<double>(kHour), axis.unit = QStringLiteral("h");
    else
      unit = static_cast<double>(kMinute), axis.unit = QStringLiteral("min");
  }
  const int digits = decimalsFor(static_cast<double>(axis.step) / unit);
  for (int64_t t = firstMultiple(map.t0, origin, axis.minor); t <= map.t1; t += axis.minor) {
    AxisTick tick;
    tick.pos = map.x(t);
    tick.major = (t - origin) % axis.step == 0;
    if (tick.major) {
      const double v = static_cast<double>(t - origin) / unit;
      tick.label = QString::number(v, 'f', digits);
      if (tick.label.startsWith(QLatin1Char('-')) && v > -0.5 * std::pow(10.0, -digits))
        tick.label.remove(0, 1);  // "-0" -> "0"
    }
    axis.ticks.push_back(tick);
    if (axis.ticks.size() > 10000) break;  // never more ticks than a figure can hold
  }
  return axis;
}

QString timeAxisTitle(const TimeAxis& axis) {
  return QObject::tr("Time since run start (%1)").arg(axis.unit);
}

std::vector<AxisTick> valueTicks(double min, double max, int approxCount) {
  std::vector<AxisTick> out;
  const std::vector<double> ticks = niceTicks(min, max, approxCount);
  if (ticks.empty()) return out;
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : std::fabs(ticks[0]);
  const int digits = step > 0 ? decimalsFor(step) : 0;
  for (double v : ticks) {
    AxisTick t;
    t.pos = v;
    t.label = QString::number(v, 'f', std::min(digits, 6));
    if (t.label.startsWith(QLatin1Char('-')) && std::fabs(v) < 0.5 * std::pow(10.0, -digits))
      t.label.remove(0, 1);
    out.push_back(t);
  }
  return out;
}

QString unitText(const QString& unit) {
  if (unit == QLatin1String("C")) return QStringLiteral("°C");
  return unit;
}

QString tickValueText(double v, double step) {
  int digits = 0;
  if (step > 0 && std::isfinite(step))
    while (digits < 6 && std::fabs(step * std::pow(10.0, digits) -
                                   std::round(step * std::pow(10.0, digits))) > 1e-6)
      ++digits;
  QString s = QString::number(v, 'f', digits);
  if (s.startsWith(QLatin1Char('-')) && std::fabs(v) < 0.5 * std::pow(10.0, -digits))
    s.remove(0, 1);
  return s;
}

}  // namespace wl
