// SPDX-License-Identifier: GPL-3.0-or-later
// The Iterations dock on a cost worked out by hand: three GPUs (ranks 0-2 on GPUs 0-2), four 2 s
// steps; GPU 2's throttling costs 0.1, 0.2, 0.3 and 0.4 s, GPU 1's 0.1 s in step 3, GPU 0's none;
// step 2 is traced (rank 2 arrived 0.25 s late). Hovering a cell says its numbers; clicking or
// Enter emits its GPU, rank and step span; the picker switches to lateness by rank; the drawn
// colours follow the values.
#include <QComboBox>
#include <QSignalSpy>
#include <QtTest>

#include <cmath>

#include "analysis/iteration_matrix.h"
#include "widgets/matrix/iteration_matrix_view.h"

using namespace wl;  // NOLINT: test file

namespace {

constexpr int64_t kS = 1'000'000'000;

std::shared_ptr<ThrottleCost> handCost() {
  auto c = std::make_shared<ThrottleCost>();
  c->gpus = {0, 1, 2};
  c->ranks = {0, 1, 2};
  c->iterations = 4;
  c->traced_iterations = 1;
  c->method = "mixed";
  c->telemetry_scale = 0.8;
  c->telemetry_scale_source = "traced iterations";
  const double gpu2[] = {0.1, 0.2, 0.3, 0.4};
  for (int k = 0; k < 4; ++k) {
    IterationCost it;
    it.step = 10 + k;
    it.start_ns = 100 * kS + k * 2 * kS;
    it.end_ns = it.start_ns + 2 * kS;
    it.step_s = 2.0;
    it.method = k == 2 ? CostMethod::Traced : CostMethod::Telemetry;
    it.gpu_cost_s = {0.0, k == 3 ? 0.1 : 0.0, gpu2[k]};
    it.gpu_own_s = {0.0, k == 3 ? 0.1 : 0.0, gpu2[k] / 0.8};
    it.cost_s = it.gpu_cost_s[1] + it.gpu_cost_s[2];
    it.rank_late_s =
        k == 2 ? std::vector<double>{0.0, 0.05, 0.25} : std::vector<double>(3, std::nan(""));
    c->per_iteration.push_back(it);
  }
  return c;
}

std::vector<RankInfo> handRanks() {
  return {{0, 0, "n0", 1, ""}, {1, 1, "n0", 2, ""}, {2, 2, "n0", 3, ""}};
}

}  // namespace

class IterationMatrixViewTest : public QObject {
  Q_OBJECT
 private slots:
  void hoverSaysTheCell_data() {
    QTest::addColumn<int>("row");
    QTest::addColumn<int>("col");
    QTest::addColumn<QString>("first");
    QTest::addColumn<QString>("second");
    QTest::newRow("costliest") << 2 << 3 << "Step 13 · GPU 2 (rank 2)"
                               << "Its throttling cost the step 0.400 s of 2.000 s (20.0 %); the "
                                  "step's whole cost was 0.500 s.";
    QTest::newRow("no cost") << 0 << 0 << "Step 10 · GPU 0 (rank 0)"
                             << "Its throttling cost the step nothing.";
    QTest::newRow("traced") << 2 << 2 << "Step 12 · GPU 2 (rank 2)"
                            << "Its throttling cost the step 0.300 s of 2.000 s (15.0 %); the "
                               "step's whole cost was 0.300 s.";
  }
  void hoverSaysTheCell() {
    QFETCH(int, row);
    QFETCH(int, col);
    QFETCH(QString, first);
    QFETCH(QString, second);
    IterationMatrixView v;
    v.resize(500, 400);
    v.show();
    v.setCost(handCost(), handRanks());
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    const QPoint at = v.cellRect(size_t(row), size_t(col)).center().toPoint();
    QTest::mouseMove(v.canvas(), at);
    const QStringList lines = v.hoverText().split(QLatin1Char('\n'));
    QVERIFY(lines.size() >= 2);
    QCOMPARE(lines[0], first);
    QCOMPARE(lines[1], second);
  }

  void clickAndEnterEmitTheCell() {
    IterationMatrixView v;
    v.resize(500, 400);
    v.show();
    v.setCost(handCost(), handRanks());
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    QSignalSpy spy(&v, &IterationMatrixView::cellActivated);
    QTest::mouseClick(v.canvas(), Qt::LeftButton, {}, v.cellRect(1, 3).center().toPoint());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy[0][0].toInt(), 1);                       // GPU
    QCOMPARE(spy[0][1].toInt(), 1);                       // rank
    QCOMPARE(spy[0][2].toLongLong(), 100 * kS + 6 * kS);  // step 13's span
    QCOMPARE(spy[0][3].toLongLong(), 100 * kS + 8 * kS);
    // Arrow keys move the current cell from there; Enter activates it.
    v.canvas()->setFocus();
    QTest::keyClick(v.canvas(), Qt::Key_Down);
    QTest::keyClick(v.canvas(), Qt::Key_Left);
    QTest::keyClick(v.canvas(), Qt::Key_Return);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy[1][0].toInt(), 2);
    QCOMPARE(spy[1][2].toLongLong(), 100 * kS + 4 * kS);
  }

  void latenessIsPerRankAndTracedStepsOnly() {
    IterationMatrixView v;
    v.resize(500, 400);
    v.show();
    v.setCost(handCost(), handRanks());
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    auto* picker = v.findChild<QComboBox*>();
    QVERIFY(picker);
    picker->setCurrentIndex(1);
    QCOMPARE(v.measure(), MatrixMeasure::Lateness);
    QCOMPARE(v.matrix().at(2, 2), 0.25);
    QVERIFY(std::isnan(v.matrix().at(2, 0)));
    QTest::mouseMove(v.canvas(), v.cellRect(2, 2).center().toPoint());
    QVERIFY(v.hoverText().contains(QStringLiteral("It arrived last")));
    QTest::mouseMove(v.canvas(), v.cellRect(0, 1).center().toPoint());
    QVERIFY(v.hoverText().contains(QStringLiteral("Not traced")));
  }

  void coloursFollowTheValues() {
    IterationMatrixView v;
    v.resize(500, 400);
    v.show();
    v.setCost(handCost(), handRanks());
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    const QImage img = v.canvas()->grab().toImage();
    const qreal dpr = img.devicePixelRatio();
    auto colourAt = [&](size_t r, size_t c) {
      return img.pixelColor((v.cellRect(r, c).center() * dpr).toPoint());
    };
    const Theme th = Theme::light();
    QCOMPARE(colourAt(0, 0), th.trackBackground);                         // no cost
    QCOMPARE(colourAt(2, 3).rgb(), matrixCellColor(th, 0.4, 0.4).rgb());  // the most
    // Less cost, paler: GPU 2's steps get darker from 10 to 13 (luminance falls).
    auto luminance = [](const QColor& q) {
      return 0.299 * q.redF() + 0.587 * q.greenF() + 0.114 * q.blueF();
    };
    for (size_t c = 0; c + 1 < 4; ++c)
      QVERIFY(luminance(colourAt(2, c)) > luminance(colourAt(2, c + 1)));
    // Unknown cost: an empty dock says so instead of drawing.
    auto unknown = std::make_shared<ThrottleCost>();
    unknown->unknown = "the run has no iterations";
    v.setCost(unknown, {});
    QVERIFY(v.matrix().empty());
  }
};

QTEST_MAIN(IterationMatrixViewTest)
#include "iteration_matrix_view_test.moc"
