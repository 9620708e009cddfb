// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The runs of a view file: their content hash, and where they are now.
//
// The hash is cheap on runs of many GiB and still changes with the data: SHA-256 over the file's
// size in decimal and a newline, its first MiB and its last MiB (the whole file when it is at
// most 2 MiB). A run file is written once (temporary file + rename), so a run that was rewritten
// (re-imported, simulated again) almost surely differs in its size, its header or its tail.
//
// A run's path in the file is relative to the view file's folder (or absolute); a view saved
// beside its runs reopens after the folder moved, or on another machine.

#include <QString>

#include <optional>
#include <vector>

#include "widgets/viewfile/view_state.h"

namespace wl {

// "sha256:<64 hex digits>"; wl::Error naming the file when it cannot be read.
QString runContentHash(const QString& path);

// The path a view file stores for a run: relative to `baseDir` when `baseDir` is not empty,
// else absolute; '/' separators.
QString viewRunPath(const QString& runPath, const QString& baseDir);

// One run of a view, found (or not) on this machine.
struct ResolvedRun {
  int index = 0;     // in ViewState::runs
  QString jsonPath;  // "$.runs[1].path"
  QString stored;    // the path as written in the view
  QString path;      // where it was looked for (absolute)
  enum class Status { Found, Missing, HashDiffers } status = Status::Found;
  QString actualHash;  // when found
};

// Looks for every run of `view`, paths relative to `baseDir` (the view file's folder; the current
// folder for a view given on the command line), and checks each one's hash.
std::vector<ResolvedRun> resolveViewRuns(const ViewState& view, const QString& baseDir);

// One line naming the view, the JSON path, the run and what is wrong ("" when it was found and
// its hash matches).
QString resolveProblem(const ResolvedRun& run, const QString& viewSource);

}  // namespace wl
