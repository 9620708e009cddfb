// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A study: many runs (a folder, a list, the runs of a sweep) loaded as RunSummary values, each
// with a unique label. Behind `wattline compare` and the GUI's study view (docs/compare.md).
//
// Loading a run takes its cached summary when the cache key matches (no sample and no HDF5 read at
// all: only the run file's size and time are checked), and otherwise opens the run, runs
// analyzeRun() with the given options (pyramid reads wherever they are exact) and writes the cache.
// A file that cannot be read becomes an invalid run with the reason, so one damaged file does not
// stop a study of hundreds.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/study/run_summary.h"
#include "analysis/study/run_summary_cache.h"
#include "loaders/core/progress.h"

namespace wl {

enum class SummarySource {
  Cache,       // read from the summary cache: no sample read
  Analyzed,    // opened and analysed (and cached when the cache is writable)
  Unreadable,  // the file could not be read; the run is invalid with the reason
};

struct StudyRun {
  RunSummary summary;
  std::string label;  // unique in the study: the run name, made unique when names repeat
  // For figure axes: only what differs between the study's runs ("H100 mbs4 ov"); empty when
  // nothing in the configuration differs (the label is used then).
  std::string short_label;
  SummarySource source = SummarySource::Analyzed;
  std::string cache_error;  // why the cache could not be written, if it could not
};

struct StudyLoadOptions {
  AnalysisOptions analysis;  // the defaults of `wattline analyze`
  SummaryCacheOptions cache;
  // Runs analysed at the same time (0: one per core, at most 4).
  unsigned threads = 0;
  // Called for every run as soon as it is loaded, from the loading threads, one call at a time.
  std::function<void(size_t index, const StudyRun& run)> onLoaded;
};

struct Study {
  std::vector<StudyRun> runs;

  size_t count(SummarySource s) const;
  // The index of the run that `key` names: a label, a path, a file name or stem, or a run name
  // that only one run has. Throws wl::Error with one line when none or several match.
  size_t find(const std::string& key) const;
};

// Files and folders to run files, in the order given: a folder contributes every *.h5 file below
// it (recursively, sorted by path). Duplicates are dropped. Throws wl::Error for a path that does
// not exist.
std::vector<std::filesystem::path> expandRunPaths(const std::vector<std::filesystem::path>& inputs);

// One run's summary (cache or analysis). Never throws for a bad run file (see Unreadable); throws
// Cancelled when the progress asks to stop.
StudyRun loadRunSummary(const std::filesystem::path& run, const StudyLoadOptions& options,
                        const Progress& progress = {});

// Every run, labelled. Progress counts runs; cancelling stops after the runs under way.
Study loadStudy(const std::vector<std::filesystem::path>& runs, const StudyLoadOptions& options,
                const Progress& progress = {});

// Unique labels: the run name; where names repeat (or are empty), the name plus the file name,
// and the path where that still repeats. Also sets each run's short_label from the parts of the
// configuration (platform, model, GPUs, tp, pp, dp, ep, mbs, gbs, sequence length, recompute,
// overlap, in that order) that tell runs apart, each one only when it separates runs the parts
// before it do not, plus the file name where those still repeat.
void assignLabels(std::vector<StudyRun>& runs);

}  // namespace wl
