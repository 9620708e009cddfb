// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/commands.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>

#include "app/cli/arg_parser.h"
#include "loaders/core/error.h"

namespace wl::cli {
namespace {

constexpr std::array kCommands = {
    Command{"info", "show what a run holds: metadata, GPUs, ranks, samples, data quality",
            &cmdInfo},
    Command{"import", "import telemetry and kernel traces (files or folders) into one run",
            &cmdImport},
    Command{"simulate", "simulate a training run's telemetry and kernel traces into a run file",
            &cmdSimulate},
    Command{"analyze", "analyses: energy, throttling, burstiness, kernel breakdowns, stragglers",
            &cmdAnalyze},
    Command{"explain", "what heat and power limits cost the job, per step, reason and GPU",
            &cmdExplain},
    Command{"calibrate", "fit the run's own power, thermal and clock model, with each fit's error",
            &cmdCalibrate},
    Command{"whatif", "project the run to another power limit, inlet or unthrottled GPU",
            &cmdWhatif},
    Command{"compare", "compare runs: table with deltas, ranks and the Pareto front", &cmdCompare},
    Command{"summarize", "write the runs' summary cache that studies read (one job per run)",
            &cmdSummarize},
    Command{"export", "write a timeline, heatmap or analysis chart as PNG, SVG or PDF (headless)",
            &cmdExport},
    Command{"upgrade", "rewrite a run of an older format version in the current one (new file)",
            &cmdUpgrade},
};

}  // namespace

std::span<const Command> commands() {
  return kCommands;
}

const Command* findCommand(std::string_view name) {
  for (const Command& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

int runCommand(const Command& cmd, const Args& args) {
  try {
    return cmd.run(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "wattline %s: %s\n(see 'wattline %s --help')\n",
                 std::string(cmd.name).c_str(), e.what(), std::string(cmd.name).c_str());
    return 2;
  } catch (const Cancelled&) {
    std::fprintf(stderr, "wattline %s: cancelled\n", std::string(cmd.name).c_str());
    return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "wattline %s: %s\n", std::string(cmd.name).c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "wattline %s: out of memory\n", std::string(cmd.name).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wattline %s: internal error: %s\n", std::string(cmd.name).c_str(),
                 e.what());
    return 1;
  }
}

std::string topLevelUsage() {
  std::string u =
      "usage: wattline [RUN.h5 ...]          open runs in the GUI\n"
      "       wattline VIEW.json             open a saved view (File > Save View)\n"
      "       wattline --view JSON           open a copied view (File > Copy View)\n"
      "       wattline COMMAND [OPTIONS]     work headless\n\ncommands:\n";
  for (const Command& c : kCommands)
    u += fmt::format("  {:<10} {}\n", c.name, c.summary);
  u += "\n'wattline COMMAND --help' describes a command.\n";
  return u;
}

}  // namespace wl::cli
