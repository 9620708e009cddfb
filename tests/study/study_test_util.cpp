// SPDX-License-Identifier: GPL-3.0-or-later
#include "study_test_util.h"

#include "loaders/core/metrics.h"
#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"

namespace wl::test {

StudyRun handRun(const std::string& name, const std::string& model, const std::string& platform,
                 int gpus) {
  StudyRun r;
  r.label = name;
  r.summary.path = "/study/" + name + ".h5";
  r.summary.name = name;
  r.summary.model = model;
  r.summary.platform = platform;
  r.summary.gpu_count = gpus;
  r.summary.valid = true;
  return r;
}

void writeSyntheticVariant(const std::filesystem::path& out, const std::string& name, int mbs,
                           double powerScale, const std::function<void(SyntheticRun&)>& edit) {
  SyntheticRun r = makeSyntheticRun();
  r.info.name = name;
  r.info.config.mbs = mbs;
  for (TelemetryTable& t : r.telemetry)
    for (TelemetryColumn& c : t.columns)
      if (c.metric == metric::kPower)
        for (double& v : c.values)
          v *= powerScale;
  if (edit) edit(r);
  writeSyntheticRun(r, out);
}

sim::SimConfig tinySimConfig() {
  sim::SimConfig c;
  c.platform = *sim::findProfile("h100");
  c.model = *sim::findModel("TinyLlama-1.1B");
  c.nodes = 1;
  c.gpusPerNode = 8;
  c.tp = 1, c.pp = 2, c.dp = 4;
  c.mbs = 1;
  c.gbs = 64;
  c.seqLen = 2048;
  c.durationS = 20;
  c.seed = 7;
  c.trace.ranks = sim::TraceSelection::Ranks::None;
  return c;
}

}  // namespace wl::test
