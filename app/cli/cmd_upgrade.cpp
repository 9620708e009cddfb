// SPDX-License-Identifier: GPL-3.0-or-later
// wattline upgrade RUN.h5 -o OUT.h5 [--quiet]
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/notes.h"
#include "app/cli/arg_parser.h"
#include "app/cli/cli_progress.h"
#include "app/cli/commands.h"
#include "loaders/core/error.h"
#include "loaders/format/format_version.h"
#include "loaders/format/run_upgrade.h"

namespace wl::cli {

int cmdUpgrade(const Args& rawArgs) {
  Args args;  // -o is the one short option; the parser knows long ones
  for (const std::string& a : rawArgs)
    args.push_back(a == "-o" ? "--output" : a);
  ArgParser p("upgrade",
              fmt::format("Write a run file of an older format version (1 or 2) as a new file in "
                          "the current version ({}): the same data, plus the stored per-track "
                          "kernel summaries that let a whole-run analysis skip the kernel table's "
                          "pass over every event (and, from version 1, the power domains). The "
                          "input is never modified; `wattline analyze --json` prints the same "
                          "bytes for both (docs/format.md, \"/kernels/summary\").",
                          format::kVersion));
  p.option("output", "OUT.h5", "the upgraded run (also -o; required, not the input)")
      .flag("quiet", "no progress on stderr")
      .positionals("RUN.h5", "a Wattline run file of format version 1 or 2", 1, 1);
  if (!p.parse(args)) return 0;
  const auto output = p.value("output");
  if (!output) throw UsageError("-o OUT.h5 is required (the input is never modified)");
  const std::string& input = p.positional().front();
  // The user's notes live beside the run (RUN.h5.notes.json, analysis/notes.h): the upgraded run
  // keeps them, so that `analyze --json` of both prints the same notes. A damaged sidecar is
  // named and left behind; the run is upgraded all the same.
  std::vector<Note> notes;
  try {
    notes = readNotes(input);
  } catch (const Error& e) {
    std::fprintf(stderr, "wattline upgrade: %s (the notes are not copied)\n", e.what());
  }
  const Progress progress = stderrProgress("upgrade", p.has("quiet"));
  const UpgradeResult r = upgradeRun(input, *output, progress);
  if (progress.active() && ::isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);
  if (!notes.empty()) writeNotes(*output, notes);
  std::printf("%s: format version %lld -> %lld, kernel summaries of %zu tracks (%zu rows)%s\n",
              output->c_str(), static_cast<long long>(r.from_version),
              static_cast<long long>(r.to_version), r.tracks, r.summary_rows,
              notes.empty() ? "" : fmt::format(", {} notes copied", notes.size()).c_str());
  return 0;
}

}  // namespace wl::cli
