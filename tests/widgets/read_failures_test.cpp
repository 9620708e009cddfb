// SPDX-License-Identifier: GPL-3.0-or-later
// A run file whose power data is damaged (every stored chunk of the power datasets overwritten):
// the window opens it, the failed reads show as a hatched region on the power rows (and only
// there), the overview strip is marked, the status bar says "Read error" naming the file, and the
// run's data-quality list has the failures (issue 16, item 5).
#include <QApplication>
#include <QSignalSpy>
#include <QStatusBar>
#include <QThread>
#include <QtTest>

#include <hdf5.h>

#include <fstream>
#include <string>
#include <vector>

#include "background_job.h"
#include "gui/main_window.h"
#include "gui/run_session.h"
#include "run_summary_view.h"
#include "support/synthetic_run.h"
#include "support/temp_dir.h"
#include "timeline/read_failures.h"
#include "timeline/timeline_page.h"
#include "timeline/timeline_view.h"

using namespace wl;  // NOLINT: test file

namespace {

struct Extent {
  haddr_t offset;
  hsize_t size;
};

herr_t collectPowerDatasets(hid_t, const char* name, const H5O_info_t* info, void* out) {
  const std::string path = name;
  if (info->type == H5O_TYPE_DATASET && path.rfind("telemetry/", 0) == 0 &&
      path.find("power_w") != std::string::npos)
    static_cast<std::vector<std::string>*>(out)->push_back(path);
  return 0;
}

// Where the power datasets of /telemetry keep their chunks in the file.
std::vector<Extent> powerChunks(const std::filesystem::path& file, int* datasets) {
  std::vector<Extent> out;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  std::vector<std::string> paths;
  H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, collectPowerDatasets, &paths, H5O_INFO_BASIC);
  *datasets = static_cast<int>(paths.size());
  for (const std::string& p : paths) {
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
          out.push_back({addr, size});
      }
    }
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(f);
  return out;
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
    int datasets = 0;
    const std::vector<Extent> chunks = powerChunks(file, &datasets);
    // The raw samples and every pyramid level's statistics of power_w.
    QVERIFY2(datasets >= 7, qPrintable(QString::number(datasets)));
    QVERIFY(chunks.size() >= static_cast<size_t>(datasets));
    std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
    for (const Extent& e : chunks) {
      io.seekp(static_cast<std::streamoff>(e.offset));
      const std::string junk(e.size, '\xA5');  // no deflate stream starts like this
      io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    QVERIFY(io.good());
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
  std::filesystem::path file;
};

QTEST_MAIN(ReadFailuresTest)
#include "read_failures_test.moc"
