// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs the wattline binary (or any command) and captures its exit code, stdout and stderr.

#include <string>
#include <vector>

namespace wl::test {

struct ProcessResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

// Runs `program args...` with DISPLAY and QT_QPA_PLATFORM unset (headless, as CI and scripts run).
ProcessResult runProcess(const std::string& program, const std::vector<std::string>& args);
// Runs the built wattline binary.
ProcessResult runWattline(const std::vector<std::string>& args);

}  // namespace wl::test
