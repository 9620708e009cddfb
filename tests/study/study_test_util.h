// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers for the study tests: hand-made run summaries with numbers a test can check by hand, small
// run files written with RunWriter (the test support's synthetic run, renamed and reconfigured),
// and small simulated runs (TinyLlama on one 8-GPU node, fixed seeds, a few seconds).

#include <filesystem>
#include <functional>
#include <string>

#include "analysis/study/study.h"
#include "loaders/sim/sim_config.h"
#include "support/synthetic_run.h"

namespace wl::test {

// A valid summary with the given identity; every number NaN / 0 until the test sets it.
StudyRun handRun(const std::string& name, const std::string& model = "M",
                 const std::string& platform = "H100", int gpus = 8);

// The synthetic run of tests/support with another name and configuration, and every power value
// multiplied by powerScale; `edit` may change it further before it is written.
void writeSyntheticVariant(const std::filesystem::path& out, const std::string& name, int mbs,
                           double powerScale, const std::function<void(SyntheticRun&)>& edit = {});

// TinyLlama-1.1B on one 8-GPU H100 node, tp 1, pp 2, dp 4, gbs 64, seq 2048, no traces.
sim::SimConfig tinySimConfig();

}  // namespace wl::test
