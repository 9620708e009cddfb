// SPDX-License-Identifier: GPL-3.0-or-later
// MI250 packages in the views (offscreen): on a tiny simulated MI250 run, the track tree groups
// each package's two GCDs under it (node > package > GCD) with the package's power once, above
// them; the row plan puts the package header and power row above its GCDs' rows (without their
// absent power); folding a package hides its GCDs; a figure follows. On a hand-made run of two
// packages, the heatmap by package power colours a GCD without power of its own with its
// package's power, and the temperature heatmap keeps each GCD's own temperature.
// Before Qt: the simulator has a member named emit, a Qt macro.
#include "loaders/sim/simulator.h"  // NOLINT(llvm-include-order)

#include <QApplication>
#include <QtTest>

#include <cmath>

#include "../analysis/analysis_test_util.h"
#include "../sim/sim_test_support.h"
#include "support/temp_dir.h"
#include "widgets/timeline/render/geometry.h"
#include "widgets/timeline/model/row_plan.h"
#include "widgets/timeline/model/tile_store.h"
#include "widgets/timeline/render/timeline_renderer.h"
#include "widgets/track_tree.h"

using namespace wl;  // NOLINT: test file

namespace {

using Runs = std::vector<std::shared_ptr<const RunFile>>;

// "kind:label" of every row.
QStringList outline(const std::vector<TrackRow>& rows) {
  static const char* kinds[] = {"run", "group", "counter", "kernels", "steps", "heatmap", "diff"};
  QStringList out;
  for (const TrackRow& r : rows)
    out << QString::fromLatin1(kinds[static_cast<int>(r.kind())]) + QLatin1Char(':') + r.label;
  return out;
}

QStringList childTexts(const QStandardItem* item) {
  QStringList out;
  for (int i = 0; i < item->rowCount(); ++i)
    out << item->child(i)->text();
  return out;
}

// Two MI250 packages (GCDs 0-1 and 2-3) sampled every 50 ms for 10 s. Each package's power is
// on its first GCD (NaN on the second): package 0 draws 200 W before 5 s and 400 W from 5 s on,
// package 1 a constant 300 W. GCD temperatures 50, 57, 60, 66 C (skews of 7 and 6 C).
test::RunSpec steppedPackages() {
  test::RunSpec s = test::baseRun(4, 10.0);
  s.info.platform = "MI250";
  s.info.sample_interval_s = 0.05;
  const double temp[] = {50, 57, 60, 66};
  for (int g = 0; g < 4; ++g) {
    s.gpus[static_cast<size_t>(g)].package = g / 2;
    s.gpus[static_cast<size_t>(g)].power_limit_w = 500;
    s.telemetry.push_back(test::sampled(test::kT0, test::kT0 + 10 * test::kSec, 50 * test::kMs,
                                        {"power_w", "temp_c"}, [g, &temp](size_t m, int64_t t) {
                                          if (m == 1) return temp[g];
                                          if (g % 2 == 1) return std::nan("");
                                          if (g == 2) return 300.0;
                                          return t < test::kT0 + 5 * test::kSec ? 200.0 : 400.0;
                                        }));
  }
  return s;
}

}  // namespace

class PackageViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // The sim tests' small configuration (8 devices, TinyLlama, no kernels) on MI250 GCDs, 3 s.
    sim::SimConfig c = test::tinyConfig();
    c.platform = *sim::findProfile("mi250");
    c.durationS = 3;
    c.runName = "mi250";
    sim::simulate(c, dir_.path() / "mi250.h5");
    mi250_ = RunFile::open(dir_.path() / "mi250.h5");
    stepped_ = test::writeAndOpen(steppedPackages(), dir_.path() / "stepped.h5");
  }

  // The simulator reports every package's power on its first GCD, as amd-smi does.
  void simulatedRunHasFourPackages() {
    QCOMPARE(mi250_->domains().size(), size_t{4});
    for (const PowerDomain& d : mi250_->domains()) {
      QVERIFY(isPackage(d));
      QCOMPARE(d.gpus, (std::vector<int>{2 * d.id, 2 * d.id + 1}));
      QCOMPARE(d.power_gpu, 2 * d.id);
    }
  }

  void treeGroupsGcdsUnderTheirPackage() {
    TrackTree tree;
    tree.addRun(mi250_, 0);
    QStandardItemModel* m = tree.trackModel();
    QCOMPARE(m->rowCount(), 1);
    QStandardItem* telemetry = m->item(0)->child(0);
    QCOMPARE(telemetry->text(), QStringLiteral("GPU telemetry"));
    QCOMPARE(childTexts(telemetry), QStringList{QStringLiteral("Node 0")});
    QStandardItem* node = telemetry->child(0);
    QCOMPARE(childTexts(node), (QStringList{"Package 0", "Package 1", "Package 2", "Package 3"}));
    for (int p = 0; p < 4; ++p) {
      QStandardItem* package = node->child(p);
      QCOMPARE(package->data(TrackTree::KindRole).toInt(), int(TrackTree::PackageItem));
      QCOMPARE(package->data(TrackTree::KeyRole).toString(), QStringLiteral("r0/p%1").arg(p));
      // The package's power first, then its two GCDs.
      QCOMPARE(childTexts(package),
               (QStringList{"Package power", QStringLiteral("GCD %1").arg(2 * p),
                            QStringLiteral("GCD %1").arg(2 * p + 1)}));
      QStandardItem* power = package->child(0);
      QCOMPARE(power->data(TrackTree::KeyRole).toString(), QStringLiteral("r0/p%1/power_w").arg(p));
      QCOMPARE(power->data(TrackTree::EntityRole).toInt(), 2 * p);  // the GCD that reports it
      QCOMPARE(power->checkState(), Qt::Checked);
      for (int k = 1; k <= 2; ++k) {
        const QStringList metrics = childTexts(package->child(k));
        QVERIFY(!metrics.contains(QStringLiteral("Power")));
        QVERIFY(metrics.contains(QStringLiteral("GPU temperature")));
        QVERIFY(metrics.contains(QStringLiteral("SM clock")));
      }
    }
  }

  void rowsPutThePackagePowerAboveItsGcds() {
    TrackTree tree;
    tree.addRun(mi250_, 0);
    const std::vector<TrackRow> rows = planRows({mi250_}, tree.state(), {}, {});
    QStringList want{QStringLiteral("run:mi250 [simulated]")};
    for (int p = 0; p < 4; ++p) {
      want << QStringLiteral("group:Package %1").arg(p) << QStringLiteral("counter:Package power");
      for (int g : {2 * p, 2 * p + 1}) {
        want << QStringLiteral("group:GCD %1").arg(g);
        for (const char* m : {"GPU temperature", "SM clock", "GPU utilization"})
          want << QStringLiteral("counter:") + QLatin1String(m);
      }
    }
    QCOMPARE(outline(rows), want);
    const TrackRow& header = rows[1 + 10];  // package 1's header
    QCOMPARE(header.key, QStringLiteral("r0/p1"));
    QCOMPARE(*header.as<GroupHeaderRow>(), (GroupHeaderRow{0, -1, -1, -1, -1, 1}));
    QVERIFY(header.detail.startsWith(QStringLiteral("GCD 2, 3 · node 0 · cap 500 W")));
    const TrackRow& power = rows[1 + 10 + 1];
    QCOMPARE(*power.as<CounterRow>(), (CounterRow{0, 2, metricIndex(*mi250_, "power_w")}));
    QCOMPARE(power.group, QStringLiteral("r0/p1"));
    const TrackRow& gcd3 = rows[1 + 10 + 2 + 4];
    QCOMPARE(gcd3.key, QStringLiteral("r0/g3"));
    QCOMPARE(gcd3.group, QStringLiteral("r0/p1"));  // folds with its package
    // Folding package 1 hides its power, both GCD headers and their counters (9 rows).
    const std::vector<size_t> open = unfoldedRows(rows, {QStringLiteral("r0/p1")});
    QCOMPARE(open.size(), rows.size() - 9);
    QCOMPARE(rows[open[11]].key, QStringLiteral("r0/p1"));
    QCOMPARE(rows[open[12]].key, QStringLiteral("r0/p2"));
    // Unchecking the package hides all of it.
    TreeState t = tree.state();
    t.shown[QStringLiteral("r0/p1")] = false;
    QCOMPARE(planRows({mi250_}, t, {}, {}).size(), rows.size() - 10);
  }

  void figureFollowsThePackages() {
    FigureSelection s;
    s.gpus = {2, 3};
    s.metrics = {"power_w", "temp_c"};
    RowPlanOptions o;
    o.style = RowStyle::Figure;
    const auto rows = planRows({mi250_}, figureTreeState(*mi250_, 0, s), {}, o);
    QCOMPARE(outline(rows),
             (QStringList{"group:Package 1", "counter:Package power", "group:GCD 2",
                          "counter:GPU temperature", "group:GCD 3", "counter:GPU temperature"}));
    QCOMPARE(rows[1].as<CounterRow>()->gpu, 2);
  }

  // H100-like boards: no package rows, the plain GPU structure.
  void boardsStayPlainGpus() {
    QVERIFY(hasPackages(*stepped_));
    test::RunSpec s = steppedPackages();
    for (GpuInfo& g : s.gpus)
      g.package = -1;
    const auto boards = test::writeAndOpen(s, dir_.path() / "boards.h5");
    QVERIFY(!hasPackages(*boards));
    const auto rows = planRows({boards}, {}, {}, {});
    QCOMPARE(outline(rows).mid(0, 4), (QStringList{"run:" + runTitle(*boards), "group:GPU 0",
                                                   "counter:Power", "counter:GPU temperature"}));
  }

  void heatmapColoursAGcdByItsPackagePower() {
    RowPlanOptions o;
    o.heatmap = true;
    o.heatmapMetric = "power_w";
    const auto rows = planRows({stepped_}, {}, {}, o);
    QCOMPARE(rows.size(), size_t{2});
    const int power = metricIndex(*stepped_, "power_w");
    QCOMPARE(*rows[1].as<HeatmapRow>(), (HeatmapRow{0, power, true}));
    QCOMPARE(rows[1].label, QStringLiteral("Heatmap: Package power"));

    TileStore store;
    store.addRun(stepped_);
    TimelineRenderer renderer(store);
    const TileFetch fetch = [&store](const TileKey& k) { return store.load(k); };
    // 1000 columns of 10 ms: column c covers [10 c ms, 10 (c + 1) ms), read from the finest
    // pyramid level (buckets well under a second at 20 Hz sampling).
    const TimeMapping map{test::kT0, test::kT0 + 10 * test::kSec, 1000};
    const HeatmapGeometry* g = renderer.geometry(*rows[1].as<HeatmapRow>(), map, fetch).heatmap;
    QCOMPARE(g->rows, size_t{4});
    QCOMPARE(g->columns, size_t{1000});
    auto at = [g](int gpu, int column) { return g->values[size_t(gpu) * g->columns + column]; };
    // At 2.5 s package 0 draws 200 W, at 7.5 s 400 W; package 1 300 W throughout. GCDs 1 and 3
    // report nothing themselves and show their package's power.
    QCOMPARE(at(1, 250), 200.f);
    QCOMPARE(at(1, 750), 400.f);
    QCOMPARE(at(0, 750), 400.f);
    QCOMPARE(at(3, 450), 300.f);
    // Without the package mapping, GCD 1's own power column is empty.
    const HeatmapGeometry* own = renderer.geometry(HeatmapRow{0, power, false}, map, fetch).heatmap;
    QVERIFY(std::isnan(own->values[1 * own->columns + 250]));

    // By GCD temperature: each GCD its own, the 7 C skew of package 0 visible.
    o.heatmapMetric = "temp_c";
    const auto trows = planRows({stepped_}, {}, {}, o);
    QCOMPARE(trows[1].as<HeatmapRow>()->domainPower, false);
    const HeatmapGeometry* t = renderer.geometry(*trows[1].as<HeatmapRow>(), map, fetch).heatmap;
    QCOMPARE(t->values[0 * t->columns + 300], 50.f);
    QCOMPARE(t->values[1 * t->columns + 300], 57.f);
  }

 private:
  test::TempDir dir_;
  std::shared_ptr<const RunFile> mi250_, stepped_;
};

QTEST_MAIN(PackageViewTest)
#include "package_view_test.moc"
