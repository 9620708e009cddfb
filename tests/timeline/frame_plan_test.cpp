// SPDX-License-Identifier: GPL-3.0-or-later
// planFrame on the screen: pinned rows on top (at most 40 % of the height), folded groups hidden,
// scrolled rows under the pinned ones, only what shows in the area (frame.h).
#include <gtest/gtest.h>

#include "widgets/timeline/render/frame.h"

namespace wl {
namespace {

TrackRow row(const QString& key, int height, bool pinned = false, const QString& group = {}) {
  TrackRow r;
  r.content = CounterRow{0, 0, 0};
  r.key = key;
  r.group = group;
  r.height = height;
  r.pinned = pinned;
  return r;
}

FrameLayout screen(const std::vector<TrackRow>& rows, double height, double scroll,
                   std::set<QString> collapsed = {}) {
  FrameSpec spec;
  spec.collapsed = std::move(collapsed);
  return planFrame(rows, TimeRange{0, 1000}, spec, QRectF(0, 0, 1200, height), scroll);
}

TEST(FramePlan, PinnedRowsStayOnTopWhileTheOthersScrollUnderThem) {
  std::vector<TrackRow> rows;
  for (int i = 0; i < 10; ++i)
    rows.push_back(row(QStringLiteral("r%1").arg(i), 40));
  rows[7].pinned = true;
  const FrameLayout f = screen(rows, 200, 60);
  EXPECT_DOUBLE_EQ(f.labelWidth, kScreenLabelWidth);
  EXPECT_DOUBLE_EQ(f.contentLeft, kScreenLabelWidth);
  EXPECT_DOUBLE_EQ(f.map.width, 1200 - kScreenLabelWidth);
  EXPECT_DOUBLE_EQ(f.pinnedHeight, 40);
  EXPECT_DOUBLE_EQ(f.scrollHeight, 9 * 40);
  ASSERT_FALSE(f.rows.empty());
  // Scrolled by 60 px under a 40 px pinned row: row 1 shows from y = 40 + 40 - 60 = 20 (behind
  // the pinned row, clipped), rows up to the bottom of the 200 px area.
  std::vector<size_t> shown;
  for (const FrameRow& fr : f.rows)
    shown.push_back(fr.index);
  EXPECT_EQ(shown, (std::vector<size_t>{1, 2, 3, 4, 5, 7}));
  const FrameRow& pinned = f.rows.back();
  EXPECT_TRUE(pinned.pinned);
  EXPECT_DOUBLE_EQ(pinned.label.top(), 0);
  EXPECT_DOUBLE_EQ(f.rows[0].content.top(), 20);
  EXPECT_DOUBLE_EQ(f.rows[0].content.left(), kScreenLabelWidth);
}

TEST(FramePlan, PinnedRowsTakeAtMostFortyPercentAndFoldedGroupsAreHidden) {
  std::vector<TrackRow> rows{row("a", 60, true), row("b", 60, true),         row("c", 60, true),
                             row("h", 20),       row("h/x", 40, false, "h"), row("y", 40)};
  rows[3].content = GroupHeaderRow{0, 0};
  const FrameLayout f = screen(rows, 300, 0, {"h"});
  EXPECT_DOUBLE_EQ(f.pinnedHeight, 120);  // 40 % of 300, not 180
  EXPECT_DOUBLE_EQ(f.scrollHeight, 60);   // the header and "y"; "h/x" is folded away
  std::vector<size_t> shown;
  for (const FrameRow& fr : f.rows)
    shown.push_back(fr.index);
  EXPECT_EQ(shown, (std::vector<size_t>{0, 1, 3, 5}));  // "c" starts below the pinned area
  EXPECT_TRUE(f.rows[2].collapsed);
}

}  // namespace
}  // namespace wl
