// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim_test_support.h"

#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"

namespace wl::test {

sim::SimConfig tinyConfig() {
  sim::SimConfig c;
  c.platform = *sim::findProfile("h100");
  c.model = *sim::findModel("TinyLlama-1.1B");
  c.nodes = 1;
  c.gpusPerNode = 8;
  c.tp = 1, c.pp = 1, c.dp = 8;
  c.mbs = 2;
  c.gbs = 64;
  c.seqLen = 2048;
  c.durationS = 30;
  c.seed = 7;
  c.trace.ranks = sim::TraceSelection::Ranks::None;
  return c;
}

std::shared_ptr<const RunFile> simulateAndOpen(const sim::SimConfig& c,
                                               const std::filesystem::path& out,
                                               sim::SimObserver* observer) {
  sim::simulate(c, out, {}, observer);
  return RunFile::open(out);
}

Series series(const RunFile& run, size_t gpu, std::string_view metric) {
  const Samples s = run.readAllSamples(SeriesKind::Gpu, gpu, metric);
  Series out;
  for (size_t i = 0; i < s.t_ns.size(); ++i) {
    out.t.push_back(static_cast<double>(s.t_ns[i] - run.info().start_ns) * 1e-9);
    out.v.push_back(s.v[i]);
  }
  return out;
}

double timeWeightedMean(const Series& s, double t0, double t1) {
  double sum = 0, dt = 0;
  for (size_t i = 0; i + 1 < s.t.size(); ++i) {
    if (s.t[i] < t0 || s.t[i] >= t1) continue;
    const double d = s.t[i + 1] - s.t[i];
    sum += s.v[i] * d;
    dt += d;
  }
  return dt > 0 ? sum / dt : 0.0;
}

}  // namespace wl::test
