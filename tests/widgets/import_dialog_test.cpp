// SPDX-License-Identifier: GPL-3.0-or-later
// The import dialog on real fixtures: detected formats in the preview, an import that writes
// the run and emits imported(), a failure shown as the one-line message with nothing left, a
// format override, and a cancel.
#include <QApplication>
#include <QMessageBox>
#include <QSignalSpy>
#include <QtTest>

#include <fstream>

#include "loaders/format/run_file.h"
#include "loaders/import/import_job.h"
#include "support/temp_dir.h"
#include "widgets/import_dialog.h"

using namespace wl;  // NOLINT: test file

namespace {

QString fixture(const char* rel) {
  return QString::fromStdString((std::filesystem::path(WATTLINE_TEST_DATA) / rel).string());
}

bool noRunFiles(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".h5" || name.find(".tmp-") != std::string::npos) return false;
  }
  return true;
}

// Closes the error box the dialog opened and returns its text.
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

class ImportDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void previewsTheDetectedFormats() {
    ImportDialog d;
    d.addInputs({fixture("kineto/hta-old-naming-rank1.json.gz"),
                 fixture("rocprof/gunrock-rocprof-v1.csv"),
                 fixture("nsys/pipit-cloverleaf-a100-nsys2024.sqlite"), fixture("SOURCES.md")});
    QCOMPARE(d.inputCount(), 4);
    QCOMPARE(d.detectedFormat(0), QString("kineto"));
    QCOMPARE(d.detectedFormat(1), QString("rocprof-csv"));
    QCOMPARE(d.detectedFormat(2), QString("nsys-sqlite"));
    QCOMPARE(d.detectedFormat(3), QString());
    QVERIFY(d.preview(0).contains("PyTorch profiler"));
    QVERIFY(d.preview(3).contains("not a format Wattline reads"));
    QVERIFY(d.outputPath().endsWith("hta-old-naming-rank1.h5"));  // a default beside the input
    d.removeInput(3);
    QCOMPARE(d.inputCount(), 3);
    d.setFormatOverride(0, "rocprof-csv");
    QCOMPARE(d.detectedFormat(0), QString("rocprof-csv"));
    QVERIFY(d.preview(0).contains("(chosen)"));
  }

  void importsAndEmitsTheOutputPath() {
    test::TempDir out;
    ImportDialog d;
    d.addInputs({fixture("kineto/hta-old-naming-rank1.json.gz"),
                 fixture("rocprof/gunrock-rocprof-v1.csv")});
    const QString output = QString::fromStdString((out / "gui.h5").string());
    d.setOutputPath(output);
    d.setRunName("from the dialog");
    d.setPlatform("A100");
    d.setConfigText("tp=2,pp=1");
    d.setOffsetsText("gunrock-rocprof-v1.csv=-500\n");
    QSignalSpy imported(&d, &ImportDialog::imported);
    d.startImport();
    QVERIFY(d.isRunning());
    QVERIFY(imported.wait(20000));
    QCOMPARE(imported.at(0).at(0).toString(), output);
    QVERIFY(!d.isRunning());
    const auto run = RunFile::open(out / "gui.h5");
    QCOMPARE(run->ranks().size(), size_t{2});
    QCOMPARE(QString::fromStdString(run->info().name), QString("from the dialog"));
    QCOMPARE(QString::fromStdString(run->info().platform), QString("A100"));
    QCOMPARE(run->info().config.tp.value_or(0), 2);
    QCOMPARE(run->info().sources.at(1).offset_ns, int64_t{-500});
  }

  void showsTheOneLineErrorAndLeavesNothing() {
    test::TempDir in, out;
    {
      std::ofstream f(in / "cut.json");
      f << R"({"traceEvents": [{"ph": "X", "cat": "kernel")";
    }
    ImportDialog d;
    d.show();
    d.addInputs({QString::fromStdString((in / "cut.json").string())});
    d.setOutputPath(QString::fromStdString((out / "run.h5").string()));
    QSignalSpy failed(&d, &ImportDialog::failed);
    d.startImport();
    QVERIFY(failed.wait(20000));
    const QString msg = failed.at(0).at(0).toString();
    QVERIFY2(msg.contains("cut.json: truncated JSON"), qPrintable(msg));
    QVERIFY(!msg.contains('\n'));
    QCOMPARE(takeErrorBox(&d), msg);
    QVERIFY(noRunFiles(out.path()));
  }

  void reportsBadFieldsAsErrors() {
    ImportDialog d;
    d.show();
    d.addInputs({fixture("kineto/hta-old-naming-rank1.json.gz")});
    d.setConfigText("tp=four");
    QSignalSpy failed(&d, &ImportDialog::failed);
    d.startImport();
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.at(0).at(0).toString().contains("tp must be a non-negative integer"));
    QVERIFY(!takeErrorBox(&d).isEmpty());
    QVERIFY(!d.isRunning());
  }

  void utcOffsetReachesTheImport() {
    // The H100 capture writes nvidia-smi's local wall-clock time: read as UTC without an offset,
    // two hours earlier with +02:00.
    test::TempDir out;
    wl::import::ImportRequest plain;
    plain.inputs.push_back({fixture("telemetry/nvidia-smi-h100-query.csv").toStdString(), {}});
    plain.output = out / "plain.h5";
    const int64_t asUtc = import::ImportJob(plain).run().info.start_ns;

    ImportDialog d;
    d.show();
    d.addInputs({fixture("telemetry/nvidia-smi-h100-query.csv")});
    const QString output = QString::fromStdString((out / "local.h5").string());
    d.setOutputPath(output);
    d.setUtcOffsetsText("nvidia-smi-h100-query.csv=+02:00");
    QCOMPARE(d.request().utcOffsets.size(), size_t{1});
    QSignalSpy imported(&d, &ImportDialog::imported);
    d.startImport();
    QVERIFY(imported.wait(20000));
    const auto run = RunFile::open(output.toStdString());
    QCOMPARE(run->info().start_ns, asUtc - int64_t{7200} * 1'000'000'000);

    d.setUtcOffsetsText("+2 hours");
    QSignalSpy failed(&d, &ImportDialog::failed);
    d.startImport();
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.at(0).at(0).toString().contains("--utc-offset \"hours\""),
             qPrintable(failed.at(0).at(0).toString()));
    QVERIFY(!takeErrorBox(&d).isEmpty());
  }

  // DCGM dmon text (relative rows, no timestamps) placed by the dialog's start time and row
  // interval lands where `wattline import --start-time ... --dcgm-interval-ms 100` puts it:
  // 18:44:13.6 at +01:00 is 17:44:13.6 UTC, 1795801453.6 s since the epoch.
  void startTimeAndDcgmIntervalPlaceRelativeLogs() {
    test::TempDir out;
    ImportDialog d;
    d.show();
    d.addInputs({fixture("telemetry/dcgm-dmon-2gpu.txt")});
    const QString output = QString::fromStdString((out / "dmon.h5").string());
    d.setOutputPath(output);
    d.setStartTimeText("2026-11-27T18:44:13.6+01:00");
    d.setDcgmIntervalText("100");
    const int64_t start = int64_t{1'795'801'453} * 1'000'000'000 + 600'000'000;
    QCOMPARE(d.request().options.start_ns, std::optional<int64_t>(start));
    QCOMPARE(d.request().options.dcgm_interval_ms, std::optional<double>(100.0));
    QSignalSpy imported(&d, &ImportDialog::imported);
    d.startImport();
    QVERIFY(imported.wait(20000));
    const auto run = RunFile::open(output.toStdString());
    QCOMPARE(run->info().start_ns, start);
    const auto power = run->readAllSamples(SeriesKind::Gpu, 1, "power_w");
    QVERIFY(power.t_ns.size() >= 2);
    QCOMPARE(power.t_ns[0], start);
    QCOMPARE(power.t_ns[1] - power.t_ns[0], int64_t{100'000'000});
    // Bad fields fail with the CLI's messages, before anything is written.
    QSignalSpy failed(&d, &ImportDialog::failed);
    d.setStartTimeText("2026-11-27T18:44:13");
    d.startImport();
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.at(0).at(0).toString().contains("the time has no zone"),
             qPrintable(failed.at(0).at(0).toString()));
    takeErrorBox(&d);
    d.setStartTimeText("");
    d.setDcgmIntervalText("-5");
    d.startImport();
    QCOMPARE(failed.count(), 2);
    QVERIFY2(failed.at(1).at(0).toString().contains("expected a positive number of ms"),
             qPrintable(failed.at(1).at(0).toString()));
    takeErrorBox(&d);
  }

  void overrideReachesTheImporter() {
    test::TempDir out;
    ImportDialog d;
    d.show();
    d.addInputs({fixture("kineto/hta-old-naming-rank1.json.gz")});
    d.setFormatOverride(0, "rocprof-csv");
    d.setOutputPath(QString::fromStdString((out / "run.h5").string()));
    QSignalSpy failed(&d, &ImportDialog::failed);
    d.startImport();
    QVERIFY(failed.wait(20000));
    QVERIFY2(failed.at(0).at(0).toString().contains("not a rocprof kernel CSV"),
             qPrintable(failed.at(0).at(0).toString()));
    takeErrorBox(&d);
    QVERIFY(noRunFiles(out.path()));
  }

  void cancelStopsTheImport() {
    test::TempDir out;
    ImportDialog d;
    d.addInputs({fixture("kineto/kineto-legacy-array-resnet50.json.gz")});
    d.setOutputPath(QString::fromStdString((out / "run.h5").string()));
    QSignalSpy cancelled(&d, &ImportDialog::cancelled);
    QSignalSpy imported(&d, &ImportDialog::imported);
    d.startImport();
    d.cancelImport();  // before the worker starts (it starts on the next event-loop turn)
    QVERIFY(cancelled.wait(20000));
    QCOMPARE(imported.count(), 0);
    QVERIFY(noRunFiles(out.path()));
  }
};

QTEST_MAIN(ImportDialogTest)
#include "import_dialog_test.moc"
