// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Builds small runs for the analysis tests: a run description the tests fill in by hand, written
// with RunWriter and opened with RunFile. Every run made here is labelled simulated.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loaders/core/run_model.h"
#include "loaders/core/string_table.h"
#include "loaders/format/run_file.h"

namespace wl::test {

inline constexpr int64_t kT0 = 1'700'000'000'000'000'000;  // 2023-11-14 22:13:20 UTC
inline constexpr int64_t kSec = 1'000'000'000;
inline constexpr int64_t kMs = 1'000'000;

struct RunSpec {
  RunInfo info;
  std::vector<GpuInfo> gpus;
  std::vector<RankInfo> ranks;
  std::vector<TelemetryTable> telemetry;  // per GPU (may be shorter than gpus)
  StringTable names;
  std::vector<KernelTrack> tracks;
  std::vector<Iteration> iterations;
  std::vector<Annotation> annotations;
  std::vector<ThrottleTruth> truth;
};

// `gpus` H100-like GPUs (700 W limit, 1980 MHz, slowdown 87 C) on one node, rank g on GPU g,
// over [kT0, kT0 + seconds).
RunSpec baseRun(int gpus, double seconds);

// A telemetry table sampled every `intervalNs` over [t0, t1), with the given metrics filled by
// `value(metric index, t)` (NaN allowed).
TelemetryTable sampled(int64_t t0, int64_t t1, int64_t intervalNs,
                       const std::vector<std::string>& metrics,
                       const std::function<double(size_t, int64_t)>& value);

std::shared_ptr<const RunFile> writeAndOpen(const RunSpec& spec, const std::filesystem::path& out);

// Runs /usr/bin/python3 with numpy on a script; false when python3 or numpy is missing.
bool havePythonNumpy();

}  // namespace wl::test
