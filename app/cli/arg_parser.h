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

// A command's table of options: what --help prints, and what the man pages and shell completion
// (app/cli/manual.h) are generated from.
struct ArgSpec {
  struct Option {
    std::string name, metavar, help;
    bool takesValue = false, repeatable = false;
    std::vector<std::string> choices;  // the values it takes, when they are a fixed list
  };
  std::string command, summary;
  std::vector<Option> options;  // in the order --help lists them
  std::string posMetavar, posHelp;
  int posMin = 0, posMax = 0;
};

// While one is alive (on this thread), ArgParser::parse hands its table to it on --help instead of
// printing usage: run a command with {"--help"} to read its options.
class SpecCapture {
 public:
  SpecCapture();
  ~SpecCapture();
  SpecCapture(const SpecCapture&) = delete;
  SpecCapture& operator=(const SpecCapture&) = delete;
  std::optional<ArgSpec> spec;

 private:
  SpecCapture* previous_;
};

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  ArgParser& flag(const std::string& name, const std::string& help);
  ArgParser& option(const std::string& name, const std::string& metavar, const std::string& help,
                    bool repeatable = false);
  // The fixed values option `name` takes, from the code's own tables (the man pages and shell
  // completion list them; parsing does not check them).
  ArgParser& choices(const std::string& name, std::vector<std::string> values);
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
  const ArgSpec& spec() const { return spec_; }

 private:
  ArgSpec::Option& add(ArgSpec::Option o);
  ArgSpec spec_;
  std::map<std::string, size_t> index_;  // option name -> spec_.options
  std::map<std::string, std::vector<std::string>> given_;
  std::vector<std::string> positional_;
};

}  // namespace wl::cli
