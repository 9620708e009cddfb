// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The configuration of a CharLLM-PPT run from its name and the paper's experiment matrix.
//
// A run folder is <results>/<sweep>/<model>/<run>; the matrix (a copy is compiled in, from
// charllm-experiment-matrix.csv) lists the 386 configurations of the paper's sweeps with TP, PP,
// DP, EP, CP, VPP, microbatch, global batch, sequence length, nodes and GPUs per node. Run names
// are not unique across sweeps, so the lookup narrows by model and sweep folder when it can; when
// several rows remain, only the fields they agree on are used. The name itself also carries
// configuration: "<model>_<parallel>_<bits>" where the first bit is compute-communication overlap
// and the second activation recompute, and microbatch-sweep runs end in "_mbs<N>".

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/core/run_model.h"

namespace wl::import::charllm {

using MatrixRow = std::map<std::string, std::string, std::less<>>;

// The compiled-in copy of the experiment matrix (CSV text).
std::string_view embeddedMatrixCsv();
// Parses the matrix CSV; throws wl::Error naming `source` and the line on malformed rows.
std::vector<MatrixRow> parseMatrix(std::string_view csv, const std::filesystem::path& source);

struct RunLookup {
  ParallelConfig config;
  std::string model;  // from the matrix, or "" if not found
  std::string sweep;
  size_t candidates = 0;  // rows with this run name after narrowing by model and sweep
  std::vector<QualityNote> notes;
};

// Looks `run` up in `rows`, narrowing by `model` and `sweep` (folder names, may be empty), and
// applies the bits of the run name (which win over the matrix for overlap and recompute).
RunLookup lookupRun(const std::vector<MatrixRow>& rows, std::string_view run,
                    std::string_view model, std::string_view sweep);

// The configuration the run name alone gives: overlap and recompute bits, _mbs<N>.
ParallelConfig configFromName(std::string_view run);

}  // namespace wl::import::charllm
