// SPDX-License-Identifier: GPL-3.0-or-later
// wattline summarize RUN.h5|FOLDER... [--cache-dir DIR] [--force] [--threads N] [--quiet]
//
// Writes the per-run summary cache that `wattline compare` and the study view read
// (analysis/study/run_summary_cache.h), without making a study. A cluster's batch system can run it
// as one job per run (docs/compare.md, "Studies of thousands of runs"), so that the study itself
// only reads summaries: no sample is read again and its memory is the summaries', a few KiB a run.
#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/study/study.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "loaders/core/error.h"

namespace wl::cli {
namespace {

const char* sourceWord(SummarySource s) {
  switch (s) {
    case SummarySource::Cache:
      return "up to date";
    case SummarySource::Analyzed:
      return "analysed";
    case SummarySource::Unreadable:
      return "unreadable";
  }
  return "";
}

}  // namespace

int cmdSummarize(const Args& args) {
  ArgParser p("summarize",
              "Analyse runs and write their summary cache (RUN.h5.summary.json beside each run, "
              "or one file per run in --cache-dir), the unit of work of a study: 'wattline "
              "compare' and the study view then read the summaries instead of the runs. A run "
              "whose cached summary is up to date is not analysed again (unless --force). One "
              "line per run on stdout; exit 1 when a run could not be read or its summary not "
              "written.");
  p.option("cache-dir", "DIR", "write the summaries into DIR instead of beside each run")
      .flag("force", "analyse every run again, even when its cached summary is up to date")
      .option("threads", "N", "runs analysed at once (default: cores, at most 4)")
      .flag("quiet", "print only runs that failed")
      .positionals("RUN.h5|FOLDER", "runs, or folders searched recursively for *.h5", 1, -1);
  if (!p.parse(args)) return 0;

  StudyLoadOptions load;
  load.cache.read = !p.has("force");
  load.cache.write = true;
  if (auto v = p.value("cache-dir")) {
    load.cache.dir = *v;
    std::error_code ec;
    std::filesystem::create_directories(load.cache.dir, ec);
    if (ec) throw Error(fmt::format("{}: cannot create the cache folder: {}", *v, ec.message()));
  }
  if (auto n = p.intValue("threads")) {
    if (*n < 1 || *n > 64) throw UsageError(fmt::format("--threads must be 1..64, got {}", *n));
    load.threads = static_cast<unsigned>(*n);
  }
  std::vector<std::filesystem::path> inputs;
  for (const std::string& s : p.positional())
    inputs.emplace_back(s);
  const std::vector<std::filesystem::path> runs = expandRunPaths(inputs);
  if (runs.empty()) throw Error("no run files (*.h5) in the folders given");

  // Lines are printed as runs finish (onLoaded is called one at a time), so a long batch shows
  // its progress; the summaries themselves are dropped as soon as they are written.
  const bool quiet = p.has("quiet");
  std::atomic<size_t> failed{0};
  size_t done = 0;
  load.onLoaded = [&](size_t index, const StudyRun& r) {
    ++done;
    const std::string path = runs[index].string();
    const bool bad = r.source == SummarySource::Unreadable || !r.cache_error.empty();
    if (bad) ++failed;
    if (quiet && !bad) return;
    std::string line = fmt::format("[{}/{}] {}: {}", done, runs.size(), path, sourceWord(r.source));
    if (r.source == SummarySource::Unreadable)
      line += ": " + r.summary.load_error;
    else if (!r.cache_error.empty())
      line += "; summary not written: " + r.cache_error;
    else
      line += " -> " + summaryCachePath(runs[index], load.cache).string();
    std::fputs((line + "\n").c_str(), bad ? stderr : stdout);
    std::fflush(bad ? stderr : stdout);
  };
  loadStudy(runs, load);
  if (failed > 0) {
    std::fprintf(stderr, "summarize: %zu of %zu runs failed\n", failed.load(), runs.size());
    return 1;
  }
  return 0;
}

}  // namespace wl::cli
