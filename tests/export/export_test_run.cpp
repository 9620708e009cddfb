// SPDX-License-Identifier: GPL-3.0-or-later
#include "export_test_run.h"

#include <QApplication>

#include "loaders/core/string_table.h"
#include "loaders/core/throttle_reasons.h"
#include "loaders/format/run_writer.h"

namespace wl::test {

void writeExportTestRun(const std::filesystem::path& out) {
  constexpr int64_t dt = 50'000'000;
  constexpr int64_t n = 3600 * kSecond / dt + 1;
  RunInfo info;
  info.name = "export-test";
  info.platform = "H100";
  info.model = "Test-1B";
  info.config.tp = 2;
  info.config.pp = 1;
  info.config.dp = 1;
  info.config.nodes = 1;
  info.config.gpus_per_node = 2;
  info.simulated = true;
  info.start_ns = kExportT0;
  info.end_ns = kExportT0 + 3600 * kSecond;
  info.sample_interval_s = 0.05;
  std::vector<GpuInfo> gpus(2);
  for (int g = 0; g < 2; ++g) {
    gpus[g].id = g;
    gpus[g].local_index = g;
    gpus[g].rank = g;
    gpus[g].device_name = "NVIDIA H100 80GB HBM3";
    gpus[g].power_limit_w = 700;
    gpus[g].max_sm_clock_mhz = 1980;
  }
  std::vector<RankInfo> ranks = {{0, 0, "", -1, ""}, {1, 1, "", -1, ""}};
  RunWriter w(out, info, gpus, ranks);
  for (int g = 0; g < 2; ++g) {
    TelemetryTable t;
    TelemetryColumn power{"power_w", {}}, temp{"temp_c", {}}, clock{"sm_clock_mhz", {}},
        util{"util_pct", {}};
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ts = i * dt;
      t.t_ns.push_back(kExportT0 + ts);
      const bool spike = g == 1 && ts == static_cast<int64_t>(kSpikeS * 1e9);
      power.values.push_back(spike ? 950.0 : 300.0);
      temp.values.push_back(g == 0 ? 50.0 : 55.0);
      const bool capped = g == 0 && ts >= 600 * kSecond && ts < 900 * kSecond;
      clock.values.push_back(capped ? 1500.0 : 1980.0);
      util.values.push_back(100.0);
      t.throttle_reasons.push_back(capped ? throttle::kSwPowerCap : 0);
    }
    t.columns = {power, temp, clock, util};
    w.addGpuTelemetry(g, std::move(t));
  }
  StringTable names;
  auto track = [&](int rank, int64_t stream, KernelClass cls,
                   std::vector<std::tuple<double, double, const char*>> events) {
    KernelTrack tr{rank, stream, rank, {}, {}, {}};
    for (const auto& [s, e, name] : events)
      tr.events.push_back({kExportT0 + static_cast<int64_t>(s * 1e9),
                           static_cast<int64_t>((e - s) * 1e9), names.intern(name), cls,
                           GpuEventKind::Kernel, -1});
    w.addKernelTrack(tr, names);
  };
  track(0, 7, KernelClass::Compute, {{10, 20, "gemm_a"}, {100, 102, "long_gemm"}});
  track(0, 13, KernelClass::Communication, {{15, 25, "ncclAllReduce"}});
  track(1, 7, KernelClass::Compute, {{30, 31, "gemm_b"}});
  w.finish();
}

void ensureApp() {
  if (QCoreApplication::instance()) return;
  qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char arg0[] = "test_export";
  static char* argv[] = {arg0, nullptr};
  // Never destroyed: a QApplication torn down by exit handlers after Qt's own globals crashes.
  static QApplication* app = new QApplication(argc, argv);
  (void)app;
}

}  // namespace wl::test
