// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Errors that reach the user. An Error carries a complete one-line message that already names the
// file and the place in it (line, JSON path, dataset) and what was expected; the CLI prints it as
// is and the GUI shows it in one dialog. Cancelled is thrown when a Progress callback asks to stop.

#include <stdexcept>
#include <string>

namespace wl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled by the user") {}
};

}  // namespace wl
