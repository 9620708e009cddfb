// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A small run with hand-checkable content for format tests: every field of the model is set, so
// a round trip through RunWriter and RunFile can be compared field by field.
//
// Telemetry model (labelled simulated): GPU g samples every 50 ms for `seconds` seconds;
// power = 300 + 10 g + 100 * sin(2 pi t / 4 s) W, with one 900 W spike at sample 37 of GPU 1,
// temperature = 40 + g + 0.5 t C (integer degrees), SM clock 1980 MHz dropping to 1500 MHz from
// 5 s to 6 s on GPU 0 (with the SW power cap bit set), utilization 100 % while "busy".
// GPU 2 has a 3 s gap (no samples from 4 s to 7 s) and GPU 3 a NaN power sample at index 10.

#include <filesystem>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"
#include "loaders/format/run_writer.h"

namespace wl::test {

struct SyntheticRun {
  RunInfo info;
  std::vector<GpuInfo> gpus;
  std::vector<RankInfo> ranks;
  std::vector<TelemetryTable> telemetry;  // per GPU
  std::vector<TelemetryTable> nodeTelemetry;
  StringTable names;
  std::vector<KernelTrack> tracks;
  std::vector<Iteration> iterations;
  std::vector<Annotation> annotations;
  std::vector<QualityNote> notes;
  std::vector<ThrottleTruth> truthThrottle;
  std::vector<double> truthEnergy;
};

SyntheticRun makeSyntheticRun(int gpus = 4, double seconds = 10.0, int kernelsPerStream = 200);

// Writes it with RunWriter.
void writeSyntheticRun(const SyntheticRun& run, const std::filesystem::path& out,
                       const WriteOptions& options = {});

}  // namespace wl::test
