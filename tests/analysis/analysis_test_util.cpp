// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis_test_util.h"

#include <cstdlib>
#include <functional>

#include "loaders/format/run_writer.h"

namespace wl::test {

RunSpec baseRun(int gpus, double seconds) {
  RunSpec s;
  s.info.name = "analysis-test";
  s.info.platform = "H100";
  s.info.simulated = true;
  s.info.start_ns = kT0;
  s.info.end_ns = kT0 + static_cast<int64_t>(seconds * 1e9);
  s.info.created_by = "wattline analysis tests";
  for (int g = 0; g < gpus; ++g) {
    GpuInfo gi;
    gi.id = g;
    gi.node = 0;
    gi.local_index = g;
    gi.rank = g;
    gi.hostname = "node0";
    gi.device_name = "NVIDIA H100 80GB HBM3";
    gi.power_limit_w = 700;
    gi.max_sm_clock_mhz = 1980;
    gi.slowdown_temp_c = 87;
    gi.shutdown_temp_c = 92;
    s.gpus.push_back(gi);
    s.ranks.push_back({g, g, "node0", 1000 + g, "test"});
  }
  return s;
}

TelemetryTable sampled(int64_t t0, int64_t t1, int64_t intervalNs,
                       const std::vector<std::string>& metrics,
                       const std::function<double(size_t, int64_t)>& value) {
  TelemetryTable t;
  for (const std::string& m : metrics)
    t.columns.push_back({m, {}});
  for (int64_t ts = t0; ts < t1; ts += intervalNs) {
    t.t_ns.push_back(ts);
    for (size_t m = 0; m < metrics.size(); ++m)
      t.columns[m].values.push_back(value(m, ts));
  }
  return t;
}

std::shared_ptr<const RunFile> writeAndOpen(const RunSpec& s, const std::filesystem::path& out) {
  {
    RunWriter w(out, s.info, s.gpus, s.ranks);
    for (size_t g = 0; g < s.telemetry.size(); ++g)
      w.addGpuTelemetry(static_cast<int>(g), s.telemetry[g]);
    for (const KernelTrack& t : s.tracks)
      w.addKernelTrack(t, s.names);
    w.addIterations(s.iterations);
    w.addAnnotations(s.annotations, s.names);
    if (!s.truth.empty()) w.setGroundTruth(s.truth, std::vector<double>(s.gpus.size(), 0.0));
    w.finish();
  }
  return RunFile::open(out);
}

bool havePythonNumpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0;
}

}  // namespace wl::test
