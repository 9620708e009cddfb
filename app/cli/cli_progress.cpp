// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/cli_progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

namespace wl::cli {

Progress stderrProgress(std::string_view command, bool quiet) {
  if (quiet) return {};
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto last = std::make_shared<int>(-1);
  auto lastTime = std::make_shared<std::chrono::steady_clock::time_point>();
  return Progress(
      [tty, last, lastTime, cmd = std::string(command)](double f, std::string_view stage) {
        const int pct = static_cast<int>(f * 100.0);
        const auto now = std::chrono::steady_clock::now();
        if (tty) {
          if (pct != *last || now - *lastTime > std::chrono::milliseconds(500)) {
            std::fprintf(stderr, "\r\033[K%s: %3d%% %.*s", cmd.c_str(), pct,
                         static_cast<int>(stage.size()), stage.data());
            std::fflush(stderr);
            *last = pct;
            *lastTime = now;
          }
        } else if (pct / 10 != *last / 10 || *last < 0) {
          std::fprintf(stderr, "%s: %3d%% %.*s\n", cmd.c_str(), pct, static_cast<int>(stage.size()),
                       stage.data());
          *last = pct;
        }
        return true;
      });
}

}  // namespace wl::cli
