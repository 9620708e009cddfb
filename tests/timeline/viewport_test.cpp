// SPDX-License-Identifier: GPL-3.0-or-later
// Time <-> pixel mapping and the shared viewport: data-driven rows.
#include <gtest/gtest.h>

#include <QSignalSpy>

#include "widgets/timeline/model/time_mapping.h"
#include "widgets/timeline/view/time_ruler.h"
#include "widgets/timeline/render/track_painter.h"
#include "widgets/timeline/view/viewport.h"

namespace wl {
namespace {

struct MappingRow {
  const char* name;
  TimeMapping map;
  int64_t t;
  double x;
};

class TimeMappingRows : public ::testing::TestWithParam<MappingRow> {};

TEST_P(TimeMappingRows, MapsBothWays) {
  const MappingRow& r = GetParam();
  EXPECT_NEAR(r.map.x(r.t), r.x, 1e-9) << r.name;
  EXPECT_EQ(r.map.t(r.x), r.t) << r.name;
}

constexpr int64_t kEpoch = 1'700'000'000'000'000'000;  // absolute epoch ns keep full precision

INSTANTIATE_TEST_SUITE_P(
    Timeline, TimeMappingRows,
    ::testing::Values(
        MappingRow{"start", {0, 1000, 100}, 0, 0.0}, MappingRow{"end", {0, 1000, 100}, 1000, 100.0},
        MappingRow{"half", {0, 1000, 100}, 500, 50.0},
        MappingRow{"epoch_start", {kEpoch, kEpoch + 1'000'000'000, 1920}, kEpoch, 0.0},
        MappingRow{"epoch_one_ns_per_px", {kEpoch, kEpoch + 1920, 1920}, kEpoch + 7, 7.0},
        MappingRow{
            "epoch_half", {kEpoch, kEpoch + 2'000'000'000, 1000}, kEpoch + 1'000'000'000, 500.0},
        MappingRow{"before_view", {1000, 2000, 100}, 0, -100.0}),
    [](const auto& info) { return std::string(info.param.name); });

struct ZoomRow {
  const char* name;
  TimeRange start;
  double factor;
  int64_t anchor;
  TimeRange expect;
};

class ViewportZoomRows : public ::testing::TestWithParam<ZoomRow> {};

TEST_P(ViewportZoomRows, ZoomsAroundTheAnchorWithinBounds) {
  const ZoomRow& r = GetParam();
  Viewport v;
  v.setBounds({0, 10'000});
  v.setRange(r.start);
  v.zoom(r.factor, r.anchor);
  EXPECT_EQ(v.range(), r.expect) << r.name;
}

INSTANTIATE_TEST_SUITE_P(
    Timeline, ViewportZoomRows,
    ::testing::Values(ZoomRow{"in_at_centre", {0, 10'000}, 0.5, 5'000, {2'500, 7'500}},
                      ZoomRow{"in_at_left_edge", {0, 10'000}, 0.5, 0, {0, 5'000}},
                      ZoomRow{"in_at_quarter", {0, 8'000}, 0.5, 2'000, {1'000, 5'000}},
                      ZoomRow{"out_clamped_to_bounds", {4'000, 6'000}, 10.0, 5'000, {0, 10'000}},
                      ZoomRow{"out_shifted_inside", {8'000, 10'000}, 2.0, 10'000, {6'000, 10'000}},
                      ZoomRow{"deepest_zoom", {5'000, 5'200}, 0.01, 5'100, {5'050, 5'150}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Viewport, PanStopsAtTheBounds) {
  Viewport v;
  v.setBounds({0, 1000});
  v.setRange({100, 300});
  v.pan(-500);
  EXPECT_EQ(v.range(), (TimeRange{0, 200}));
  v.pan(5000);
  EXPECT_EQ(v.range(), (TimeRange{800, 1000}));
}

TEST(Viewport, HistoryGoesBackAndForward) {
  Viewport v;
  v.setBounds({0, 1000});
  QSignalSpy changed(&v, &Viewport::rangeChanged);
  v.setRange({100, 200});
  v.setRange({150, 160});
  EXPECT_TRUE(v.canGoBack());
  v.goBack();
  EXPECT_EQ(v.range(), (TimeRange{100, 200}));
  v.goBack();
  EXPECT_EQ(v.range(), (TimeRange{0, 1000}));
  EXPECT_FALSE(v.canGoBack());
  v.goForward();
  EXPECT_EQ(v.range(), (TimeRange{100, 200}));
  v.setRange({300, 400});  // a new navigation drops the forward history
  EXPECT_FALSE(v.canGoForward());
  EXPECT_EQ(changed.count(), 6);
}

TEST(Viewport, ContinuousZoomIsOneHistoryEntry) {
  Viewport v;
  v.setBounds({0, 1'000'000});
  for (int i = 0; i < 10; ++i)
    v.zoom(0.9, 500'000);
  v.goBack();
  EXPECT_EQ(v.range(), (TimeRange{0, 1'000'000}));
}

TEST(Viewport, SelectionNormalizesAndFits) {
  Viewport v;
  v.setBounds({0, 10'000});
  v.setSelection(TimeRange{4'000, 2'000});
  ASSERT_TRUE(v.selection());
  EXPECT_EQ(*v.selection(), (TimeRange{2'000, 4'000}));
  v.fitSelection();
  EXPECT_EQ(v.range(), (TimeRange{1'900, 4'100}));  // 5% margin each side
  v.setSelection(TimeRange{5, 5});                  // empty selection clears
  EXPECT_FALSE(v.selection());
}

TEST(Ticks, NiceValuesAndTimeSteps) {
  EXPECT_EQ(niceTicks(0, 700, 2), (std::vector<double>{0, 500}));
  EXPECT_EQ(niceTicks(38, 47.5, 2), (std::vector<double>{40, 45}));
  EXPECT_EQ(niceTimeStep(1e6, 90), 100'000'000);  // 1 ms/px x 90 px -> 100 ms
  EXPECT_EQ(niceTimeStep(3.0, 90), 500);
  EXPECT_EQ(TimeRuler::tickLabel(12'500'000'000, 500'000'000), "+12.5 s");
  EXPECT_EQ(TimeRuler::tickLabel(3'000'000, 1'000'000), "+3 ms");
  EXPECT_EQ(TimeRuler::tickLabel(1'250, 250), "+1.25 us");
}

}  // namespace
}  // namespace wl
