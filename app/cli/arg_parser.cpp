// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/arg_parser.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>

namespace wl::cli {

namespace {
thread_local SpecCapture* tCapture = nullptr;
}  // namespace

SpecCapture::SpecCapture() : previous_(tCapture) {
  tCapture = this;
}

SpecCapture::~SpecCapture() {
  tCapture = previous_;
}

ArgParser::ArgParser(std::string command, std::string summary) {
  spec_.command = std::move(command);
  spec_.summary = std::move(summary);
}

ArgSpec::Option& ArgParser::add(ArgSpec::Option o) {
  if (auto it = index_.find(o.name); it != index_.end())
    return spec_.options[it->second] = std::move(o);
  index_[o.name] = spec_.options.size();
  return spec_.options.emplace_back(std::move(o));
}

ArgParser& ArgParser::flag(const std::string& name, const std::string& help) {
  add({name, "", help, false, false, {}});
  return *this;
}

ArgParser& ArgParser::option(const std::string& name, const std::string& metavar,
                             const std::string& help, bool repeatable) {
  add({name, metavar, help, true, repeatable, {}});
  return *this;
}

ArgParser& ArgParser::choices(const std::string& name, std::vector<std::string> values) {
  spec_.options.at(index_.at(name)).choices = std::move(values);
  return *this;
}

ArgParser& ArgParser::positionals(const std::string& metavar, const std::string& help, int min,
                                  int max) {
  spec_.posMetavar = metavar;
  spec_.posHelp = help;
  spec_.posMin = min;
  spec_.posMax = max;
  return *this;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      if (tCapture) {
        tCapture->spec = spec_;
        return false;
      }
      std::fputs(usage().c_str(), stdout);
      return false;
    }
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), val;
      bool hasVal = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        val = name.substr(eq + 1);
        name = name.substr(0, eq);
        hasVal = true;
      }
      auto idx = index_.find(name);
      if (idx == index_.end()) throw UsageError(fmt::format("unknown option --{}", name));
      const ArgSpec::Option& o = spec_.options[idx->second];
      if (!o.takesValue) {
        if (hasVal) throw UsageError(fmt::format("option --{} takes no value", name));
        given_[name].push_back("");
        continue;
      }
      if (!hasVal) {
        if (i + 1 >= args.size())
          throw UsageError(fmt::format("option --{} needs a value ({})", name, o.metavar));
        val = args[++i];
      }
      if (!o.repeatable && given_.count(name))
        throw UsageError(fmt::format("option --{} given twice", name));
      given_[name].push_back(val);
      continue;
    }
    if (a == "--") {
      for (++i; i < args.size(); ++i)
        positional_.push_back(args[i]);
      break;
    }
    if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'))
      throw UsageError(fmt::format("unknown option {}", a));
    positional_.push_back(a);
  }
  const ArgSpec& s = spec_;
  const int n = static_cast<int>(positional_.size());
  if (n < s.posMin)
    throw UsageError(s.posMin == 1
                         ? fmt::format("missing {}", s.posMetavar)
                         : fmt::format("expected at least {} {}", s.posMin, s.posMetavar));
  if (s.posMax >= 0 && n > s.posMax)
    throw UsageError(
        s.posMax == 0 ? fmt::format("unexpected argument '{}'", positional_.front())
                      : fmt::format("too many arguments (at most {} {})", s.posMax, s.posMetavar));
  return true;
}

bool ArgParser::has(const std::string& name) const {
  return given_.count(name) > 0;
}

std::optional<std::string> ArgParser::value(const std::string& name) const {
  auto it = given_.find(name);
  if (it == given_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ArgParser::values(const std::string& name) const {
  auto it = given_.find(name);
  return it == given_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<int> ArgParser::intValue(const std::string& name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  int out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size())
    throw UsageError(fmt::format("option --{} expects an integer, got '{}'", name, *v));
  return out;
}

std::optional<double> ArgParser::doubleValue(const std::string& name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  try {
    size_t used = 0;
    const double d = std::stod(*v, &used);
    if (used != v->size()) throw std::invalid_argument("trailing");
    return d;
  } catch (const std::exception&) {
    throw UsageError(fmt::format("option --{} expects a number, got '{}'", name, *v));
  }
}

std::string ArgParser::usage() const {
  const ArgSpec& s = spec_;
  std::string u = fmt::format("usage: wattline {}", s.command);
  for (const ArgSpec::Option& o : s.options)
    u += o.takesValue ? fmt::format(" [--{} {}]", o.name, o.metavar)
                      : fmt::format(" [--{}]", o.name);
  if (!s.posMetavar.empty()) {
    if (s.posMin == 0)
      u += fmt::format(" [{}{}]", s.posMetavar, s.posMax != 1 ? " ..." : "");
    else
      u += fmt::format(" {}{}", s.posMetavar, s.posMax != 1 ? " ..." : "");
  }
  u += "\n\n" + s.summary + "\n";
  if (!s.posMetavar.empty()) u += fmt::format("\n  {:<24} {}\n", s.posMetavar, s.posHelp);
  for (const ArgSpec::Option& o : s.options) {
    const std::string lhs =
        o.takesValue ? fmt::format("--{} {}", o.name, o.metavar) : "--" + o.name;
    u += fmt::format("  {:<24} {}\n", lhs, o.help);
  }
  u += fmt::format("  {:<24} {}\n", "--help", "show this help");
  return u;
}

}  // namespace wl::cli
