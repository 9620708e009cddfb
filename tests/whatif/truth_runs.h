// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The run the whatif truth tests simulate (docs/whatif.md, "Truth"): Llama3-8B TP 2 x PP 2 x DP 2,
// microbatch 4, global batch 64, sequence 2048, on one 8-GPU node, every kernel traced, NVML's
// 1 s power average, seed 1; the platform, thermal scenario, inlet and length as given.

#include <gtest/gtest.h>

#include "loaders/sim/model_shape.h"
#include "loaders/sim/platform_profile.h"
#include "loaders/sim/simulator.h"

namespace wl::test {

inline sim::SimConfig truthNode(const char* platform, const char* scenario, double inletC,
                                double seconds) {
  sim::SimConfig c;
  c.platform = *sim::findProfile(platform);
  c.model = *sim::findModel("Llama3-8B");
  c.nodes = 1, c.gpusPerNode = 8;
  c.tp = 2, c.pp = 2, c.dp = 2;
  c.mbs = 4, c.gbs = 64, c.seqLen = 2048;
  c.durationS = seconds;
  EXPECT_TRUE(sim::applyThermalScenario(scenario, c)) << scenario;
  c.inletTempC = inletC;
  c.seed = 1;
  c.powerWindowS = 1.0;
  c.trace.ranks = sim::TraceSelection::Ranks::All;
  c.trace.steps = sim::TraceSelection::Steps::All;
  return c;
}

}  // namespace wl::test
