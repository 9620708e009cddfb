// SPDX-License-Identifier: GPL-3.0-or-later
// File > Import from Prometheus against a real server: the live count of matched GPUs and the
// preview follow the selector, an import writes the run and emits imported(), a bad selector
// shows the server's message. Skipped when prometheus is not installed.
#include <QMessageBox>
#include <QSignalSpy>
#include <QtTest>

#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "prometheus_server.h"
#include "support/missing.h"
#include "support/temp_dir.h"
#include "widgets/prometheus_dialog.h"

namespace {

constexpr int64_t kT0 = 1767225600;  // 2026-01-01T00:00:00Z

// Three GPUs on two hosts, 60 samples each of power and temperature, 1 s apart.
void writeHistory(const std::filesystem::path& file) {
  std::ofstream out(file);
  const char* hosts[] = {"node-a", "node-a", "node-b"};
  for (const char* name : {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP"}) {
    out << "# TYPE " << name << " gauge\n";
    for (int g = 0; g < 3; ++g)
      for (int s = 0; s < 60; ++s)
        out << fmt::format("{}{{gpu=\"{}\",UUID=\"GPU-{}\",Hostname=\"{}\"}} {} {}\n", name, g % 2,
                           g, hosts[g], 200 + g + s, kT0 + s);
  }
  out << "# EOF\n";
}

QString takeErrorBox(QWidget* parent) {
  QString text;
  for (QMessageBox* box : parent->findChildren<QMessageBox*>())
    if (box->isVisible()) {
      text = box->text();
      box->close();
    }
  return text;
}

}  // namespace

class PrometheusDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (wl::test::findExecutable("prometheus").empty()) return;
    dir_ = std::make_unique<wl::test::TempDir>();
    writeHistory(*dir_ / "h.om");
    server_ = std::make_unique<wl::test::PrometheusServer>(*dir_ / "h.om", *dir_ / "server");
  }
  void cleanupTestCase() {
    server_.reset();
    dir_.reset();
  }

  void countsTheMatchedGpusAndImports() {
    if (!server_) WL_QSKIP_OR_FAIL_MISSING("prometheus is not installed (scripts/setup-debian.sh)");
    wl::PrometheusDialog d;
    QSignalSpy updated(&d, &wl::PrometheusDialog::matchesUpdated);
    d.setUrl(QString::fromStdString(server_->url()));
    d.setRange(kT0 * 1'000'000'000, (kT0 + 120) * 1'000'000'000);
    d.refreshMatches();
    QVERIFY(updated.wait(10000));
    QCOMPARE(d.matchedGpus(), 3);
    QVERIFY2(d.matchText().contains("3 (6 series)"), qPrintable(d.matchText()));
    QVERIFY2(d.previewText().contains("__name__ = DCGM_FI_DEV_"), qPrintable(d.previewText()));

    d.setSelector("{Hostname=\"node-b\"}");
    d.refreshMatches();
    QVERIFY(updated.wait(10000));
    QCOMPARE(d.matchedGpus(), 1);
    QVERIFY(d.previewText().contains("Hostname = node-b"));

    wl::test::TempDir out;
    d.setOutputPath(QString::fromStdString((out / "run.h5").string()));
    QSignalSpy imported(&d, &wl::PrometheusDialog::imported);
    d.startImport();
    QVERIFY(imported.wait(20000));
    QVERIFY(std::filesystem::exists(out / "run.h5"));
  }

  void cancelLeavesNothing() {
    if (!server_) WL_QSKIP_OR_FAIL_MISSING("prometheus is not installed (scripts/setup-debian.sh)");
    wl::PrometheusDialog d;
    d.setUrl(QString::fromStdString(server_->url()));
    d.setRange(kT0 * 1'000'000'000, (kT0 + 120) * 1'000'000'000);
    wl::test::TempDir out;
    d.setOutputPath(QString::fromStdString((out / "run.h5").string()));
    QSignalSpy cancelled(&d, &wl::PrometheusDialog::cancelled);
    d.startImport();
    QVERIFY(d.isRunning());
    d.cancelImport();  // before the worker starts: it stops at once
    QVERIFY(cancelled.wait(20000));
    QVERIFY(!d.isRunning());
    QVERIFY(std::filesystem::is_empty(out.path()));
  }

  void showsTheServersMessageForABadSelector() {
    if (!server_) WL_QSKIP_OR_FAIL_MISSING("prometheus is not installed (scripts/setup-debian.sh)");
    wl::PrometheusDialog d;
    QSignalSpy updated(&d, &wl::PrometheusDialog::matchesUpdated);
    d.setUrl(QString::fromStdString(server_->url()));
    d.setRange(kT0 * 1'000'000'000, (kT0 + 120) * 1'000'000'000);
    d.setSelector("{gpu=~\"(\"}");
    d.refreshMatches();
    QVERIFY(updated.wait(10000));
    QCOMPARE(d.matchedGpus(), -1);
    QVERIFY2(d.matchText().contains("the server says"), qPrintable(d.matchText()));
    wl::test::TempDir out;
    d.setOutputPath(QString::fromStdString((out / "run.h5").string()));
    QSignalSpy failed(&d, &wl::PrometheusDialog::failed);
    d.startImport();
    QVERIFY(failed.wait(20000));
    QVERIFY(takeErrorBox(&d).contains("the server says"));
    QVERIFY(!std::filesystem::exists(out / "run.h5"));
  }

 private:
  std::unique_ptr<wl::test::TempDir> dir_;
  std::unique_ptr<wl::test::PrometheusServer> server_;
};

QTEST_MAIN(PrometheusDialogTest)
#include "prometheus_dialog_test.moc"
