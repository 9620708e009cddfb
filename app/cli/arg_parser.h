// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A small command-line parser for the subcommands: --flag, --option VALUE, --option=VALUE,
// repeatable options and positionals. Mistakes throw UsageError, which the dispatcher turns into
// exit code 2 with the command's usage.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wl::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  ArgParser& flag(const std::string& name, const std::string& help);
  ArgParser& option(const std::string& name, const std::string& metavar, const std::string& help,
                    bool repeatable = false);
  // Positional arguments: at least min, at most max (-1: no limit).
  ArgParser& positionals(const std::string& metavar, const std::string& help, int min, int max);

  // Parses; returns false if --help was given (usage was printed to stdout).
  bool parse(const std::vector<std::string>& args);

  bool has(const std::string& name) const;
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Typed accessors that throw UsageError naming the option on a bad value.
  std::optional<int> intValue(const std::string& name) const;
  std::optional<double> doubleValue(const std::string& name) const;

  std::string usage() const;

 private:
  struct Opt {
    std::string metavar, help;
    bool takesValue = false, repeatable = false;
  };
  std::string command_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Opt> opts_;
  std::string posMetavar_, posHelp_;
  int posMin_ = 0, posMax_ = 0;
  std::map<std::string, std::vector<std::string>> given_;
  std::vector<std::string> positional_;
};

}  // namespace wl::cli
