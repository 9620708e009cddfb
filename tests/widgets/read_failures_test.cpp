// SPDX-License-Identifier: GPL-3.0-or-later
// A run file whose power data is damaged (every stored chunk of the power datasets overwritten):
// the window opens it, the failed reads show as a hatched region on the power rows (and only
// there), the overview strip is marked, the status bar says "Read error" naming the file, and the
// run's data-quality list has the failures (issue 16, item 5). A run whose kernel events are
// damaged: the kernel details panel says so and reports it.
#include <QApplication>
#include <QSignalSpy>
#include <QStatusBar>
#include <QThread>
#include <QtTest>

#include <hdf5.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "app/gui/main_window.h"
#include "app/gui/run_session.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "widgets/background_job.h"
#include "widgets/panels/kernel_details_view.h"
#include "widgets/panels/run_summary_view.h"
#include "widgets/timeline/render/read_failures.h"
#include "widgets/timeline/view/timeline_page.h"
#include "widgets/timeline/view/timeline_view.h"

using namespace wl;  // NOLINT: test file

namespace {

struct Extent {
  haddr_t offset;
  hsize_t size;
};

struct Visit {
  std::function<bool(const std::string&)> wanted;
  std::vector<std::string> paths;
};

herr_t collectDatasets(hid_t, const char* name, const H5O_info_t* info, void* data) {
  auto* v = static_cast<Visit*>(data);
  if (info->type == H5O_TYPE_DATASET && v->wanted(name)) v->paths.push_back(name);
  return 0;
}

// Overwrites every stored chunk of the datasets whose path `wanted` accepts with bytes no deflate
// stream starts with; returns how many datasets that was.
int damageChunks(const std::filesystem::path& file,
                 const std::function<bool(const std::string&)>& wanted) {
  std::vector<Extent> chunks;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  Visit visit{wanted, {}};
  H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, collectDatasets, &visit, H5O_INFO_BASIC);
  for (const std::string& p : visit.paths) {
    const hid_t d = H5Dopen2(f, p.c_str(), H5P_DEFAULT);
    const hid_t space = H5Dget_space(d);
    hsize_t n = 0;
    if (H5Dget_num_chunks(d, space, &n) >= 0) {
      for (hsize_t i = 0; i < n; ++i) {
        hsize_t coords[2] = {0, 0};
        unsigned mask = 0;
        haddr_t addr = 0;
        hsize_t size = 0;
        if (H5Dget_chunk_info(d, space, i, coords, &mask, &addr, &size) >= 0 && size > 0)
          chunks.push_back({addr, size});
      }
    }
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(f);
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  for (const Extent& e : chunks) {
    io.seekp(static_cast<std::streamoff>(e.offset));
    const std::string junk(e.size, '\xA5');
    io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  return io.good() && chunks.size() >= visit.paths.size() ? static_cast<int>(visit.paths.size())
                                                          : -1;
}

// Number of pixels of exactly `c` in `r` of `img`.
int countColor(const QImage& img, const QRect& r, QColor c) {
  int n = 0;
  for (int y = std::max(0, r.top()); y <= std::min(img.height() - 1, r.bottom()); ++y)
    for (int x = std::max(0, r.left()); x <= std::min(img.width() - 1, r.right()); ++x)
      if (img.pixelColor(x, y).rgb() == c.rgb()) ++n;
  return n;
}

}  // namespace

class ReadFailuresTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QApplication::setOrganizationName("WattlineTest");
    QApplication::setApplicationName("WattlineTest");
    file = dir.path() / "damaged.h5";
    test::writeSyntheticRun(test::makeSyntheticRun(), file);
    // The raw samples and every pyramid level's statistics of power_w.
    const int power = damageChunks(file, [](const std::string& p) {
      return p.rfind("telemetry/", 0) == 0 && p.find("power_w") != std::string::npos;
    });
    QVERIFY2(power >= 7, qPrintable(QString::number(power)));
    // The event columns of /kernels (not its blocks, tracks or pyramid): opens, but no kernel's
    // details can be read.
    kernelsFile = dir.path() / "kernels-damaged.h5";
    test::writeSyntheticRun(test::makeSyntheticRun(), kernelsFile);
    const int kernels = damageChunks(kernelsFile, [](const std::string& p) {
      return p.rfind("kernels/", 0) == 0 && p.find('/', 8) == std::string::npos;
    });
    QVERIFY2(kernels >= 5, qPrintable(QString::number(kernels)));
  }

  void damagedRegionIsMarkedAndReported() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* session = w.findChild<RunSession*>();
    auto* page = w.findChild<TimelinePage*>();
    QSignalSpy opened(session, &RunSession::runOpened);
    QSignalSpy failed(page, &TimelinePage::readFailed);
    w.openRun(QString::fromStdString(file.string()));
    QVERIFY(opened.wait(10000));
    TimelineView* view = page->view();
    view->viewport()->update();
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0 && page->store()->pending() == 0, 20000);

    // Every failure is a read of power_w, and says which file and what.
    const RunFile& run = page->store()->run(0);
    int power = -1;
    for (size_t i = 0; i < run.series().metrics.size(); ++i)
      if (run.series().metrics[i].id == "power_w") power = static_cast<int>(i);
    QVERIFY(power >= 0);
    const std::vector<ReadFailure> failures = page->store()->failures();
    QVERIFY(!failures.empty());
    for (const ReadFailure& f : failures) {
      const QString m = QString::fromStdString(f.message);
      QVERIFY2(m.startsWith("damaged.h5: cannot read"), qPrintable(m));
      QVERIFY2(m.contains("power_w"), qPrintable(m));
      QVERIFY(f.key.metric == power);
      QVERIFY(f.t1 > f.t0);
    }

    // The status bar and the run's data-quality list say so.
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().startsWith("Read error: damaged.h5"),
                             5000);
    auto* summary = w.findChild<RunSummaryView*>();
    QTRY_VERIFY_WITH_TIMEOUT(summary->toPlainText().contains("read error damaged.h5: cannot read"),
                             5000);
    QVERIFY(summary->toPlainText().contains("Data quality"));

    // The overview (mean power of all GPUs) could not be read: it is hatched, not empty.
    QTRY_VERIFY_WITH_TIMEOUT(page->overview()->readFailed(), 5000);

    // Power rows carry the hatch over the whole run; temperature rows, read fine, none.
    view->viewport()->repaint();
    const QImage img = view->viewport()->grab().toImage();
    int powerPixels = -1, tempPixels = -1, powerRows = 0;
    for (int y = 1; y < view->viewport()->height(); y += 2) {
      QRectF rr;
      const TrackRow* r = view->rowAt(QPoint(TimelineView::kLabelWidth + 10, y), &rr);
      const auto* c = r ? r->as<CounterRow>() : nullptr;
      if (!c || rr.top() < 0 || rr.bottom() > view->viewport()->height()) continue;
      const QRect content(TimelineView::kLabelWidth + 1, static_cast<int>(rr.top()) + 1,
                          view->viewport()->width() - TimelineView::kLabelWidth - 2,
                          static_cast<int>(rr.height()) - 3);
      const std::string& id = run.series().metrics[static_cast<size_t>(c->metric)].id;
      if (id == "power_w" && powerPixels < 0) {
        powerPixels = countColor(img, content, readFailureColor());
        ++powerRows;
      } else if (id == "temp_c" && tempPixels < 0) {
        tempPixels = countColor(img, content, readFailureColor());
      }
    }
    // WATTLINE_TEST_SHOT=FILE.png keeps a picture of the window, to look at it as a user would.
    if (qEnvironmentVariableIsSet("WATTLINE_TEST_SHOT"))
      w.grab().save(qEnvironmentVariable("WATTLINE_TEST_SHOT"));
    QVERIFY(powerRows > 0);
    QVERIFY2(powerPixels > 200, qPrintable(QString::number(powerPixels)));
    QCOMPARE(tempPixels, 0);
  }

  // A kernel whose details cannot be read: the panel says which and why, the failure is
  // reported to the store (hatched on the timeline, listed with the run's data quality).
  void kernelDetailReadFailureIsShown() {
    const auto run = RunFile::open(kernelsFile);
    TileStore store;
    store.addRun(run);
    KernelDetailsView view;
    view.setRuns({run});
    view.setTileStore(&store);
    QSignalSpy failed(&view, &KernelDetailsView::readFailed);
    KernelRef k;
    k.run = 0;
    k.track = 0;
    k.event = 0;
    k.data.start_ns = run->info().start_ns;  // spans the run: some events must be read
    k.data.dur_ns = run->info().end_ns - run->info().start_ns;
    view.showKernel(k);
    QTRY_COMPARE(failed.count(), 1);
    const QString m = failed.at(0).at(0).toString();
    QVERIFY2(m.startsWith("kernels-damaged.h5: cannot read the details of kernel 1 of track 0 at "
                          "+0 ns: "),
             qPrintable(m));
    QVERIFY(view.toPlainText().contains("cannot read the details of kernel 1 of track 0"));
    const std::vector<ReadFailure> f = store.failures();
    QCOMPARE(f.size(), size_t{1});
    QVERIFY(f[0].key.kind == TileKind::KernelRaw);
    QCOMPARE(f[0].key.entity, 0);
    QCOMPARE(f[0].t0, k.data.start_ns);
    QCOMPARE(f[0].t1, run->info().end_ns);
  }

  // BackgroundJob: a newer start drops the older result; an exception comes back as failed().
  void backgroundJobDropsStaleResultsAndReportsErrors() {
    BackgroundJob job;
    std::vector<int> got;
    QSignalSpy failedSpy(&job, &BackgroundJob::failed);
    job.start(
        [](const BackgroundJob::Context& ctx) {
          while (!ctx.cancelled())
            QThread::msleep(1);
          return 1;
        },
        [&](int v) { got.push_back(v); });
    job.start([](const BackgroundJob::Context&) { return 2; }, [&](int v) { got.push_back(v); });
    QTRY_COMPARE(got.size(), size_t{1});
    QCOMPARE(got[0], 2);
    QVERIFY(!job.busy());
    job.start([](const BackgroundJob::Context&) -> int { throw std::runtime_error("x.h5: bad"); },
              [&](int v) { got.push_back(v); });
    QTRY_COMPARE(failedSpy.count(), 1);
    QCOMPARE(failedSpy.at(0).at(0).toString(), QString("x.h5: bad"));
    QCOMPARE(got.size(), size_t{1});
    QVERIFY(!job.busy());
  }

 private:
  test::TempDir dir;
  std::filesystem::path file, kernelsFile;
};

QTEST_MAIN(ReadFailuresTest)
#include "read_failures_test.moc"
