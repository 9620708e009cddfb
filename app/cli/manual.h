// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Man pages and shell completion, generated from the option tables that print each command's
// --help (ArgParser's ArgSpec): one source of truth. Hidden options of the binary:
//   wattline --man [COMMAND]           the man page, troff, on stdout (wattline(1) without COMMAND)
//   wattline --completion bash|zsh     the completion script on stdout
//   wattline --generate-docs DIR       DIR/man/man1/wattline*.1, DIR/completion/wattline.bash and
//                                      DIR/completion/_wattline (the build runs this)

#include <string>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"

namespace wl::cli {

// A command's options, read by running it with --help under a SpecCapture.
ArgSpec commandSpec(const Command& cmd);

// wattline(1) when cmd is null, else wattline-CMD(1).
std::string manPage(const Command* cmd, const std::string& version);
std::string bashCompletion();
std::string zshCompletion();

// True if `first` names one of the hidden options above.
bool isManualOption(const std::string& first);
// Runs one (args[0] is the option); exit code 0, or 2 on bad usage, 1 when a file cannot be
// written.
int runManualOption(const Args& args, const std::string& version);

}  // namespace wl::cli
