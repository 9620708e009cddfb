// SPDX-License-Identifier: GPL-3.0-or-later
// wattline explain RUN.h5 [--range START:END] [--gpus LIST] [--ranks LIST] [--json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "analysis/analysis_json.h"
#include "analysis/run_analysis.h"
#include "analysis/throttle_cost.h"
#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "app/cli/range_args.h"
#include "loaders/format/run_file.h"

namespace wl::cli {

int cmdExplain(const Args& args) {
  ArgParser p("explain",
              "Say what heat and power limits cost the job: the seconds of every step they took, "
              "by reason and by GPU, and what unthrottling the worst GPU would give back "
              "(docs/analyses.md, \"Cost of throttling\"). The numbers are those of `analyze "
              "--json`'s \"cost\" and of the GUI.");
  p.flag("json", "print JSON: the cost with one entry per iteration (schema in docs/analyses.md)")
      .option("range", "START:END",
              "only the iterations wholly inside [START, END): durations after the run start "
              "(10s:25.5s, 1m:2m) or absolute times in ns; either side may be empty")
      .option("gpus", "LIST", "count only these GPUs' throttling (0,2,4-7)")
      .option("ranks", "LIST", "only these ranks' iterations and kernels (0,2,4-7)")
      .positionals("RUN.h5", "a Wattline run", 1, 1);
  if (!p.parse(args)) return 0;
  AnalysisScope scope;
  if (auto v = p.value("gpus")) scope.gpus = parseIndexList("gpus", *v);
  if (auto v = p.value("ranks")) scope.ranks = parseIndexList("ranks", *v);
  std::optional<std::string> rangeText = p.value("range");
  if (rangeText) checkRangeSyntax(*rangeText);
  const auto run = RunFile::open(p.positional().front());
  TimeRange range = rangeInsideRun(*run, {});
  if (rangeText) range = rangeInsideRun(*run, parseRunRange(*rangeText, run->info().start_ns));
  const ThrottleCost cost =
      estimateThrottleCost(*run, scopeGpus(*run, scope), scopeRanks(*run, scope), range, {});
  const std::vector<std::string> verdict = explainCost(cost);
  if (p.has("json")) {
    nlohmann::json j;
    j["run"] = {{"name", run->info().name}, {"simulated", run->info().simulated}};
    j["range"] = {{"start_ns", range.t0}, {"end_ns", range.t1}};
    j["cost"] = toJson(cost, true);
    j["verdict"] = verdict;
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  std::string text;
  for (const std::string& s : verdict)
    text += s + "\n";
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace wl::cli
