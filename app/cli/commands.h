// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The headless subcommands of the one `wattline` binary. Each lives in its own cmd_*.cpp and is
// listed in commands.cpp. Exit codes: 0 success, 1 user error (bad file...) with a one-line
// message on stderr, 2 bad usage.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wl::cli {

using Args = std::vector<std::string>;

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Args& args);  // may throw wl::Error (-> 1) or UsageError (-> 2)
};

std::span<const Command> commands();
const Command* findCommand(std::string_view name);
// Runs a command with the error handling and exit codes above.
int runCommand(const Command& cmd, const Args& args);
// Top-level help: the commands and how to open the GUI.
std::string topLevelUsage();

// The commands.
int cmdInfo(const Args& args);
int cmdImport(const Args& args);
int cmdSimulate(const Args& args);
int cmdAnalyze(const Args& args);
int cmdExplain(const Args& args);
int cmdCalibrate(const Args& args);
int cmdWhatif(const Args& args);
int cmdCompare(const Args& args);
int cmdSummarize(const Args& args);
int cmdExport(const Args& args);
int cmdUpgrade(const Args& args);

}  // namespace wl::cli
